#include "cli/compile_options.hpp"

#include <CLI/CLI.hpp>

#include <filesystem>
#include <regex>

#include "cli/size.hpp"
#include "driver/memory_file.hpp"
#include "error.hpp"
#include "util/model_text.hpp"

namespace tightfit {

void add_compile_options(CLI::App& cmd, CompileCommandOptions& o) {
  driver::CompileOptions& c = o.compile;
  cmd.add_option("MODEL", c.model, "The quantized ONNX model (QDQ or QOperator form)")->required();
  add_size_option(cmd, "--max-ram", c.max_ram, "Cap on the arena: 65536, 64K, 64KiB, 1M (default: no cap)");
  cmd.add_option("--name", c.name, "C++ namespace and file stem (default: the model's file name)");
  cmd.add_option("--memory", c.memory_file,
                 "JSON description of the RAM regions, fastest first, and pins (see docs/planner.md)");
  cmd.add_option("--pin", o.pins, "Fix a tensor's buffer: TENSOR=REGION:OFFSET (REGION 'arena' without --memory)");
  cmd.add_option("--numerics", o.numerics,
                 "Whose integer arithmetic to reproduce bit for bit: ort (ONNX Runtime's, the default for ONNX) "
                 "or tflite (TensorFlow Lite Micro's; docs/numerics.md)")
      ->check(CLI::IsMember({numerics_name(ir::Numerics::Ort), numerics_name(ir::Numerics::Tflite)}));
  cmd.add_option("--time-limit", c.time_limit_seconds, "Seconds the planner may search for a proof (default 5)")
      ->check(check_seconds, "SECONDS");
  cmd.add_flag("--io-outside", o.io_outside,
               "Keep the model's inputs and outputs out of the arena (the caller owns them)");
  cmd.add_option("--weights-section", c.weights_section, "Linker section for the weights (default .rodata)");
  cmd.add_option("--arena-section", c.arena_section, "Linker section for the arena (default .bss)");
  cmd.add_option("--alignment", c.alignment,
                 "Alignment of every buffer in bytes (default 4, and 1 for int8 buffers when the cap needs it)")
      ->check(CLI::IsMember({1, 2, 4, 8, 16, 32}));
  // Older scripts pass it: a symbolic batch was refused without it, and is pinned to 1 now.
  cmd.add_flag("--pin-batch", "Accepted and ignored: a symbolic batch dimension is pinned to 1")->group("");
  cmd.add_flag("--no-reorder", o.no_reorder,
               "Run the nodes in the ONNX file's order (default: the order with the least peak)");
  cmd.add_flag("--no-overlap", o.no_overlap,
               "Never let a kernel's output overlap the input it consumes (default: it may, at the kernel's distance)");
  cmd.add_flag("--no-fold-pad", o.no_fold_pad,
               "Keep every Pad as a copy of its own (default: a Pad read only by a Conv or pool becomes its padding)");
  cmd.add_flag("--no-zero-copy-concat", o.no_zero_copy_concat,
               "Let every Concat copy its inputs (default: their producers write them in place where they can)");
  cmd.add_flag("--no-tiling", o.no_tiling,
               "Never run a stage in row bands or tiles (default: when the plan does not fit under --max-ram, the "
               "stage that fits with the fewest MACs added does)");
}

namespace {

// The model file's stem made a valid C++ identifier: "models/ds-cnn.v2.onnx" -> "ds_cnn_v2".
std::string default_name(const std::string& model_path) {
  std::string stem = std::filesystem::path(model_path).filename().string();
  for (const std::string extension : {".onnx", ".tflite"})
    if (stem.size() > extension.size() &&
        stem.compare(stem.size() - extension.size(), extension.size(), extension) == 0)
      stem.resize(stem.size() - extension.size());
  return model_text::cpp_identifier(stem);
}
void check_section_name_usage(const std::string& section, const std::string& option) {
  try {
    driver::check_section_name(section, option);
  } catch (const Error& e) {
    throw Error(e.what(), kExitUsage);
  }
}
}  // namespace

driver::CompileOptions finish_compile_options(const CompileCommandOptions& o) {
  driver::CompileOptions c = o.compile;
  if (c.name.empty()) c.name = default_name(c.model);
  static const std::regex kIdentifier("[A-Za-z_][A-Za-z0-9_]*");
  if (!std::regex_match(c.name, kIdentifier) || model_text::is_cpp_keyword(c.name))
    throw Error("--name '" + c.name + "' is not a C++ identifier", kExitUsage);
  if (!o.numerics.empty())
    c.numerics = o.numerics == numerics_name(ir::Numerics::Tflite) ? ir::Numerics::Tflite : ir::Numerics::Ort;
  // A memory file gives each region its size and section: a single arena's cap or section beside it
  // would be silently ignored.
  if (!c.memory_file.empty() && c.max_ram)
    throw Error("--max-ram does not apply with --memory: the memory file's region sizes are the caps", kExitUsage);
  if (!c.memory_file.empty() && !c.arena_section.empty())
    throw Error("--arena-section does not apply with --memory: the memory file gives each region's section",
                kExitUsage);
  c.io_in_arena = !o.io_outside;
  c.reorder = !o.no_reorder;
  c.overlap = !o.no_overlap;
  c.fold_pad = !o.no_fold_pad;
  c.zero_copy_concat = !o.no_zero_copy_concat;
  c.tiling = !o.no_tiling;
  if (!c.weights_section.empty()) check_section_name_usage(c.weights_section, "--weights-section");
  if (!c.arena_section.empty()) check_section_name_usage(c.arena_section, "--arena-section");
  static const std::regex kPin("(.+)=([^:]+):(.+)");
  for (const std::string& text : o.pins) {
    std::smatch m;
    std::optional<std::uint64_t> offset;
    if (!std::regex_match(text, m, kPin) || !(offset = parse_size(m[3].str())))
      throw Error("--pin '" + text + "' is not TENSOR=REGION:OFFSET", kExitUsage);
    c.pins.push_back({m[1].str(), m[2].str(), *offset});
  }
  return c;
}

}  // namespace tightfit
