// Conv: 2-D convolution, grouped and depthwise included; inputs: x, w, [bias int32]; an int32
// output is the accumulator, with no bias (ConvInteger). A 1-D convolution (x [N, C, L], w
// [M, C/group, k]) runs as a 2-D one of height 1 (x [N, C, 1, L], w [M, C/group, 1, k]), so that
// kernels, overlap distances, tiling and the planner see only 2-D convolutions: Reshape views
// lead its 3-D input in and its 4-D output back to the 3-D value the model declares.
#include <tightfit/kernels.hpp>

#include "ops/operator.hpp"
#include "ops/emission.hpp"
#include "ops/translator.hpp"

namespace tightfit::ops {
namespace {

using namespace import;

struct Import : Translator {
  using Translator::Translator;

  // Attributes and output shape of a 2-D convolution of x by w ([M, C/group, kh, kw]); with
  // `one_d`, of a 1-D one lifted to height 1, whose window attributes name the width alone.
  ir::Attrs conv_attrs(const NodeProto& n, const Shape& x, const Shape& w, Shape& y, bool one_d) const {
    if (x.size() != 4)
      throw Error(
          fmt::format("input shape {} is neither 3-D (N, C, L) nor 4-D (N, C, H, W): only 1-D and 2-D "
                      "convolutions are supported",
                      shape_text(x)));
    if (w.size() != 4) throw Error(fmt::format("weight shape {} is not 4-D", shape_text(w)));
    ir::Attrs a;
    a.group = int_attr(n, "group", 1);
    if (a.group < 1 || x[1] % a.group != 0 || w[0] % a.group != 0 || w[1] * a.group != x[1])
      throw Error(fmt::format("group {} does not fit input {} and weight {}", a.group, shape_text(x), shape_text(w)));
    Window win{{w[2], w[3]}, ints_attr(n, "strides"), ints_attr(n, "dilations"), ints_attr(n, "pads"), false};
    Shape kernel = ints_attr(n, "kernel_shape");
    if (one_d) {
      if (kernel.size() > 1 || win.strides.size() > 1 || win.dilations.size() > 1 ||
          (!win.pads.empty() && win.pads.size() != 2))
        throw Error("kernel_shape, strides, dilations and pads of a 1-D Conv must have 1, 1, 1 and 2 values");
      if (!kernel.empty()) kernel.insert(kernel.begin(), 1);
      if (!win.strides.empty()) win.strides.insert(win.strides.begin(), 1);
      if (!win.dilations.empty()) win.dilations.insert(win.dilations.begin(), 1);
      if (!win.pads.empty()) win.pads = {0, win.pads[0], 0, win.pads[1]};
    }
    if (!kernel.empty() && kernel != win.kernel)
      throw Error(
          fmt::format("kernel_shape {} differs from the weight's {}", shape_text(kernel), shape_text(win.kernel)));
    const Shape spatial = window_output(x, win, string_attr(n, "auto_pad", "NOTSET"));
    y = {x[0], w[0], spatial[0], spatial[1]};
    set_window(a, win);
    return a;
  }

  // True for a 1-D convolution: a 3-D input. Then `x` becomes a Reshape view of it at height 1
  // and `w` a copy of the weight with a kernel height of 1 (the original may be shared with
  // other nodes); anything but a 3-D weight is refused.
  bool lift_1d(const NodeProto& n, ir::TensorId& x, ir::TensorId& w) {
    if (tensor(x).shape.size() != 3) return false;
    ir::Tensor kernel = tensor(w);
    if (kernel.shape.size() != 3)
      throw Error(fmt::format("weight shape {} of a 1-D Conv is not 3-D", shape_text(kernel.shape)));
    kernel.shape.insert(kernel.shape.begin() + 2, 1);
    w = add_tensor(std::move(kernel));
    Shape rows = tensor(x).shape;
    rows.insert(rows.begin() + 2, 1);
    const ir::TensorId view = add_like(node_name(n) + ":height1_input", x, rows);
    emit(n, ir::OpKind::Reshape, n.op_type() + " (1-D input at height 1)", {x}, view).name =
        node_name(n) + ":height1_input";
    x = view;
    return true;
  }

