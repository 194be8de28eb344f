#include "plan/csv.hpp"

#include <fmt/format.h>

#include <climits>
#include <fstream>
#include <optional>
#include <sstream>

#include "error.hpp"
#include "util/model_text.hpp"

namespace tightfit::plan {

namespace {

std::vector<std::string> split_fields(const std::string& line) {
  std::vector<std::string> fields;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, ',')) {
    const auto first = field.find_first_not_of(" \t\r");
    const auto last = field.find_last_not_of(" \t\r");
    fields.push_back(first == std::string::npos ? "" : field.substr(first, last - first + 1));
  }
  if (!line.empty() && line.back() == ',') fields.push_back("");
  return fields;
}

std::optional<std::uint64_t> parse_count(const std::string& text) {
  if (text.empty() || text.size() > 19) return std::nullopt;
  std::uint64_t value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return value;
}

}  // namespace

std::vector<Buffer> read_csv(const std::string& path, std::uint32_t alignment) {
  std::ifstream in(path);
  if (!in) throw Error(fmt::format("{}: cannot open the file", path));
  std::string line;
  int line_number = 0;
  auto fail = [&](const std::string& what) { throw Error(fmt::format("{}:{}: {}", path, line_number, what)); };

  while (std::getline(in, line) && line.find_first_not_of(" \t\r") == std::string::npos) ++line_number;
  ++line_number;
  const std::vector<std::string> header = split_fields(line);
  int column_id = -1, column_lower = -1, column_upper = -1, column_size = -1;
  for (int i = 0; i < static_cast<int>(header.size()); ++i) {
    if (header[i] == "id") column_id = i;
    if (header[i] == "lower") column_lower = i;
    if (header[i] == "upper") column_upper = i;
    if (header[i] == "size") column_size = i;
  }
  if (column_id < 0 || column_lower < 0 || column_upper < 0 || column_size < 0)
    fail("expected a header with the columns id,lower,upper,size");

  std::vector<Buffer> buffers;
  while (std::getline(in, line)) {
    ++line_number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::vector<std::string> fields = split_fields(line);
    if (fields.size() != header.size())
      fail(fmt::format("expected {} fields like the header, found {}", header.size(), fields.size()));
    auto number = [&](int column) {
      const auto value = parse_count(fields[column]);
      if (!value) fail(fmt::format("{} '{}' is not a whole number", header[column], fields[column]));
      return *value;
    };
    const std::uint64_t lower = number(column_lower), upper = number(column_upper), size = number(column_size);
    if (upper <= lower) fail(fmt::format("upper {} must be above lower {} (upper is exclusive)", upper, lower));
    if (upper > static_cast<std::uint64_t>(INT_MAX)) fail(fmt::format("upper {} is too large", upper));
    Buffer buffer;
    buffer.name = fields[column_id];
    buffer.size = size;
    buffer.alignment = alignment;
    buffer.first_step = static_cast<int>(lower);
    buffer.last_step = static_cast<int>(upper - 1);
    buffers.push_back(std::move(buffer));
  }
  return buffers;
}

std::string csv_text(const std::vector<Buffer>& buffers, const Plan& plan) {
  std::string text = "id,lower,upper,size,offset\n";
  for (std::size_t i = 0; i < buffers.size(); ++i)
    text += fmt::format("{},{},{},{},{}\n", model_text::csv_field(buffers[i].name), buffers[i].first_step,
                        buffers[i].last_step + 1, buffers[i].size, plan.placements[i].offset);
  return text;
}

}  // namespace tightfit::plan
