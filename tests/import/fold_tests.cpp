// The QDQ fold and the QOperator translation, pinned on the IR they produce for the small models
// that make_bad_models.py writes into good/.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>

#include "error.hpp"
#include "driver/pipeline.hpp"
#include "ops/operator.hpp"

using namespace tightfit;

namespace {

ir::Graph import_good(const std::string& name) {
  return driver::import_graph(std::string(IMPORT_TEST_DIR) + "/good/" + name);
}

const ir::Tensor& input_tensor(const ir::Graph& g, const ir::Node& n, std::size_t i) {
  return g.tensors[n.inputs.at(i)];
}
const ir::Tensor& output_tensor(const ir::Graph& g, const ir::Node& n) { return g.tensors[n.outputs.at(0)]; }

std::vector<ir::OpKind> op_kinds(const ir::Graph& g) {
  std::vector<ir::OpKind> kinds;
  for (const auto& n : g.nodes) kinds.push_back(n.op);
  return kinds;
}

}  // namespace

TEST_CASE("a QDQ Conv+Relu becomes one Conv whose clamp starts at the output zero point") {
  const ir::Graph g = import_good("conv_relu_qdq.onnx");
  REQUIRE(op_kinds(g) == std::vector<ir::OpKind>{ir::OpKind::Quantize, ir::OpKind::Conv, ir::OpKind::Dequantize});
  const ir::Node& conv = g.nodes[1];
  CHECK(conv.onnx_op == "Conv+Relu (QDQ)");
  const ir::Tensor& y = output_tensor(g, conv);
  CHECK(y.dtype == ir::DType::UInt8);
  CHECK(y.quant.zero_point == std::vector<std::int32_t>{10});
  CHECK(conv.attrs.act_min == 10);
  CHECK(conv.attrs.act_max == 255);
  CHECK(conv.attrs.pads == std::vector<std::int64_t>{1, 1, 1, 1});
  CHECK(y.shape == std::vector<std::int64_t>{1, 4, 5, 5});
}

TEST_CASE("a QDQ Conv keeps int8 per-channel weights and an int32 bias at x_scale*w_scale") {
  const ir::Graph g = import_good("conv_relu_qdq.onnx");
  const ir::Node& conv = g.nodes[1];
  REQUIRE(conv.inputs.size() == 3);
  const ir::Tensor& w = input_tensor(g, conv, 1);
  CHECK(w.is_constant);
  CHECK(w.dtype == ir::DType::Int8);
  CHECK(w.quant.axis == 0);
  CHECK(w.quant.scale == std::vector<float>{0.01f, 0.02f, 0.015f, 0.03f});
  const ir::Tensor& b = input_tensor(g, conv, 2);
  CHECK(b.dtype == ir::DType::Int32);
  REQUIRE(b.data.size() == 16);
  std::int32_t second;
  std::memcpy(&second, b.data.data() + 4, 4);
  CHECK(second == -200);
  CHECK(b.quant.scale[1] == Approx(0.05f * 0.02f));
  CHECK(ops::macs(g, conv) == 4 * 5 * 5 * 2 * 3 * 3);
}

TEST_CASE("a QDQ Clip(0 6) fuses as the quantized bounds of the int8 output") {
  const ir::Graph g = import_good("conv_clip_int8_qdq.onnx");
  REQUIRE(g.nodes.size() == 3);
  const ir::Node& conv = g.nodes[1];
  CHECK(conv.onnx_op == "Conv+Clip (QDQ)");
  // Output scale 0.1, zero point -20: 0 -> -20 and 6 -> 60 - 20 = 40.
  CHECK(conv.attrs.act_min == -20);
  CHECK(conv.attrs.act_max == 40);
}

TEST_CASE("nodes without an activation clamp to their output dtype's limits") {
  const ir::Graph g = import_good("matmul_qdq.onnx");
  for (const auto& n : g.nodes) {
    if (n.op == ir::OpKind::Dequantize) continue;
    CHECK(n.attrs.act_min == -128);
    CHECK(n.attrs.act_max == 127);
  }
}

TEST_CASE("a QDQ MatMul becomes a FullyConnected with the weight transposed to MxK and per-row scales") {
  const ir::Graph g = import_good("matmul_qdq.onnx");
  REQUIRE(op_kinds(g) ==
          std::vector<ir::OpKind>{ir::OpKind::Quantize, ir::OpKind::FullyConnected, ir::OpKind::Dequantize});
  const ir::Node& fc = g.nodes[1];
  const ir::Tensor& w = input_tensor(g, fc, 1);
  REQUIRE(w.shape == std::vector<std::int64_t>{4, 3});
  // The ONNX weight is arange(12) as [3, 4]; row m of the [4, 3] weight is column m of it.
  CHECK(std::vector<std::uint8_t>(w.data.begin(), w.data.begin() + 6) == std::vector<std::uint8_t>{0, 4, 8, 1, 5, 9});
  CHECK(w.quant.axis == 0);
  CHECK(w.quant.scale == std::vector<float>{0.1f, 0.2f, 0.3f, 0.4f});
  CHECK(output_tensor(g, fc).shape == std::vector<std::int64_t>{2, 4});
  CHECK(ops::macs(g, fc) == 2 * 4 * 3);
}

