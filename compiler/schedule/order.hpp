// The schedule's order: which topological order of the nodes runs, chosen for the least peak of
// live bytes (the live-sum bound that no placement of that order can beat).
//
// The search is exact for graphs of practical width: dynamic programming over the sets of nodes
// already run (downward-closed sets, Serenity, MLSys 2020), memoized, with a budget of states.
// Past the budget a beam search gives an order, and a lower bound says how far it may be from the
// best. Ties go to the order that keeps the ONNX file order longest (the lexicographically
// smallest sequence of file indices), so the same graph always gives the same order, and a
// graph whose file order is already best keeps it.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/ir.hpp"
#include "schedule/lifetimes.hpp"

namespace tightfit::schedule {

// The order problem, with no ONNX in it: nodes with their predecessors, and buffers that are live
// from the first node that touches them to the last (like lifetimes.hpp: graph inputs from the
// first step, graph outputs to the last).
struct OrderBuffer {
  std::uint64_t bytes = 0;    // the size rounded up to its alignment
  std::vector<int> touchers;  // the nodes that write or read it (a view's reader included)
  bool from_start = false;    // a graph input
  bool to_end = false;        // a graph output
};

struct OrderProblem {
  std::vector<std::vector<int>> predecessors;  // per node: the nodes whose outputs it reads
  std::vector<OrderBuffer> buffers;
};

struct OrderOptions {
  std::uint64_t state_budget = 100000;  // memoized sets of nodes (about a second) before the beam's order stands
  int beam_width = 64;                  // states kept per step by the fallback
};

struct OrderResult {
  std::vector<int> order;         // node indices in execution order
  std::uint64_t peak = 0;         // the live-sum of `order`: max over steps of the bytes live there
  std::uint64_t lower_bound = 0;  // no order has a smaller peak (== peak when exact)
  bool exact = false;             // false: the state budget ran out; `order` is the beam's (or the file order)
  std::uint64_t states = 0;       // sets of nodes the search visited
  // Another order with the same peak, the one that keeps the file order least (latest file index
  // first where the peak allows): a second candidate for the placement. Empty when there is none.
  std::vector<int> other_best_order;
};

// The problem of `graph` as scheduled now, its buffers as `lifetimes` (computed on that order)
// made them: what an order changes is when each buffer starts and ends, not which exist.
OrderProblem order_problem(const ir::Graph& graph, const Lifetimes& lifetimes);

// The peak of live bytes when the nodes run in `order`.
std::uint64_t order_peak(const OrderProblem& problem, const std::vector<int>& order);

// The order with the least peak (see the top of this file).
OrderResult best_order(const OrderProblem& problem, const OrderOptions& options = {});

// Runs the graph's nodes in `order` (a permutation of their indices, topological).
void reorder_nodes(ir::Graph& graph, const std::vector<int>& order);

}  // namespace tightfit::schedule
