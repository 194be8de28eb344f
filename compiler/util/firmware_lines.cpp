#include "util/firmware_lines.hpp"

#include <charconv>
#include <sstream>

#include "error.hpp"
#include "util/model_text.hpp"

namespace tightfit::firmware_lines {
namespace {

// `text` as a number in `base` (a float32's bits: eight hex digits), or a tightfit::Error naming
// the word: a firmware's line is untrusted input (a truncated log, another program's output).
template <typename T>
T number(const std::string& key, const std::string& text, int base = 10) {
  T value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (error != std::errc() || end != text.data() + text.size() || text.empty())
    throw Error("firmware line: " + model_text::shown(key) + "=" + model_text::shown(text) +
                ": not a number the firmware prints");
  return value;
}

}  // namespace

Lines parse(const std::string& text) {
  Lines lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string word;
    if (!(words >> word) || word != "TIGHTFIT") continue;
    Words pairs;
    while (words >> word) {
      const std::size_t eq = word.find('=');
      if (eq != std::string::npos) pairs[word.substr(0, eq)] = word.substr(eq + 1);
    }
    if (pairs.count("output"))
      lines.outputs[number<int>("output", pairs.at("output"))] = pairs;
    else if (pairs.count("step"))
      lines.steps.push_back(pairs);
    else
      for (const auto& [key, value] : pairs) lines.figures[key] = value;
  }
  return lines;
}

std::vector<std::int32_t> output_values(const Words& output) {
  const bool bits = output.count("dtype") && output.at("dtype") == "float32";
  std::vector<std::int32_t> values;
  if (!output.count("values")) return values;
  std::istringstream numbers(output.at("values"));
  for (std::string n; std::getline(numbers, n, ',');)
    if (!n.empty())
      values.push_back(bits ? static_cast<std::int32_t>(number<std::uint32_t>("values", n, 16))
                            : number<std::int32_t>("values", n));
  return values;
}

}  // namespace tightfit::firmware_lines
