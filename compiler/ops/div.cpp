// Div by a constant: x / attrs.divisor, the divisor a one-element constant (dequantized, or a float
// constant). Between DequantizeLinear and QuantizeLinear ONNX Runtime divides in float; with one
// divisor the whole operator is a function of the input byte, so it runs as a 256-entry table (the
// runtime's lookup kernel) computed in float as ORT computes it, bit-exact. ORT has no QLinear
// form: the QDQ form only. Any other Div (by an activation, by a constant of more than one element,
// of a float island's value, or not quantized after) runs in a float island: tightfit::div_float.
#include "ops/operator.hpp"
#include "ops/emission.hpp"
#include "ops/translator.hpp"

namespace tightfit::ops {
namespace {

using namespace import;

struct Import : Translator {
  using Translator::Translator;

  // The divisor's one value, as ORT's DequantizeLinear (or the float constant) gives it.
  float divisor(const NodeProto& n) const {
    if (!has_input(n, 1)) throw Error("input 1 (the divisor) is missing");
    const Value& v = value(n.input(1));
    if (v.kind == Value::Kind::Constant) {
      const std::vector<float> values = tensor_floats(*v.constant);
      if (values.size() != 1)
        throw Error(fmt::format("divisor '{}' has {} elements; only a division by one constant is supported",
                                n.input(1), values.size()));
      return values[0];
    }
    if (v.kind != Value::Kind::Dequantized || !state_.out_.tensors[v.tensor].is_constant)
      throw Error(fmt::format("divisor '{}' is an activation; only a division by a constant is supported", n.input(1)));
    const ir::Tensor& c = state_.out_.tensors[v.tensor];
    if (c.elements() != 1)
      throw Error(fmt::format("divisor '{}' has {} elements; only a division by one constant is supported", n.input(1),
                              c.elements()));
    std::int32_t q = 0;
    switch (c.dtype) {
      case ir::DType::Int8:
        q = static_cast<std::int8_t>(c.data[0]);
        break;
      case ir::DType::UInt8:
        q = c.data[0];
        break;
      default:
        throw Error(fmt::format("divisor '{}' is {}, not int8 or uint8", n.input(1), ir::dtype_name(c.dtype)));
    }
    return static_cast<float>(q - c.quant.zero_point[0]) * c.quant.scale[0];
  }

  // The integer form: a dequantized activation divided by a one-element constant, quantized.
  bool by_constant(const NodeProto& n) const {
    if (!has_input(n, 0) || !has_input(n, 1)) return false;
    const Value &x = value(n.input(0)), &d = value(n.input(1));
    const bool constant = d.kind == Value::Kind::Constant
                              ? tensor_floats(*d.constant).size() == 1
                              : d.kind == Value::Kind::Dequantized && state_.out_.tensors[d.tensor].is_constant &&
                                    state_.out_.tensors[d.tensor].elements() == 1;
    const NodeProto* act = nullptr;
    return constant && x.kind == Value::Kind::Dequantized && !state_.out_.tensors[x.tensor].is_constant &&
           sink_quantize(n, act) != nullptr;
  }

  void div(const NodeProto& n) {
    if (!by_constant(n)) {
      const ir::TensorId a = float_operand(n, 0), b = float_operand(n, 1);
      float_node(n, ir::OpKind::Div, {a, b}, broadcast(tensor(a).shape, tensor(b).shape));
      return;
    }
    const ir::TensorId x = activation_input(n, 0, true);
    const float d = divisor(n);
    const Shape& shape = tensor(x).shape;
    const Value& v = value(n.input(1));
    const Shape c = v.kind == Value::Kind::Constant ? tensor_dims(*v.constant) : tensor(v.tensor).shape;
    if (broadcast(shape, c) != shape)
      throw Error(
          fmt::format("the divisor of shape {} would change the output's shape {}", shape_text(c), shape_text(shape)));
    const Sink sink = quantized_sink(n);
    emit_to_sink(n, ir::OpKind::Div, {x}, shape, sink).attrs.divisor = d;
  }
};

using namespace emit;

struct Emit : Emission {
  using Emission::Emission;

  void div(const std::string& id, const Node& n) {
    if (out(n).dtype == DType::Float32) return float_binary(id, n, "div_float");
    const float d = n.attrs.divisor;
    lookup(id, n, [d](bool s8, float xs, std::int32_t xz, float ys, std::int32_t yz, std::uint8_t table[256]) {
      const auto divide = [d](float v) { return v / d; };
      s8 ? tightfit::build_lookup_table<std::int8_t>(xs, xz, ys, yz, divide, table)
         : tightfit::build_lookup_table<std::uint8_t>(xs, xz, ys, yz, divide, table);
    });
  }
};

}  // namespace

extern const Operator kDiv = [] {
  Operator op{};
  op.kind = ir::OpKind::Div;
  op.imports = {{"", "Div", [](ImportState& s, const NodeProto& n) { Import(s).div(n); }}};
  op.emit = [](EmissionState& s, const std::string& id, const ir::Node& n) { Emit(s).div(id, n); };
  op.overlap = [](const ir::Graph& g, const ir::Node& n, std::size_t input) {
    return g.tensors[n.outputs[0]].dtype == ir::DType::Float32 ? binary_overlap(g, n, input)
                                                               : lookup_overlap(g, n, input);
  };
  op.scratch = nullptr;
  op.shared_kernel = SharedKernel::lookup_table;
  op.layout = LayoutRule::as_it_comes;
  op.tile_window = TileWindow::elementwise;
  op.pad_fold = PadFold::none;
  op.output_range = OutputRange::clamped_to_act_range;
  op.strided_output = StridedOutput::contiguous_only;
  op.macs = no_macs;
  op.cost_key = lookup_table_cost;
  op.cost_work = CostWork::whole_tensors;
  op.tflite_gap = no_tflite_form;
  return op;
}();

}  // namespace tightfit::ops
