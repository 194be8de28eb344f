// Fuzz target: the small parsers of user text. The first byte picks one:
//   0: parse_size() (65536, 64K, 64KiB, 1M...), its result checked against exact arithmetic;
//   1: the compile command line (every compile option, --pin, --name...), NUL-separated words;
//   2: the planner's CSV file (tightfit plan --csv).
// Usage errors must be CLI11's or tightfit::Error; anything else escaping is a bug.
#include <CLI/CLI.hpp>

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <tuple>
#include <vector>

#include "cli/compile_options.hpp"
#include "util/size.hpp"
#include "error.hpp"
#include "plan/csv.hpp"
#include "plan/planner.hpp"
#include "scratch.hpp"

namespace {

[[noreturn]] void bug(const std::string& what) {
  std::fprintf(stderr, "%s\n", what.c_str());
  std::abort();
}

// The value parse_size() must give, computed independently in 128 bits.
void check_size(const std::string& text) {
  const auto got = tightfit::parse_size(text);
  std::size_t i = 0;
  unsigned __int128 value = 0;
  bool overflow = false;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    value = value * 10 + static_cast<unsigned>(text[i] - '0');
    if (value > UINT64_MAX) overflow = true, value = static_cast<unsigned __int128>(UINT64_MAX) + 1;
    ++i;
  }
  std::string unit;
  for (std::size_t j = i; j < text.size(); ++j)
    unit += static_cast<char>(std::toupper(static_cast<unsigned char>(text[j])));
  unsigned __int128 multiplier = 0;
  if (unit.empty() || unit == "B")
    multiplier = 1;
  else if (unit == "K" || unit == "KB" || unit == "KIB")
    multiplier = 1ull << 10;
  else if (unit == "M" || unit == "MB" || unit == "MIB")
    multiplier = 1ull << 20;
  else if (unit == "G" || unit == "GB" || unit == "GIB")
    multiplier = 1ull << 30;
  const bool valid = i > 0 && multiplier != 0 && !overflow && value * multiplier <= UINT64_MAX;
  if (valid != got.has_value()) bug("parse_size('" + text + "'): accepted/refused wrongly");
  if (valid && *got != static_cast<std::uint64_t>(value * multiplier)) bug("parse_size('" + text + "'): wrong value");
}

void check_command_line(const std::string& text) {
  std::vector<std::string> words = {"compile"};
  std::string word;
  for (char c : text) {
    if (c == '\0') {
      words.push_back(word);
      word.clear();
    } else {
      word += c;
    }
  }
  words.push_back(word);
  if (words.size() > 64) return;
  std::vector<const char*> argv = {"tightfit"};
  for (const auto& w : words) argv.push_back(w.c_str());

  CLI::App app{"fuzz"};
  auto* cmd = app.add_subcommand("compile", "");
  tightfit::CompileCommandOptions options;
  tightfit::add_compile_options(*cmd, options);
  std::string out_dir;
  cmd->add_option("-o,--output-dir", out_dir, "")->required();
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
    const tightfit::driver::CompileOptions compile = tightfit::finish_compile_options(options);
    if (compile.name.empty()) bug("an empty --name was accepted");
    if (!(compile.time_limit_seconds > 0)) bug("a time limit that is not above 0 was accepted");
    // The planner turns the limit into a deadline: it must cope with any value accepted here.
    tightfit::plan::Problem problem;
    problem.regions.push_back({"ram", UINT64_MAX, 16});
    for (const auto& [name, size, first_step] : {std::tuple{"a", 16, 0}, std::tuple{"b", 32, 1}}) {
      tightfit::plan::Buffer buffer;
      buffer.name = name;
      buffer.size = size;
      buffer.first_step = first_step;
      buffer.last_step = first_step + 1;
      problem.buffers.push_back(buffer);
    }
    tightfit::plan::Options plan_options;
    plan_options.time_limit_seconds = compile.time_limit_seconds;
    tightfit::plan::solve(problem, plan_options);
  } catch (const CLI::ParseError&) {
  } catch (const tightfit::Error&) {
  }
}

void check_csv(const std::uint8_t* data, std::size_t size) {
  const std::string path = fuzz::write_input("buffers.csv", data, size);
  try {
    const auto buffers = tightfit::plan::read_csv(path, 4);
    for (const auto& b : buffers)
      if (b.first_step < 0 || b.last_step < b.first_step) bug("read_csv gave an empty or negative live interval");
  } catch (const tightfit::Error& e) {
    if (std::string(e.what()).find('\n') != std::string::npos) bug("a CSV error of more than one line");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 3) {
    case 0:
      check_size(rest);
      break;
    case 1:
      check_command_line(rest);
      break;
    default:
      check_csv(data + 1, size - 1);
      break;
  }
  return 0;
}
