// Dequantize: integer -> a float32 graph output (the generated get_output does it; no kernel), or
// the start of a float island: an integer activation -> float32 (tightfit::dequantize, ORT's
// DequantizeLinear: float(q - zero point) * scale), made by Translator::float_operand.
#include "ops/operator.hpp"
#include "ops/emission.hpp"
#include "ops/translator.hpp"

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
        throw Error(fmt::format("tensor '{}' is {} but its zero point is {}", x.name, ir::dtype_name(x.dtype),
                                ir::dtype_name(q.dtype)));
      check_quant_fits(x.name, x.shape, q.quant);
      x.quant = q.quant;
      x.quantized = true;
      state_.pending_[t] = false;
    } else {
      bind_quant(t, q);
    }
    set_value(n.output(0), Value{Value::Kind::Dequantized, t, nullptr});
  }

  // True when DequantizeLinear `n` reads an integer graph input whose quantization no one stated
  // yet, that nothing else reads, and writes a graph output that nothing reads.
  bool edge_dequantize(const NodeProto& n, ir::TensorId x) const {
    const bool graph_input = std::count(state_.out_.inputs.begin(), state_.out_.inputs.end(), x) > 0;
    auto readers = state_.consumers_.find(n.input(0));
    return graph_input && state_.pending_[x] && readers != state_.consumers_.end() && readers->second.size() == 1 &&
           !state_.graph_outputs_.count(n.input(0)) && only_graph_output(n.output(0));
  }
};

using namespace emit;

struct Emit : Emission {
  using Emission::Emission;

  // The start of a float island (a graph output's Dequantize never reaches emission: the generated
  // get_output dequantizes it).
  void dequantize(const std::string& id, const Node& n) {
    const Tensor &x = in(n, 0), &y = out(n);
    require_per_tensor(n, x);
    if (x.layout != y.layout && x.shape.size() == 4 && x.shape[3] != 1 && x.shape[1] * x.shape[2] != 1)
      refuse(n, "a float island reading a channels-last image is not supported");
    tightfit::QuantizeParams p{};
    p.count = i32(x.elements()), p.scale = x.quant.scale[0], p.zero_point = x.quant.zero_point[0];
    const std::string block = params(id, p);
    call(n, fmt::format("tightfit::dequantize<{}>({}, {}, {})", ctype(x.dtype), block, pointer(n.inputs[0]),
                        pointer(n.outputs[0])));
  }
};

}  // namespace

extern const Operator kDequantize = [] {
  Operator op{};
  op.kind = ir::OpKind::Dequantize;
  op.imports = {{"", "DequantizeLinear", [](ImportState& s, const NodeProto& n) { Import(s).dequantize_linear(n); }}};
  op.emit = [](EmissionState& s, const std::string& id, const ir::Node& n) { Emit(s).dequantize(id, n); };
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
