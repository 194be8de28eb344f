#include "cli/flash_link.hpp"

#include <fmt/format.h>
#include <stdlib.h>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "cli/target.hpp"
#include "error.hpp"
#include "util/interrupt.hpp"
#include "util/write_files.hpp"

namespace tightfit {

namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The compile and link flags of `core` as cmake/arm-none-eabi.cmake sets them, read from that
// file so that the two cannot drift apart: every `set(NAME "VALUE")`, the core's flags from the
// branch that names it, ${NAME} references expanded.
std::pair<std::string, std::string> toolchain_flags(const std::string& core) {
  const fs::path file = source_dir() / "cmake" / "arm-none-eabi.cmake";
  const std::string text = slurp(file);
  const std::size_t branch = text.find("TIGHTFIT_CORE STREQUAL \"" + core + "\")");
  if (text.empty() || branch == std::string::npos)
    throw Error(fmt::format("--target: '{}' is not a board or a core of {}", core, file.string()), kExitUsage);
  std::map<std::string, std::string> values;
  const std::regex set_command(R"(set\(\s*(\w+)\s+"([^"]*)\")");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), set_command); it != std::sregex_iterator(); ++it) {
    const std::string name = (*it)[1];
    const bool core_flags = name == "_tightfit_core_flags";
    if (values.count(name) || (core_flags && static_cast<std::size_t>(it->position()) < branch)) continue;
    values[name] = (*it)[2];
  }
  auto expand = [&](std::string value) {
    for (std::size_t at; (at = value.find("${")) != std::string::npos;) {
      const std::size_t end = value.find('}', at);
      value.replace(at, end - at + 1, values[value.substr(at + 2, end - at - 2)]);
    }
    return value;
  };
  return {expand(values["CMAKE_CXX_FLAGS_INIT"]), expand(values["CMAKE_EXE_LINKER_FLAGS_INIT"])};
}

// Runs `command` with its output in `log`; on failure throws the log's first error line.
std::string run_captured(const std::string& command, const fs::path& log, const std::string& what) {
  const int status = interrupt::run_shell(command + " > '" + log.string() + "' 2>&1");
  const std::string output = slurp(log);
  if (status == 0) return output;
  std::istringstream lines(output);
  std::string line, first_error;
  while (std::getline(lines, line))
    if (first_error.empty() && line.find("error") != std::string::npos) first_error = line;
  throw Error(fmt::format("--target: {} failed: {}", what, first_error.empty() ? output.substr(0, 200) : first_error));
}

}  // namespace

bool arm_toolchain_found() { return interrupt::run_shell("command -v arm-none-eabi-g++ > /dev/null 2>&1") == 0; }

LinkedFlash link_for_core(const driver::CompiledModel& model, const std::string& name, const std::string& core,
                          const std::string& weights_section) {
  const auto [compile_flags, link_flags] = toolchain_flags(core);
  interrupt::Deferral deferral;  // a Ctrl-C stops the compiler and unwinds: the folder is removed
  std::string pattern = (fs::temp_directory_path() / "tightfit-flash-XXXXXX").string();
  if (!mkdtemp(pattern.data())) throw Error("--target: cannot make a temporary folder");
  const fs::path dir = pattern;
  struct Cleanup {
    fs::path dir;
    ~Cleanup() {
      std::error_code ignored;
      fs::remove_all(dir, ignored);
    }
  } cleanup{dir};
  write_files(dir.string(), {{name + ".hpp", model.header}, {name + ".cpp", model.source}});
  const std::string object = (dir / "model.o").string(), elf = (dir / "model.elf").string();
  // The runtime's own flags (runtime/CMakeLists.txt) and the firmware's optimisation (-O2).
  const std::string compiler = "arm-none-eabi-g++";
  run_captured(fmt::format("{} {} -std=gnu++17 -ffp-contract=off -fno-fast-math -O2 -I'{}' -c '{}' -o '{}'", compiler,
                           compile_flags, (source_dir() / "runtime" / "include").string(),
                           (dir / (name + ".cpp")).string(), object),
               dir / "compile.log", "compiling the generated code for " + core);

  // The roots of the link: the functions the generated code exports (run, set_input_N, ...).
  std::istringstream symbols(run_captured("arm-none-eabi-nm --defined-only -g '" + object + "'", dir / "nm.log",
                                          "listing the generated code's functions"));
  std::string roots, entry;
  for (std::string line; std::getline(symbols, line);) {
    std::istringstream words(line);
    std::string address, type, symbol;
    if (!(words >> address >> type >> symbol) || type != "T") continue;
    roots += " -Wl,--undefined=" + symbol;
    if (entry.empty()) entry = symbol;
  }
  run_captured(fmt::format("{} {} {} -nostartfiles -Wl,-e,{}{} '{}' -o '{}'", compiler, compile_flags, link_flags,
                           entry.empty() ? "0" : entry, roots, object, elf),
               dir / "link.log", "linking the generated code for " + core);

  LinkedFlash flash;
  flash.core = core;
  std::istringstream sections(run_captured("arm-none-eabi-size -A '" + elf + "'", dir / "size.log", "sizing the link"));
  for (std::string line; std::getline(sections, line);) {
    std::istringstream words(line);
    std::string section;
    std::uint64_t size = 0;
    if (!(words >> section >> size) || section.empty() || section[0] != '.') continue;
    bool arena = false;
    for (const auto& region : model.regions) arena = arena || section == region.section;
    if (!weights_section.empty() && section == weights_section)
      flash.weights_bytes += size;
    else if (section == ".text" || section.rfind(".ARM.ex", 0) == 0 || section == ".init" || section == ".fini")
      flash.text_bytes += size;
    else if (section.rfind(".rodata", 0) == 0)
      flash.rodata_bytes += size;
    else if (section == ".data")
      flash.data_bytes += size;
    // Anything else takes no flash: .bss, .noinit, the arena, the toolchain's notes.
    else if (!arena && section != ".bss" && section != ".noinit" && section != ".persistent" && section != ".comment" &&
             section.rfind(".ARM.attributes", 0) != 0 && section.rfind(".debug", 0) != 0)
      flash.rodata_bytes += size;
  }
  if (weights_section.empty()) {  // the weights are in .rodata
    flash.weights_bytes = std::min(model.weights_bytes, flash.rodata_bytes);
    flash.rodata_bytes -= flash.weights_bytes;
  }
  std::string version = run_captured(compiler + " -dumpversion", dir / "version.log", "asking the compiler's version");
  version.erase(version.find_last_not_of(" \n") + 1);
  flash.method = fmt::format("{} {} -O2", compiler, version);
  return flash;
}

void add_linked_flash(driver::CompiledModel& model, const LinkedFlash& flash) {
  model.report["flash"]["linked"] = {{"core", flash.core},
                                     {"method", flash.method},
                                     {"text_bytes", flash.text_bytes},
                                     {"rodata_bytes", flash.rodata_bytes},
                                     {"data_bytes", flash.data_bytes},
                                     {"weights_bytes", flash.weights_bytes}};
}

}  // namespace tightfit
