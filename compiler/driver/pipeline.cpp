#include "driver/pipeline.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>


#include "cli/size.hpp"
#include "cost/instructions.hpp"
#include "emit/emit_cpp.hpp"
#include "error.hpp"
#include "import/import.hpp"
#include "ops/operator.hpp"
#include "plan/validate.hpp"
#include "passes/passes.hpp"
#include "report/report.hpp"
#include "schedule/channels_last.hpp"
#include "util/model_text.hpp"
#include "util/write_files.hpp"

#ifndef TIGHTFIT_VERSION
#error "TIGHTFIT_VERSION must be defined by the build"
#endif

namespace tightfit::driver {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::uint64_t size_field(const json& j, const std::string& file, const std::string& what) {
  if (j.is_number_unsigned()) return j.get<std::uint64_t>();
  if (j.is_string()) {
    if (auto bytes = parse_size(j.get<std::string>())) return *bytes;
  }
  throw Error(file + ": " + what + " is not a size (write 65536 or \"64K\")");
}

}  // namespace

void check_section_name(const std::string& section, const std::string& context) {
  // It is written into the generated code as __attribute__((section("..."))): nothing that could
  // end the string. Linker section names are letters, digits and . _ $ - + @.
  const bool ok = !section.empty() && std::all_of(section.begin(), section.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("._$-+@").find(c) != std::string_view::npos;
  });
  if (!ok) throw Error(context + ": section '" + section + "' is not a linker section name (letters, digits, . _ $ - + @)");
}

// The --memory file: {"regions": [{"name": "DTCM", "size": "128K", "section": ".dtcm"}, ...],
//                     "pins": [{"tensor": "x", "region": "DTCM", "offset": 0}]}
// A region may give "cycles_per_byte" (its bandwidth cost, docs/planner.md, "Slow regions").
void read_memory_file(const std::string& path, std::vector<RegionSpec>& regions, std::vector<PinSpec>& pins) {
  std::ifstream in(path);
  if (!in) throw Error(path + ": cannot open the memory description");
  json doc;
  try {
    doc = json::parse(in);
  } catch (const json::exception& e) {
    throw Error(path + ": not valid JSON (" + std::string(e.what()) + ")");
  }
  if (!doc.is_object() || !doc.contains("regions") || !doc["regions"].is_array() || doc["regions"].empty())
    throw Error(path + ": needs a non-empty \"regions\" list, fastest region first");
  const std::size_t first = regions.size();
  for (const json& r : doc["regions"]) {
    if (!r.is_object() || !r.contains("name") || !r["name"].is_string() || !r.contains("size"))
      throw Error(path + ": every region needs a \"name\" and a \"size\"");
    RegionSpec spec;
    spec.name = r["name"].get<std::string>();
    spec.capacity = size_field(r["size"], path, "region '" + spec.name + "' size");
    if (r.contains("section")) {
      if (!r["section"].is_string()) throw Error(path + ": region '" + spec.name + "': \"section\" is not a string");
      spec.section = r["section"].get<std::string>();
      check_section_name(spec.section, path + ": region '" + spec.name + "'");
    }
    if (r.contains("cycles_per_byte")) {
      const json& c = r["cycles_per_byte"];
      if (!c.is_number() || !(c.get<double>() >= 0) || c.get<double>() > 1e6)
        throw Error(path + ": region '" + spec.name + "': \"cycles_per_byte\" is not a number from 0 to 1e6");
      spec.cycles_per_byte = c.get<double>();
    }
    regions.push_back(spec);
  }
  // Each region becomes an array named after it in the generated code: the names must differ there.
  const std::size_t count = regions.size() - first;
  for (std::size_t i = first; i < regions.size(); ++i)
    for (std::size_t j = first; j < i; ++j)
      if (emit::arena_name(count, regions[i].name) == emit::arena_name(count, regions[j].name))
        throw Error(path + ": regions '" + regions[j].name + "' and '" + regions[i].name +
                    "' have the same name in C++ (" + emit::arena_name(count, regions[i].name) + ")");
  if (doc.contains("pins")) {
    if (!doc["pins"].is_array()) throw Error(path + ": \"pins\" is not a list");
    for (const json& p : doc["pins"]) {
      if (!p.is_object() || !p.contains("tensor") || !p["tensor"].is_string() || !p.contains("region") ||
          !p["region"].is_string())
        throw Error(path + ": every pin needs a \"tensor\" and a \"region\" (strings)");
      pins.push_back({p["tensor"].get<std::string>(), p["region"].get<std::string>(),
                      p.contains("offset") ? size_field(p["offset"], path, "pin offset") : 0});
    }
  }
}

