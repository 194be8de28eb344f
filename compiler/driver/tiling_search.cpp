#include "driver/tiling_search.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "cost/instructions.hpp"
#include "plan/planner.hpp"

namespace tightfit::driver {
namespace {

// The numbers of row bands of whole rows tried for a stage.
constexpr int kBandCounts[] = {2, 3, 4, 6, 8, 12, 16, 24, 32};
// The grids of tiles tried, R x R for each R (as MCUNetV2's patches: a tile's halo is least when
// its sides are alike). Up to 36 tiles: finer grids multiply the buffers the planner places (an
// 8x8 grid of SqueezeNet's first twelve nodes has 900) and the bytes copied, for little arena.
constexpr int kGridSides[] = {2, 3, 4, 6};
// Plans the cap's search may make before it settles, and the levels of the RAM-against-cost table.
constexpr std::size_t kTilingPlans = 16, kCostLevels = 8;
// Plans the search for the least arena may make (it stops earlier at the first bound not below it).
constexpr std::size_t kLeastPlans = 64;
// The node limit per buffer at which the planner's rounds of search end for those plans
// (plan::Options::nodes_per_buffer): a budget of counts, not of time, so that the same model gives
// the same table and the same choice on a busy machine (the time limit stays as a safety). Per
// buffer, since a grid's plans have hundreds: with a fixed 1,024 nodes a 6x6 grid's plan got one
// round and could end 25 % above its bound, where a model with a narrower layer got it right, so
// shrinking a layer raised the least arena (docs/tiling.md). It must end the plans before the
// time does even in the sanitizer build: grids stop at 6x6 (kGridSides) for that.
constexpr std::int64_t kTilingNodesPerBuffer = 8;

// The estimate's resolution in the tiling choice, as a share of the untiled plan's instructions:
// plans of equal MACs closer than that rank as equals. Below it the fit errs (bench/kernel_costs.py:
// a call's cost depends on what the C++ compiler makes of its constant shape; digits_cnn's 2 row
// bands were estimated 0.07 % cheaper than its 4 and measured 1.5 % dearer on the Cortex-M4).
constexpr double kEstimateResolution = 0.01;

struct TilingCandidate {
  std::size_t schedule = 0;  // the schedule it tiles, by index in tile_to_fit()'s `schedules`
  passes::Stage stage;
  std::int64_t extra_macs = 0;
  std::int64_t copied_bytes = 0;             // what a grid's tiles copy (passes::TiledStage)
  std::optional<std::int64_t> instructions;  // the tiled graph's, estimated (cost/instructions.hpp)
  std::uint64_t bound = 0;  // the live-sum bound of the tiled graph in its order: no plan of it is smaller
};

// Per step of `lifetimes`' schedule, the bytes live there less the most its overlap pair could
// share: no plan of that schedule has a step below it.
std::vector<std::uint64_t> least_live_bytes(const schedule::Lifetimes& lifetimes, std::size_t steps) {
  const plan::Problem& p = lifetimes.problem;
  std::vector<std::uint64_t> most_shared;
  for (const plan::Overlap& o : p.overlaps) most_shared.push_back(plan::most_shared_bytes(p, o));
  return plan::live_bytes_per_step(p, steps, lifetimes.overlap_step, most_shared);
}

// `count` of `items` spread evenly, the last always among them; all of them when they are no more.
std::vector<std::size_t> spread(const std::vector<std::size_t>& items, std::size_t count) {
  if (items.size() <= count) return items;
  std::vector<std::size_t> kept;
  for (std::size_t k = 0; k < count; ++k) kept.push_back(items[(k + 1) * items.size() / count - 1]);
  return kept;
}

// Every stage (the nodes of a run of steps, passes::stage_of_steps()) in every band count of the
// scheduled `graph`, with the MACs it adds and the bound it leaves. Only stages that can bring the
// bound below `arena`: the bands replace the stage's steps, and every step outside them keeps what
// is live there, so each step that needs `arena` bytes or more must lie inside. Stages that would
// take away a pinned tensor are left out.
std::vector<TilingCandidate> tiling_candidates(const CompileOptions& options, const ir::Graph& graph,
                                               const std::vector<PinSpec>& pins, std::uint64_t arena) {
  ir::Graph shapes = graph;  // what the bound needs: no weights
  for (ir::Tensor& t : shapes.tensors)
    if (t.is_constant) std::vector<std::uint8_t>().swap(t.data);
  std::map<std::string, int> step_of;
  for (std::size_t v = 0; v < shapes.nodes.size(); ++v) step_of[shapes.nodes[v].name] = static_cast<int>(v);
  const std::vector<std::uint64_t> live = least_live_bytes(lifetimes_of(options, shapes), shapes.nodes.size());
  int first_high = static_cast<int>(live.size()), last_high = -1;  // the steps that need `arena` or more
  for (std::size_t v = 0; v < live.size(); ++v)
    if (live[v] >= arena) first_high = std::min(first_high, static_cast<int>(v)), last_high = static_cast<int>(v);
  std::vector<TilingCandidate> candidates;
  for (int first = 0; first <= first_high; ++first) {
    for (int last = std::max(first + 1, last_high); last < static_cast<int>(shapes.nodes.size()); ++last) {
      const std::optional<passes::Stage> stage = passes::stage_of_steps(shapes, first, last);
      if (!stage) continue;
      // The tensors inside the stage are replaced by bands: none may be pinned.
      if (std::any_of(stage->nodes.begin(), stage->nodes.end() - 1, [&](const std::string& n) {
            const std::string& inside = shapes.tensors[shapes.nodes[step_of[n]].outputs[0]].name;
            return std::any_of(pins.begin(), pins.end(), [&](const PinSpec& p) { return p.tensor == inside; });
          }))
        continue;
      // A count above the output's rows (columns) becomes one band per row (one tile per column):
      // a smaller image keeps every tile size a larger one has (counts are discrete; sizes must not be).
      const std::vector<std::int64_t>& out =
          shapes.tensors[shapes.nodes[step_of[stage->nodes.back()]].outputs[0]].shape;
      std::set<std::tuple<int, int, bool>> grids;  // bands, columns, whole rows
      for (const int bands : kBandCounts)
        grids.insert({static_cast<int>(std::min<std::int64_t>(bands, out[1])), 1, true});
      for (const int side : kGridSides)
        grids.insert({static_cast<int>(std::min<std::int64_t>(side, out[1])),
                      static_cast<int>(std::min<std::int64_t>(side, out[2])), false});
      for (const auto& [bands, columns, whole_rows] : grids) {
        ir::Graph tiled = shapes;
        const std::optional<passes::TiledStage> done =
            passes::tile_stage(tiled, {stage->nodes, bands, columns, whole_rows});
        if (!done) continue;
        candidates.push_back({0, done->stage, done->tiled_macs - done->macs, done->copied_bytes,
                              cost::estimated_instructions(options.cost_core, tiled),
                              plan::live_sum_lower_bound(lifetimes_of(options, tiled).problem)});
      }
    }
  }
  return candidates;
}

// `graph` (scheduled, its Concat inputs chosen) with `stage` in row bands, planned.
Scheduled plan_tiled(const CompileOptions& options, ir::Graph graph, const passes::Stage& stage,
                     const std::vector<RegionSpec>& regions, const std::vector<PinSpec>& pins, double seconds,
                     passes::TiledStage& tiled) {
  tiled = *passes::tile_stage(graph, stage);  // a candidate of tiling_candidates(): it tiles
  passes::verify_after("tile_stage", graph);
  std::vector<int> order(graph.nodes.size());
  for (std::size_t v = 0; v < order.size(); ++v) order[v] = static_cast<int>(v);
  return schedule_and_plan(options, graph, order, regions, pins, seconds, kTilingNodesPerBuffer);
}

// "12 row bands", or "4x4 tiles" for bands split into columns.
std::string grid_name(const passes::Stage& s) {
  return s.whole_rows ? fmt::format("{} row bands", s.tiles) : fmt::format("{}x{} tiles", s.tiles, s.columns);
}

}  // namespace

const char* to_string(Technique technique) {
  switch (technique) {
    case Technique::none:
      return "none";
    case Technique::free:
      return "free";
    case Technique::tiling:
      return "tiling";
    case Technique::byte_aligned:
      return "byte_aligned";
  }
  return "none";
}

std::string describe_stage(const passes::TiledStage& t, std::int64_t model_macs) {
  return fmt::format(
      "{}{} in {} (+{} MACs, +{:.1f} %{})", t.stage.nodes.front(),
      t.stage.nodes.size() > 1 ? " .. " + t.stage.nodes.back() : "", grid_name(t.stage), t.tiled_macs - t.macs,
      100.0 * static_cast<double>(t.tiled_macs - t.macs) / static_cast<double>(std::max<std::int64_t>(1, model_macs)),
      t.copied_bytes ? fmt::format("; {} B copied", t.copied_bytes) : "");
}

namespace {

// The search of one model's stages: its candidates ranked, and those planned without the caps (for
// the least arena and the table) by index in `candidates`, with their arena and stage.
struct TilingSearch {
  TilingSearch(const CompileOptions& options, const ir::Graph& graph, const std::vector<RegionSpec>& regions,
               const Scheduled& untiled, const std::vector<ScheduleChoice>& schedules,
               const std::vector<passes::InPlaceInput>& in_place_inputs, const std::vector<PinSpec>& pins)
      : options(options),
        graph(graph),
        schedules(schedules),
        in_place_inputs(in_place_inputs),
        pins(pins),
        untiled_arena(untiled.plan.peak),
        untiled_instructions(cost::estimated_instructions(options.cost_core, untiled.graph)),
        uncapped(regions),
        total_cap(0) {
    for (RegionSpec& r : uncapped) {
      total_cap = total_cap && r.capacity ? std::optional<std::uint64_t>(*total_cap + *r.capacity) : std::nullopt;
      r.capacity.reset();
    }
  }

