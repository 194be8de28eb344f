// Conv: 2-D convolution, grouped and depthwise included; inputs: x, w, [bias int32]; an int32
// output is the accumulator, with no bias (ConvInteger).
#include <tightfit/kernels.hpp>

#include "ops/operator.hpp"
#include "emit/emission.hpp"
#include "import/translator.hpp"

namespace tightfit::ops {
namespace {

using namespace import;

struct Import : Translator {
  using Translator::Translator;

  // Attributes and output shape of a 2-D convolution of x by w ([M, C/group, kh, kw]).
  ir::Attrs conv_attrs(const NodeProto& n, const Shape& x, const Shape& w, Shape& y) const {
    if (w.size() != 4) throw Error(fmt::format("weight shape {} is not 4-D", shape_text(w)));
    ir::Attrs a;
    a.group = int_attr(n, "group", 1);
    if (x.size() != 4) throw Error(fmt::format("input shape {} is not 4-D (N, C, H, W)", shape_text(x)));
    if (a.group < 1 || x[1] % a.group != 0 || w[0] % a.group != 0 || w[1] * a.group != x[1])
      throw Error(fmt::format("group {} does not fit input {} and weight {}", a.group, shape_text(x), shape_text(w)));
    Window win{{w[2], w[3]}, ints_attr(n, "strides"), ints_attr(n, "dilations"), ints_attr(n, "pads"), false};
    const Shape kernel = ints_attr(n, "kernel_shape");
    if (!kernel.empty() && kernel != win.kernel)
      throw Error(fmt::format("kernel_shape {} differs from the weight's {}", shape_text(kernel), shape_text(win.kernel)));
    const Shape spatial = window_output(x, win, string_attr(n, "auto_pad", "NOTSET"));
    y = {x[0], w[0], spatial[0], spatial[1]};
    a.kernel_shape = win.kernel;
    a.strides = win.strides;
    a.dilations = win.dilations;
    a.pads = win.pads;
    return a;
  }

  void qdq_conv(const NodeProto& n) {
    const ir::TensorId x = activation_input(n, 0, true);
    const ir::TensorId w = dequantized_constant(n, 1, "weight");
    check_weight(tensor(w), 0);
    Shape y;
    const ir::Attrs attrs = conv_attrs(n, tensor(x).shape, tensor(w).shape, y);
    std::vector<ir::TensorId> inputs = {x, w};
    add_qdq_bias(n, x, w, y[1], inputs);
    const Sink sink = quantized_sink(n);
    ir::Node& node = emit_to_sink(n, ir::OpKind::Conv, inputs, y, sink);
    keep_activation(node.attrs, attrs);
  }

  // QLinearConv(x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, [B]).
  void qlinear_conv(const NodeProto& n) {
    const ir::TensorId x = activation_input(n, 0, false);
    bind_quant(x, read_qparams(n, 1, 2, tensor(x).dtype, -1));
    const TensorProto& wc = constant_input(n, 3);
    const ir::TensorId w = add_constant(wc, read_qparams(n, 4, 5, dtype_or_uint8(wc), 0));
    check_weight(tensor(w), 0);
    const QParams yq = read_qparams(n, 6, 7, ir::DType::UInt8, -1);
    if (yq.quant.per_channel()) throw Error("per-channel output quantization is not supported");
    Shape y;
    const ir::Attrs attrs = conv_attrs(n, tensor(x).shape, tensor(w).shape, y);
    std::vector<ir::TensorId> inputs = {x, w};
    if (has_input(n, 8)) inputs.push_back(accumulator_bias(n, 8, tensor(x).quant, tensor(w).quant, y[1]));
    const ir::TensorId out = add_activation(n.output(0), yq.dtype, y, &yq.quant);
    ir::Node& node = emit(n, ir::OpKind::Conv, "QLinearConv", inputs, out);
    keep_activation(node.attrs, attrs);
    set_value(n.output(0), Value{Value::Kind::Integer, out, nullptr});
  }

