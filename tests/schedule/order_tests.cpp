// The order search: the least peak of every topological order (brute force on small random
// graphs), ties to the file order, the fallback's stated gap, and the models of models/.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>

#include <nlohmann/json.hpp>

#include "driver/pipeline.hpp"
#include "error.hpp"
#include "schedule/channels_last.hpp"
#include "schedule/order.hpp"

using namespace tightfit;
using schedule::OrderBuffer;
using schedule::OrderProblem;

namespace {

// A random graph of n nodes in topological file order: each node writes a buffer read by the
// nodes that depend on it, some have a scratch buffer, some buffers are graph inputs or outputs.
OrderProblem random_problem(std::mt19937& rng, int n) {
  std::uniform_int_distribution<int> percent(0, 99);
  std::uniform_int_distribution<std::uint64_t> bytes(1, 16);
  OrderProblem p;
  p.predecessors.resize(n);
  std::vector<std::vector<int>> successors(n);
  for (int v = 1; v < n; ++v)
    for (int u = 0; u < v; ++u)
      if (percent(rng) < 30) {
        p.predecessors[v].push_back(u);
        successors[u].push_back(v);
      }
  for (int v = 0; v < n; ++v) {
    OrderBuffer out{4 * bytes(rng), {v}, false, successors[v].empty() || percent(rng) < 10};
    for (const int w : successors[v]) out.touchers.push_back(w);
    p.buffers.push_back(out);
    if (percent(rng) < 25) p.buffers.push_back({4 * bytes(rng), {v}, false, false});
  }
  for (int i = 0; i < 2; ++i) {
    OrderBuffer in{4 * bytes(rng), {}, true, percent(rng) < 10};
    for (int v = 0; v < n; ++v)
      if (percent(rng) < 20) in.touchers.push_back(v);
    p.buffers.push_back(in);
  }
  return p;
}

// The peak of an order computed from scratch: each buffer live from its first toucher (or the
// first step) to its last (or the last step), summed per step.
std::uint64_t peak_of(const OrderProblem& p, const std::vector<int>& order) {
  const int n = static_cast<int>(order.size());
  std::uint64_t peak = 0;
  for (int step = 0; step < n; ++step) {
    std::uint64_t live = 0;
    for (const OrderBuffer& b : p.buffers) {
      int first = b.from_start ? 0 : n, last = b.from_start ? 0 : -1;
      for (int s = 0; s < n; ++s)
        for (const int t : b.touchers)
          if (order[s] == t) first = std::min(first, s), last = std::max(last, s);
      if (b.to_end) last = n - 1;
      if (first <= step && step <= last) live += b.bytes;
    }
    peak = std::max(peak, live);
  }
  return peak;
}

bool is_topological(const OrderProblem& p, const std::vector<int>& order) {
  std::vector<int> position(p.predecessors.size(), -1);
  for (std::size_t s = 0; s < order.size(); ++s) {
    if (order[s] < 0 || order[s] >= static_cast<int>(position.size()) || position[order[s]] >= 0) return false;
    position[order[s]] = static_cast<int>(s);
  }
  if (order.size() != position.size()) return false;
  for (std::size_t v = 0; v < position.size(); ++v)
    for (const int u : p.predecessors[v])
      if (position[u] > position[v]) return false;
  return true;
}

struct BruteForce {
  std::uint64_t peak = UINT64_MAX;
  std::vector<int> first_best;  // in lexicographic order of file indices, the first with the least peak
  int orders = 0;
};

// Every topological order, in lexicographic order of file indices.
BruteForce brute_force(const OrderProblem& p) {
  const int n = static_cast<int>(p.predecessors.size());
  BruteForce best;
  std::vector<int> order;
  std::vector<bool> done(n, false);
  std::function<void()> extend = [&] {
    if (static_cast<int>(order.size()) == n) {
      ++best.orders;
      const std::uint64_t peak = peak_of(p, order);
      if (peak < best.peak) best.peak = peak, best.first_best = order;
      return;
    }
    for (int v = 0; v < n; ++v) {
      if (done[v]) continue;
      bool ready = true;
      for (const int u : p.predecessors[v]) ready = ready && done[u];
      if (!ready) continue;
      done[v] = true;
      order.push_back(v);
      extend();
      order.pop_back();
      done[v] = false;
    }
  };
  extend();
  return best;
}

std::vector<int> file_order(int n) {
  std::vector<int> order(n);
  for (int v = 0; v < n; ++v) order[v] = v;
  return order;
}

}  // namespace