namespace {

plan::Problem make_problem(const CompileOptions& options, const schedule::Lifetimes& lifetimes,
                           const ir::Graph& graph, const std::vector<RegionSpec>& regions,
                           const std::vector<PinSpec>& pins) {
  plan::Problem problem = lifetimes.problem;
  for (const RegionSpec& r : regions) {
    plan::Region region;
    region.name = r.name;
    if (r.capacity) region.capacity = *r.capacity;
    region.alignment = 16;
    problem.regions.push_back(region);
  }
  for (const PinSpec& pin : pins) {
    auto region = std::find_if(regions.begin(), regions.end(), [&](const RegionSpec& r) { return r.name == pin.region; });
    if (region == regions.end()) throw Error(options.model + ": pin of '" + pin.tensor + "' names no region '" + pin.region + "'");
    int buffer = -1;
    for (std::size_t t = 0; t < graph.tensors.size(); ++t)
      if (graph.tensors[t].name == pin.tensor) buffer = lifetimes.tensor_buffer[t];
    if (buffer < 0) throw Error(options.model + ": pin: no activation tensor named '" + pin.tensor + "'");
    if (pin.offset % problem.buffers[buffer].alignment != 0)
      throw Error(options.model + ": pin of '" + pin.tensor + "': offset " + std::to_string(pin.offset) +
                  " is not a multiple of the alignment " + std::to_string(problem.buffers[buffer].alignment));
    problem.buffers[buffer].pin = plan::Pin{static_cast<int>(region - regions.begin()), pin.offset};
  }
  return problem;
}

// One order of the nodes with its buffers and their plan.
struct Scheduled {
  std::vector<int> order;  // file indices in execution order
  ir::Graph graph;         // the nodes in that order
  schedule::Lifetimes lifetimes;
  plan::Problem problem;
  plan::Plan plan;
};

// A schedule planned for the untiled arena (step 3, plan_model()): which Concat inputs are
// written in place and the order of the nodes. Tiling searches each of them, not only the one whose
// untiled arena is least: a schedule with a larger untiled arena can leave a peak that row bands
// take away better, and a shrunk model may pick another schedule than its original
// (docs/tiling.md, "Predictable in the model's size").
struct ScheduleChoice {
  std::vector<bool> in_place;  // by index in passes::zero_copy_candidates()
  std::vector<int> order;      // file indices in execution order
  OrderChoice order_choice;    // the order search that gave it, its moved nodes those of `order`
};

// `graph` (channels-last, in file order) with the Concat inputs `in_place` marks written in place.
ir::Graph with_in_place(const ir::Graph& graph, const std::vector<passes::InPlaceInput>& in_place_inputs,
                        const std::vector<bool>& in_place) {
  ir::Graph result = graph;
  for (std::size_t k = 0; k < in_place_inputs.size(); ++k)
    if (in_place[k]) passes::write_in_place(result, in_place_inputs[k]);
  passes::verify_after("write_in_place", result);
  return result;
}

// `graph` (channels-last, in file order) with `choice`'s Concat inputs written in place, in its order.
ir::Graph scheduled_graph(const ir::Graph& graph, const std::vector<passes::InPlaceInput>& in_place_inputs,
                          const ScheduleChoice& choice) {
  ir::Graph scheduled = with_in_place(graph, in_place_inputs, choice.in_place);
  schedule::reorder_nodes(scheduled, choice.order);
  passes::verify_after("reorder_nodes", scheduled);
  return scheduled;
}

// One buffer per tensor that needs memory, plus kernel scratch, live over the graph's node order.
schedule::Lifetimes lifetimes_of(const CompileOptions& options, const ir::Graph& graph) {
  schedule::LifetimeOptions lifetime_options;
  lifetime_options.alignment = *options.alignment;
  lifetime_options.io_in_arena = options.io_in_arena;
  if (options.overlap)
    lifetime_options.overlap_distance = [&](const ir::Node& n, std::size_t input) {
      return ops::overlap_distance(graph, n, input);
    };
  return schedule::compute_lifetimes(
      graph, [&](const ir::Node& n) { return emit::scratch_bytes(graph, n); }, lifetime_options);
}

Scheduled schedule_and_plan(const CompileOptions& options, const ir::Graph& graph, const std::vector<int>& order,
                            const std::vector<RegionSpec>& regions, const std::vector<PinSpec>& pins, double seconds,
                            std::int64_t nodes_per_buffer = 0) {
  Scheduled s{order, graph, {}, {}, {}};
  schedule::reorder_nodes(s.graph, order);
  s.lifetimes = lifetimes_of(options, s.graph);
  s.problem = make_problem(options, s.lifetimes, s.graph, regions, pins);
  plan::Options plan_options;
  plan_options.time_limit_seconds = seconds;
  plan_options.nodes_per_buffer = nodes_per_buffer;
  plan_options.on_progress = options.on_plan_progress;
  s.plan = plan::solve(s.problem, plan_options);
  return s;
}

// The nodes of `order` (file indices in execution order) not at their file position.
int moved_nodes(const std::vector<int>& order) {
  int moved = 0;
  for (std::size_t step = 0; step < order.size(); ++step) moved += order[step] != static_cast<int>(step);
  return moved;
}

// Whether plan `a` beats `b`: it fits under the caps where `b` does not, or takes fewer bytes;
// on a tie, the file order wins.
bool better_plan(const plan::Plan& a, const plan::Plan& b, bool a_in_file_order) {
  const bool a_fits = a.status != plan::Status::Infeasible, b_fits = b.status != plan::Status::Infeasible;
  if (a_fits != b_fits) return a_fits;
  return a.peak < b.peak || (a.peak == b.peak && a_in_file_order);
}

// The order and the plan of one graph, solved together: the order search (schedule/order.hpp)
// gives the order with the least live-sum bound; the exact planner places the buffers of that
// order, of the file order and, when the first misses its bound, of another order tied with it,
// and the smallest arena wins (the file order on a tie). They share `seconds`. Every order planned
// is appended to `planned_orders` when given.
Scheduled order_and_plan(const CompileOptions& options, const ir::Graph& graph, const std::vector<RegionSpec>& regions,
                         const std::vector<PinSpec>& pins, double seconds, OrderChoice& order,
                         std::int64_t nodes_per_buffer = 0, std::vector<std::vector<int>>* planned_orders = nullptr) {
  order = OrderChoice{};
  std::vector<int> file_order(graph.nodes.size());
  for (std::size_t v = 0; v < file_order.size(); ++v) file_order[v] = static_cast<int>(v);
  std::vector<std::vector<int>> candidates{file_order};
  schedule::OrderResult searched;
  // An If's branches keep the importer's order: the search knows nothing of branches.
  if (options.reorder && !graph.has_if()) {
    searched = schedule::best_order(schedule::order_problem(graph, lifetimes_of(options, graph)));
    order.search = searched.exact ? "exact" : "beam";
    order.states = searched.states;
    order.search_gap_bytes = searched.peak - searched.lower_bound;
    if (searched.order != file_order) candidates.insert(candidates.begin(), searched.order);
    if (!searched.other_best_order.empty() && searched.other_best_order != file_order)
      candidates.push_back(searched.other_best_order);
  }
  const std::size_t tied = candidates.size() - (searched.other_best_order.empty() ? 0 : 1);
  const auto start = std::chrono::steady_clock::now();
  std::optional<Scheduled> chosen;
  order.candidates = 0;
  for (std::size_t c = 0; c < candidates.size(); ++c) {
    // The tied order is only worth its time when the first missed its bound.
    if (c == tied && chosen->plan.peak <= chosen->plan.lower_bound) break;
    const double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double share = std::max(0.0, seconds - spent) / static_cast<double>(candidates.size() - c);
    Scheduled s = schedule_and_plan(options, graph, candidates[c], regions, pins, share, nodes_per_buffer);
    ++order.candidates;
    if (planned_orders) planned_orders->push_back(candidates[c]);
    if (candidates[c] == file_order) {
      order.file_order_bound_bytes = plan::live_sum_lower_bound(s.problem);
      order.file_order_arena_bytes = s.plan.peak;
    }
    if (!chosen || better_plan(s.plan, chosen->plan, candidates[c] == file_order)) chosen = std::move(s);
  }
  order.moved_nodes = moved_nodes(chosen->order);
  return std::move(*chosen);
}

// ----- Patch-based execution (passes/tile.cpp) ------------------------------------------------

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
  std::int64_t copied_bytes = 0;  // what a grid's tiles copy (passes::TiledStage)
  std::optional<std::int64_t> instructions;  // the tiled graph's, estimated (cost/instructions.hpp)
  std::uint64_t bound = 0;  // the live-sum bound of the tiled graph in its order: no plan of it is smaller
};