  // An int32 bias constant of a QOperator node, quantized at x_scale * w_scale (as ONNX defines).
  ir::TensorId accumulator_bias(const NodeProto& n, int index, const ir::Quant& x, const ir::Quant& w, std::int64_t channels) {
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
    if (dims.size() != 1 || dims[0] != channels) throw Error(fmt::format("bias '{}' has shape {} for {} output channels", bc.name(), shape_text(dims), channels));
    return add_constant(bc, bq);
  }

  // ConvInteger(x, w, [x_zp], [w_zp]) -> int32 accumulators (a Conv whose output is not
  // requantized). The scales are unknown here (1); a DequantizeLinear downstream may state them.
  void conv_integer(const NodeProto& n) {
    const ir::TensorId x = activation_input(n, 0, false);
    bind_zero_point(n, x, 2);
    const TensorProto& wc = constant_input(n, 1);
    const ir::TensorId w = add_constant(wc, unit_scale_params(n, 3, wc, 0));
    check_weight(tensor(w), 0);
    Shape y;
    const ir::Attrs attrs = conv_attrs(n, tensor(x).shape, tensor(w).shape, y);
    const ir::TensorId out = add_activation(n.output(0), ir::DType::Int32, y, nullptr);
    ir::Node& node = emit(n, ir::OpKind::Conv, "ConvInteger", {x, w}, out);
    keep_activation(node.attrs, attrs);
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
    const std::string mult = array(id + "_multipliers", "float", multipliers(x, w, y));
    const std::string block = conv_params_block(id, p);
    call(n, fmt::format("tightfit::conv<{}, {}{}>({}, {}, {}, {}, {}, {})", t_of(n), ctype(w.dtype), direction(), block,
                        pointer(n.inputs[0]), weights, bias, mult, pointer(n.outputs[0])));
  }

  // ConvInteger: int32 accumulators, no bias, no requantization. Weights OHWI for every group
  // count (conv_accumulate's layout, independent of the requantizing kernels' packing).
  void conv_accumulate(const std::string& id, const Node& n) {
    const Tensor &x = in(n, 0), &w = in(n, 1), &y = out(n);
    require_per_tensor(n, x);
    if (n.inputs.size() > 2 && n.inputs[2] != ir::kNoTensor) refuse(n, "an int32 convolution output takes no bias");
    const auto& a = n.attrs;
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
    const std::string block = params(
        "ConvParams", id,
        fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}", x.shape[0], x.shape[1], x.shape[2],
                    x.shape[3], y.shape[1], y.shape[2], y.shape[3], kh, kw, attr_or(a.strides, 0, 1),
                    attr_or(a.strides, 1, 1), attr_or(a.dilations, 0, 1), attr_or(a.dilations, 1, 1),
                    attr_or(a.pads, 0, 0), attr_or(a.pads, 1, 0), a.group, x.quant.zero_point[0], weight_zero_point(n, w),
                    0, 0, 0, 0, 0),  // no requantization: output zero point, clamp and multipliers unused
        23);
    call(n, fmt::format("tightfit::conv_accumulate<{}, {}>({}, {}, {}, {})", t_of(n), ctype(w.dtype), block,
                        pointer(n.inputs[0]), weights, pointer(n.outputs[0])));
  }
};

// The output over input 0 (not over an int32 accumulator output: ConvInteger).
schedule::OverlapDistances overlap(const ir::Graph& g, const ir::Node& n, std::size_t input) {
  if (g.tensors[n.outputs[0]].dtype == ir::DType::Int32 || input != 0) return {};
  const tightfit::ConvParams p = emit::conv_geometry(g, n);
  return overlap_distances(tightfit::conv_distance(p), tightfit::conv_up_distance(p));
}

}  // namespace

extern const Operator kConv{
    ir::OpKind::Conv,
    {{"", "Conv", [](ImportState& s, const NodeProto& n) { Import(s).qdq_conv(n); }},
     {"", "QLinearConv", [](ImportState& s, const NodeProto& n) { Import(s).qlinear_conv(n); }},
     {"", "ConvInteger", [](ImportState& s, const NodeProto& n) { Import(s).conv_integer(n); }}},
    [](EmissionState& s, const std::string& id, const ir::Node& n) { Emit(s).conv(id, n); },
    overlap};

}  // namespace tightfit::ops
