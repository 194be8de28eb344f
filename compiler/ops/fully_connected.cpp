// FullyConnected: y = x * W^T + b over the last axis; inputs: x [N,K], w [M,K], [bias int32 [M]];
// or x [..., R, K] with w [B, M, K]: one matrix per batch (B = product of x's leading dims), no
// bias. An int32 output is the accumulator (MatMulInteger).
#include <tightfit/kernels.hpp>

#include "ops/operator.hpp"
#include "ops/emission.hpp"
#include "ops/translator.hpp"

namespace tightfit::ops {
namespace {

using namespace import;

struct Import : Translator {
  using Translator::Translator;

  // The [M, K] weight of a FullyConnected from a [K, M] constant (MatMul, Gemm without transB):
  // transposed, with per-column quantization becoming per-row.
  ir::TensorId transposed_weight(ir::TensorId kxm) {
    const ir::Tensor src = tensor(kxm);
    if (src.quant.per_channel() && src.quant.axis != 1)
      throw Error(fmt::format(
          "weight '{}' is quantized per row (axis 0) of a [K, M] matrix; only per output column is supported",
          src.name));
    const std::int64_t k = src.shape[0], m = src.shape[1];
    const std::size_t size = ir::dtype_size(src.dtype);
    ir::Tensor t = src;
    t.name = src.name + "_transposed";
    t.shape = {m, k};
    if (t.quant.per_channel()) t.quant.axis = 0;
    for (std::int64_t r = 0; r < k; ++r)
      for (std::int64_t c = 0; c < m; ++c)
        std::memcpy(&t.data[(c * k + r) * size], &src.data[(r * m + c) * size], size);
    return add_tensor(std::move(t));
  }

  // The output shape of x times a weight [M, K] (or [B, M, K], one matrix per batch).
  Shape fully_connected_shape(const Shape& x, const Shape& w_mxk) const {
    if (x.size() < 2) throw Error(fmt::format("input shape {} has rank below 2", shape_text(x)));
    if (x.back() != w_mxk.back())
      throw Error(fmt::format("input {} does not match weight {} (K differs)", shape_text(x), shape_text(w_mxk)));
    Shape y = x;
    y.back() = w_mxk[w_mxk.size() - 2];
    return y;
  }

  // The weight of a matmul with a constant B ([K, M], or [..., K, M] with batch dimensions): a
  // 2-D B becomes the FullyConnected weight [M, K]; a batched B must have exactly A's batch
  // dimensions (no broadcasting) and becomes [B, M, K], each matrix transposed, per tensor.
  ir::TensorId matmul_weight(ir::TensorId b, const Shape& a) {  // `a` must not refer into state_.out_.tensors
    const ir::Tensor src = tensor(b);
    const std::size_t rank = src.shape.size();
    if (rank == 2) return transposed_weight(b);
    if (rank < 2)
      throw Error(
          fmt::format("weight '{}' has shape {}; a matmul weight has rank 2 or more", src.name, shape_text(src.shape)));
    if (a.size() != rank || !std::equal(a.begin(), a.end() - 2, src.shape.begin()))
      throw Error(fmt::format(
          "weight '{}' has shape {} and input A {}: a batched matmul needs the same batch dimensions on both "
          "(broadcasting is not supported)",
          src.name, shape_text(src.shape), shape_text(a)));
    if (src.quant.per_channel())
      throw Error(fmt::format("batched weight '{}' is quantized per channel; only per tensor is supported", src.name));
    std::int64_t batches = 1;
    for (std::size_t d = 0; d + 2 < rank; ++d) batches *= src.shape[d];
    const std::int64_t k = src.shape[rank - 2], m = src.shape[rank - 1];
    const std::size_t size = ir::dtype_size(src.dtype);
    ir::Tensor t = src;
    t.name = src.name + "_transposed";
    t.shape = {batches, m, k};
    for (std::int64_t bi = 0; bi < batches; ++bi)
      for (std::int64_t r = 0; r < k; ++r)
        for (std::int64_t c = 0; c < m; ++c)
          std::memcpy(&t.data[((bi * m + c) * k + r) * size], &src.data[((bi * k + r) * m + c) * size], size);
    return add_tensor(std::move(t));
  }

  void require_2d_weight(const ir::Tensor& w) const {
    if (w.shape.size() != 2)
      throw Error(fmt::format(
          "weight '{}' has shape {}; only a 2-D weight (fully connected) is supported, not a batched matmul", w.name,
          shape_text(w.shape)));
  }

