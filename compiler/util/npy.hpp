// NumPy .npy files (format 1.0/2.0, little-endian, C order): how `tightfit run` takes inputs and
// gives outputs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tightfit::npy {

struct Array {
  std::string dtype;  // numpy's descr without byte order: "f4", "i1", "u1", "i4", "i8"
  std::vector<std::int64_t> shape;
  std::vector<std::uint8_t> data;  // elements, little-endian

  std::int64_t elements() const;
};

// Throws tightfit::Error naming the file for anything that is not a .npy we can read.
Array load(const std::string& path);
std::string encode(const Array& array);                  // the bytes of its .npy file
void save(const std::string& path, const Array& array);  // util/write_files.hpp's write_file

}  // namespace tightfit::npy