  const CompileOptions& options;
  const ir::Graph& graph;  // channels-last, in file order
  const std::vector<ScheduleChoice>& schedules;
  const std::vector<passes::InPlaceInput>& in_place_inputs;
  const std::vector<PinSpec>& pins;
  const std::uint64_t untiled_arena;
  const std::optional<std::int64_t> untiled_instructions;
  std::vector<RegionSpec> uncapped;        // the regions, none capped
  std::optional<std::uint64_t> total_cap;  // of all regions; none when one has no cap
  std::vector<TilingCandidate> candidates;
  std::map<std::size_t, std::pair<std::uint64_t, passes::TiledStage>> planned;

  ir::Graph base(std::size_t schedule) const { return scheduled_graph(graph, in_place_inputs, schedules[schedule]); }

  // Per plan, the planner's time limit at most, a safety: kTilingNodesPerBuffer ends it first, even in
  // the sanitizer build (where a fifth of it cut a grid's plans and moved the least arena).
  Scheduled plan(std::size_t i, const std::vector<RegionSpec>& regions, passes::TiledStage& tiled) const {
    return plan_tiled(options, base(candidates[i].schedule), candidates[i].stage, regions, pins,
                      options.time_limit_seconds, tiled);
  }

  std::uint64_t plan_uncapped(std::size_t i) {
    if (!planned.count(i)) {
      passes::TiledStage tiled;
      const Scheduled s = plan(i, uncapped, tiled);
      planned[i] = {s.plan.peak, tiled};
    }
    return planned[i].first;
  }