  // A Gemm or MatMul of a float value (a float island's, or a float graph input's, as the verifier
  // head of openWakeWord's If) by a float constant: FullyConnected in float, the weight [M, K].
  bool float_fully_connected(const NodeProto& n) {
    const Value::Kind a = value(n.input(0)).kind;
    if (a != Value::Kind::Float && a != Value::Kind::FloatInput) return false;
    const bool gemm = n.op_type() == "Gemm";
    if (gemm && (int_attr(n, "transA", 0) != 0 || float_attr(n, "alpha", 1.0f) != 1.0f ||
                 (has_input(n, 2) && float_attr(n, "beta", 1.0f) != 1.0f)))
      throw Error("a float Gemm needs transA=0, alpha=1 and beta=1");
    // A view of a float graph input (its Flatten) is the input's bytes: only the shape differs.
    const std::string& a_name = n.input(0);
    const Value& v = value(a_name);
    const bool view = a == Value::Kind::FloatInput && state_.float_input_views_.count(a_name);
    const ir::TensorId x = view ? v.tensor : float_operand(n, 0);
    const Shape x_shape = view ? state_.float_input_views_.at(a_name) : tensor(x).shape;
    ir::TensorId w = float_operand(n, 1);
    require_2d_weight(tensor(w));
    if (!tensor(w).is_constant) throw Error("a float matmul needs a constant weight (B)");
    if (!(gemm && int_attr(n, "transB", 0) != 0)) w = transposed_weight(w);
    const Shape y = fully_connected_shape(x_shape, tensor(w).shape);
    std::vector<ir::TensorId> inputs = {x, w};
    if (gemm && has_input(n, 2)) {
      inputs.push_back(float_operand(n, 2));
      if (tensor(inputs.back()).elements() != tensor(w).shape[0] || !tensor(inputs.back()).is_constant)
        throw Error("a float Gemm needs a constant bias (C) of one element per output column");
    }
    float_node(n, ir::OpKind::FullyConnected, inputs, y);
    return true;
  }

  void qdq_fully_connected(const NodeProto& n) {
    if (float_fully_connected(n)) return;
    const bool gemm = n.op_type() == "Gemm";
    const ir::TensorId x = activation_input(n, 0, true);
    ir::TensorId w = dequantized_constant(n, 1, "weight (B)");
    require_2d_weight(tensor(w));
    if (gemm) {
      if (int_attr(n, "transA", 0) != 0) throw Error("attribute transA=1 is not supported");
      if (float_attr(n, "alpha", 1.0f) != 1.0f) throw Error("attribute alpha other than 1 is not supported");
      if (has_input(n, 2) && float_attr(n, "beta", 1.0f) != 1.0f)
        throw Error("attribute beta other than 1 is not supported");
      if (tensor(x).shape.size() != 2)
        throw Error(fmt::format("Gemm input shape {} is not 2-D", shape_text(tensor(x).shape)));
    }
    const bool transposed = gemm && int_attr(n, "transB", 0) != 0;
    if (!transposed) w = transposed_weight(w);
    check_weight(tensor(w), 0);
    const Shape y = fully_connected_shape(tensor(x).shape, tensor(w).shape);
    std::vector<ir::TensorId> inputs = {x, w};
    if (gemm && has_input(n, 2)) {
      const ir::TensorId b = dequantized_constant(n, 2, "bias (C)");
      check_bias(tensor(b), tensor(w).shape[0]);
      check_bias_scale(tensor(b), tensor(x).quant, tensor(w).quant);
      inputs.push_back(b);
    }
    const Sink sink = quantized_sink(n);
    emit_to_sink(n, ir::OpKind::FullyConnected, inputs, y, sink);
  }