TEST_CASE("QDQ data movement stays on the integer tensor and a QuantizeLinear with other parameters requantizes") {
  const ir::Graph g = import_good("movement_qdq.onnx");
  REQUIRE(op_kinds(g) == std::vector<ir::OpKind>{ir::OpKind::Quantize, ir::OpKind::MaxPool, ir::OpKind::Reshape,
                                                 ir::OpKind::Requantize, ir::OpKind::Reshape, ir::OpKind::Concat,
                                                 ir::OpKind::Dequantize});
  // MaxPool -> QuantizeLinear with the same parameters: an alias, no node.
  const ir::Tensor& pooled = output_tensor(g, g.nodes[1]);
  CHECK(pooled.shape == std::vector<std::int64_t>{1, 1, 2, 2});
  CHECK(pooled.quant.scale == std::vector<float>{0.1f});
  CHECK(g.nodes[2].inputs[0] == g.nodes[1].outputs[0]);
  // Concat of inputs at (0.2, 7) and (0.1, 5) into (0.2, 7): each input keeps its own
  // quantization and the Concat requantizes the second as it copies, with no copy of its own.
  const ir::Node& concat = g.nodes[5];
  CHECK(input_tensor(g, concat, 0).quant.scale == std::vector<float>{0.2f});
  CHECK(input_tensor(g, concat, 1).quant.scale == std::vector<float>{0.1f});
  CHECK(output_tensor(g, concat).quant.scale == std::vector<float>{0.2f});
  CHECK(concat.attrs.axis == 1);
  CHECK(output_tensor(g, concat).shape == std::vector<std::int64_t>{1, 20});
}

TEST_CASE("the QOperator form translates QLinearConv and the com.microsoft QLinear operators") {
  const ir::Graph g = import_good("qop_branches.onnx");
  REQUIRE(op_kinds(g) == std::vector<ir::OpKind>{ir::OpKind::Quantize, ir::OpKind::Conv, ir::OpKind::Add,
                                                 ir::OpKind::GlobalAveragePool, ir::OpKind::Sigmoid, ir::OpKind::Concat,
                                                 ir::OpKind::Dequantize});
  const ir::Node& conv = g.nodes[1];
  CHECK(conv.onnx_op == "QLinearConv");
  const ir::Tensor& bias = input_tensor(g, conv, 2);
  CHECK(bias.dtype == ir::DType::Int32);
  CHECK(bias.quant.scale[2] == Approx(0.05f * 0.03f));
  CHECK(output_tensor(g, g.nodes[2]).quant.zero_point == std::vector<std::int32_t>{3});
  CHECK(output_tensor(g, g.nodes[3]).shape == std::vector<std::int64_t>{1, 3, 1, 1});
  CHECK(output_tensor(g, g.nodes[5]).shape == std::vector<std::int64_t>{1, 6, 1, 1});
}

TEST_CASE("float graph edges are Quantize and Dequantize nodes with float32 unquantized tensors") {
  const ir::Graph g = import_good("conv_relu_qdq.onnx");
  REQUIRE(g.inputs.size() == 1);
  REQUIRE(g.outputs.size() == 1);
  const ir::Tensor& x = g.tensors[g.inputs[0]];
  const ir::Tensor& y = g.tensors[g.outputs[0]];
  CHECK(x.dtype == ir::DType::Float32);
  CHECK_FALSE(x.quantized);
  CHECK(y.dtype == ir::DType::Float32);
  CHECK(y.name == "y");
  CHECK(g.nodes.front().inputs[0] == g.inputs[0]);
  CHECK(g.nodes.back().outputs[0] == g.outputs[0]);
}

TEST_CASE("nodes in any acyclic order are imported in topological order") {
  const ir::Graph g = import_good("unsorted_nodes.onnx");
  CHECK(op_kinds(g) == std::vector<ir::OpKind>{ir::OpKind::Quantize, ir::OpKind::Conv, ir::OpKind::Dequantize});
}

TEST_CASE("weights in an external data file beside the model are read") {
  const ir::Graph with_file = import_good("external_data.onnx");
  const ir::Graph inline_data = import_good("conv_relu_qdq.onnx");
  CHECK(input_tensor(with_file, with_file.nodes[1], 1).data == input_tensor(inline_data, inline_data.nodes[1], 1).data);
}