// Per step of `lifetimes`' schedule, the bytes live there less the most its overlap pair could
// share: no plan of that schedule has a step below it.
std::vector<std::uint64_t> least_live_bytes(const schedule::Lifetimes& lifetimes, std::size_t steps) {
  const plan::Problem& p = lifetimes.problem;
  std::vector<std::uint64_t> live(steps, 0);
  for (const plan::Buffer& b : p.buffers)
    for (int v = b.first_step; v <= b.last_step; ++v)
      if (b.live_at(v)) live[static_cast<std::size_t>(v)] += b.size;
  for (std::size_t k = 0; k < p.overlaps.size(); ++k) {
    const plan::Overlap& o = p.overlaps[k];
    const std::uint64_t out = p.buffers[o.output].size, in = p.buffers[o.input].size;
    const std::uint64_t shared = std::max(o.below && *o.below < out ? std::min(out - *o.below, in) : 0,
                                          o.above && *o.above < in ? std::min(in - *o.above, out) : 0);
    live[static_cast<std::size_t>(lifetimes.overlap_step[k])] -= shared;
  }
  return live;
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
      const std::vector<std::int64_t>& out = shapes.tensors[shapes.nodes[step_of[stage->nodes.back()]].outputs[0]].shape;
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

// Step 5, in plan_model(): `chosen` is the untiled plan, of `schedules[0]`; replaced by a tiled one
// when that is what fits under the caps. The candidates are the stages of every schedule in
// `schedules` (each of m.graph), so the least arena is the least over them. Fills m.tiled and
// m.ram_vs_cost; returns the index in `schedules` of the plan kept.
std::size_t tile_to_fit(const CompileOptions& options, CompiledModel& m, std::optional<Scheduled>& chosen,
                        const std::vector<ScheduleChoice>& schedules,
                        const std::vector<passes::InPlaceInput>& in_place_inputs, const std::vector<PinSpec>& pins) {
  const std::uint64_t untiled_arena = chosen->plan.peak;
  const std::optional<std::int64_t> untiled_instructions = cost::estimated_instructions(options.cost_core, chosen->graph);
  auto base = [&](std::size_t schedule) { return scheduled_graph(m.graph, in_place_inputs, schedules[schedule]); };
  // Fewest extra MACs first, then fewest instructions as the measured kernel costs estimate them
  // (on a core that was measured; to kEstimateResolution of the untiled plan's), then fewest bytes
  // copied, then least bound; on a tie the schedule listed first (the untiled plan's).
  const auto estimate_step = [&](const std::optional<std::int64_t>& instructions) -> std::int64_t {
    if (!instructions || !untiled_instructions) return 0;
    const double step = std::max(1.0, kEstimateResolution * static_cast<double>(*untiled_instructions));
    return std::llround(static_cast<double>(*instructions) / step);
  };
  std::vector<TilingCandidate> candidates;
  for (std::size_t k = 0; k < schedules.size(); ++k)
    for (TilingCandidate& c : tiling_candidates(options, base(k), pins, untiled_arena)) {
      c.schedule = k;
      candidates.push_back(std::move(c));
    }
  std::stable_sort(candidates.begin(), candidates.end(), [&](const TilingCandidate& a, const TilingCandidate& b) {
    const std::int64_t a_steps = estimate_step(a.instructions), b_steps = estimate_step(b.instructions);
    return std::tie(a.extra_macs, a_steps, a.copied_bytes, a.bound) < std::tie(b.extra_macs, b_steps, b.copied_bytes, b.bound);
  });
  // Per plan, the planner's time limit at most, a safety: kTilingNodesPerBuffer ends it first, even in
  // the sanitizer build (where a fifth of it cut a grid's plans and moved the least arena).
  const double seconds = options.time_limit_seconds;
  std::optional<std::uint64_t> total_cap = 0;
  std::vector<RegionSpec> uncapped = m.regions;
  for (RegionSpec& r : uncapped) {
    total_cap = total_cap && r.capacity ? std::optional<std::uint64_t>(*total_cap + *r.capacity) : std::nullopt;
    r.capacity.reset();
  }

  // The candidates planned without the caps, by index in `candidates`: their arena and stage.
  std::map<std::size_t, std::pair<std::uint64_t, passes::TiledStage>> planned;
  auto plan_uncapped = [&](std::size_t i) {
    if (!planned.count(i)) {
      passes::TiledStage tiled;
      const Scheduled s =
          plan_tiled(options, base(candidates[i].schedule), candidates[i].stage, uncapped, pins, seconds, tiled);
      planned[i] = {s.plan.peak, tiled};
    }
    return planned[i].first;
  };
  // The least arena of every candidate: by bound (then MACs), each planned, until the next bound is
  // not below the least arena found (no plan is below its bound) or kLeastPlans are tried. What
  // stops it is the bound, not how many candidates there are, so a smaller model cannot lose the
  // stage and grid that reached a larger one's least (docs/tiling.md). The same stage and grid on
  // another schedule is planned too, even with the same bound: the schedules write other Concat
  // inputs in place, which binds offsets and can keep one plan above its bound where the other meets
  // it (a shrunk model whose first schedule missed it lost its least level that way).
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

  // The table's frontier of bounds (fewest MACs for each smaller bound), kCostLevels of it at most,
  // planned without the caps.
  std::vector<std::size_t> frontier;
  for (std::size_t i = 0; i < candidates.size(); ++i)
    if (candidates[i].bound < (frontier.empty() ? untiled_arena : candidates[frontier.back()].bound))
      frontier.push_back(i);
  for (std::size_t k = 0; k < std::min(frontier.size(), kCostLevels); ++k)
    plan_uncapped(frontier[frontier.size() <= kCostLevels ? k : (k + 1) * frontier.size() / kCostLevels - 1]);

  std::size_t kept = 0;
  if (chosen->plan.status == plan::Status::Infeasible) {
    // The fewest extra MACs whose plan fits: kTilingPlans of the candidates whose bound fits, then
    // the candidates planned above (the least arena's stage and the table's) whose arena fits the
    // caps, by extra MACs (so a cap at any level of the table compiles, at that level's MACs or
    // fewer, even when the first candidates' plans end above their bounds).
    std::vector<std::size_t> tries;
    for (std::size_t i = 0; i < candidates.size() && tries.size() < kTilingPlans; ++i)
      if (!total_cap || candidates[i].bound <= *total_cap) tries.push_back(i);
    for (const auto& [i, arena_and_stage] : planned)  // by index: by extra MACs
      if ((!total_cap || arena_and_stage.first <= *total_cap) && std::find(tries.begin(), tries.end(), i) == tries.end())
        tries.push_back(i);
    for (const std::size_t i : tries) {
      passes::TiledStage tiled;
      Scheduled s =
          plan_tiled(options, base(candidates[i].schedule), candidates[i].stage, m.regions, pins, seconds, tiled);
      if (s.plan.status == plan::Status::Infeasible) continue;
      chosen = std::move(s);
      m.tiled = tiled;
      kept = candidates[i].schedule;
      break;
    }
  }

  // The table: nothing (the file order, no overlap, every Concat copying), the free techniques, and
  // the frontier of the planned candidates (the frontier of bounds above, and the least arena); of
  // them, by extra MACs, a level is kept when its arena is below the one before, kCostLevels at
  // most, the least arena always.
  CompileOptions bare = options;
  bare.overlap = false;
  bare.reorder = false;
  OrderChoice ignored;
  const Scheduled none = order_and_plan(bare, m.graph, uncapped, pins, seconds, ignored, kTilingNodesPerBuffer);
  m.ram_vs_cost.push_back(
      {"none", none.plan.peak, 0, cost::estimated_instructions(options.cost_core, none.graph), {}});
  m.ram_vs_cost.push_back({"free", untiled_arena, 0, untiled_instructions, {}});
  std::vector<std::size_t> rows;  // planned candidates by extra MACs (then index: `candidates` order)
  for (const auto& p : planned)
    if (p.second.first < (rows.empty() ? untiled_arena : planned[rows.back()].first)) rows.push_back(p.first);
  for (std::size_t k = 0; k < std::min(rows.size(), kCostLevels); ++k) {
    const std::size_t i = rows[rows.size() <= kCostLevels ? k : (k + 1) * rows.size() / kCostLevels - 1];
    const auto& [arena, tiled] = planned[i];
    m.ram_vs_cost.push_back({"tiling", arena, tiled.tiled_macs - tiled.macs, candidates[i].instructions, tiled});
  }
  return kept;
}

// "12 row bands", or "4x4 tiles" for bands split into columns.
std::string grid_name(const passes::Stage& s) {
  return s.whole_rows ? fmt::format("{} row bands", s.tiles) : fmt::format("{}x{} tiles", s.tiles, s.columns);
}

std::string describe_stage(const passes::TiledStage& t, std::int64_t model_macs) {
  return fmt::format("{}{} in {} (+{} MACs, +{:.1f} %{})", t.stage.nodes.front(),
                     t.stage.nodes.size() > 1 ? " .. " + t.stage.nodes.back() : "", grid_name(t.stage),
                     t.tiled_macs - t.macs,
                     100.0 * static_cast<double>(t.tiled_macs - t.macs) / static_cast<double>(std::max<std::int64_t>(1, model_macs)),
                     t.copied_bytes ? fmt::format("; {} B copied", t.copied_bytes) : "");
}

std::int64_t graph_macs(const ir::Graph& g) {
  std::int64_t macs = 0;
  for (const ir::Node& n : g.nodes) macs += ops::macs(g, n);
  return macs;
}

json shape_json(const std::vector<std::int64_t>& shape) { return json(shape); }

// TFLite Micro's greedy planner on the same buffers, as its MicroAllocator would hand them over
// (sizes rounded to 16 bytes, docs/report.md). The order breaks ties of size; TFLM adds tensors
// in the converted model's tensor order, which an ONNX file does not have, so here the tensors
// go by first use in the schedule, then by tensor index, and the kernels' scratch buffers (which
// TFLM requests after all tensors) last, by step.
std::uint64_t tflm_greedy_bytes(const plan::Problem& problem, const schedule::Lifetimes& lifetimes) {
  std::vector<std::size_t> order(problem.buffers.size());
  for (std::size_t b = 0; b < order.size(); ++b) order[b] = b;
  auto key = [&](std::size_t b) {  // buffers are in tensor order, then scratch in step order
    const bool scratch = lifetimes.buffer_tensor[b] == ir::kNoTensor;
    return std::make_pair(scratch, scratch ? 0 : problem.buffers[b].first_step);
  };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return key(a) < key(b); });
  plan::Problem tflm{problem.regions, {}, {}};
  for (const std::size_t b : order) tflm.buffers.push_back(problem.buffers[b]);
  return plan::greedy_by_size(tflm).peak;
}

