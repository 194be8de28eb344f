// Fuzz target: the --memory JSON description (regions and pins). Parsed alone, and when it
// parses, used for a whole compile of a small model: region sizes, sections and pins flow into
// the planner and the emitted code. Errors must be tightfit::Error naming the file (main() makes
// them one printable line: names in the file may hold any bytes).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "driver/memory_file.hpp"
#include "driver/pipeline.hpp"
#include "error.hpp"
#include "scratch.hpp"

namespace {
void check_message(const tightfit::Error& e, const std::string& file) {
  if (std::string(e.what()).rfind(file + ": ", 0) != 0) {
    std::fprintf(stderr, "error message that does not start with the file's name: %s\n", e.what());
    std::abort();
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tightfit::driver;
  const std::string path = fuzz::write_input("memory.json", data, size);
  std::vector<RegionSpec> regions;
  std::vector<PinSpec> pins;
  try {
    read_memory_file(path, regions, pins);
  } catch (const tightfit::Error& e) {
    check_message(e, path);
    return 0;
  }
  CompileOptions options;
  options.model = TIGHTFIT_FUZZ_MODEL;
  options.name = "fuzzed";
  options.memory_file = path;
  options.time_limit_seconds = 0.02;
  try {
    compile_model(options);
  } catch (const tightfit::Error& e) {
    const std::string line = e.what();
    if (line.rfind(path + ": ", 0) != 0) check_message(e, options.model);
  }
  return 0;
}
