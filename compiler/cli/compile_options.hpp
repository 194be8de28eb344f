// The options that `compile` and `run` share: which model, how much RAM, where buffers go.
#pragma once

#include <string>
#include <vector>

#include "driver/pipeline.hpp"

namespace CLI {
class App;
}

namespace tightfit {

struct CompileCommandOptions {
  driver::CompileOptions compile;
  std::vector<std::string> pins;  // TENSOR=REGION:OFFSET, as typed
  std::string numerics;           // --numerics: "ort", "tflite", or empty (the importer's choice)
  bool io_outside = false;
  bool no_reorder = false;
  bool no_overlap = false;
  bool no_fold_pad = false;
  bool no_zero_copy_concat = false;
  bool no_tiling = false;
};

void add_compile_options(CLI::App& cmd, CompileCommandOptions& options);

// The value of --numerics that selects `n`: "ort" or "tflite".
inline const char* numerics_name(ir::Numerics n) { return n == ir::Numerics::Tflite ? "tflite" : "ort"; }

// The driver's options once the command line is parsed: pins read, the default name filled in.
// Throws tightfit::Error (usage) for a malformed --pin.
driver::CompileOptions finish_compile_options(const CompileCommandOptions& options);

}  // namespace tightfit