// The extra MACs of the stage a plan tiles (0 untiled).
std::int64_t extra_macs(const CompiledModel& m) { return m.tiled ? m.tiled->tiled_macs - m.tiled->macs : 0; }

// Each rewrite of the graph that removed a buffer (docs/report.md, "Rewrites").
json rewrites_json(const CompiledModel& m) {
  json rewrites = json::array();
  for (const passes::PadFold& f : m.pad_folds)
    rewrites.push_back({{"technique", "fold_pad"},
                        {"node", f.pad},
                        {"into", f.into},
                        {"op", f.into_op},
                        {"tensor", f.tensor},
                        {"saved_bytes", f.bytes},
                        {"detail", fmt::format("pads top {}, left {}, bottom {}, right {}", f.pads[0], f.pads[1],
                                               f.pads[2], f.pads[3])}});
  for (const passes::InPlaceInput& in : m.in_place)
    rewrites.push_back({{"technique", "zero_copy_concat"},
                        {"node", in.concat},
                        {"into", in.producer},
                        {"op", in.producer_op},
                        {"tensor", in.tensor},
                        {"saved_bytes", in.bytes},
                        {"detail", in.contiguous ? fmt::format("one block at element {}", in.offset)
                                                 : fmt::format("channels from {}, pixel stride {}", in.offset,
                                                               in.pixel_stride)}});
  if (m.tiled)
    rewrites.push_back({{"technique", "tiling"},
                        {"node", m.tiled->stage.nodes.front()},
                        {"into", m.tiled->stage.nodes.back()},
                        {"op", m.tiled->stage.whole_rows ? "row bands" : "tiles"},
                        {"tensor", m.tiled->output},
                        {"saved_bytes", m.ram_vs_cost.size() > 1 && m.ram_vs_cost[1].arena_bytes > m.plan.peak
                                            ? m.ram_vs_cost[1].arena_bytes - m.plan.peak
                                            : 0},
                        {"detail", describe_stage(*m.tiled, m.macs - extra_macs(m))}});
  return rewrites;
}

