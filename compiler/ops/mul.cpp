// Mul: elementwise with numpy broadcasting; inputs: a, b.
#include "ops/operator.hpp"
#include "ops/emission.hpp"
#include "ops/translator.hpp"

namespace tightfit::ops {
namespace {

using namespace emit;

struct Emit : Emission {
  using Emission::Emission;

  void mul(const std::string& id, const Node& n) {
    if (out(n).dtype == DType::Float32) return float_binary(id, n, "mul_float");
    const Tensor &a = in(n, 0), &b = in(n, 1), &y = out(n);
    for (const Tensor* t : {&a, &b, &y}) require_per_tensor(n, *t);
    if (tflite()) return mul_tflite(id, n);
    const float ratio = tightfit::mul_ratio(a.quant.scale[0], b.quant.scale[0], y.quant.scale[0]);
    tightfit::MulParams p{};
    p.shape = binary_shape(n);
    p.a_zero_point = a.quant.zero_point[0], p.b_zero_point = b.quant.zero_point[0];
    p.ratio = ratio;
    p.output_zero_point = static_cast<float>(y.quant.zero_point[0]);
    p.output_min = n.attrs.act_min, p.output_max = n.attrs.act_max;
    const std::string block = params(id, p);
    const std::string pa = operand(id, n, 0), pb = operand(id, n, 1);
    call(n, fmt::format("tightfit::mul<{}>({}, {}, {}, {})", ctype(y.dtype), block, pa, pb, pointer(n.outputs[0])));
  }

  // TFLite's MUL: one fixed-point multiplier for the product (tflite_mul_params).
  void mul_tflite(const std::string& id, const Node& n) {
    const Tensor &a = in(n, 0), &b = in(n, 1), &y = out(n);
    const tightfit::MulTfliteParams p = tightfit::tflite_mul_params(
        binary_shape(n), a.quant.scale[0], a.quant.zero_point[0], b.quant.scale[0], b.quant.zero_point[0],
        y.quant.scale[0], y.quant.zero_point[0], n.attrs.act_min, n.attrs.act_max);
    const std::string block = params(id, p);
    const std::string pa = operand(id, n, 0), pb = operand(id, n, 1);
    call(n,
         fmt::format("tightfit::mul_tflite<{}>({}, {}, {}, {})", ctype(y.dtype), block, pa, pb, pointer(n.outputs[0])));
  }
};

}  // namespace

extern const Operator kMul = [] {
  Operator op{};
  op.kind = ir::OpKind::Mul;
  op.imports = {{"", "Mul", [](ImportState& s, const NodeProto& n) { Translator(s).binary(n, ir::OpKind::Mul); }},
                {"com.microsoft", "QLinearMul",
                 [](ImportState& s, const NodeProto& n) { Translator(s).qlinear_binary(n, ir::OpKind::Mul); }}};
  op.emit = [](EmissionState& s, const std::string& id, const ir::Node& n) { Emit(s).mul(id, n); };
  op.overlap = binary_overlap;
  op.scratch = nullptr;
  op.shared_kernel = SharedKernel::broadcast_binary;
  op.layout = LayoutRule::broadcast_operands;
  op.tile_window = TileWindow::elementwise_same_shape;
  op.pad_fold = PadFold::none;
  op.output_range = OutputRange::clamped_to_act_range;
  op.strided_output = StridedOutput::contiguous_only;
  op.macs = no_macs;
  op.cost_key = named_for_operator;
  op.cost_work = CostWork::whole_tensors;
  op.tflite_gap = tflite_exact;
  return op;
}();

}  // namespace tightfit::ops
