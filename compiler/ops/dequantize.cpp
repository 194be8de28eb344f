// Dequantize: integer -> a float32 graph output (the generated get_output does it; no kernel).
#include "ops/operator.hpp"
#include "emit/emission.hpp"
#include "import/translator.hpp"

namespace tightfit::ops {
namespace {

using namespace import;

struct Import : Translator {
  using Translator::Translator;

  void dequantize_linear(const NodeProto& n) {
    const Value& x = value(n.input(0));
    if (x.kind == Value::Kind::Constant) {
      const TensorProto& c = constant(n.input(0));
      const QParams q = read_qparams(n, 1, 2, dtype_or_uint8(c), linear_axis(n, c.dims_size()));
      const ir::TensorId id = add_constant(c, q);
      return set_value(n.output(0), Value{Value::Kind::Dequantized, id, nullptr});
    }
    const ir::TensorId t = activation_input(n, 0, false);
    const QParams q = read_qparams(n, 1, 2, tensor(t).dtype, linear_axis(n, tensor(t).shape.size()));
    if (q.quant.per_channel() && edge_dequantize(n, t)) {
      // An integer graph input dequantized per channel straight into a graph output: the
      // generated get_output dequantizes each element with its channel's parameters.
      ir::Tensor& x = tensor(t);
      if (x.dtype != q.dtype)
        throw Error(fmt::format("tensor '{}' is {} but its zero point is {}", x.name, ir::dtype_name(x.dtype), ir::dtype_name(q.dtype)));
      check_quant_fits(x.name, x.shape, q.quant);
      x.quant = q.quant;
      x.quantized = true;
      pending_[t] = false;
    } else {
      bind_quant(t, q);
    }
    set_value(n.output(0), Value{Value::Kind::Dequantized, t, nullptr});
  }

  // True when DequantizeLinear `n` reads an integer graph input whose quantization no one stated
  // yet, that nothing else reads, and writes a graph output that nothing reads.
  bool edge_dequantize(const NodeProto& n, ir::TensorId x) const {
    const bool graph_input = std::count(out_.inputs.begin(), out_.inputs.end(), x) > 0;
    auto readers = consumers_.find(n.input(0));
    return graph_input && pending_[x] && readers != consumers_.end() && readers->second.size() == 1 &&
           !graph_outputs_.count(n.input(0)) && only_graph_output(n.output(0));
  }
};

}  // namespace

extern const Operator kDequantize{
    ir::OpKind::Dequantize,
    {{"", "DequantizeLinear", [](ImportState& s, const NodeProto& n) { Import(s).dequantize_linear(n); }}},
    [](EmissionState& s, const std::string&, const ir::Node& n) {
      Emission(s).refuse(n, "float tensors inside the graph have no kernel");
    }};

}  // namespace tightfit::ops