// The report's "RAM against cost" table (docs/report.md).
json ram_vs_cost_json(const CompiledModel& m) {
  json levels = json::array();
  const std::int64_t untiled_macs = m.macs - extra_macs(m);
  // The row this plan is: the one the cap took with byte-aligned buffers, or its tiled stage, or
  // the free row.
  const bool byte_aligned = m.alignment.source == "cap";
  auto chosen = [&](const CostLevel& level) {
    if (byte_aligned) return level.technique == "byte_aligned";
    return m.tiled ? level.technique == "tiling" && level.stage->stage == m.tiled->stage : level.technique == "free";
  };
  for (const CostLevel& level : m.ram_vs_cost) {
    json stage = nullptr;
    if (level.stage)
      stage = {{"nodes", level.stage->stage.nodes},
               {"bands", level.stage->stage.tiles},
               {"columns", level.stage->stage.columns},
               {"whole_rows", level.stage->stage.whole_rows},
               {"copied_bytes", level.stage->copied_bytes},
               {"input", level.stage->input},
               {"output", level.stage->output}};
    levels.push_back({{"technique", level.technique},
                      {"arena_bytes", level.arena_bytes},
                      {"extra_macs", level.extra_macs},
                      {"extra_macs_percent", 100.0 * static_cast<double>(level.extra_macs) /
                                                 static_cast<double>(std::max<std::int64_t>(1, untiled_macs))},
                      {"estimated_instructions", level.instructions ? json(*level.instructions) : json(nullptr)},
                      {"stage", stage},
                      {"chosen", chosen(level)}});
  }
  return levels;
}

// The report's "slow_regions": the two plans weighed and the one kept; null when no region with
// a cost held a buffer.
json slow_regions_json(const CompiledModel& m) {
  if (!m.slow_regions) return nullptr;
  const auto plan_json = [](const std::optional<SlowRegionPlan>& p) -> json {
    if (!p) return nullptr;
    return {{"region_bytes", p->region_bytes},
            {"macs", p->macs},
            {"instructions", p->instructions},
            {"slow_cycles", p->slow_cycles}};
  };
  return {{"with_slow", plan_json(m.slow_regions->with_slow)},
          {"free_only", plan_json(m.slow_regions->free_only)},
          {"kept", m.slow_regions->kept}};
}

