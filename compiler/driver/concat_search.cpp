#include "driver/concat_search.hpp"

#include <algorithm>
#include <chrono>
#include <utility>

#include "schedule/order.hpp"

namespace tightfit::driver {

// `graph` (channels-last, in file order) with `choice`'s Concat inputs written in place, in its order.
ir::Graph scheduled_graph(const ir::Graph& graph, const std::vector<passes::InPlaceInput>& in_place_inputs,
                          const ScheduleChoice& choice) {
  ir::Graph scheduled = with_in_place(graph, in_place_inputs, choice.in_place);
  schedule::reorder_nodes(scheduled, choice.order);
  passes::verify_after("reorder_nodes", scheduled);
  return scheduled;
}

InPlaceChoice choose_in_place(const CompileOptions& options, const ir::Graph& graph,
                              const std::vector<passes::InPlaceInput>& candidates,
                              const std::vector<RegionSpec>& regions, const std::vector<PinSpec>& pins) {
  const auto start = std::chrono::steady_clock::now();
  std::size_t plans_left = candidates.empty() ? 1 : 2 + candidates.size();
  InPlaceChoice result;
  std::vector<ScheduleChoice>& schedules = result.schedules;
  auto plan_with = [&](const std::vector<bool>& in_place) {
    const ir::Graph choice = with_in_place(graph, candidates, in_place);
    const double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double seconds = std::max(0.0, options.time_limit_seconds - spent) / static_cast<double>(plans_left--);
    OrderChoice order;
    std::vector<std::vector<int>> orders;
    Scheduled s = order_and_plan(options, choice, regions, pins, seconds, order, 0, &orders);
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
    result.zero_copy_arena_bytes = chosen->plan.peak;
    const std::vector<bool> none(candidates.size(), false);
    Scheduled copying = plan_with(none);
    result.copying_arena_bytes = copying.plan.peak;
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
  result.chosen = std::move(*chosen);
  return result;
}

}  // namespace tightfit::driver
