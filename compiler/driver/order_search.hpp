// The order of the nodes: the order search (schedule/order.hpp) proposes the order with the least
// live-sum bound, and the planner decides between it and the file order by the arena each needs.
#pragma once

#include <cstdint>
#include <vector>

#include "driver/options.hpp"
#include "driver/plan_schedule.hpp"
#include "ir/ir.hpp"

namespace tightfit::driver {

// Which search gave the order: exact, a beam (the state budget ran out), or none (--no-reorder, or
// a graph with an If, whose branches keep the importer's order).
enum class OrderSearch { off, exact, beam };
const char* to_string(OrderSearch search);

// How the order of the nodes was chosen, for the report.
struct OrderChoice {
  OrderSearch search = OrderSearch::off;
  std::uint64_t states = 0;                  // sets of nodes the search visited
  std::uint64_t search_gap_bytes = 0;        // beam: how far its order may be from the least peak
  int moved_nodes = 0;                       // nodes not at their file position
  int candidates = 1;                        // orders planned, the file order among them
  std::uint64_t file_order_bound_bytes = 0;  // live-sum bound of the ONNX file order
  std::uint64_t file_order_arena_bytes = 0;  // the planned arena in the file order
};

// The nodes of `order` (file indices in execution order) not at their file position.
int moved_nodes(const std::vector<int>& order);

// The order and the plan of one graph, solved together: the order search (schedule/order.hpp)
// gives the order with the least live-sum bound; the exact planner places the buffers of that
// order, of the file order and, when the first misses its bound, of another order tied with it,
// and the smallest arena wins (the file order on a tie). They share `seconds`. Every order planned
// is appended to `planned_orders` when given.
Scheduled order_and_plan(const CompileOptions& options, const ir::Graph& graph, const std::vector<RegionSpec>& regions,
                         const std::vector<PinSpec>& pins, double seconds, OrderChoice& order,
                         std::int64_t nodes_per_buffer = 0, std::vector<std::vector<int>>* planned_orders = nullptr);

}  // namespace tightfit::driver