json build_report(const CompileOptions& options, const CompiledModel& m, const plan::Problem& problem,
                  const emit::EmittedCode& code) {
  const ir::Graph& g = m.graph;
  const plan::Plan& p = m.plan;
  const auto& lt = m.lifetimes;
  std::map<ir::TensorId, const ir::Node*> producer;
  for (const ir::Node& n : g.nodes)
    for (ir::TensorId t : n.outputs) producer[t] = &n;

  json buffers = json::array();
  std::uint64_t no_reuse = 0;
  for (std::size_t b = 0; b < problem.buffers.size(); ++b) {
    const plan::Buffer& buf = problem.buffers[b];
    const ir::TensorId t = lt.buffer_tensor[b];
    std::string kind = "scratch";
    const ir::Node* writer = nullptr;  // the node that writes the buffer; none for a graph input
    if (t != ir::kNoTensor) {
      kind = "activation";
      if (std::find(g.inputs.begin(), g.inputs.end(), t) != g.inputs.end()) kind = "input";
      if (std::find(g.outputs.begin(), g.outputs.end(), t) != g.outputs.end()) kind = "output";
      if (producer.count(t)) writer = producer[t];
    } else {
      writer = &g.nodes[lt.buffer_scratch_node[b]];
    }
    const json producer_name = writer ? json(writer->name) : json(nullptr);
    const json op = writer ? json(ir::op_name(writer->op)) : json(nullptr);
    no_reuse += (buf.size + buf.alignment - 1) / buf.alignment * buf.alignment;
    buffers.push_back({{"tensor", buf.name},
                       {"size", buf.size},
                       {"offset", p.placements[b].offset},
                       {"region", m.regions[p.placements[b].region].name},
                       {"first_step", buf.first_step},
                       {"last_step", buf.last_step},
                       {"kind", kind},
                       {"producer", producer_name},
                       {"op", op}});
  }

  // Each output allowed over its input, and the bytes the plan lays over it.
  json overlaps = json::array();
  std::vector<std::uint64_t> shared_at(g.nodes.size(), 0);  // bytes two live buffers share, per step
  for (std::size_t k = 0; k < problem.overlaps.size(); ++k) {
    const plan::Overlap& o = problem.overlaps[k];
    const plan::Placement &out = p.placements[o.output], &in = p.placements[o.input];
    const std::uint64_t out_top = out.offset + problem.buffers[o.output].size;
    const std::uint64_t in_top = in.offset + problem.buffers[o.input].size;
    const bool below = !plan::output_above_input(problem, o, out, in);
    const std::uint64_t low = std::max(out.offset, in.offset), high = std::min(out_top, in_top);
    const std::uint64_t shared = out.region == in.region && high > low ? high - low : 0;
    shared_at[lt.overlap_step[k]] += shared;
    const ir::Node& n = g.nodes[lt.overlap_step[k]];
    overlaps.push_back({{"step", lt.overlap_step[k]},
                        {"node", n.name},
                        {"op", ir::op_name(n.op)},
                        {"output", problem.buffers[o.output].name},
                        {"input", problem.buffers[o.input].name},
                        {"direction", below ? "below" : "above"},
                        {"distance", (below ? o.below : o.above).value_or(0)},
                        {"shared_bytes", shared}});
  }
  json steps = json::array();
  std::uint64_t most_live = 0;
  std::vector<std::uint64_t> live_at(g.nodes.size(), 0);
  for (std::size_t s = 0; s < g.nodes.size(); ++s) {
    const ir::Node& n = g.nodes[s];
    json live = json::array();
    std::uint64_t scratch = 0, float_bytes = 0;
    for (std::size_t b = 0; b < problem.buffers.size(); ++b) {
      const plan::Buffer& buf = problem.buffers[b];
      if (!buf.live_at(static_cast<int>(s))) continue;
      live_at[s] += buf.size;
      if (lt.buffer_tensor[b] == ir::kNoTensor) scratch += buf.size;
      else live.push_back(buf.name);
      if (lt.buffer_tensor[b] != ir::kNoTensor && g.tensors[lt.buffer_tensor[b]].dtype == ir::DType::Float32) float_bytes += buf.size;
    }
    // A step of a float island: a float32 kernel, or the Quantize/Dequantize at its ends.
    bool in_float = false;
    for (const std::vector<ir::TensorId>* ids : {&n.inputs, &n.outputs})
      for (ir::TensorId t : *ids) in_float = in_float || (t != ir::kNoTensor && !g.tensors[t].is_constant && g.tensors[t].dtype == ir::DType::Float32);
    if (in_float) float_bytes += scratch;  // a float kernel's scratch holds float32 (LSTM, GRU: states and gates)
    live_at[s] -= shared_at[s];  // an output over its input: the bytes they share count once
    most_live = std::max(most_live, live_at[s]);
    const cost::Work work = cost::work_of(g, n);  // what the estimate of the step's call reads
    steps.push_back({{"step", s},
                     {"node", n.name},
                     {"op", ir::op_name(n.op)},
                     {"onnx_op", n.onnx_op},
                     {"output_shape", n.outputs.empty() ? json::array() : shape_json(g.tensors[n.outputs[0]].shape)},
                     {"macs", ops::macs(g, n)},
                     {"kernel", cost::kernel_of(g, n)},
                     {"input_bytes", work.input_bytes},
                     {"output_bytes", work.output_bytes},
                     {"output_pixels", work.output_pixels},
                     {"window_reads", work.window_reads},
                     {"live_bytes", live_at[s]},
                     {"scratch_bytes", scratch},
                     {"live_tensors", live},
                     {"float", in_float},
                     {"float_bytes", float_bytes}});
  }
  plan::Problem apart = problem;
  apart.overlaps.clear();

  json peak_steps = json::array();
  for (std::size_t s = 0; s < live_at.size(); ++s)
    if (live_at[s] == most_live) peak_steps.push_back(s);

  json regions = json::array();
  for (std::size_t r = 0; r < m.regions.size(); ++r) {
    const std::uint64_t peak = r < p.region_peak.size() ? p.region_peak[r] : 0;
    const std::uint64_t bound = r < p.region_lower_bound.size() ? p.region_lower_bound[r] : 0;
    const plan::Status status = p.status == plan::Status::Infeasible ? p.status
                                : peak <= bound                      ? plan::Status::Optimal
                                                                     : plan::Status::Feasible;
    regions.push_back({{"name", m.regions[r].name},
                       {"capacity", m.regions[r].capacity ? json(*m.regions[r].capacity) : json(nullptr)},
                       {"peak", peak},
                       {"lower_bound", bound},
                       {"status", plan::status_name(status)},
                       {"section", m.regions[r].section},
                       {"cycles_per_byte", m.regions[r].cycles_per_byte}});
  }
  json cap = nullptr;
  if (m.regions.size() == 1 && m.regions[0].capacity) cap = *m.regions[0].capacity;

  json comparisons = {{"greedy_by_size_bytes", tflm_greedy_bytes(problem, lt)},
                      {"no_reuse_bytes", no_reuse},
                      {"no_overlap_bound_bytes", plan::live_sum_lower_bound(apart)}};
  if (m.zero_copy_arena_bytes) comparisons["zero_copy_concat_bytes"] = *m.zero_copy_arena_bytes;
  if (m.copying_arena_bytes) comparisons["copying_concat_bytes"] = *m.copying_arena_bytes;
  return {{"schema", "tightfit-report"},
          {"version", 1},
          {"tool", "tightfit " TIGHTFIT_VERSION},
          {"model", options.model},
          {"name", options.name},
          {"status", plan::status_name(p.status)},
          {"arena_bytes", p.peak},
          {"lower_bound_bytes", p.lower_bound},
          {"gap_bytes", p.peak - std::min(p.peak, p.lower_bound)},
          {"cap_bytes", cap},
          {"weights_bytes", code.weights_bytes},
          {"io_in_arena", options.io_in_arena},
          {"batch_pinned", m.graph.batch_pinned},
          {"alignment",
           {{"bytes", m.alignment.bytes},
            {"source", m.alignment.source},
            {"aligned_arena_bytes", m.alignment.aligned_arena_bytes ? json(*m.alignment.aligned_arena_bytes) : json(nullptr)},
            {"aligned_least_bytes",
             m.alignment.source == "cap" ? json(m.alignment.aligned_least_bytes) : json(nullptr)}}},
          // No wall-clock time in the files: compiling twice must give the same bytes.
          {"planner", {{"time_limit_s", options.time_limit_seconds}}},
          {"regions", regions},
          {"flash",
           {{"weights_bytes", code.weights_bytes},
            {"schedule_bytes", code.schedule_bytes},
            {"code_estimate_bytes", code.code_estimate_bytes}}},
          {"comparisons", comparisons},
          {"overlaps", overlaps},
          {"rewrites", rewrites_json(m)},
          {"macs", m.macs},
          {"ram_vs_cost", ram_vs_cost_json(m)},
          {"instruction_estimate",
           {{"core", options.cost_core},
            {"measured", cost::measured(options.cost_core)}}},
          {"order",
           {{"search", m.order.search},
            {"reordered", m.order.moved_nodes > 0},
            {"moved_nodes", m.order.moved_nodes},
            {"states", m.order.states},
            {"search_gap_bytes", m.order.search_gap_bytes},
            {"candidates", m.order.candidates},
            {"file_order_bound_bytes", m.order.file_order_bound_bytes},
            {"bound_bytes", plan::live_sum_lower_bound(problem)},
            {"file_order_arena_bytes", m.order.file_order_arena_bytes}}},
          {"steps", steps},
          {"peak_steps", peak_steps},
          {"buffers", buffers},
          {"failure", nullptr},
          {"slow_regions", slow_regions_json(m)}};
}

}  // namespace

