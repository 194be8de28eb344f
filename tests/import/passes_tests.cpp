// The IR passes on graphs built by hand: what verify refuses, what prune keeps.
#include <catch2/catch.hpp>

#include "error.hpp"
#include "passes/passes.hpp"

using namespace tightfit;

namespace {

ir::Tensor activation(const std::string& name, ir::DType dtype, std::int32_t zero_point) {
  ir::Tensor t;
  t.name = name;
  t.dtype = dtype;
  t.shape = {1, 4};
  t.quantized = true;
  t.quant = ir::Quant{{0.5f}, {zero_point}, -1};
  return t;
}

// x -> Clamp -> y, int8.
ir::Graph clamp_graph() {
  ir::Graph g;
  g.source = "hand.onnx";
  g.tensors = {activation("x", ir::DType::Int8, 0), activation("y", ir::DType::Int8, 0)};
  ir::Node n;
  n.name = "clamp";
  n.op = ir::OpKind::Clamp;
  n.inputs = {0};
  n.outputs = {1};
  g.nodes = {n};
  g.inputs = {0};
  g.outputs = {1};
  return g;
}

}  // namespace

TEST_CASE("verify accepts a well-formed graph") { CHECK_NOTHROW(passes::verify(clamp_graph())); }

TEST_CASE("verify refuses a zero point outside the tensor's dtype") {
  ir::Graph g = clamp_graph();
  g.tensors[1].quant.zero_point = {200};
  CHECK_THROWS_WITH(passes::verify(g), Catch::Contains("hand.onnx: IR check") && Catch::Contains("zero point 200"));
}

TEST_CASE("verify refuses per-channel quantization of an activation") {
  ir::Graph g = clamp_graph();
  g.tensors[1].quant = ir::Quant{{0.5f, 0.5f, 0.5f, 0.5f}, {0, 0, 0, 0}, 1};
  CHECK_THROWS_WITH(passes::verify(g), Catch::Contains("per-channel"));
}

TEST_CASE("verify refuses a tensor read before it is produced") {
  ir::Graph g = clamp_graph();
  g.inputs.clear();
  CHECK_THROWS_WITH(passes::verify(g), Catch::Contains("before it is produced"));
}

TEST_CASE("verify refuses a clamp outside the output dtype") {
  ir::Graph g = clamp_graph();
  g.nodes[0].attrs.act_max = 255;
  CHECK_THROWS_WITH(passes::verify(g), Catch::Contains("activation range"));
}

TEST_CASE("prune drops unreferenced tensors and renumbers the rest") {
  ir::Graph g = clamp_graph();
  g.tensors.insert(g.tensors.begin(), activation("unused", ir::DType::Int8, 0));
  g.nodes[0].inputs = {1};
  g.nodes[0].outputs = {2};
  g.inputs = {1};
  g.outputs = {2};
  passes::prune_unused_tensors(g);
  REQUIRE(g.tensors.size() == 2);
  CHECK(g.tensors[g.nodes[0].inputs[0]].name == "x");
  CHECK(g.tensors[g.outputs[0]].name == "y");
  CHECK_NOTHROW(passes::verify(g));
}
