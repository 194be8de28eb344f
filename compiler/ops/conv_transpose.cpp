// ConvTranspose: 2-D transposed convolution, one group, between DequantizeLinear and
// QuantizeLinear (the QDQ form: ONNX Runtime's CPU provider has no QLinearConvTranspose; the
// com.microsoft schema exists only for its XNNPACK provider). Inputs: x, w ([C_in, C_out, kh, kw],
// per tensor or per output channel, i.e. axis 1), [bias int32 at x_scale * w_scale]. attrs:
// strides, dilations, pads [top, left, bottom, right]; output_padding only lengthens the output.
// The kernel (runtime conv_transpose) sums the exact integer products per output pixel and
// requantizes as Conv does; ORT's float path rounds its float sums, hence a stated bound
// (docs/numerics.md). The output never overlaps the input.
#include <tightfit/kernels.hpp>

#include "ops/operator.hpp"
#include "ops/emission.hpp"
#include "ops/translator.hpp"

namespace tightfit::ops {
namespace {

using namespace import;

struct Import : Translator {
  using Translator::Translator;

  // Attributes and output shape: out = stride * (in - 1) + output_padding + (k - 1) * dilation + 1
  // - pad_begin - pad_end along each spatial axis (ONNX's formula with explicit pads).
  ir::Attrs conv_transpose_attrs(const NodeProto& n, const Shape& x, const Shape& w, Shape& y) const {
    if (x.size() != 4) throw Error(fmt::format("input shape {} is not 4-D (N, C, H, W)", shape_text(x)));
    if (w.size() != 4) throw Error(fmt::format("weight shape {} is not 4-D", shape_text(w)));
    if (int_attr(n, "group", 1) != 1) throw Error("a grouped ConvTranspose (group != 1) is not supported");
    if (w[0] != x[1])
      throw Error(fmt::format("weight {} does not fit input {}: its first dim must be the input's channels",
                              shape_text(w), shape_text(x)));
    const std::string auto_pad = string_attr(n, "auto_pad", "NOTSET");
    if (auto_pad != "NOTSET" && auto_pad != "VALID")
      throw Error(fmt::format("auto_pad {} is not supported (explicit pads only)", auto_pad));
    if (!ints_attr(n, "output_shape").empty()) throw Error("output_shape is not supported (explicit pads only)");
    const Shape kernel = ints_attr(n, "kernel_shape");
    if (!kernel.empty() && kernel != Shape{w[2], w[3]})
      throw Error(fmt::format("kernel_shape {} differs from the weight's [{}, {}]", shape_text(kernel), w[2], w[3]));
    auto pair = [&](const char* name, std::int64_t fallback) {
      Shape v = ints_attr(n, name);
      if (v.empty()) v = {fallback, fallback};
      if (v.size() != 2) throw Error(fmt::format("{} {} has not 2 values", name, shape_text(v)));
      return v;
    };
    ir::Attrs a;
    a.kernel_shape = {w[2], w[3]};
    a.strides = pair("strides", 1);
    a.dilations = pair("dilations", 1);
    const Shape output_padding = pair("output_padding", 0);
    a.pads = ints_attr(n, "pads");
    if (a.pads.empty() || auto_pad == "VALID") a.pads = {0, 0, 0, 0};
    if (a.pads.size() != 4) throw Error(fmt::format("pads {} has not 4 values", shape_text(a.pads)));
    y = {x[0], w[1], 0, 0};
    for (std::size_t i = 0; i < 2; ++i) {
      const std::int64_t s = a.strides[i], d = a.dilations[i], op = output_padding[i];
      if (s < 1 || d < 1)
        throw Error(fmt::format("strides {} and dilations {} must be positive", shape_text(a.strides),
                                shape_text(a.dilations)));
      if (a.pads[i] < 0 || a.pads[i + 2] < 0)
        throw Error(fmt::format("negative pads {} are not supported", shape_text(a.pads)));
      if (op < 0 || (op >= s && op >= d))
        throw Error(
            fmt::format("output_padding {} must be below the stride or the dilation", shape_text(output_padding)));
      y[2 + i] = s * (x[2 + i] - 1) + op + (a.kernel_shape[i] - 1) * d + 1 - a.pads[i] - a.pads[i + 2];
      if (y[2 + i] < 1) throw Error(fmt::format("the pads {} leave no output", shape_text(a.pads)));
    }
    return a;
  }

