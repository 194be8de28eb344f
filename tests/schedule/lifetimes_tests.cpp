// Lifetimes (compiler/schedule/lifetimes.cpp): which outputs may lie over the inputs they consume.
#include <catch2/catch.hpp>

#include "schedule/lifetimes.hpp"

using namespace tightfit;

namespace {

ir::TensorId add_tensor(ir::Graph& g, const char* name) {
  ir::Tensor t;
  t.name = name;
  t.shape = {1, 16};
  g.tensors.push_back(t);
  return static_cast<ir::TensorId>(g.tensors.size() - 1);
}

void add_node(ir::Graph& g, ir::OpKind op, ir::TensorId in, ir::TensorId out) {
  ir::Node n;
  n.name = g.tensors[out].name;
  n.op = op;
  n.inputs = {in};
  n.outputs = {out};
  g.nodes.push_back(n);
}

// x -> a = Sigmoid(x) -> b = Sigmoid(a), b the last step; `view_of_a_is_output` adds a Reshape of a
// as a graph output, read after the last step like b.
ir::Graph chain(bool view_of_a_is_output) {
  ir::Graph g;
  const ir::TensorId x = add_tensor(g, "x"), a = add_tensor(g, "a"), b = add_tensor(g, "b");
  g.inputs = {x};
  add_node(g, ir::OpKind::Sigmoid, x, a);
  if (view_of_a_is_output) {
    const ir::TensorId v = add_tensor(g, "a_view");
    add_node(g, ir::OpKind::Reshape, a, v);
    g.outputs.push_back(v);
  }
  add_node(g, ir::OpKind::Sigmoid, a, b);
  g.outputs.push_back(b);
  return g;
}

std::vector<plan::Overlap> overlaps_of(const ir::Graph& g) {
  schedule::LifetimeOptions options;
  options.overlap_distance = [](const ir::Node&, std::size_t) { return plan::OverlapDistances{0, 0}; };
  return schedule::compute_lifetimes(
             g, [](const ir::Node&) { return std::uint64_t{0}; }, options)
      .problem.overlaps;
}

}  // namespace

TEST_CASE("the last step's output may lie over an input that dies there") {
  const std::vector<plan::Overlap> overlaps = overlaps_of(chain(false));
  REQUIRE(overlaps.size() == 1);  // b over a (x is the model's input: never)
}

TEST_CASE("no output lies over a model output or a view of one, even at the last step") {
  // Found by the difftest (seed 950002873): a Sub at the last step wrote over the buffer of a
  // Flatten that was a graph output.
  CHECK(overlaps_of(chain(true)).empty());
}
