// Pow: x to a constant whole exponent of 2 or 3, in a float island (ONNX Runtime's quantizer has
// no quantized form of it: it stays float between DequantizeLinear and QuantizeLinear). Input: x
// (float32); the exponent's value is in attrs.alpha. The kernel
// (tightfit::pow_float) multiplies, x * x or x * x * x, as ORT does for these exponents; other
// exponents need a pow() the freestanding runtime does not have, and are refused.
#include "ops/operator.hpp"
#include "ops/emission.hpp"
#include "ops/translator.hpp"
#include "tightfit/kernels.hpp"

namespace tightfit::ops {
namespace {

using namespace import;

struct Import : Translator {
  using Translator::Translator;

  void pow(const NodeProto& n) {
    if (!has_input(n, 1)) throw Error("input 1 (the exponent) is missing");
    const Value& e = value(n.input(1));
    std::vector<float> exponent;
    if (e.kind == Value::Kind::Constant)
      exponent = tensor_floats(*e.constant);
    else if (e.kind == Value::Kind::Dequantized && tensor(e.tensor).is_constant)
      exponent = dequantized_elements(tensor(e.tensor));
    else
      throw Error(
          fmt::format("exponent '{}' is an activation; only a constant exponent of 2 or 3 is supported", n.input(1)));
    if (exponent.size() != 1 || (exponent[0] != 2.0f && exponent[0] != 3.0f))
      throw Error(
          fmt::format("exponent '{}' is not one value of 2 or 3 (other exponents are not supported)", n.input(1)));
    const ir::TensorId x = float_operand(n, 0);
    const Shape& shape = tensor(x).shape;
    const Shape c = e.kind == Value::Kind::Constant ? tensor_dims(*e.constant) : tensor(e.tensor).shape;
    if (broadcast(shape, c) != shape)
      throw Error(
          fmt::format("the exponent of shape {} would change the output's shape {}", shape_text(c), shape_text(shape)));
    float_node(n, ir::OpKind::Pow, {x}, shape).attrs.alpha = exponent[0];
  }
};

using namespace emit;

struct Emit : Emission {
  using Emission::Emission;

  void pow(const Node& n) {
    require_float(n, {0});
    call(n, fmt::format("tightfit::pow_float({}, {}, {}, {})", out(n).elements(), static_cast<int>(n.attrs.alpha),
                        pointer(n.inputs[0]), pointer(n.outputs[0])));
  }
};

}  // namespace

extern const Operator kPow = [] {
  Operator op{};
  op.kind = ir::OpKind::Pow;
  op.imports = {{"", "Pow", [](ImportState& s, const NodeProto& n) { Import(s).pow(n); }}};
  op.emit = [](EmissionState& s, const std::string&, const ir::Node& n) { Emit(s).pow(n); };
  op.overlap = [](const ir::Graph&, const ir::Node&, std::size_t) {
    return overlap_distances(0, tightfit::kNoOverlap);
  };
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
  op.tflite_gap = no_tflite_form;
  return op;
}();

}  // namespace tightfit::ops
