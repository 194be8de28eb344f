// planner_bench: runs the planner on MiniMalloc CSV files and compares it with TFLite Micro's
// greedy planner on the same rows (sizes as given: `tflm_greedy` of `tightfit plan`). Arguments
// are CSV files or folders of them.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "error.hpp"
#include "plan/csv.hpp"
#include "plan/planner.hpp"
#include "plan/validate.hpp"

namespace fs = std::filesystem;
using namespace tightfit;

int main(int argc, char** argv) {
  CLI::App app{"planner_bench: the planner against TFLite Micro's greedy planner on MiniMalloc CSV files"};
  std::vector<std::string> inputs{TIGHTFIT_DSA_BENCHMARKS};
  double time_limit = 60;
  std::uint32_t alignment = 1;
  app.add_option("inputs", inputs, "CSV files or folders of them")->capture_default_str();
  app.add_option("--time-limit", time_limit, "seconds per case")->capture_default_str();
  app.add_option("--alignment", alignment, "offsets are multiples of this")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  std::vector<fs::path> files;
  for (const std::string& input : inputs) {
    if (fs::is_directory(input)) {
      std::vector<fs::path> found;
      for (const auto& entry : fs::directory_iterator(input))
        if (entry.path().extension() == ".csv") found.push_back(entry.path());
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else {
      files.emplace_back(input);
    }
  }

  fmt::print("{:<18} {:>7} {:>11} {:>11} {:>11} {:>8} {:>10} {:>7} {:>10}\n", "case", "buffers", "lower_bound",
             "greedy", "peak", "/greedy", "status", "gap", "time_ms");
  std::uint64_t total_greedy = 0, total_peak = 0;
  double total_ms = 0;
  int optimal = 0, invalid = 0, failed = 0;
  for (const fs::path& file : files) {
    try {
      plan::Problem problem;
      problem.regions.push_back({"ram", UINT64_MAX, alignment});
      problem.buffers = plan::read_csv(file.string(), alignment);
      const plan::Plan result = plan::solve(problem, plan::Options{time_limit, {}});
      const plan::Problem tflm{problem.regions, plan::read_csv(file.string(), 1), {}};  // TFLM knows no alignment
      const std::uint64_t greedy = plan::greedy_by_size(tflm, 1).peak;
      const std::vector<std::string> errors = plan::validate(problem, result);
      const double gap = result.lower_bound ? 100.0 * (result.peak - result.lower_bound) / result.lower_bound : 0.0;
      fmt::print("{:<18} {:>7} {:>11} {:>11} {:>11} {:>8.3f} {:>10} {:>6.2f}% {:>10.1f}{}\n", file.filename().string(),
                 problem.buffers.size(), result.lower_bound, greedy, result.peak,
                 greedy ? double(result.peak) / greedy : 1.0, plan::status_name(result.status), gap, result.time_ms,
                 errors.empty() ? "" : "  INVALID: " + errors.front());
      std::fflush(stdout);  // one row at a time: a case can take the whole time limit
      total_greedy += greedy;
      total_peak += result.peak;
      total_ms += result.time_ms;
      optimal += result.status == plan::Status::Optimal;
      invalid += !errors.empty();
    } catch (const Error& e) {
      fmt::print("{:<18} error: {}\n", file.filename().string(), e.what());
      ++failed;
    }
  }
  fmt::print("total: {} cases, {} optimal, {} invalid, {} unreadable; peak {} vs greedy {} ({:.3f}); {:.1f} s\n",
             files.size(), optimal, invalid, failed, total_peak, total_greedy,
             total_greedy ? double(total_peak) / total_greedy : 1.0, total_ms / 1000);
  return invalid || failed ? 1 : 0;
}
