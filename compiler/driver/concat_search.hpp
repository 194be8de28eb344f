// Which Concat inputs are written in place (passes::zero_copy_candidates()), each choice in the
// order the order search gives it, planned: writing an input in place saves its copy but makes the
// Concat's output live from its first part on, which can raise the peak.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "driver/options.hpp"
#include "driver/order_search.hpp"
#include "driver/plan_schedule.hpp"
#include "passes/passes.hpp"

namespace tightfit::driver {

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

// `graph` (channels-last, in file order) with `choice`'s Concat inputs written in place, in its order.
ir::Graph scheduled_graph(const ir::Graph& graph, const std::vector<passes::InPlaceInput>& in_place_inputs,
                          const ScheduleChoice& choice);

struct InPlaceChoice {
  Scheduled chosen;                       // the least arena, under the caps when a plan fits them
  std::vector<ScheduleChoice> schedules;  // every schedule planned, `chosen`'s first
  // When some Concat input could be written in place: the arenas planned with all of them in place
  // and with every Concat copying.
  std::optional<std::uint64_t> zero_copy_arena_bytes, copying_arena_bytes;
};

// Plans all of `candidates` in place, none, then each turned the other way in turn, kept when the
// arena shrinks (the in-place side wins ties: it copies less). The plans share the planner's time
// limit.
InPlaceChoice choose_in_place(const CompileOptions& options, const ir::Graph& graph,
                              const std::vector<passes::InPlaceInput>& candidates,
                              const std::vector<RegionSpec>& regions, const std::vector<PinSpec>& pins);

}  // namespace tightfit::driver