std::string default_name(const std::string& model_path) {
  std::string stem = fs::path(model_path).filename().string();
  for (const std::string extension : {".onnx", ".tflite"})
    if (stem.size() > extension.size() && stem.compare(stem.size() - extension.size(), extension.size(), extension) == 0)
      stem.resize(stem.size() - extension.size());
  return model_text::cpp_identifier(stem);
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
  imported.graph = import::import_model(options.model);
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
  const std::vector<passes::InPlaceInput>& candidates = imported.candidates;
  const std::vector<PinSpec>& pins = imported.pins;
  // 3. The order and 4. the memory plan. With Concat inputs that can be written in place, which
  // of them are is chosen here: writing in place makes a Concat's output live from its first part
  // on, which can raise the peak. Planned: all in place, none, then each input turned the other
  // way in turn, kept when the arena shrinks (the in-place side wins ties: it copies less). The
  // plans share the planner's time limit. Every schedule planned is kept in `schedules` for step 5.
  const auto start = std::chrono::steady_clock::now();
  std::size_t plans_left = candidates.empty() ? 1 : 2 + candidates.size();
  std::vector<ScheduleChoice> schedules;
  auto plan_with = [&](const std::vector<bool>& in_place) {
    const ir::Graph graph = with_in_place(m.graph, candidates, in_place);
    const double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double seconds = std::max(0.0, options.time_limit_seconds - spent) / static_cast<double>(plans_left--);
    OrderChoice order;
    std::vector<std::vector<int>> orders;
    Scheduled s = order_and_plan(options, graph, m.regions, pins, seconds, order, 0, &orders);
    for (std::vector<int>& o : orders) {
      order.moved_nodes = moved_nodes(o);
      // The walk plans a choice twice when there is one Concat input: once is enough here.
      if (std::none_of(schedules.begin(), schedules.end(),
                       [&](const ScheduleChoice& c) { return c.in_place == in_place && c.order == o; }))
        schedules.push_back({in_place, std::move(o), order});
    }
    return s;
  };
  std::vector<bool> in_place(candidates.size(), true);
  std::optional<Scheduled> chosen = plan_with(in_place);
  if (!candidates.empty()) {
    m.zero_copy_arena_bytes = chosen->plan.peak;
    const std::vector<bool> none(candidates.size(), false);
    Scheduled copying = plan_with(none);
    m.copying_arena_bytes = copying.plan.peak;
    if (!better_plan(chosen->plan, copying.plan, false)) {  // a tie starts from the copies: the walk may find less
      chosen = std::move(copying);
      in_place = none;
    }
    for (std::size_t k = 0; k < candidates.size(); ++k) {
      in_place[k] = !in_place[k];
      Scheduled s = plan_with(in_place);
      // Into place on a tie (a copy less), back to a copy only for a smaller arena.
      if (better_plan(s.plan, chosen->plan, false) || (in_place[k] && !better_plan(chosen->plan, s.plan, false)))
        chosen = std::move(s);
      else
        in_place[k] = !in_place[k];
    }
  }
  // The chosen schedule first: tiling prefers it on a tie.
  const auto chosen_schedule = std::find_if(schedules.begin(), schedules.end(), [&](const ScheduleChoice& c) {
    return c.in_place == in_place && c.order == chosen->order;
  });
  std::rotate(schedules.begin(), chosen_schedule, chosen_schedule + 1);
  // 5. Patch-based execution: it costs MACs, so a stage runs in row bands only when the plan does
  // not fit under the caps: of the stages and band counts whose bound fits, on any schedule planned
  // above, the one that adds the fewest MACs and whose plan fits. The report's RAM-against-cost
  // table plans the cheapest way to each smaller bound.
  // The schedule of the plan kept: the untiled plan's, unless a stage of another fits the caps.
  const std::size_t kept_schedule = options.tiling && !chosen->graph.has_if() ? tile_to_fit(options, m, chosen, schedules, candidates, pins) : 0;
  const ScheduleChoice& kept = schedules[kept_schedule];
  m.order = kept.order_choice;
  for (std::size_t k = 0; k < candidates.size(); ++k)
    if (kept.in_place[k]) m.in_place.push_back(candidates[k]);
  m.macs = graph_macs(chosen->graph);
  m.graph = std::move(chosen->graph);
  m.lifetimes = std::move(chosen->lifetimes);
  m.plan = std::move(chosen->plan);
  return {std::move(m), std::move(chosen->problem)};
}

