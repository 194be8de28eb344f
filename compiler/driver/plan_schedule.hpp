// One order of the nodes planned: its graph, its buffers (schedule/lifetimes.hpp) and their
// offsets (plan/planner.hpp). Every search of the driver (the Concat inputs written in place, the
// order, the tiling) plans its candidates through here.
#pragma once

#include <cstdint>
#include <vector>

#include "driver/options.hpp"
#include "ir/ir.hpp"
#include "passes/passes.hpp"
#include "plan/planner.hpp"
#include "schedule/lifetimes.hpp"

namespace tightfit::driver {

// One order of the nodes with its buffers and their plan.
struct Scheduled {
  std::vector<int> order;  // file indices in execution order
  ir::Graph graph;         // the nodes in that order
  schedule::Lifetimes lifetimes;
  plan::Problem problem;
  plan::Plan plan;
};

// One buffer per tensor that needs memory, plus kernel scratch, live over the graph's node order.
schedule::Lifetimes lifetimes_of(const CompileOptions& options, const ir::Graph& graph);

// `graph` with its nodes in `order` (file indices in execution order), its buffers planned in the
// regions under the pins; the planner stops at `seconds` or `nodes_per_buffer` (0: no node limit).
Scheduled schedule_and_plan(const CompileOptions& options, const ir::Graph& graph, const std::vector<int>& order,
                            const std::vector<RegionSpec>& regions, const std::vector<PinSpec>& pins, double seconds,
                            std::int64_t nodes_per_buffer = 0);

// Whether plan `a` beats `b`: it fits under the caps where `b` does not, or takes fewer bytes;
// on a tie, the file order wins.
bool better_plan(const plan::Plan& a, const plan::Plan& b, bool a_in_file_order);

// `graph` (channels-last, in file order) with the Concat inputs `in_place` marks written in place.
ir::Graph with_in_place(const ir::Graph& graph, const std::vector<passes::InPlaceInput>& in_place_inputs,
                        const std::vector<bool>& in_place);

}  // namespace tightfit::driver