TEST_CASE("the search finds the least peak of all topological orders, and the first such in file order") {
  std::mt19937 rng(12);
  int reordered = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 1 + trial % 8;
    const OrderProblem p = random_problem(rng, n);
    const BruteForce truth = brute_force(p);
    const schedule::OrderResult found = schedule::best_order(p);
    INFO("trial " << trial << ", " << n << " nodes, " << truth.orders << " orders");
    REQUIRE(found.exact);
    REQUIRE(is_topological(p, found.order));
    CHECK(found.peak == truth.peak);
    CHECK(found.lower_bound == truth.peak);
    CHECK(schedule::order_peak(p, found.order) == found.peak);
    CHECK(found.order == truth.first_best);
    if (!found.other_best_order.empty()) {
      CHECK(is_topological(p, found.other_best_order));
      CHECK(peak_of(p, found.other_best_order) == truth.peak);
    }
    reordered += found.order != file_order(n);
  }
  CHECK(reordered > 20);  // the graphs are varied enough for the file order to lose often
}

TEST_CASE("past its state budget the search falls back to a beam, within the gap it states") {
  std::mt19937 rng(7);
  int inexact = 0;
  for (int trial = 0; trial < 100; ++trial) {
    const int n = 5 + trial % 4;
    const OrderProblem p = random_problem(rng, n);
    const BruteForce truth = brute_force(p);
    schedule::OrderOptions options;
    options.state_budget = 3;
    options.beam_width = 2;
    const schedule::OrderResult found = schedule::best_order(p, options);
    INFO("trial " << trial);
    REQUIRE(is_topological(p, found.order));
    CHECK(peak_of(p, found.order) == found.peak);
    CHECK(found.lower_bound <= truth.peak);
    CHECK(truth.peak <= found.peak);
    CHECK(found.peak <= peak_of(p, file_order(n)));
    if (found.exact) CHECK(found.peak == truth.peak);
    inexact += !found.exact;
  }
  CHECK(inexact > 0);
}

TEST_CASE("a wide graph stays within the state budget and beats its file order") {
  // 16 independent two-node branches from one input: each branch's first node writes a big
  // buffer that its second node shrinks. The file order runs all first nodes, then all second
  // ones; the best order finishes each branch before starting the next.
  const int branches = 16;
  OrderProblem p;
  p.predecessors.resize(2 * branches);
  for (int b = 0; b < branches; ++b) {
    p.predecessors[branches + b] = {b};
    p.buffers.push_back({1000, {b, branches + b}, false, false});
    p.buffers.push_back({4, {branches + b}, false, true});
  }
  schedule::OrderOptions options;
  options.state_budget = 5000;  // 17^2 sets of a branch pair, 2^16 of the first nodes: more than this
  const schedule::OrderResult found = schedule::best_order(p, options);
  REQUIRE(is_topological(p, found.order));
  CHECK(found.states >= options.state_budget);  // the memo filled up before the beam took over
  CHECK(found.peak == 1000 + 4 * branches);     // the beam finds the branch-by-branch order
  CHECK(schedule::order_peak(p, file_order(2 * branches)) == 1000 * branches + 4);
  CHECK(found.lower_bound == 1004);
  CHECK_FALSE(found.exact);
}

TEST_CASE("shrinking a buffer never raises the least peak") {
  std::mt19937 rng(6);
  for (int trial = 0; trial < 300; ++trial) {
    OrderProblem p = random_problem(rng, 2 + trial % 9);
    const std::uint64_t before = schedule::best_order(p).peak;
    OrderBuffer& shrunk = p.buffers[std::uniform_int_distribution<std::size_t>(0, p.buffers.size() - 1)(rng)];
    shrunk.bytes = std::uniform_int_distribution<std::uint64_t>(0, shrunk.bytes)(rng);
    INFO("trial " << trial);
    CHECK(schedule::best_order(p).peak <= before);
  }
}

