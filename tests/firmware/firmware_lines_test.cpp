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

TEST_CASE("a firmware line with a malformed number is refused naming the word") {
  using namespace tightfit::firmware_lines;
  CHECK_THROWS_WITH(parse("TIGHTFIT output=zz dtype=int8 values=1,2\n"),
                    "firmware line: output=zz: not a number the firmware prints");
  const Lines lines =
      parse("TIGHTFIT output=0 dtype=int8 values=1,x2\nTIGHTFIT output=1 dtype=float32 values=3f80zz\n");
  CHECK_THROWS_WITH(output_values(lines.outputs.at(0)), "firmware line: values=x2: not a number the firmware prints");
  CHECK_THROWS_WITH(output_values(lines.outputs.at(1)),
                    "firmware line: values=3f80zz: not a number the firmware prints");
}