  // Every schedule's candidates: fewest extra MACs first, then fewest instructions as the measured
  // kernel costs estimate them (on a core that was measured; to kEstimateResolution of the untiled
  // plan's), then fewest bytes copied, then least bound; on a tie the schedule listed first (the
  // untiled plan's).
  void rank_candidates() {
    const auto estimate_step = [&](const std::optional<std::int64_t>& instructions) -> std::int64_t {
      if (!instructions || !untiled_instructions) return 0;
      const double step = std::max(1.0, kEstimateResolution * static_cast<double>(*untiled_instructions));
      return std::llround(static_cast<double>(*instructions) / step);
    };
    for (std::size_t k = 0; k < schedules.size(); ++k)
      for (TilingCandidate& c : tiling_candidates(options, base(k), pins, untiled_arena)) {
        c.schedule = k;
        candidates.push_back(std::move(c));
      }
    std::stable_sort(candidates.begin(), candidates.end(), [&](const TilingCandidate& a, const TilingCandidate& b) {
      const std::int64_t a_steps = estimate_step(a.instructions), b_steps = estimate_step(b.instructions);
      return std::tie(a.extra_macs, a_steps, a.copied_bytes, a.bound) <
             std::tie(b.extra_macs, b_steps, b.copied_bytes, b.bound);
    });
  }

  // The least arena of every candidate: by bound (then MACs), each planned, until the next bound is
  // not below the least arena found (no plan is below its bound) or kLeastPlans are tried. What
  // stops it is the bound, not how many candidates there are, so a smaller model cannot lose the
  // stage and grid that reached a larger one's least (docs/tiling.md). The same stage and grid on
  // another schedule is planned too, even with the same bound: the schedules write other Concat
  // inputs in place, which binds offsets and can keep one plan above its bound where the other meets
  // it (a shrunk model whose first schedule missed it lost its least level that way).
  void plan_least_arena() {
    std::vector<std::size_t> by_bound(candidates.size());
    for (std::size_t i = 0; i < by_bound.size(); ++i) by_bound[i] = i;
    std::stable_sort(by_bound.begin(), by_bound.end(),
                     [&](std::size_t a, std::size_t b) { return candidates[a].bound < candidates[b].bound; });
    std::optional<std::size_t> least;
    for (std::size_t k = 0; k < by_bound.size() && k < kLeastPlans; ++k) {
      const std::size_t i = by_bound[k];
      const std::uint64_t best = least ? planned[*least].first : untiled_arena;
      if (candidates[i].bound >= best) break;
      if (plan_uncapped(i) < best) least = i;
    }
  }

