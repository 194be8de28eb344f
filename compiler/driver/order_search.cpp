#include "driver/order_search.hpp"

#include <algorithm>
#include <chrono>
#include <optional>

#include "plan/planner.hpp"
#include "schedule/order.hpp"

namespace tightfit::driver {

const char* to_string(OrderSearch search) {
  switch (search) {
    case OrderSearch::off:
      return "off";
    case OrderSearch::exact:
      return "exact";
    case OrderSearch::beam:
      return "beam";
  }
  return "off";
}

int moved_nodes(const std::vector<int>& order) {
  int moved = 0;
  for (std::size_t step = 0; step < order.size(); ++step) moved += order[step] != static_cast<int>(step);
  return moved;
}

Scheduled order_and_plan(const CompileOptions& options, const ir::Graph& graph, const std::vector<RegionSpec>& regions,
                         const std::vector<PinSpec>& pins, double seconds, OrderChoice& order,
                         std::int64_t nodes_per_buffer, std::vector<std::vector<int>>* planned_orders) {
  order = OrderChoice{};
  std::vector<int> file_order(graph.nodes.size());
  for (std::size_t v = 0; v < file_order.size(); ++v) file_order[v] = static_cast<int>(v);
  std::vector<std::vector<int>> candidates{file_order};
  schedule::OrderResult searched;
  // An If's branches keep the importer's order: the search knows nothing of branches.
  if (options.reorder && !graph.has_if()) {
    searched = schedule::best_order(schedule::order_problem(graph, lifetimes_of(options, graph)));
    order.search = searched.exact ? OrderSearch::exact : OrderSearch::beam;
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

}  // namespace tightfit::driver
