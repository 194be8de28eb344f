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

// x -> Clamp -> y, where y ([1, 4]) lies in `holder` ([1, 8], a graph output another Clamp writes
// from y): y's pixel of 4 elements from element `offset` on.
ir::Graph slice_graph(std::int64_t offset) {
  ir::Graph g = clamp_graph();
  ir::Tensor holder = activation("holder", ir::DType::Int8, 0);
  holder.shape = {1, 8};
  g.tensors.push_back(holder);
  g.tensors[1].slice_of = 2;
  g.tensors[1].slice_offset = offset;
  g.tensors[1].slice_pixel_stride = 4;
  ir::Node whole = g.nodes[0];
  whole.name = "whole";
  whole.inputs = {1};
  whole.outputs = {2};
  g.nodes.push_back(whole);
  g.outputs = {2};
  return g;
}

TEST_CASE("verify accepts a tensor written in place inside its holder") {
  CHECK_NOTHROW(passes::verify(slice_graph(4)));
}

TEST_CASE("verify refuses a tensor lying past the end of its holder") {
  CHECK_THROWS_WITH(
      passes::verify(slice_graph(5)),
      Catch::Contains("tensor 'y' (1 pixels of 4 elements, every 4 from element 5) does not fit in 'holder'"));
}

TEST_CASE("verify refuses tensors lying in one another in a circle") {
  ir::Graph g = slice_graph(0);
  g.tensors[2].slice_of = 1;
  CHECK_THROWS_WITH(passes::verify(g), Catch::Contains("leads back to itself"));
}

TEST_CASE("verify refuses a tensor lying in one of another dtype") {
  ir::Graph g = slice_graph(0);
  g.tensors[2].dtype = ir::DType::UInt8;
  g.tensors[2].quant.zero_point = {128};
  CHECK_THROWS_WITH(passes::verify(g), Catch::Contains("tensor 'y' (int8) lies in 'holder' (uint8)"));
}

TEST_CASE("verify after a pass names the pass") {
  CHECK_THROWS_WITH(passes::verify_after("tile_stage", slice_graph(5)),
                    Catch::StartsWith("hand.onnx: IR check after tile_stage: tensor 'y'"));
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
