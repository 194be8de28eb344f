// `tightfit compile MODEL.onnx --max-ram SIZE -o DIR`: the model as C++ source plus its memory report.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <memory>

#include "cli/commands.hpp"
#include "cli/compile_options.hpp"
#include "cli/flash_link.hpp"
#include "cli/target.hpp"
#include "cli/progress.hpp"
#include "cost/instructions.hpp"
#include "driver/pipeline.hpp"
#include "error.hpp"
#include "plan/csv.hpp"
#include "util/write_files.hpp"
#include "report/report.hpp"
#include "util/interrupt.hpp"

namespace tightfit {

void add_compile_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("compile", "Compile a quantized ONNX model into C++ source and a memory report");
  auto options = std::make_shared<CompileCommandOptions>();
  add_compile_options(*cmd, *options);
  auto out_dir = std::make_shared<std::string>();
  auto quiet = std::make_shared<bool>(false);
  auto plan_csv = std::make_shared<std::string>();
  cmd->add_option("-o,--output-dir", *out_dir, "Folder for NAME.hpp, NAME.cpp and the report files")->required();
  cmd->add_flag("-q,--quiet", *quiet, "Print nothing on success");
  cmd->add_option("--plan-csv", *plan_csv,
                  "Also write the buffers and their offsets in MiniMalloc's CSV format (one region only)");
  auto target = std::make_shared<std::string>();
  cmd->add_option(
      "--target", *target,
      "Link the generated code for this board's core (mps2-an386: Cortex-M4, mps2-an500: Cortex-M7) or core "
      "(cortex-m4, ...) and report its flash as measured; 'none': an estimate. Default: mps2-an386 when "
      "arm-none-eabi-g++ is on the PATH, else none. The core's measured kernel costs rank tiling plans of "
      "equal MACs (cortex-m4's without a target or with none)");
  cmd->callback([options, out_dir, quiet, plan_csv, target] {
    driver::CompileOptions compile = finish_compile_options(*options);
    // The flash as the target links it: the core of a board, or a core named directly. Its
    // measured kernel costs rank plans of equal MACs; without a target, the default core's (so the
    // plan does not depend on whether a toolchain is installed).
    std::string core = target->empty() ? (arm_toolchain_found() ? "mps2-an386" : "none") : *target;
    if (const char* board = board_core(core)) core = board;
    compile.cost_core = target->empty() || core == "none" ? cost::kDefaultCore : core;
    driver::CompiledModel model;
    {
      ProgressLine progress(*quiet);
      compile.on_plan_progress = progress.callback();
      model = driver::compile_model(compile);
    }
    if (!plan_csv->empty() && model.regions.size() != 1)
      throw Error("--plan-csv: the CSV format has no regions; it needs a single-region plan", kExitUsage);
    if (core != "none") {
      try {
        add_linked_flash(model, link_for_core(model, compile.name, core, compile.weights_section));
      } catch (const interrupt::Interrupted&) {
        throw;
      } catch (const Error& e) {
        // Asked for, the link must work; by default a toolchain that cannot link (no newlib, say)
        // leaves the estimate, which the report marks as one.
        if (!target->empty()) throw;
        fmt::print(stderr, "tightfit: note: the report's flash is an estimate: {}\n", e.what());
      }
      if (const auto problems = report::check_report(model.report); !problems.empty())
        throw Error(compile.model + ": internal error: the report breaks its schema: " + problems.front());
    }
    driver::write_outputs(model, *out_dir, compile.name);
    if (!plan_csv->empty()) write_file(*plan_csv, plan::csv_text(model.lifetimes.problem.buffers, model.plan));
    if (*quiet) return;
    fmt::print("{}", report::render_text(model.report));
    fmt::print("planned in {:.1f} ms\n", model.plan.time_ms);
    fmt::print("wrote {0}/{1}.hpp {0}/{1}.cpp and {0}/{1}.report.{{txt,json,html}} {0}/{1}.memory.svg\n", *out_dir,
               compile.name);
  });
}

}  // namespace tightfit
