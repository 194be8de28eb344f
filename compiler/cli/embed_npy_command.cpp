// `tightfit embed-npy IN.npy --symbol S [--section SEC] -o DIR`: writes DIR/S.cpp, which defines
// the array of a .npy file (float32, int8 or uint8) as a constant array, and DIR/S.hpp, which
// declares it:
//
//   extern const float S[];          // (or std::int8_t / std::uint8_t)
//   extern const std::size_t S_size; // elements
//
// for a firmware that runs a model on a built-in input (tightfit_embed_npy() in tightfit.cmake,
// firmware/run). Floats are written as hexadecimal literals, so the firmware sees the very same
// bits (infinities as the compiler's builtins; a NaN is refused). SEC names the array's linker
// section (default .rodata).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "cli/commands.hpp"
#include "driver/memory_file.hpp"
#include "ops/emission.hpp"
#include "error.hpp"
#include "util/model_text.hpp"
#include "util/npy.hpp"
#include "util/write_files.hpp"

namespace tightfit {
namespace {

struct EmbedNpyOptions {
  std::string input;
  std::string symbol;
  std::string section;  // empty: .rodata
  std::string output_dir;
};

// The array's values as C++ initializers, 16 to a line; throws naming the file on a NaN (whose
// bits a literal cannot promise).
std::string initializers(const npy::Array& a, const std::string& path) {
  fmt::memory_buffer out;
  const std::size_t count = static_cast<std::size_t>(a.elements());
  for (std::size_t i = 0; i < count; ++i) {
    if (a.dtype == "f4") {
      float value;
      std::memcpy(&value, &a.data[i * 4], 4);
      if (value != value) throw Error(fmt::format("{}: element {} is NaN", path, i));
      fmt::format_to(std::back_inserter(out), "{},", emit::float_literal(value));
    } else if (a.dtype == "i1") {
      fmt::format_to(std::back_inserter(out), "{},", static_cast<int>(static_cast<std::int8_t>(a.data[i])));
    } else {
      fmt::format_to(std::back_inserter(out), "{},", static_cast<int>(a.data[i]));
    }
    out.push_back(i % 16 == 15 || i + 1 == count ? '\n' : ' ');
  }
  return fmt::to_string(out);
}

void run_embed_npy(const EmbedNpyOptions& options) {
  const std::string& path = options.input;
  if (model_text::cpp_identifier(options.symbol) != options.symbol)
    throw Error(fmt::format("embed-npy: --symbol '{}' is not a C++ identifier", options.symbol), kExitUsage);
  if (!options.section.empty()) {
    try {
      driver::check_section_name(options.section, "embed-npy: --section");
    } catch (const Error& e) {
      throw Error(e.what(), kExitUsage);
    }
  }
  const npy::Array a = npy::load(path);
  const char* type = a.dtype == "f4"   ? "float"
                     : a.dtype == "i1" ? "std::int8_t"
                     : a.dtype == "u1" ? "std::uint8_t"
                                       : nullptr;
  if (!type) throw Error(fmt::format("{}: dtype '{}' is not float32, int8 or uint8", path, a.dtype));

  const std::string& s = options.symbol;
  const std::string banner =
      fmt::format("// Generated from {} by tightfit embed-npy. Do not edit.\n", model_text::cpp_comment(path));
  const std::string header = fmt::format(
      "{}#pragma once\n\n#include <cstddef>\n#include <cstdint>\n\n"
      "extern const {} {}[];\nextern const std::size_t {}_size;\n",
      banner, type, s, s);
  const std::string attribute =
      options.section.empty() ? "" : fmt::format(" __attribute__((section(\"{}\")))", options.section);
  const std::string source =
      fmt::format("{}#include \"{}.hpp\"\n\nalignas(16) const {} {}[]{} = {{\n{}}};\nconst std::size_t {}_size = {};\n",
                  banner, s, type, s, attribute, initializers(a, path), s, a.elements());
  write_files(options.output_dir, {{s + ".hpp", header}, {s + ".cpp", source}});
}

}  // namespace

void add_embed_npy_command(CLI::App& app) {
  auto options = std::make_shared<EmbedNpyOptions>();
  CLI::App* command = app.add_subcommand(
      "embed-npy", "write a .npy array (float32, int8 or uint8) as a constant C++ array: DIR/SYMBOL.cpp and .hpp");
  command->add_option("npy", options->input, "the .npy file")->required();
  command->add_option("--symbol", options->symbol, "the array's name (a C++ identifier)")->required();
  command->add_option("--section", options->section, "its linker section (default .rodata)");
  command->add_option("-o,--output-dir", options->output_dir, "the folder for SYMBOL.cpp and SYMBOL.hpp")->required();
  command->callback([options] { run_embed_npy(*options); });
}

}  // namespace tightfit
