// `tightfit run --target`'s reading of the lines a firmware prints (compiler/util/firmware_lines)
// against firmware_lines.expected.json, which check_firmware_lines.py holds the Python tools'
// reading (firmware/tools/run_qemu.py) to as well.
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
    // Python's integers: a float32's bits unsigned.
    nlohmann::json values = nlohmann::json::array();
    for (const std::int32_t v : output_values(words))
      values.push_back(words.at("dtype") == "float32" ? nlohmann::json(static_cast<std::uint32_t>(v))
                                                      : nlohmann::json(v));
    CHECK(values == output.at("values"));
  }
}