  // QLinearMatMul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp) with a constant b: 2-D
  // (per tensor or per column), or with A's batch dimensions (per tensor).
  void qlinear_matmul(const NodeProto& n) {
    const ir::TensorId a = activation_input(n, 0, false);
    bind_quant(a, read_qparams(n, 1, 2, tensor(a).dtype, -1));
    const TensorProto& bc = constant_input(n, 3);
    const int column_axis = bc.dims_size() - 1;
    const Shape a_shape = tensor(a).shape;  // a copy: add_constant may move the tensors
    const ir::TensorId w =
        matmul_weight(add_constant(bc, read_qparams(n, 4, 5, dtype_or_uint8(bc), column_axis)), a_shape);
    check_weight(tensor(w), 0);
    const QParams yq = read_qparams(n, 6, 7, ir::DType::UInt8, -1);
    if (yq.quant.per_channel()) throw Error("per-channel output quantization is not supported");
    const Shape y = fully_connected_shape(tensor(a).shape, tensor(w).shape);
    const ir::TensorId out = add_activation(n.output(0), yq.dtype, y, &yq.quant);
    emit(n, ir::OpKind::FullyConnected, "QLinearMatMul", {a, w}, out);
    set_value(n.output(0), Value{Value::Kind::Integer, out, nullptr});
  }

  // MatMulInteger(A, B, [a_zp], [b_zp]) -> int32 accumulators, B constant [K, M] (or with A's
  // batch dimensions).
  void matmul_integer(const NodeProto& n) {
    const ir::TensorId a = activation_input(n, 0, false);
    bind_zero_point(n, a, 2);
    const TensorProto& bc = constant_input(n, 1);
    const Shape a_shape = tensor(a).shape;  // a copy: add_constant may move the tensors
    const ir::TensorId w = matmul_weight(add_constant(bc, unit_scale_params(n, 3, bc, bc.dims_size() - 1)), a_shape);
    check_weight(tensor(w), 0);
    const Shape y = fully_connected_shape(tensor(a).shape, tensor(w).shape);
    const ir::TensorId out = add_activation(n.output(0), ir::DType::Int32, y, nullptr);
    emit(n, ir::OpKind::FullyConnected, "MatMulInteger", {a, w}, out);
    set_value(n.output(0), Value{Value::Kind::Integer, out, nullptr});
  }
};

using namespace emit;

struct Emit : Emission {
  using Emission::Emission;

  // MatMulInteger (int32 output, any weight rank) and QLinearMatMul with a batched weight
  // [B, M, K]: matmul_accumulate / matmul_requantize.
  void matmul(const std::string& id, const Node& n) {
    const Tensor &x = in(n, 0), &w = in(n, 1), &y = out(n);
    require_per_tensor(n, x);
    const bool accumulate = y.dtype == DType::Int32;
    if (!accumulate) require_per_tensor(n, y);
    if (n.inputs.size() > 2 && n.inputs[2] != ir::kNoTensor) refuse(n, "a batched or int32 matmul takes no bias");
    const std::int64_t k = w.shape.back(), m = w.shape[w.shape.size() - 2];
    const std::int64_t batches = w.shape.size() == 3 ? w.shape[0] : 1;
    const std::int64_t rows = x.elements() / k / batches;
    const std::string weights = tensor_array(id + "_weights", w);
    tightfit::MatMulParams p{};
    p.batches = i32(batches), p.rows = i32(rows), p.in_features = i32(k), p.out_features = i32(m);
    p.input_zero_point = x.quant.zero_point[0];
    p.weight_zero_point = weight_zero_point(n, w);
    if (!accumulate) {  // the requantization's fields (0 when unused)
      p.output_zero_point = y.quant.zero_point[0];
      p.output_min = n.attrs.act_min, p.output_max = n.attrs.act_max;
    }
    p.per_channel = w.quant.scale.size() > 1 ? 1 : 0;
    const std::string block = params(id, p);
    if (accumulate) {
      call(n, fmt::format("tightfit::matmul_accumulate<{}, {}>({}, {}, {}, {})", t_of(n), ctype(w.dtype), block,
                          pointer(n.inputs[0]), weights, pointer(n.outputs[0])));
      return;
    }
    if (tflite()) refuse(n, "--numerics tflite: no TFLite arithmetic for a batched matmul");
    const std::string mult = array(id + "_multipliers", "float", multipliers(x, w, y));
    call(n, fmt::format("tightfit::matmul_requantize<{}, {}>({}, {}, {}, {}, {})", t_of(n), ctype(w.dtype), block,
                        pointer(n.inputs[0]), weights, mult, pointer(n.outputs[0])));
  }

