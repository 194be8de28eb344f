// The estimate's inputs (compiler/cost/instructions.hpp) on graphs built by hand: which kernel a
// node's call runs and what it works on, and the estimate over a graph.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include "cost/instructions.hpp"

using namespace tightfit;

namespace {

ir::Tensor tensor(const std::string& name, std::vector<std::int64_t> shape, bool constant = false) {
  ir::Tensor t;
  t.name = name;
  t.shape = std::move(shape);
  t.quantized = true;
  t.quant = ir::Quant{{0.5f}, {0}, -1};
  t.layout = ir::Layout::ChannelsLast;
  t.is_constant = constant;
  if (constant) t.data.assign(static_cast<std::size_t>(t.elements()), 1);
  return t;
}

ir::Node node(const std::string& name, ir::OpKind op, std::vector<ir::TensorId> inputs, ir::TensorId output) {
  ir::Node n;
  n.name = name;
  n.op = op;
  n.inputs = std::move(inputs);
  n.outputs = {output};
  return n;
}

// a (1x4x4x2) and b (1x4x4x3) -> Concat along channels -> y (1x4x4x5).
ir::Graph concat_graph() {
  ir::Graph g;
  g.tensors = {tensor("a", {1, 4, 4, 2}), tensor("b", {1, 4, 4, 3}), tensor("y", {1, 4, 4, 5})};
  g.nodes = {node("concat", ir::OpKind::Concat, {0, 1}, 2)};
  g.nodes[0].attrs.axis = 3;
  g.inputs = {0, 1};
  g.outputs = {2};
  return g;
}

// x (1x4x4x8) -> 1x1 Conv, 8 -> 16 channels -> y; its weights are constants.
ir::Graph pointwise_graph() {
  ir::Graph g;
  g.tensors = {tensor("x", {1, 4, 4, 8}), tensor("w", {16, 8, 1, 1}, true), tensor("y", {1, 4, 4, 16})};
  g.tensors[1].layout = ir::Layout::Logical;
  ir::Node conv = node("conv", ir::OpKind::Conv, {0, 1}, 2);
  conv.attrs.kernel_shape = {1, 1};
  conv.attrs.strides = {1, 1};
  conv.attrs.dilations = {1, 1};
  conv.attrs.pads = {0, 0, 0, 0};
  g.nodes = {conv};
  g.inputs = {0};
  g.outputs = {2};
  return g;
}

}  // namespace

TEST_CASE("a 1x1 convolution's call is the pointwise path and works on its activations, not its weights") {
  const ir::Graph g = pointwise_graph();
  CHECK(cost::kernel_of(g, g.nodes[0]) == "conv_pointwise");
  const cost::Work w = cost::work_of(g, g.nodes[0]);
  CHECK(w.macs == 16 * 16 * 8);
  CHECK(w.input_bytes == 16 * 8);
  CHECK(w.output_bytes == 16 * 16);
  CHECK(w.output_pixels == 16);
}

TEST_CASE("a Concat copies only the inputs not written in place, and with all of them in place makes no call") {
  ir::Graph g = concat_graph();
  CHECK(cost::kernel_of(g, g.nodes[0]) == "Concat");
  CHECK(cost::work_of(g, g.nodes[0]).input_bytes == 16 * 5);
  CHECK(cost::work_of(g, g.nodes[0]).output_bytes == 16 * 5);
  g.tensors[0].slice_of = 2;  // a's producer writes it into y
  CHECK(cost::work_of(g, g.nodes[0]).input_bytes == 16 * 3);
  CHECK(cost::work_of(g, g.nodes[0]).output_bytes == 16 * 3);
  g.tensors[1].slice_of = 2;
  CHECK(cost::kernel_of(g, g.nodes[0]).empty());
  const std::optional<std::int64_t> none = cost::estimated_instructions(cost::kDefaultCore, g);
  REQUIRE(none);
  CHECK(*none == 0);
}

TEST_CASE("the default core was measured and a core that was not gives no estimate") {
  REQUIRE(cost::measured(cost::kDefaultCore));
  const ir::Graph g = pointwise_graph();
  const std::optional<std::int64_t> m4 = cost::estimated_instructions(cost::kDefaultCore, g);
  REQUIRE(m4);
  CHECK(*m4 > 0);
  CHECK_FALSE(cost::measured("rv32imc"));
  CHECK_FALSE(cost::estimated_instructions("rv32imc", g));
}

TEST_CASE("the estimate grows with the calls: the same convolution called twice on halves costs more than once") {
  const ir::Graph whole = pointwise_graph();
  ir::Graph halves = pointwise_graph();
  // Two calls of 1x2x4x8 -> 1x2x4x16, as two row bands would make.
  halves.tensors = {tensor("x0", {1, 2, 4, 8}), tensor("w", {16, 8, 1, 1}, true), tensor("y0", {1, 2, 4, 16}),
                    tensor("x1", {1, 2, 4, 8}), tensor("y1", {1, 2, 4, 16})};
  halves.tensors[1].layout = ir::Layout::Logical;
  ir::Node second = halves.nodes[0];
  second.inputs = {3, 1};
  second.outputs = {4};
  halves.nodes.push_back(second);
  const std::int64_t once = *cost::estimated_instructions(cost::kDefaultCore, whole);
  const std::int64_t twice = *cost::estimated_instructions(cost::kDefaultCore, halves);
  CHECK(twice > once);
}