TEST_CASE("a chain keeps its file order") {
  OrderProblem p;
  p.predecessors = {{}, {0}, {1}, {2}};
  for (int v = 0; v < 4; ++v)
    p.buffers.push_back({8, v < 3 ? std::vector<int>{v, v + 1} : std::vector<int>{v}, false, v == 3});
  const schedule::OrderResult found = schedule::best_order(p);
  CHECK(found.exact);
  CHECK(found.order == file_order(4));
  CHECK(found.other_best_order.empty());
  CHECK(found.peak == 16);
}

namespace {

driver::CompiledModel compile(const std::string& file, bool reorder) {
  driver::CompileOptions options;
  options.model = std::string(MODELS_DIR) + "/" + file;
  options.name = "model";
  options.reorder = reorder;
  options.zero_copy_concat = false;  // the order alone: which Concat inputs go in place is chosen per order
  options.time_limit_seconds = 2;
  return driver::compile_model(options);
}

std::vector<std::string> node_names(const ir::Graph& g) {
  std::vector<std::string> names;
  for (const ir::Node& n : g.nodes) names.push_back(n.name);
  return names;
}

}  // namespace

TEST_CASE("with reordering off the nodes run in the file order, and reordering never costs bytes") {
  for (const std::string file : {"inception.qop.onnx", "unet.qdq.onnx", "resnet8.qop.onnx", "dscnn.qop.onnx"}) {
    INFO(file);
    ir::Graph imported = driver::import_graph(std::string(MODELS_DIR) + "/" + file);
    schedule::to_channels_last(imported);
    const driver::CompiledModel kept = compile(file, false);
    const driver::CompiledModel reordered = compile(file, true);
    CHECK(node_names(kept.graph) == node_names(imported));
    CHECK(kept.report["order"]["search"] == "off");
    CHECK(kept.report["order"]["reordered"] == false);
    const nlohmann::json& order = reordered.report["order"];
    CHECK(order["search"] == "exact");
    CHECK(order["file_order_arena_bytes"] == kept.plan.peak);
    CHECK(order["file_order_bound_bytes"] == kept.report["order"]["file_order_bound_bytes"]);
    CHECK(reordered.plan.peak <= kept.plan.peak);
    CHECK(order["bound_bytes"].get<std::uint64_t>() <= order["file_order_bound_bytes"].get<std::uint64_t>());
    CHECK(order["reordered"] == (node_names(reordered.graph) != node_names(imported)));
  }
}

TEST_CASE("tightfit compile --no-reorder writes the file order and says so in the report") {
  const std::string dir = std::filesystem::temp_directory_path() / ("tightfit-order-test-" + std::to_string(getpid()));
  const std::string command = std::string(TIGHTFIT_EXE) + " compile " + MODELS_DIR +
                              "/inception.qop.onnx --name m --quiet --no-reorder -o " + dir;
  REQUIRE(std::system(command.c_str()) == 0);
  std::ifstream in(dir + "/m.report.json");
  const nlohmann::json report = nlohmann::json::parse(in);
  std::filesystem::remove_all(dir);
  ir::Graph imported = driver::import_graph(std::string(MODELS_DIR) + "/inception.qop.onnx");
  schedule::to_channels_last(imported);
  std::vector<std::string> steps;
  for (const auto& step : report["steps"]) steps.push_back(step["node"]);
  CHECK(steps == node_names(imported));
  CHECK(report["order"]["search"] == "off");
  CHECK(report["arena_bytes"] == report["order"]["file_order_arena_bytes"]);
}

TEST_CASE("a cap that only the reordered inception model fits under") {
  // Without overlap the file order needs 25600 B, the best order 22528 B (docs/schedule.md).
  driver::CompileOptions options;
  options.model = std::string(MODELS_DIR) + "/inception.qop.onnx";
  options.name = "model";
  options.overlap = false;  // the order alone
  options.zero_copy_concat = false;
  options.tiling = false;  // row bands would let the file order fit too
  options.max_ram = 23 * 1024;
  options.time_limit_seconds = 2;
  CHECK(driver::compile_model(options).plan.peak == 22528);
  options.reorder = false;
  try {
    driver::compile_model(options);
    FAIL("the file order fitted under 23 KiB");
  } catch (const Error& e) {
    CHECK(e.exit_code() == kExitCapTooSmall);
  }
}