  void qdq_conv_transpose(const NodeProto& n) {
    const ir::TensorId x = activation_input(n, 0, true);
    const ir::TensorId w = dequantized_constant(n, 1, "weight");
    check_weight(tensor(w), 1);  // [C_in, C_out, kh, kw]: the output channels are axis 1
    Shape y;
    const ir::Attrs attrs = conv_transpose_attrs(n, tensor(x).shape, tensor(w).shape, y);
    std::vector<ir::TensorId> inputs = {x, w};
    add_qdq_bias(n, x, w, y[1], inputs);
    const Sink sink = quantized_sink(n);
    ir::Node& node = emit_to_sink(n, ir::OpKind::ConvTranspose, inputs, y, sink);
    keep_activation(node.attrs, attrs);
  }
};

using namespace emit;

struct Emit : Emission {
  using Emission::Emission;

  void conv_transpose(const std::string& id, const Node& n) {
    const Tensor &x = in(n, 0), &w = in(n, 1), &y = out(n);
    if (x.dtype != y.dtype)
      refuse(n, fmt::format("input '{}' is {} but the output is {}: one activation type is supported", x.name,
                            ir::dtype_name(x.dtype), ir::dtype_name(y.dtype)));
    const tightfit::ConvParams p = conv_params(n);  // groups 1; the geometry as ConvParams states it

    // ONNX's [C_in][C_out][kh][kw] to the kernel's [C_out][kh][kw][C_in].
    const std::size_t es = ir::dtype_size(w.dtype);
    std::vector<std::uint8_t> packed(w.data.size());
    for (std::int64_t ic = 0; ic < p.in_c; ++ic)
      for (std::int64_t oc = 0; oc < p.out_c; ++oc)
        for (std::int64_t ky = 0; ky < p.kernel_h; ++ky)
          for (std::int64_t kx = 0; kx < p.kernel_w; ++kx) {
            const std::int64_t from = ((ic * p.out_c + oc) * p.kernel_h + ky) * p.kernel_w + kx;
            const std::int64_t to = ((oc * p.kernel_h + ky) * p.kernel_w + kx) * p.in_c + ic;
            std::memcpy(&packed[static_cast<std::size_t>(to) * es], &w.data[static_cast<std::size_t>(from) * es], es);
          }
    Tensor packed_w = w;
    packed_w.data = std::move(packed);
    const std::string weights = tensor_array(id + "_weights", packed_w);
    const std::string bias = bias_pointer(id, n);
    const std::string mult = array(id + "_multipliers", "float", multipliers(x, w, y));
    const std::string block = params(id, p);
    call(n, fmt::format("tightfit::conv_transpose<{}, {}>({}, {}, {}, {}, {}, {})", t_of(n), ctype(w.dtype), block,
                        pointer(n.inputs[0]), weights, bias, mult, pointer(n.outputs[0])));
  }
};

// Each input element spreads over C_out * kh * kw outputs (taps the pads crop included): w is
// [Cin, Cout, kh, kw].
std::int64_t conv_transpose_macs(const ir::Graph& g, const ir::Node& n) {
  const ir::Tensor& w = g.tensors[n.inputs[1]];
  return g.tensors[n.inputs[0]].elements() * (w.elements() / w.shape[0]);
}

}  // namespace

// No overlap rule: every output pixel reads the input pixels its window covers, on both sides of
// it, so the output may not lie over the input.
extern const Operator kConvTranspose = [] {
  Operator op{};
  op.kind = ir::OpKind::ConvTranspose;
  op.imports = {{"", "ConvTranspose", [](ImportState& s, const NodeProto& n) { Import(s).qdq_conv_transpose(n); }}};
  op.emit = [](EmissionState& s, const std::string& id, const ir::Node& n) { Emit(s).conv_transpose(id, n); };
  op.overlap = nullptr;
  op.scratch = nullptr;
  op.shared_kernel = SharedKernel::own;
  op.layout = LayoutRule::as_it_comes;
  op.tile_window = TileWindow::none;
  op.pad_fold = PadFold::none;
  op.output_range = OutputRange::unbounded;
  op.strided_output = StridedOutput::channel_slice;
  op.macs = conv_transpose_macs;
  op.cost_key = named_for_operator;
  op.cost_work = CostWork::whole_tensors;
  op.tflite_gap = no_tflite_form;
  return op;
}();

}  // namespace tightfit::ops
