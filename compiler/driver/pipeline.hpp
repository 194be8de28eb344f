// The compiler as one function: import -> passes -> schedule -> order -> memory plan (-> row bands
// when the cap asks) -> C++ emission -> report. Every stage is called from pipeline.cpp, in order;
// read it to follow a model through tightfit. The searches each have a file beside it:
// concat_search (Concat inputs written in place), order_search, tiling_search, and report_json.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "driver/options.hpp"
#include "driver/order_search.hpp"
#include "driver/tiling_search.hpp"
#include "ir/ir.hpp"
#include "passes/passes.hpp"
#include "plan/planner.hpp"
#include "schedule/lifetimes.hpp"

namespace tightfit::driver {

// Where the buffers' alignment came from: 4 by default, --alignment, or the cap (it needed 1).
enum class AlignmentSource { by_default, flag, cap };
const char* to_string(AlignmentSource source);

// How the buffers' alignment was chosen, for the report.
struct AlignmentChoice {
  std::uint32_t bytes = 4;  // of the int8 buffers as planned
  AlignmentSource source = AlignmentSource::by_default;
  // "cap": what the 4-byte aligned plans reached: the plan the cap would have kept (none when none
  // fit) and the least arena of their RAM-against-cost table.
  std::optional<std::uint64_t> aligned_arena_bytes;
  std::uint64_t aligned_least_bytes = 0;
};

// With a memory file whose regions have a cost: the plans weighed against each other ("Slow
// regions", docs/planner.md), for the report.
struct SlowRegionPlan {
  std::vector<std::uint64_t> region_bytes;  // the arena per region, in the memory file's order
  std::int64_t macs = 0;
  std::int64_t instructions = 0;  // estimated on cost_core; the MACs when it was not measured
  std::int64_t slow_cycles = 0;   // traffic in the regions with a cost, times their cycles per byte
};
// Which plan the slow regions' weighing kept: the one using them, or the one leaving them empty.
enum class SlowRegionKept { with_slow, free_only };
const char* to_string(SlowRegionKept kept);

struct SlowRegionChoice {
  std::optional<SlowRegionPlan> with_slow;  // the plan that may use them (none: it does not fit)
  std::optional<SlowRegionPlan> free_only;  // the regions with a cost left empty (none: nothing fits)
  SlowRegionKept kept = SlowRegionKept::with_slow;
};

struct CompiledModel {
  ir::Graph graph;  // after the channels-last stage and the order: what the code runs
  OrderChoice order;
  std::vector<passes::PadFold> pad_folds;      // the Pads folded away, for the report
  std::vector<passes::InPlaceInput> in_place;  // the Concat inputs written in place, for the report
  // When some Concat input could be written in place: the arenas planned with all of them in place
  // and with every Concat copying (the plan kept may have some in place: in_place lists them).
  std::optional<std::uint64_t> zero_copy_arena_bytes, copying_arena_bytes;
  std::optional<passes::TiledStage> tiled;  // the stage run in row bands, when the cap asked for one
  // The MACs the tiled stage adds (halo rows computed again); 0 untiled.
  std::int64_t extra_macs() const { return tiled ? tiled->tiled_macs - tiled->macs : 0; }
  std::int64_t macs = 0;               // of the model as compiled (a tiled stage's halo rows included)
  std::vector<CostLevel> ram_vs_cost;  // empty with --no-tiling
  AlignmentChoice alignment;
  schedule::Lifetimes lifetimes;
  std::vector<RegionSpec> regions;
  std::optional<SlowRegionChoice> slow_regions;  // only when a region has a cost and was used
  plan::Plan plan;
  std::uint64_t weights_bytes = 0;  // flash taken by constant data
  std::string header;               // NAME.hpp
  std::string source;               // NAME.cpp
  nlohmann::json report;            // NAME.report.json (docs/report.md)
};

// Runs every stage. Throws tightfit::Error: exit 1 for bad input, 3 when the model cannot fit under
// the cap (the message gives the minimum reachable and the tensors that hold it there).
CompiledModel compile_model(const CompileOptions& options);

// Step 1 without the options: the model file (ONNX or .tflite, import/) as the IR the passes
// start from, after the rewrites every model gets (a QOperator Gemm's Reshape + 1x1 Conv + Reshape
// as one FullyConnected, channel shuffles fused, unused tensors pruned), checked. `tightfit
// inspect` shows this graph.
ir::Graph import_graph(const std::string& path);

// Writes NAME.hpp, NAME.cpp and the report files into `dir`, all or nothing (util/write_files.hpp).
void write_outputs(const CompiledModel& model, const std::string& dir, const std::string& name);

}  // namespace tightfit::driver
