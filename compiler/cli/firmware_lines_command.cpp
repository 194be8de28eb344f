// `tightfit firmware-lines [FILE]`: the lines a tightfit firmware prints ("TIGHTFIT key=value ...",
// docs/firmware.md, "What the firmware prints"), from FILE or, without one or with "-", from
// stdin, read as `tightfit run --target` reads them and printed as one line of JSON, so that the
// Python tools (firmware/tools/run_qemu.py) have no reading of their own:
//
//   {"figures": {"instructions": "6795384", ...},
//    "outputs": {"0": {"words": {"output": "0", "dtype": "int8", ...}, "values": [-128, 0, 5, 127]}},
//    "steps": [{"step": "0", "node": "QLinearConv_1", ...}]}
//
// Every word is text as printed; "values" is an output's values decoded (a float32's bits as a
// signed 32-bit integer).
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>

#include "cli/commands.hpp"
#include "error.hpp"
#include "util/firmware_lines.hpp"
#include "util/model_text.hpp"

namespace tightfit {
namespace {

std::string read_text(const std::string& path) {
  if (path == "-") return {std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>()};
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("firmware-lines: cannot read {}", path));
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void print_firmware_lines(const std::string& path) {
  const firmware_lines::Lines lines = firmware_lines::parse(read_text(path));
  nlohmann::json outputs = nlohmann::json::object();
  for (const auto& [index, words] : lines.outputs)
    outputs[std::to_string(index)] = {{"words", words}, {"values", firmware_lines::output_values(words)}};
  nlohmann::json doc = {{"figures", lines.figures}, {"outputs", outputs}, {"steps", lines.steps}};
  model_text::json_strings(doc);  // the firmware prints names from the model: any bytes
  fmt::print("{}\n", doc.dump());
}

}  // namespace

void add_firmware_lines_command(CLI::App& app) {
  auto path = std::make_shared<std::string>("-");
  CLI::App* command = app.add_subcommand(
      "firmware-lines", "read the TIGHTFIT lines a firmware printed and print them as JSON (figures, outputs, steps)");
  command->add_option("file", *path, "the firmware's output (default: stdin)");
  command->callback([path] { print_firmware_lines(*path); });
}

}  // namespace tightfit
