// `tightfit plan --csv FILE`: the planner alone, on buffers from a MiniMalloc CSV file.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <optional>
#include <string>

#include "cli/commands.hpp"
#include "cli/progress.hpp"
#include "cli/size.hpp"
#include "error.hpp"
#include "plan/csv.hpp"
#include "util/write_files.hpp"
#include "plan/planner.hpp"
#include "plan/validate.hpp"

namespace tightfit {

namespace {

struct PlanArguments {
  std::string csv_path;
  std::string out_path;
  std::optional<std::uint64_t> max_ram;
  double time_limit_seconds = plan::Options{}.time_limit_seconds;
  std::uint32_t alignment = 1;
};

void run_plan(const PlanArguments& args) {
  if ((args.alignment & (args.alignment - 1)) != 0 || args.alignment == 0)
    throw Error(fmt::format("--alignment {} is not a power of two", args.alignment), kExitUsage);
  plan::Problem problem;
  problem.regions.push_back({"ram", args.max_ram.value_or(UINT64_MAX), args.alignment});
  problem.buffers = plan::read_csv(args.csv_path, args.alignment);
  plan::Options options;
  options.time_limit_seconds = args.time_limit_seconds;
  plan::Plan result;
  {
    ProgressLine progress(false);
    options.on_progress = progress.callback();
    result = plan::solve(problem, options);
  }
  if (result.status == plan::Status::Infeasible) throw Error(result.reason, kExitCapTooSmall);
  const std::vector<std::string> errors = plan::validate(problem, result);
  if (!errors.empty()) throw Error("internal error: the plan fails validation: " + errors.front());
  if (!args.out_path.empty()) write_file(args.out_path, plan::csv_text(problem.buffers, result));
  // TFLite Micro's greedy planner on the same buffers, added in row order: on the sizes as given
  // and with every size rounded up to 16 bytes first, as its MicroAllocator does. TFLM knows no
  // --alignment: the rows are read without one.
  const plan::Problem tflm{problem.regions, plan::read_csv(args.csv_path, 1), {}};
  fmt::print("peak={} lower_bound={} status={} time_ms={:.1f} tflm_greedy={} tflm_greedy_align16={}\n", result.peak,
             result.lower_bound, plan::status_name(result.status), result.time_ms, plan::greedy_by_size(tflm, 1).peak,
             plan::greedy_by_size(tflm, plan::kTflmSizeGranule).peak);
}

}  // namespace

void add_plan_command(CLI::App& app) {
  auto args = std::make_shared<PlanArguments>();
  CLI::App* plan = app.add_subcommand("plan", "Place the buffers of a MiniMalloc CSV file in the least memory");
  plan->add_option("--csv", args->csv_path, "buffers: id,lower,upper,size (upper exclusive)")->required();
  plan->add_option("--out", args->out_path, "write the plan as id,lower,upper,size,offset");
  add_size_option(*plan, "--max-ram", args->max_ram, "the cap: fail with exit status 3 if the buffers need more");
  plan->add_option("--time-limit", args->time_limit_seconds, "seconds to search before settling for the best plan")
      ->check(check_seconds, "SECONDS")
      ->capture_default_str();
  plan->add_option("--alignment", args->alignment, "offsets are multiples of this")->capture_default_str();
  plan->callback([args] { run_plan(*args); });
}

}  // namespace tightfit
