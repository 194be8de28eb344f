#include "driver/pipeline.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "driver/concat_search.hpp"
#include "driver/memory_file.hpp"
#include "driver/report_json.hpp"
#include "emit/emit_cpp.hpp"
#include "error.hpp"
#include "import/import.hpp"
#include "ops/operator.hpp"
#include "plan/validate.hpp"
#include "report/report.hpp"
#include "schedule/channels_last.hpp"
#include "util/model_text.hpp"
#include "util/write_files.hpp"

namespace tightfit::driver {

const char* to_string(AlignmentSource source) {
  return source == AlignmentSource::flag ? "flag" : source == AlignmentSource::cap ? "cap" : "default";
}

const char* to_string(SlowRegionKept kept) { return kept == SlowRegionKept::free_only ? "free_only" : "with_slow"; }

ir::Graph import_graph(const std::string& path) {
  ir::Graph graph = import::import_model(path);
  passes::verify_after("import", graph);
  passes::conv1x1_to_fully_connected(graph);
  passes::verify_after("conv1x1_to_fully_connected", graph);
  passes::fuse_channel_shuffles(graph);
  passes::verify_after("fuse_channel_shuffles", graph);
  passes::prune_unused_tensors(graph);
  passes::verify_after("prune_unused_tensors", graph);
  return graph;
}

namespace {

// Steps 1 and 2, and the regions and pins: what every plan of the model starts from, whatever
// its alignment.
struct Imported {
  ir::Graph graph;  // channels-last, its Pads folded
  std::vector<passes::PadFold> pad_folds;
  std::vector<passes::InPlaceInput> candidates;  // Concat inputs step 3 may write in place
  std::vector<RegionSpec> regions;
  std::vector<PinSpec> pins;
};

Imported import_model(const CompileOptions& options) {
  Imported imported;
  // 1. The model file (ONNX or .tflite) -> integer IR, in the numerics asked for (the importer's
  // default: ORT's for ONNX, TFLite's for .tflite).
  imported.graph = import_graph(options.model);
  if (options.numerics) imported.graph.numerics = *options.numerics;
  passes::check_numerics(imported.graph);
  if (options.fold_pad) {
    imported.pad_folds = passes::fold_pads(imported.graph);
    passes::verify_after("fold_pads", imported.graph);
  }

  // 2. The schedule: channels-last activations, float edges moved into the API.
  schedule::to_channels_last(imported.graph);
  passes::verify_after("to_channels_last", imported.graph);
  // Neither Concat inputs written in place nor row bands cross an If's branches: a graph with an If
  // has neither.
  if (options.zero_copy_concat && !imported.graph.has_if())
    imported.candidates = passes::zero_copy_candidates(imported.graph);

  imported.pins = options.pins;
  if (!options.memory_file.empty()) {
    read_memory_file(options.memory_file, imported.regions, imported.pins);
  } else {
    imported.regions.push_back({"arena", options.max_ram, options.arena_section});
  }
  return imported;
}

// A model through steps 3 and 4 (and 5 with tiling) at `options.alignment`: its plan, under the
// caps when anything fits them (Infeasible otherwise), and the problem it solves.
struct Planned {
  CompiledModel m;
  plan::Problem problem;
};

Planned plan_model(const CompileOptions& options, const Imported& imported) {
  CompiledModel m;
  m.graph = imported.graph;
  m.pad_folds = imported.pad_folds;
  m.regions = imported.regions;
  // 3. The order and 4. the memory plan, with the Concat inputs written in place chosen: writing in
  // place makes a Concat's output live from its first part on, which can raise the peak. Every
  // schedule planned is kept for step 5.
  InPlaceChoice choice = choose_in_place(options, m.graph, imported.candidates, m.regions, imported.pins);
  m.zero_copy_arena_bytes = choice.zero_copy_arena_bytes;
  m.copying_arena_bytes = choice.copying_arena_bytes;
  Scheduled& chosen = choice.chosen;
  // 5. Patch-based execution: it costs MACs, so a stage runs in row bands only when the plan does
  // not fit under the caps: of the stages and band counts whose bound fits, on any schedule planned
  // above, the one that adds the fewest MACs and whose plan fits. The report's RAM-against-cost
  // table plans the cheapest way to each smaller bound. The schedule of the plan kept is the
  // untiled plan's, unless a stage of another fits the caps.
  TilingResult tiling;
  if (options.tiling && !chosen.graph.has_if()) {
    tiling = tile_to_fit(options, m.graph, m.regions, chosen, choice.schedules, imported.candidates, imported.pins);
    m.tiled = std::move(tiling.tiled);
    m.ram_vs_cost = std::move(tiling.ram_vs_cost);
  }
  const ScheduleChoice& kept = choice.schedules[tiling.kept_schedule];
  m.order = kept.order_choice;
  for (std::size_t k = 0; k < imported.candidates.size(); ++k)
    if (kept.in_place[k]) m.in_place.push_back(imported.candidates[k]);
  m.macs = ops::model_macs(chosen.graph);
  m.graph = std::move(chosen.graph);
  m.lifetimes = std::move(chosen.lifetimes);
  m.plan = std::move(chosen.plan);
  return {std::move(m), std::move(chosen.problem)};
}

// The least arena a plan's pass reached: the least row of its RAM-against-cost table (the untiled
// plan's arena with --no-tiling), and the stage that reached it (none: untiled).
std::pair<std::uint64_t, const CostLevel*> least_arena(const CompiledModel& m) {
  std::pair<std::uint64_t, const CostLevel*> least{m.plan.peak, nullptr};
  for (const CostLevel& level : m.ram_vs_cost)
    if (level.technique != Technique::none && (level.technique == Technique::free || level.arena_bytes < least.first))
      least = {level.arena_bytes, level.stage ? &level : nullptr};
  return least;
}

// The exit-3 message of an `aligned` plan that does not fit, and of the `byte_aligned` one when
// it was tried and does not either: the minimum, what holds it there, and the least arena every
// technique reached.
std::string shortfall(const CompileOptions& options, const CompiledModel& aligned, const CompiledModel* byte_aligned) {
  std::string reason = aligned.plan.reason;
  if (!options.tiling) reason += "; patch-based execution was not tried (--no-tiling)";
  const auto [least, stage] = least_arena(aligned);
  if (options.tiling)
    reason += stage ? fmt::format("; with patch-based execution the least arena found is {} bytes: {}", least,
                                  describe_stage(*stage->stage, aligned.macs))
                    : "; no stage of this model can run in row bands or tiles (patch-based execution)";
  if (byte_aligned) {
    const auto [byte_least, byte_stage] = least_arena(*byte_aligned);
    if (byte_least < least)
      reason += fmt::format("; with byte-aligned buffers the least arena found is {} bytes{}", byte_least,
                            byte_stage ? ": " + describe_stage(*byte_stage->stage, byte_aligned->macs) : " (untiled)");
  }
  return options.model + ": " + reason;
}

// Steps 6 and 7 of a plan that fits: its C++ and its report.
CompiledModel emit_and_report(const CompileOptions& options, Planned planned) {
  CompiledModel& m = planned.m;
  const plan::Problem& problem = planned.problem;
  if (const auto broken = plan::validate(problem, m.plan); !broken.empty())
    throw Error(options.model + ": internal error: the plan failed validation: " + broken.front());

  // 6. C++.
  std::vector<emit::Arena> arenas;
  for (std::size_t r = 0; r < m.regions.size(); ++r)
    arenas.push_back({m.regions[r].name, m.plan.region_peak[r], m.regions[r].section});
  emit::EmitOptions emit_options;
  emit_options.name = options.name;
  emit_options.model = options.model;
  emit_options.weights_section = options.weights_section;
  emit_options.io_in_arena = options.io_in_arena;
  const emit::EmittedCode code = emit::emit_cpp(m.graph, m.lifetimes, m.plan, arenas, emit_options);
  m.header = code.header;
  m.source = code.source;
  m.weights_bytes = code.weights_bytes;

  // 7. The report.
  m.report = build_report(options, m, problem, code);
  model_text::json_strings(m.report);  // names from the model may be invalid UTF-8
  if (const auto problems = report::check_report(m.report); !problems.empty())
    throw Error(options.model + ": internal error: the report breaks its schema: " + problems.front());
  return std::move(m);
}

// 3 to 5 at the alignment asked, else at 4; then, by default, when the cap needs more than the
// aligned plans give (none fits, or only with extra MACs), 3 to 5 again with byte-aligned int8
// buffers: that plan is kept when it fits with fewer extra MACs. Unaligned loads cost cycles on the
// cores that allow them (docs/tiling.md, "Byte-aligned buffers"), so the padding is given up only
// for the cap. `shortfall` is set, and the plan Infeasible, when nothing fits.
struct Fitted {
  Planned planned;
  std::optional<std::string> shortfall;  // the exit-3 message
};

Fitted plan_to_fit(const CompileOptions& options, const Imported& imported) {
  CompileOptions aligned_options = options;
  aligned_options.alignment = options.alignment.value_or(4);
  Planned planned = plan_model(aligned_options, imported);
  CompiledModel& m = planned.m;
  m.alignment.bytes = *aligned_options.alignment;
  m.alignment.source = options.alignment ? AlignmentSource::flag : AlignmentSource::by_default;
  const bool fits = m.plan.status != plan::Status::Infeasible;
  if (!options.alignment && (!fits || m.extra_macs() > 0)) {
    CompileOptions byte_options = options;
    byte_options.alignment = 1;
    Planned byte_aligned = plan_model(byte_options, imported);
    const bool byte_fits = byte_aligned.m.plan.status != plan::Status::Infeasible;
    if (!fits && !byte_fits) {
      std::string reason = shortfall(options, m, &byte_aligned.m);
      return {std::move(planned), std::move(reason)};
    }
    if (byte_fits && (!fits || byte_aligned.m.extra_macs() < m.extra_macs())) {
      CompiledModel& b = byte_aligned.m;
      b.alignment = {1, AlignmentSource::cap, fits ? std::optional<std::uint64_t>(m.plan.peak) : std::nullopt,
                     least_arena(m).first};
      // The table stays the default's (4-byte aligned) with this plan after it.
      b.ram_vs_cost = std::move(m.ram_vs_cost);
      if (!b.ram_vs_cost.empty())
        b.ram_vs_cost.push_back({Technique::byte_aligned, b.plan.peak, b.extra_macs(),
                                 cost::estimated_instructions(options.cost_core, b.graph), b.tiled});
      planned = std::move(byte_aligned);
    }
  }
  std::optional<std::string> reason;
  if (planned.m.plan.status == plan::Status::Infeasible) reason = shortfall(options, planned.m, nullptr);
  return {std::move(planned), std::move(reason)};
}

// What a plan costs with its regions' bandwidth: the estimated instructions (the MACs on a core
// without measured costs) and, per buffer, its traffic times its region's cycles per byte.
SlowRegionPlan slow_region_plan(const CompileOptions& options, const Planned& planned) {
  const CompiledModel& m = planned.m;
  SlowRegionPlan cost;
  cost.region_bytes = m.plan.region_peak;
  cost.macs = ops::model_macs(m.graph);
  cost.instructions = cost::estimated_instructions(options.cost_core, m.graph).value_or(cost.macs);
  double slow = 0;
  for (std::size_t b = 0; b < planned.problem.buffers.size(); ++b)
    slow += static_cast<double>(planned.problem.buffers[b].traffic) *
            m.regions[static_cast<std::size_t>(m.plan.placements[b].region)].cycles_per_byte;
  cost.slow_cycles = static_cast<std::int64_t>(std::llround(slow));
  return cost;
}

}  // namespace

CompiledModel compile_model(const CompileOptions& options) {
  // 1 and 2 once, then 3 to 5 under the caps.
  const Imported imported = import_model(options);
  Fitted fitted = plan_to_fit(options, imported);
  // Slow regions (docs/planner.md): when the plan kept puts buffers in a region with a cycles per
  // byte cost, the model is planned again with those regions left empty (capacity 0), tiling into
  // the free ones if it must; the plan that costs fewer cycles (instructions + slow traffic) is kept,
  // the one with the slow regions on a tie (it adds no MACs).
  const auto slow_bytes = [&](const Planned& p) {
    std::uint64_t bytes = 0;
    for (std::size_t r = 0; r < p.m.regions.size(); ++r)
      if (p.m.regions[r].cycles_per_byte > 0 && r < p.m.plan.region_peak.size()) bytes += p.m.plan.region_peak[r];
    return bytes;
  };
  if (!fitted.shortfall && options.tiling && slow_bytes(fitted.planned) > 0) {
    Imported free_only = imported;
    for (RegionSpec& r : free_only.regions)
      if (r.cycles_per_byte > 0) r.capacity = 0;
    Fitted fast = plan_to_fit(options, free_only);
    SlowRegionChoice choice;
    choice.with_slow = slow_region_plan(options, fitted.planned);
    choice.kept = SlowRegionKept::with_slow;
    if (!fast.shortfall) {
      choice.free_only = slow_region_plan(options, fast.planned);
      fast.planned.m.regions = imported.regions;  // the capacities of the memory file, for the report
      const auto cycles = [](const SlowRegionPlan& c) { return c.instructions + c.slow_cycles; };
      if (cycles(*choice.free_only) < cycles(*choice.with_slow)) {
        choice.kept = SlowRegionKept::free_only;
        fitted = std::move(fast);
      }
    }
    fitted.planned.m.slow_regions = std::move(choice);
  }
  if (fitted.shortfall) throw Error(*fitted.shortfall, kExitCapTooSmall);
  return emit_and_report(options, std::move(fitted.planned));
}

void write_outputs(const CompiledModel& m, const std::string& dir, const std::string& name) {
  write_files(dir, {
                       {name + ".hpp", m.header},
                       {name + ".cpp", m.source},
                       {name + ".report.json", m.report.dump(2) + "\n"},
                       {name + ".report.txt", report::render_text(m.report)},
                       {name + ".memory.svg", report::render_svg(m.report)},
                       {name + ".report.html", report::render_html(m.report)},
                   });
}

}  // namespace tightfit::driver