  // The float form: tightfit::fully_connected_float, weights and bias float arrays in flash.
  void fully_connected_float(const std::string& id, const Node& n) {
    require_float(n, {0, 1});
    const Tensor &x = in(n, 0), &w = in(n, 1);
    const std::int64_t k = w.shape[1], m = w.shape[0];
    const std::string bias = n.inputs.size() > 2 ? operand(id, n, 2) : "nullptr";
    call(n, fmt::format("tightfit::fully_connected_float({}, {}, {}, {}, {}, {}, {})", x.elements() / k, k, m,
                        pointer(n.inputs[0]), tensor_array(id + "_weights", w), bias, pointer(n.outputs[0])));
  }

  void fully_connected(const std::string& id, const Node& n) {
    if (out(n).dtype == DType::Float32) return fully_connected_float(id, n);
    if (out(n).dtype == DType::Int32 || in(n, 1).shape.size() == 3) return matmul(id, n);
    const Tensor &x = in(n, 0), &w = in(n, 1), &y = out(n);
    require_per_tensor(n, x);
    require_per_tensor(n, y);
    const std::int64_t k = w.shape[1], m = w.shape[0];
    const std::string weights = tensor_array(id + "_weights", w);
    const std::string bias = bias_pointer(id, n);
    const std::string mult = multiplier_array(id, x, w, y);
    tightfit::FullyConnectedParams p{};
    p.rows = i32(x.elements() / k), p.in_features = i32(k), p.out_features = i32(m);
    p.input_zero_point = x.quant.zero_point[0];
    p.weight_zero_point = weight_zero_point(n, w);
    p.output_zero_point = y.quant.zero_point[0];
    p.output_min = n.attrs.act_min, p.output_max = n.attrs.act_max;
    p.per_channel = w.quant.scale.size() > 1 ? 1 : 0;
    const std::string block = params(id, p);
    call(n, fmt::format("tightfit::fully_connected<{}, {}{}>({}, {}, {}, {}, {}, {})", t_of(n), ctype(w.dtype),
                        direction(), block, pointer(n.inputs[0]), weights, bias, mult, pointer(n.outputs[0])));
  }
};

// The output over input 0 (not for a batched B, an int32 accumulator output (MatMulInteger) nor
// the float form).
plan::OverlapDistances overlap(const ir::Graph& g, const ir::Node& n, std::size_t input) {
  const ir::Tensor &x = g.tensors[n.inputs[0]], &w = g.tensors[n.inputs[1]];
  const ir::DType y = g.tensors[n.outputs[0]].dtype;
  if (y == ir::DType::Int32 || y == ir::DType::Float32 || w.shape.size() == 3 || input != 0) return {};
  const std::int64_t k = w.shape[1];
  const tightfit::FullyConnectedParams p{
      emit::i32(x.elements() / k), emit::i32(k), emit::i32(w.shape[0]), 0, 0, 0, 0, 0, 0};
  return overlap_distances(tightfit::fully_connected_distance(p), tightfit::fully_connected_up_distance(p));
}

// Each output element sums over the K products of a row of w [.., K].
std::int64_t fully_connected_macs(const ir::Graph& g, const ir::Node& n) {
  return g.tensors[n.outputs[0]].elements() * g.tensors[n.inputs[1]].shape.back();
}

}  // namespace

extern const Operator kFullyConnected = [] {
  Operator op{};
  op.kind = ir::OpKind::FullyConnected;
  op.imports = {{"", "Gemm", [](ImportState& s, const NodeProto& n) { Import(s).qdq_fully_connected(n); }},
                {"", "MatMul", [](ImportState& s, const NodeProto& n) { Import(s).qdq_fully_connected(n); }},
                {"", "QLinearMatMul", [](ImportState& s, const NodeProto& n) { Import(s).qlinear_matmul(n); }},
                {"", "MatMulInteger", [](ImportState& s, const NodeProto& n) { Import(s).matmul_integer(n); }}};
  op.emit = [](EmissionState& s, const std::string& id, const ir::Node& n) { Emit(s).fully_connected(id, n); };
  op.overlap = overlap;
  op.scratch = nullptr;
  op.shared_kernel = SharedKernel::own;
  op.layout = LayoutRule::logical_order;
  op.tile_window = TileWindow::none;
  op.pad_fold = PadFold::none;
  op.output_range = OutputRange::clamped_to_act_range;
  op.strided_output = StridedOutput::contiguous_only;
  op.macs = fully_connected_macs;
  op.cost_key = named_for_operator;
  op.cost_work = CostWork::whole_tensors;
  op.tflite_gap = tflite_exact;
  return op;
}();

}  // namespace tightfit::ops
