#include "util/firmware_lines.hpp"

#include <sstream>

namespace tightfit::firmware_lines {

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
      lines.outputs[std::stoi(pairs.at("output"))] = pairs;
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
    if (!n.empty()) values.push_back(bits ? static_cast<std::int32_t>(std::stoul(n, nullptr, 16)) : std::stoi(n));
  return values;
}

}  // namespace tightfit::firmware_lines