TEST_CASE("a symbolic batch dimension is pinned to 1 and the input named") {
  const ir::Graph g = import_good("dynamic_batch.onnx");
  CHECK(g.tensors[g.inputs[0]].shape == std::vector<std::int64_t>{1, 2, 5, 5});
  CHECK(g.batch_pinned == std::vector<std::string>{"x"});
  CHECK(import_good("conv_relu_qdq.onnx").batch_pinned.empty());
}

TEST_CASE("a standalone QDQ Relu becomes a Clamp at the zero point when the scale stays") {
  const ir::Graph g = import_good("relu_same_scale_qdq.onnx");
  REQUIRE(op_kinds(g) == std::vector<ir::OpKind>{ir::OpKind::Quantize, ir::OpKind::Clamp, ir::OpKind::Dequantize});
  CHECK(g.nodes[1].attrs.act_min == -10);
  CHECK(g.nodes[1].attrs.act_max == 127);
}

TEST_CASE("a standalone QDQ Relu before a QuantizeLinear with another scale becomes a clamping Requantize") {
  const ir::Graph g = import_good("relu_new_scale_qdq.onnx");
  REQUIRE(op_kinds(g) == std::vector<ir::OpKind>{ir::OpKind::Quantize, ir::OpKind::Requantize, ir::OpKind::Dequantize});
  CHECK(output_tensor(g, g.nodes[1]).quant.scale == std::vector<float>{0.05f});
  CHECK(g.nodes[1].attrs.act_min == -10);
}

TEST_CASE(
    "QuantizeLinear then ConvInteger then DequantizeLinear then QuantizeLinear is a raw int32 Conv and a Requantize") {
  const ir::Graph g = import_good("convinteger_qdq.onnx");
  REQUIRE(op_kinds(g) == std::vector<ir::OpKind>{ir::OpKind::Quantize, ir::OpKind::Conv, ir::OpKind::Requantize,
                                                 ir::OpKind::Dequantize});
  const ir::Tensor& acc = output_tensor(g, g.nodes[1]);
  CHECK(acc.dtype == ir::DType::Int32);
  // The DequantizeLinear of the accumulator states its scale.
  CHECK(acc.quant.scale == std::vector<float>{0.1f * 0.5f});
  CHECK(g.nodes[1].attrs.act_min == INT32_MIN);
  CHECK(input_tensor(g, g.nodes[1], 0).quant.zero_point == std::vector<std::int32_t>{3});
  CHECK(output_tensor(g, g.nodes[2]).dtype == ir::DType::Int8);
}

TEST_CASE("a Div by an activation runs in a float island: Dequantize to float32, Div on float32, Quantize back") {
  const ir::Graph g = import_good("div_by_activation.onnx");
  REQUIRE(op_kinds(g) ==
          std::vector<ir::OpKind>{ir::OpKind::Quantize, ir::OpKind::Dequantize, ir::OpKind::Div, ir::OpKind::Quantize});
  const ir::Node& dq = g.nodes[1];
  const ir::Node& div = g.nodes[2];
  const ir::Node& q = g.nodes[3];
  CHECK(input_tensor(g, dq, 0).dtype == ir::DType::Int8);
  CHECK(output_tensor(g, dq).dtype == ir::DType::Float32);
  CHECK_FALSE(output_tensor(g, dq).quantized);
  // Both operands read the one float32 copy of the activation.
  CHECK(div.inputs == std::vector<ir::TensorId>{dq.outputs[0], dq.outputs[0]});
  CHECK(output_tensor(g, div).dtype == ir::DType::Float32);
  CHECK(output_tensor(g, div).bytes() == 4 * 36);
  CHECK(div.onnx_op == "Div (float)");
  CHECK(q.inputs[0] == div.outputs[0]);
  CHECK(output_tensor(g, q).dtype == ir::DType::Int8);
  CHECK(output_tensor(g, q).quant.scale == std::vector<float>{0.05f});
}

TEST_CASE("a Flatten of a float graph input before its QuantizeLinear quantizes the input under the view's shape") {
  const ir::Graph g = import_good("matmul_flatten_input_qdq.onnx");
  REQUIRE(op_kinds(g).front() == ir::OpKind::Quantize);
  CHECK(g.tensors[g.nodes[0].inputs[0]].shape == std::vector<std::int64_t>{2, 1, 3});
  CHECK(g.tensors[g.nodes[0].outputs[0]].shape == std::vector<std::int64_t>{2, 3});
  CHECK(op_kinds(g).size() == op_kinds(import_good("matmul_qdq.onnx")).size());
}