  // The table's frontier of bounds (fewest MACs for each smaller bound), kCostLevels of it at most,
  // planned without the caps.
  void plan_frontier() {
    std::vector<std::size_t> frontier;
    for (std::size_t i = 0; i < candidates.size(); ++i)
      if (candidates[i].bound < (frontier.empty() ? untiled_arena : candidates[frontier.back()].bound))
        frontier.push_back(i);
    for (const std::size_t i : spread(frontier, kCostLevels)) plan_uncapped(i);
  }

  // The fewest extra MACs whose plan fits `regions`' caps: kTilingPlans of the candidates whose
  // bound fits, then the candidates planned above (the least arena's stage and the table's) whose
  // arena fits the caps, by extra MACs (so a cap at any level of the table compiles, at that level's
  // MACs or fewer, even when the first candidates' plans end above their bounds). Into `chosen` and
  // `result` when one fits.
  void fit_under_caps(const std::vector<RegionSpec>& regions, Scheduled& chosen, TilingResult& result) {
    std::vector<std::size_t> tries;
    for (std::size_t i = 0; i < candidates.size() && tries.size() < kTilingPlans; ++i)
      if (!total_cap || candidates[i].bound <= *total_cap) tries.push_back(i);
    for (const auto& [i, arena_and_stage] : planned)  // by index: by extra MACs
      if ((!total_cap || arena_and_stage.first <= *total_cap) &&
          std::find(tries.begin(), tries.end(), i) == tries.end())
        tries.push_back(i);
    for (const std::size_t i : tries) {
      passes::TiledStage tiled;
      Scheduled s = plan(i, regions, tiled);
      if (s.plan.status == plan::Status::Infeasible) continue;
      chosen = std::move(s);
      result.tiled = tiled;
      result.kept_schedule = candidates[i].schedule;
      return;
    }
  }

  // The table: nothing (the file order, no overlap, every Concat copying), the free techniques, and
  // the frontier of the planned candidates (the frontier of bounds above, and the least arena); of
  // them, by extra MACs, a level is kept when its arena is below the one before, kCostLevels at
  // most, the least arena always.
  std::vector<CostLevel> cost_table() {
    CompileOptions bare = options;
    bare.overlap = false;
    bare.reorder = false;
    OrderChoice ignored;
    const Scheduled none =
        order_and_plan(bare, graph, uncapped, pins, options.time_limit_seconds, ignored, kTilingNodesPerBuffer);
    std::vector<CostLevel> table;
    table.push_back(
        {Technique::none, none.plan.peak, 0, cost::estimated_instructions(options.cost_core, none.graph), {}});
    table.push_back({Technique::free, untiled_arena, 0, untiled_instructions, {}});
    std::vector<std::size_t> rows;  // planned candidates by extra MACs (then index: `candidates` order)
    for (const auto& p : planned)
      if (p.second.first < (rows.empty() ? untiled_arena : planned[rows.back()].first)) rows.push_back(p.first);
    for (const std::size_t i : spread(rows, kCostLevels)) {
      const auto& [arena, tiled] = planned[i];
      table.push_back({Technique::tiling, arena, tiled.tiled_macs - tiled.macs, candidates[i].instructions, tiled});
    }
    return table;
  }
};

}  // namespace

TilingResult tile_to_fit(const CompileOptions& options, const ir::Graph& graph, const std::vector<RegionSpec>& regions,
                         Scheduled& chosen, const std::vector<ScheduleChoice>& schedules,
                         const std::vector<passes::InPlaceInput>& in_place_inputs, const std::vector<PinSpec>& pins) {
  TilingSearch search(options, graph, regions, chosen, schedules, in_place_inputs, pins);
  search.rank_candidates();
  search.plan_least_arena();
  search.plan_frontier();
  TilingResult result;
  if (chosen.plan.status == plan::Status::Infeasible) search.fit_under_caps(regions, chosen, result);
  result.ram_vs_cost = search.cost_table();
  return result;
}

}  // namespace tightfit::driver
