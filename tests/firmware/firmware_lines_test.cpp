// The one reading of the lines a firmware prints (compiler/util/firmware_lines) against
// firmware_lines.expected.json, which check_firmware_lines.py holds `tightfit firmware-lines`, the
// Python tools' reading, to as well.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <fstream>
#include <iterator>

#include "util/firmware_lines.hpp"

namespace {

std::string read(const std::string& file) {
  std::ifstream in(std::string(FIXTURE_DIR) + "/" + file);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("the firmware's lines read as firmware_lines.expected.json says") {
  using namespace tightfit::firmware_lines;
  const Lines lines = parse(read("firmware_lines.txt"));
  const nlohmann::json expected = nlohmann::json::parse(read("firmware_lines.expected.json"));

  CHECK(nlohmann::json(lines.figures) == expected.at("figures"));
  CHECK(nlohmann::json(lines.steps) == expected.at("steps"));
  REQUIRE(lines.outputs.size() == expected.at("outputs").size());
  for (const auto& [index, words] : lines.outputs) {
    const nlohmann::json& output = expected.at("outputs").at(std::to_string(index));
    CHECK(nlohmann::json(words) == output.at("words"));
    CHECK(nlohmann::json(output_values(words)) == output.at("values"));
  }
}
