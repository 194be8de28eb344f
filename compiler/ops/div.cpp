// Div by a constant: x / attrs.divisor, the divisor a one-element constant (dequantized, or a float
// constant). Between DequantizeLinear and QuantizeLinear ONNX Runtime divides in float; with one
// divisor the whole operator is a function of the input byte, so it runs as a 256-entry table (the
// runtime's lookup kernel) computed in float as ORT computes it, bit-exact. ORT has no QLinear
// form: the QDQ form only. A divisor that is an activation, or a constant of more than one
// element, is refused.
#include "ops/operator.hpp"
#include "emit/emission.hpp"
#include "import/translator.hpp"

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
      if (values.size() != 1) throw Error(fmt::format("divisor '{}' has {} elements; only a division by one constant is supported", n.input(1), values.size()));
      return values[0];
    }
    if (v.kind != Value::Kind::Dequantized || !out_.tensors[v.tensor].is_constant)
      throw Error(fmt::format("divisor '{}' is an activation; only a division by a constant is supported", n.input(1)));
    const ir::Tensor& c = out_.tensors[v.tensor];
    if (c.elements() != 1)
      throw Error(fmt::format("divisor '{}' has {} elements; only a division by one constant is supported", n.input(1), c.elements()));
    std::int32_t q = 0;
    switch (c.dtype) {
      case ir::DType::Int8: q = static_cast<std::int8_t>(c.data[0]); break;
      case ir::DType::UInt8: q = c.data[0]; break;
      default: throw Error(fmt::format("divisor '{}' is {}, not int8 or uint8", n.input(1), ir::dtype_name(c.dtype)));
    }
    return static_cast<float>(q - c.quant.zero_point[0]) * c.quant.scale[0];
  }

  void div(const NodeProto& n) {
    const ir::TensorId x = activation_input(n, 0, true);
    const float d = divisor(n);
    const Shape& shape = tensor(x).shape;
    const Value& v = value(n.input(1));
    const Shape c = v.kind == Value::Kind::Constant ? tensor_dims(*v.constant) : tensor(v.tensor).shape;
    if (broadcast(shape, c) != shape)
      throw Error(fmt::format("the divisor of shape {} would change the output's shape {}", shape_text(c), shape_text(shape)));
    const Sink sink = quantized_sink(n);
    emit_to_sink(n, ir::OpKind::Div, {x}, shape, sink).attrs.divisor = d;
  }
};

using namespace emit;

struct Emit : Emission {
  using Emission::Emission;

  void div(const std::string& id, const Node& n) {
    const float d = n.attrs.divisor;
    lookup(id, n, [d](bool s8, float xs, std::int32_t xz, float ys, std::int32_t yz, std::uint8_t table[256]) {
      const auto divide = [d](float v) { return v / d; };
      s8 ? tightfit::build_lookup_table<std::int8_t>(xs, xz, ys, yz, divide, table)
         : tightfit::build_lookup_table<std::uint8_t>(xs, xz, ys, yz, divide, table);
    });
  }
};

}  // namespace

extern const Operator kDiv{
    ir::OpKind::Div,
    {{"", "Div", [](ImportState& s, const NodeProto& n) { Import(s).div(n); }}},
    [](EmissionState& s, const std::string& id, const ir::Node& n) { Emit(s).div(id, n); },
    lookup_overlap};

}  // namespace tightfit::ops