  // The tensor a convolution writes for ONNX value `name`: the value itself, or for a 1-D
  // convolution a 4-D tensor of its own (see height1_output).
  ir::TensorId conv_output(const std::string& name, ir::DType dtype, const Shape& y, const ir::Quant* quant,
                           bool one_d) {
    return add_activation(one_d ? name + ":height1" : name, dtype, y, quant);
  }

  // After a 1-D convolution wrote `y4` ([N, M, 1, L]): ONNX value `name` as a Reshape view of it,
  // with the 3-D shape the model gives it.
  ir::TensorId height1_output(const NodeProto& n, ir::TensorId y4, const std::string& name) {
    Shape y = tensor(y4).shape;
    y.erase(y.begin() + 2);
    const ir::TensorId out = add_like(name, y4, y);
    emit(n, ir::OpKind::Reshape, n.op_type() + " (1-D output from height 1)", {y4}, out).name =
        node_name(n) + ":height1_output";
    return out;
  }

  void qdq_conv(const NodeProto& n) {
    ir::TensorId x = activation_input(n, 0, true);
    ir::TensorId w = dequantized_constant(n, 1, "weight");
    check_weight(tensor(w), 0);
    const bool one_d = lift_1d(n, x, w);
    Shape y;
    const ir::Attrs attrs = conv_attrs(n, tensor(x).shape, tensor(w).shape, y, one_d);
    std::vector<ir::TensorId> inputs = {x, w};
    add_qdq_bias(n, x, w, y[1], inputs);
    const Sink sink = quantized_sink(n);
    Sink written = sink;  // a 1-D convolution writes a 4-D tensor of its own (see conv_output)
    if (one_d) written.name += ":height1";
    ir::Node& node = emit_to_sink(n, ir::OpKind::Conv, inputs, y, written);
    keep_activation(node.attrs, attrs);
    const ir::TensorId y4 = node.outputs[0];  // height1_output adds a node: `node` dangles after it
    if (one_d) set_value(sink.name, Value{Value::Kind::Integer, height1_output(n, y4, sink.name), nullptr});
  }

  // QLinearConv(x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, [B]).
  void qlinear_conv(const NodeProto& n) {
    ir::TensorId x = activation_input(n, 0, false);
    bind_quant(x, read_qparams(n, 1, 2, tensor(x).dtype, -1));
    const TensorProto& wc = constant_input(n, 3);
    ir::TensorId w = add_constant(wc, read_qparams(n, 4, 5, dtype_or_uint8(wc), 0));
    check_weight(tensor(w), 0);
    const bool one_d = lift_1d(n, x, w);
    const QParams yq = read_qparams(n, 6, 7, ir::DType::UInt8, -1);
    if (yq.quant.per_channel()) throw Error("per-channel output quantization is not supported");
    Shape y;
    const ir::Attrs attrs = conv_attrs(n, tensor(x).shape, tensor(w).shape, y, one_d);
    std::vector<ir::TensorId> inputs = {x, w};
    if (has_input(n, 8)) inputs.push_back(accumulator_bias(n, 8, tensor(x).quant, tensor(w).quant, y[1]));
    ir::TensorId out = conv_output(n.output(0), yq.dtype, y, &yq.quant, one_d);
    ir::Node& node = emit(n, ir::OpKind::Conv, "QLinearConv", inputs, out);
    keep_activation(node.attrs, attrs);
    if (one_d) out = height1_output(n, out, n.output(0));
    set_value(n.output(0), Value{Value::Kind::Integer, out, nullptr});
  }

