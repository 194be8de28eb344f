// Fuzz target: model bytes -> tightfit's whole compile (import, passes, channels-last schedule,
// lifetimes, a plan with a tiny time limit, C++ emission, the report), writing no files.
// A tightfit::Error (one line, exit 1 or 3) is the expected outcome of a bad model; a crash,
// a sanitizer report or any other exception is a bug. An Error must be one line naming the file.
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <string>

#include "driver/pipeline.hpp"
#include "error.hpp"
#include "scratch.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  tightfit::driver::CompileOptions options;
  options.model = fuzz::write_input("model.onnx", data, size);
  options.name = "fuzzed";
  options.time_limit_seconds = 0.02;
  try {
    tightfit::driver::compile_model(options);
  } catch (const tightfit::Error& e) {
    const std::string line = e.what();
    if (line.find('\n') != std::string::npos || line.rfind(options.model + ": ", 0) != 0) {
      std::fprintf(stderr, "error message is not one line naming the file: %s\n", line.c_str());
      std::abort();
    }
  }
  return 0;
}
