// Quantize: a float32 graph input -> integer (the generated set_input does it; no kernel), or the
// end of a float island: a float island's value -> integer (tightfit::quantize, ORT's
// MlasQuantizeLinear: x / scale rounded half to even, plus the zero point, saturated).
#include "ops/operator.hpp"
#include "ops/emission.hpp"
#include "ops/translator.hpp"

namespace tightfit::ops {
namespace {

using namespace import;

struct Import : Translator {
  using Translator::Translator;

  void quantize_linear(const NodeProto& n) {
    const Value& x = value(n.input(0));
    const Shape shape = x.kind == Value::Kind::Constant     ? tensor_dims(*x.constant)
                        : x.kind == Value::Kind::FloatInput ? float_input_shape(n.input(0), x)
                                                            : tensor(x.tensor).shape;
    const QParams q = read_qparams(n, 1, 2, ir::DType::UInt8, linear_axis(n, shape.size()));
    const std::string& y = n.output(0);
    if (q.quant.per_channel() && x.kind != Value::Kind::Constant &&
        !(x.kind == Value::Kind::FloatInput && only_graph_output(y)))
      throw Error(
          "per-channel quantization of an activation is not supported (only of constant weights, or of a float "
          "graph input straight into a graph output)");
    if (q.dtype == ir::DType::Int32) throw Error("quantizing to int32 is not supported");
    if (x.kind == Value::Kind::Constant) return quantize_constant(*x.constant, q, y);
    if (x.kind == Value::Kind::FloatInput) {
      check_quant_fits(y, shape, q.quant);
      const ir::TensorId out = add_activation(y, q.dtype, shape, &q.quant);
      emit(n, ir::OpKind::Quantize, "QuantizeLinear", {x.tensor}, out);
      return set_value(y, Value{Value::Kind::Integer, out, nullptr});
    }
    if (x.kind == Value::Kind::Float) {  // the end of a float island
      if (q.quant.per_channel()) throw Error("per-channel quantization of an activation is not supported");
      const ir::TensorId out = add_activation(y, q.dtype, shape, &q.quant);
      emit(n, ir::OpKind::Quantize, "QuantizeLinear (float island)", {x.tensor}, out);
      return set_value(y, Value{Value::Kind::Integer, out, nullptr});
    }
    if (x.kind == Value::Kind::Dequantized && !tensor(x.tensor).is_constant) {
      const ir::Tensor& src = tensor(x.tensor);
      if (src.dtype == q.dtype && same_quant(src.quant, q.quant))
        return set_value(y, Value{Value::Kind::Integer, x.tensor, nullptr});
      const ir::TensorId out = add_activation(y, q.dtype, shape, &q.quant);
      emit(n, ir::OpKind::Requantize, "QuantizeLinear (requantize)", {x.tensor}, out);
      return set_value(y, Value{Value::Kind::Integer, out, nullptr});
    }
    throw Error(
        fmt::format("input '{}' is not a float graph input, a constant, a dequantized activation or a float "
                    "island's value; a QuantizeLinear anywhere else cannot be folded exactly",
                    n.input(0)));
  }

  // A float constant quantized in the graph (ORT's quantizer treats a Constant node's output as an
  // activation: LayerNorm's eps gets a QuantizeLinear/DequantizeLinear pair). Quantized here as
  // QuantizeLinear would at run time, it becomes an integer constant like a quantized initializer.
  void quantize_constant(const TensorProto& c, const QParams& q, const std::string& y) {
    if (c.data_type() != TensorProto::FLOAT)
      throw Error(fmt::format("constant '{}' is {}, not float32", c.name(), onnx_type_name(c.data_type())));
    const std::vector<float> values = tensor_floats(c);
    const Shape dims = tensor_dims(c);
    check_quant_fits(y, dims, q.quant);
    std::int64_t inner = 1;  // elements per step along the quantization axis
    if (q.quant.per_channel())
      for (std::size_t d = static_cast<std::size_t>(q.quant.axis) + 1; d < dims.size(); ++d) inner *= dims[d];
    TensorProto& out = state_.constant_nodes_.emplace_back();
    out.set_name(y);
    for (std::int64_t d : dims) out.add_dims(d);
    out.set_data_type(onnx_elem_type(q.dtype));
    std::string bytes(values.size(), '\0');
    for (std::size_t i = 0; i < values.size(); ++i) {
      const std::size_t channel =
          q.quant.per_channel() ? static_cast<std::size_t>(i / inner) % q.quant.scale.size() : 0;
      QParams one;
      one.dtype = q.dtype;
      one.quant.scale = {q.quant.scale[channel]};
      one.quant.zero_point = {q.quant.zero_point[channel]};
      bytes[i] = static_cast<char>(quantize_value(values[i], one));
    }
    out.set_raw_data(bytes);
    set_value(y, Value{Value::Kind::Constant, ir::kNoTensor, &out});
  }
};

using namespace emit;

struct Emit : Emission {
  using Emission::Emission;

  // The end of a float island (a graph input's Quantize never reaches emission: the generated
  // set_input quantizes it).
  void quantize(const std::string& id, const Node& n) {
    const Tensor &x = in(n, 0), &y = out(n);
    require_per_tensor(n, y);
    if (x.dtype != DType::Float32) refuse(n, "expects a float32 input");
    // As Dequantize at an island's start: a channels-last image holds its elements in the float
    // value's (ONNX) order only with one channel or one pixel.
    if (x.layout != y.layout && y.shape.size() == 4 && y.shape[3] != 1 && y.shape[1] * y.shape[2] != 1)
      refuse(n, "a float island writing a channels-last image is not supported");
    tightfit::QuantizeParams p{};
    p.count = i32(y.elements()), p.scale = y.quant.scale[0], p.zero_point = y.quant.zero_point[0];
    const std::string block = params(id, p);
    call(n, fmt::format("tightfit::quantize<{}>({}, {}, {})", ctype(y.dtype), block, pointer(n.inputs[0]),
                        pointer(n.outputs[0])));
  }
};

}  // namespace

extern const Operator kQuantize = [] {
  Operator op{};
  op.kind = ir::OpKind::Quantize;
  op.imports = {{"", "QuantizeLinear", [](ImportState& s, const NodeProto& n) { Import(s).quantize_linear(n); }}};
  op.emit = [](EmissionState& s, const std::string& id, const ir::Node& n) { Emit(s).quantize(id, n); };
  op.overlap = nullptr;
  op.scratch = nullptr;
  op.shared_kernel = SharedKernel::own;
  op.layout = LayoutRule::as_it_comes;
  op.tile_window = TileWindow::none;
  op.pad_fold = PadFold::none;
  op.output_range = OutputRange::unbounded;
  op.strided_output = StridedOutput::contiguous_only;
  op.macs = no_macs;
  op.cost_key = named_for_operator;
  op.cost_work = CostWork::whole_tensors;
  op.tflite_gap = tflite_exact;
  return op;
}();

}  // namespace tightfit::ops