  // An int32 bias constant of a QOperator node, quantized at x_scale * w_scale (as ONNX defines).
  ir::TensorId accumulator_bias(const NodeProto& n, int index, const ir::Quant& x, const ir::Quant& w,
                                std::int64_t channels) {
    const TensorProto& bc = constant_input(n, index);
    QParams bq;
    bq.dtype = ir::DType::Int32;
    for (std::size_t c = 0; c < w.scale.size(); ++c) {
      bq.quant.scale.push_back(x.scale[0] * w.scale[c]);
      bq.quant.zero_point.push_back(0);
    }
    bq.quant.axis = w.per_channel() ? 0 : -1;
    if (to_dtype(bc.data_type()) != ir::DType::Int32) throw Error(fmt::format("bias '{}' is not int32", bc.name()));
    const Shape dims = tensor_dims(bc);
    if (dims.size() != 1 || dims[0] != channels)
      throw Error(fmt::format("bias '{}' has shape {} for {} output channels", bc.name(), shape_text(dims), channels));
    return add_constant(bc, bq);
  }

  // ConvInteger(x, w, [x_zp], [w_zp]) -> int32 accumulators (a Conv whose output is not
  // requantized). The scales are unknown here (1); a DequantizeLinear downstream may state them.
  void conv_integer(const NodeProto& n) {
    ir::TensorId x = activation_input(n, 0, false);
    bind_zero_point(n, x, 2);
    const TensorProto& wc = constant_input(n, 1);
    ir::TensorId w = add_constant(wc, unit_scale_params(n, 3, wc, 0));
    check_weight(tensor(w), 0);
    const bool one_d = lift_1d(n, x, w);
    Shape y;
    const ir::Attrs attrs = conv_attrs(n, tensor(x).shape, tensor(w).shape, y, one_d);
    ir::TensorId out = conv_output(n.output(0), ir::DType::Int32, y, nullptr, one_d);
    ir::Node& node = emit(n, ir::OpKind::Conv, "ConvInteger", {x, w}, out);
    keep_activation(node.attrs, attrs);
    if (one_d) out = height1_output(n, out, n.output(0));
    set_value(n.output(0), Value{Value::Kind::Integer, out, nullptr});
  }
};

using namespace emit;

struct Emit : Emission {
  using Emission::Emission;

  void conv(const std::string& id, const Node& n) {
    if (out(n).dtype == DType::Int32) return conv_accumulate(id, n);
    const Tensor &x = in(n, 0), &w = in(n, 1), &y = out(n);
    const tightfit::ConvParams p = conv_params(n);

    std::string weights;
    if (w.dtype == DType::Int8) {
      std::vector<std::int8_t> packed(w.data.size());
      tightfit::pack_conv_weights(p, elements_of<std::int8_t>(w).data(), packed.data());
      weights = array(id + "_weights", "std::int8_t", packed);
    } else {
      std::vector<std::uint8_t> packed(w.data.size());
      tightfit::pack_conv_weights(p, elements_of<std::uint8_t>(w).data(), packed.data());
      weights = array(id + "_weights", "std::uint8_t", packed);
    }
    const std::string bias = bias_pointer(id, n);
    const std::string mult = multiplier_array(id, x, w, y);
    const std::string block = params(id, p);
    call(n, fmt::format("tightfit::conv<{}, {}{}>({}, {}, {}, {}, {}, {})", t_of(n), ctype(w.dtype), direction(), block,
                        pointer(n.inputs[0]), weights, bias, mult, pointer(n.outputs[0])));
  }