// The least arena a plan's pass reached: the least row of its RAM-against-cost table (the untiled
// plan's arena with --no-tiling), and the stage that reached it (none: untiled).
std::pair<std::uint64_t, const CostLevel*> least_arena(const CompiledModel& m) {
  std::pair<std::uint64_t, const CostLevel*> least{m.plan.peak, nullptr};
  for (const CostLevel& level : m.ram_vs_cost)
    if (level.technique != "none" && (level.technique == "free" || level.arena_bytes < least.first))
      least = {level.arena_bytes, level.stage ? &level : nullptr};
  return least;
}

// The exit-3 message of an `aligned` plan that does not fit, and of the `byte_aligned` one when
// it was tried and does not either: the minimum, what holds it there, and the least arena every
// technique reached.
std::string shortfall(const CompileOptions& options, const CompiledModel& aligned,
                      const CompiledModel* byte_aligned) {
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
  m.alignment.source = options.alignment ? "flag" : "default";
  const bool fits = m.plan.status != plan::Status::Infeasible;
  if (!options.alignment && (!fits || extra_macs(m) > 0)) {
    CompileOptions byte_options = options;
    byte_options.alignment = 1;
    Planned byte_aligned = plan_model(byte_options, imported);
    const bool byte_fits = byte_aligned.m.plan.status != plan::Status::Infeasible;
    if (!fits && !byte_fits) {
      std::string reason = shortfall(options, m, &byte_aligned.m);
      return {std::move(planned), std::move(reason)};
    }
    if (byte_fits && (!fits || extra_macs(byte_aligned.m) < extra_macs(m))) {
      CompiledModel& b = byte_aligned.m;
      b.alignment = {1, "cap", fits ? std::optional<std::uint64_t>(m.plan.peak) : std::nullopt,
                     least_arena(m).first};
      // The table stays the default's (4-byte aligned) with this plan after it.
      b.ram_vs_cost = std::move(m.ram_vs_cost);
      if (!b.ram_vs_cost.empty())
        b.ram_vs_cost.push_back({"byte_aligned", b.plan.peak, extra_macs(b),
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
  cost.macs = graph_macs(m.graph);
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
    choice.kept = "with_slow";
    if (!fast.shortfall) {
      choice.free_only = slow_region_plan(options, fast.planned);
      fast.planned.m.regions = imported.regions;  // the capacities of the memory file, for the report
      const auto cycles = [](const SlowRegionPlan& c) { return c.instructions + c.slow_cycles; };
      if (cycles(*choice.free_only) < cycles(*choice.with_slow)) {
        choice.kept = "free_only";
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
