#include "util/npy.hpp"

#include <fstream>
#include <iterator>
#include <regex>

#include "error.hpp"
#include "util/write_files.hpp"

namespace tightfit::npy {
namespace {

std::size_t element_size(const std::string& dtype) { return static_cast<std::size_t>(std::stoi(dtype.substr(1))); }

bool supported(const std::string& dtype) {
  return dtype == "f4" || dtype == "i1" || dtype == "u1" || dtype == "i4" || dtype == "i8";
}

}  // namespace

std::int64_t Array::elements() const {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  return n;
}

Array load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open");
  std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  static const std::string kMagic = "\x93NUMPY";
  if (bytes.size() < 10 || std::string(bytes.begin(), bytes.begin() + 6) != kMagic)
    throw Error(path + ": not a .npy file");
  const int major = bytes[6];
  std::size_t header_len = 0, header_start = 0;
  if (major == 1) {
    header_len = bytes[8] | (bytes[9] << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw Error(path + ": truncated .npy header");
    header_len = bytes[8] | (bytes[9] << 8) | (bytes[10] << 16) | (static_cast<std::size_t>(bytes[11]) << 24);
    header_start = 12;
  } else {
    throw Error(path + ": unsupported .npy version " + std::to_string(major));
  }
  if (bytes.size() < header_start + header_len) throw Error(path + ": truncated .npy header");
  const std::string header(bytes.begin() + header_start, bytes.begin() + header_start + header_len);

  std::smatch m;
  if (!std::regex_search(header, m, std::regex("'descr':\\s*'([<>|=])([a-z]\\d+)'")))
    throw Error(path + ": .npy header has no dtype");
  Array a;
  a.dtype = m[2];
  if (m[1] == ">" || !supported(a.dtype))
    throw Error(path + ": dtype '" + std::string(m[1]) + a.dtype +
                "' is not one of float32, int8, uint8, int32, int64");
  if (std::regex_search(header, std::regex("'fortran_order':\\s*True")))
    throw Error(path + ": Fortran-ordered arrays are not supported; save with np.ascontiguousarray");
  if (!std::regex_search(header, m, std::regex("'shape':\\s*\\(([^)]*)\\)")))
    throw Error(path + ": .npy header has no shape");
  const std::string dims = m[1];
  static const std::regex kNumber("\\d+");
  for (std::sregex_iterator it(dims.begin(), dims.end(), kNumber), end; it != end; ++it)
    a.shape.push_back(std::stoll(it->str()));

  const std::size_t data_start = header_start + header_len;
  const std::size_t want = static_cast<std::size_t>(a.elements()) * element_size(a.dtype);
  if (bytes.size() - data_start != want)
    throw Error(path + ": holds " + std::to_string(bytes.size() - data_start) + " data bytes, its shape needs " +
                std::to_string(want));
  a.data.assign(bytes.begin() + data_start, bytes.end());
  return a;
}

std::string encode(const Array& a) {
  std::string shape;
  for (std::size_t i = 0; i < a.shape.size(); ++i) shape += (i ? ", " : "") + std::to_string(a.shape[i]);
  if (a.shape.size() == 1) shape += ',';  // Python's one-element tuple
  std::string header = "{'descr': '" + std::string(a.dtype == "i1" || a.dtype == "u1" ? "|" : "<") + a.dtype +
                       "', 'fortran_order': False, 'shape': (" + shape + "), }";
  // The data starts on a 64-byte boundary, the header ends with a newline.
  const std::size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::string file("\x93NUMPY\x01\x00", 8);
  file += static_cast<char>(header.size() & 0xff);
  file += static_cast<char>(header.size() >> 8);
  file += header;
  file.append(reinterpret_cast<const char*>(a.data.data()), a.data.size());
  return file;
}

void save(const std::string& path, const Array& a) { write_file(path, encode(a)); }

}  // namespace tightfit::npy