  // ConvInteger: int32 accumulators, no bias, no requantization. Weights OHWI for every group
  // count (conv_accumulate's layout, independent of the requantizing kernels' packing).
  void conv_accumulate(const std::string& id, const Node& n) {
    const Tensor &x = in(n, 0), &w = in(n, 1);
    require_per_tensor(n, x);
    if (n.inputs.size() > 2 && n.inputs[2] != ir::kNoTensor) refuse(n, "an int32 convolution output takes no bias");
    const std::int64_t group_in_c = w.shape[1], kh = w.shape[2], kw = w.shape[3], oc_count = w.shape[0];
    const std::size_t es = ir::dtype_size(w.dtype);
    std::vector<std::uint8_t> ohwi(w.data.size());
    for (std::int64_t oc = 0; oc < oc_count; ++oc)
      for (std::int64_t ic = 0; ic < group_in_c; ++ic)
        for (std::int64_t ky = 0; ky < kh; ++ky)
          for (std::int64_t kx = 0; kx < kw; ++kx) {
            const std::int64_t from = ((oc * group_in_c + ic) * kh + ky) * kw + kx;
            const std::int64_t to = ((oc * kh + ky) * kw + kx) * group_in_c + ic;
            std::memcpy(&ohwi[static_cast<std::size_t>(to) * es], &w.data[static_cast<std::size_t>(from) * es], es);
          }
    Tensor packed = w;
    packed.data = std::move(ohwi);
    const std::string weights = tensor_array(id + "_weights", packed);
    // No requantization: the output zero point, clamp, multipliers and out_stride unused (0).
    tightfit::ConvParams p = conv_geometry(state_.g_, n);
    p.out_stride = 0;
    p.input_zero_point = x.quant.zero_point[0];
    p.weight_zero_point = weight_zero_point(n, w);
    const std::string block = params(id, p);
    call(n, fmt::format("tightfit::conv_accumulate<{}, {}>({}, {}, {}, {})", t_of(n), ctype(w.dtype), block,
                        pointer(n.inputs[0]), weights, pointer(n.outputs[0])));
  }
};

// The output over input 0 (not over an int32 accumulator output: ConvInteger).
plan::OverlapDistances overlap(const ir::Graph& g, const ir::Node& n, std::size_t input) {
  if (g.tensors[n.outputs[0]].dtype == ir::DType::Int32 || input != 0) return {};
  const tightfit::ConvParams p = emit::conv_geometry(g, n);
  return overlap_distances(tightfit::conv_distance(p), tightfit::conv_up_distance(p));
}

// Each output element sums over (Cin / group) * kh * kw products: w is [Cout, Cin/group, kh, kw].
std::int64_t conv_macs(const ir::Graph& g, const ir::Node& n) {
  const ir::Tensor& w = g.tensors[n.inputs[1]];
  std::int64_t per_output = 1;
  for (std::size_t i = 1; i < w.shape.size(); ++i) per_output *= w.shape[i];
  return g.tensors[n.outputs[0]].elements() * per_output;
}

// The kernel a Conv's call dispatches to (runtime/include/tightfit/kernels.hpp), each measured
// apart: they differ several times over in instructions per MAC.
std::string conv_kernel(const ir::Graph& g, const ir::Node& n) {
  if (g.tensors[n.outputs[0]].dtype == ir::DType::Int32) return "conv_accumulate";
  const tightfit::ConvParams p = emit::conv_geometry(g, n);
  return tightfit::conv_is_depthwise(p)   ? "conv_depthwise"
         : tightfit::conv_is_pointwise(p) ? "conv_pointwise"
                                          : "conv_general";
}

}  // namespace

extern const Operator kConv = [] {
  Operator op{};
  op.kind = ir::OpKind::Conv;
  op.imports = {{"", "Conv", [](ImportState& s, const NodeProto& n) { Import(s).qdq_conv(n); }},
                {"", "QLinearConv", [](ImportState& s, const NodeProto& n) { Import(s).qlinear_conv(n); }},
                {"", "ConvInteger", [](ImportState& s, const NodeProto& n) { Import(s).conv_integer(n); }}};
  op.emit = [](EmissionState& s, const std::string& id, const ir::Node& n) { Emit(s).conv(id, n); };
  op.overlap = overlap;
  op.scratch = nullptr;
  op.shared_kernel = SharedKernel::own;
  op.layout = LayoutRule::as_it_comes;
  op.tile_window = TileWindow::convolution;
  op.pad_fold = PadFold::convolution;
  op.output_range = OutputRange::clamped_to_act_range;
  op.strided_output = StridedOutput::channel_slice;
  op.macs = conv_macs;
  op.cost_key = conv_kernel;
  op.cost_work = CostWork::whole_tensors;
  op.tflite_gap = tflite_exact;
  return op;
}();

}  // namespace tightfit::ops
