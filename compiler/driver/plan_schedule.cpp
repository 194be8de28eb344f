#include "driver/plan_schedule.hpp"

#include <algorithm>
#include <string>

#include "emit/emit_cpp.hpp"
#include "error.hpp"
#include "ops/operator.hpp"
#include "schedule/order.hpp"

namespace tightfit::driver {
namespace {

plan::Problem make_problem(const CompileOptions& options, const schedule::Lifetimes& lifetimes, const ir::Graph& graph,
                           const std::vector<RegionSpec>& regions, const std::vector<PinSpec>& pins) {
  plan::Problem problem = lifetimes.problem;
  for (const RegionSpec& r : regions) {
    plan::Region region;
    region.name = r.name;
    if (r.capacity) region.capacity = *r.capacity;
    region.alignment = 16;
    problem.regions.push_back(region);
  }
  for (const PinSpec& pin : pins) {
    auto region =
        std::find_if(regions.begin(), regions.end(), [&](const RegionSpec& r) { return r.name == pin.region; });
    if (region == regions.end())
      throw Error(options.model + ": pin of '" + pin.tensor + "' names no region '" + pin.region + "'");
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

}  // namespace

ir::Graph with_in_place(const ir::Graph& graph, const std::vector<passes::InPlaceInput>& in_place_inputs,
                        const std::vector<bool>& in_place) {
  ir::Graph result = graph;
  for (std::size_t k = 0; k < in_place_inputs.size(); ++k)
    if (in_place[k]) passes::write_in_place(result, in_place_inputs[k]);
  passes::verify_after("write_in_place", result);
  return result;
}

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
                            std::int64_t nodes_per_buffer) {
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

bool better_plan(const plan::Plan& a, const plan::Plan& b, bool a_in_file_order) {
  const bool a_fits = a.status != plan::Status::Infeasible, b_fits = b.status != plan::Status::Infeasible;
  if (a_fits != b_fits) return a_fits;
  return a.peak < b.peak || (a.peak == b.peak && a_in_file_order);
}

}  // namespace tightfit::driver
