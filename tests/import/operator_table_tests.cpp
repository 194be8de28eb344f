// The operator table (compiler/ops/): every operator states every rule, and the operators that
// share a runtime kernel state the rules that kernel implies alike.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>

#include <tightfit/kernels.hpp>

#include "error.hpp"
#include "ops/operator.hpp"

using namespace tightfit;

namespace {

ir::Tensor int8_activation(const std::string& name, const std::vector<std::int64_t>& shape) {
  ir::Tensor t;
  t.name = name;
  t.dtype = ir::DType::Int8;
  t.shape = shape;
  t.quantized = true;
  t.quant = ir::Quant{{0.5f}, {0}, -1};
  return t;
}

// One int8 node of `kind` on [1, 4, 4, 2] activations: `inputs` of them in, one out.
ir::Graph int8_node(ir::OpKind kind, std::size_t inputs) {
  ir::Graph g;
  g.source = "hand.onnx";
  ir::Node n;
  n.name = "node";
  n.op = kind;
  for (std::size_t i = 0; i < inputs; ++i) {
    g.tensors.push_back(int8_activation("x" + std::to_string(i), {1, 4, 4, 2}));
    n.inputs.push_back(static_cast<ir::TensorId>(i));
  }
  g.tensors.push_back(int8_activation("y", {1, 4, 4, 2}));
  n.outputs = {static_cast<ir::TensorId>(inputs)};
  g.nodes = {n};
  return g;
}

// The kernel keys bench/kernel_costs.py measured, on every core it measured.
bool measured_on_every_core(const std::string& key) {
  std::ifstream file(KERNEL_COSTS_JSON);
  const nlohmann::json costs = nlohmann::json::parse(file);
  for (const auto& [core, entry] : costs.at("cores").items())
    if (!entry.at("kernels").contains(key)) return false;
  return true;
}

}  // namespace

TEST_CASE("the operator table states every rule of every operator") {
  REQUIRE_NOTHROW(ops::operators());
  for (const ops::Operator* op : ops::operators()) {
    INFO(ir::op_name(op->kind));
    CHECK(ops::unstated_rule(*op) == nullptr);
    if (!op->emit) CHECK(op->cost_key == ops::no_call);  // a view makes no call to cost
  }
}

TEST_CASE("an operator with a rule left unstated is named with that rule") {
  ops::Operator op = ops::of(ir::OpKind::HardSigmoid);
  CHECK(ops::unstated_rule(op) == nullptr);
  op.tflite_gap = nullptr;
  CHECK(ops::unstated_rule(op) == std::string("TFLite numerics"));
  op.cost_work = ops::CostWork::unstated;
  CHECK(ops::unstated_rule(op) == std::string("cost work"));
  op.output_range = ops::OutputRange::unstated;
  CHECK(ops::unstated_rule(op) == std::string("output range"));
  op.tile_window = ops::TileWindow::unstated;
  CHECK(ops::unstated_rule(op) == std::string("tile window"));
}

TEST_CASE("operators run as a lookup table overlap, tile, clamp and cost as the lookup kernel") {
  int checked = 0;
  for (const ops::Operator* op : ops::operators()) {
    if (op->shared_kernel != ops::SharedKernel::lookup_table) continue;
    INFO(ir::op_name(op->kind));
    const ir::Graph g = int8_node(op->kind, 1);
    const plan::OverlapDistances d = ops::overlap_distance(g, g.nodes[0], 0);
    REQUIRE(d.below.has_value());
    CHECK(*d.below == static_cast<std::uint64_t>(tightfit::lookup_distance()));
    CHECK(op->tile_window == ops::TileWindow::elementwise);
    CHECK(op->output_range == ops::OutputRange::clamped_to_act_range);
    CHECK(measured_on_every_core(op->cost_key(g, g.nodes[0])));
    ++checked;
  }
  CHECK(checked >= 9);  // Sigmoid, Tanh, LeakyRelu, HardSigmoid, HardSwish, Log, Exp, Div, Requantize
}

TEST_CASE("operators run as an elementwise binary kernel overlap, tile and clamp alike") {
  int checked = 0;
  for (const ops::Operator* op : ops::operators()) {
    if (op->shared_kernel != ops::SharedKernel::broadcast_binary) continue;
    INFO(ir::op_name(op->kind));
    const ir::Graph g = int8_node(op->kind, 2);
    for (std::size_t input = 0; input < 2; ++input) {
      const plan::OverlapDistances d = ops::overlap_distance(g, g.nodes[0], input);
      REQUIRE(d.below.has_value());
      CHECK(*d.below == 0);  // same shapes: element i is read before it is written
    }
    CHECK(op->tile_window == ops::TileWindow::elementwise_same_shape);
    CHECK(op->output_range == ops::OutputRange::clamped_to_act_range);
    ++checked;
  }
  CHECK(checked >= 3);  // Add, Mul, Sub
}
