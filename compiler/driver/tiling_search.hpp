// Patch-based execution (passes/tile.cpp), searched: which stage of the scheduled graph runs in row
// bands or tiles, and how many, when the untiled plan does not fit the caps; and the report's
// RAM-against-cost table, the cheapest way found to each smaller arena.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "driver/concat_search.hpp"
#include "driver/options.hpp"
#include "driver/plan_schedule.hpp"
#include "passes/passes.hpp"

namespace tightfit::driver {

// What a row of the RAM-against-cost table applies: nothing (the file order, no overlap, every
// Concat copying), the free techniques (overlap, zero-copy Concat, order), a tiled stage, or the
// plan the cap kept with byte-aligned int8 buffers (untiled or with its stage).
enum class Technique { none, free, tiling, byte_aligned };
const char* to_string(Technique technique);

// One row of the report's "RAM against cost" table: the arena a plan needs and the MACs it adds.
struct CostLevel {
  Technique technique = Technique::none;
  std::uint64_t arena_bytes = 0;
  std::int64_t extra_macs = 0;               // over the untiled model (halo rows computed again)
  std::optional<std::int64_t> instructions;  // estimated on CompileOptions::cost_core, when it was measured
  std::optional<passes::TiledStage> stage;   // for `tiling` (and `byte_aligned` when tiled)
};

struct TilingResult {
  std::size_t kept_schedule = 0;            // the plan kept's, by index in tile_to_fit()'s `schedules`
  std::optional<passes::TiledStage> tiled;  // the stage the plan kept runs in bands; none: untiled
  std::vector<CostLevel> ram_vs_cost;
};

// `chosen` is the untiled plan, of `schedules[0]`; replaced by a tiled one when that is what fits
// under the caps of `regions`. The candidates are the stages of every schedule in `schedules` (each
// of `graph`, channels-last in file order), so the least arena is the least over them.
TilingResult tile_to_fit(const CompileOptions& options, const ir::Graph& graph, const std::vector<RegionSpec>& regions,
                         Scheduled& chosen, const std::vector<ScheduleChoice>& schedules,
                         const std::vector<passes::InPlaceInput>& in_place_inputs, const std::vector<PinSpec>& pins);

// "conv1 .. conv3 in 12 row bands (+3456 MACs, +1.2 %; 96 B copied)", for the report and exit 3.
std::string describe_stage(const passes::TiledStage& tiled, std::int64_t model_macs);

}  // namespace tightfit::driver
