// Sub: a - b, elementwise with numpy broadcasting; inputs: a, b. ONNX Runtime has no QLinear form:
// between DequantizeLinear and QuantizeLinear it computes in float, and so does the kernel
// (tightfit::sub: dequantize both, subtract, QuantizeLinear), bit-exact. The QDQ form only.
#include "ops/operator.hpp"
#include "ops/emission.hpp"
#include "ops/translator.hpp"

namespace tightfit::ops {
namespace {

using namespace emit;

struct Emit : Emission {
  using Emission::Emission;

  void sub(const std::string& id, const Node& n) {
    if (out(n).dtype == DType::Float32) return float_binary(id, n, "sub_float");
    const Tensor &a = in(n, 0), &b = in(n, 1), &y = out(n);
    for (const Tensor* t : {&a, &b, &y}) require_per_tensor(n, *t);
    require_one_type(n);
    tightfit::SubParams p{};
    p.shape = binary_shape(n);
    p.a_scale = a.quant.scale[0], p.a_zero_point = a.quant.zero_point[0];
    p.b_scale = b.quant.scale[0], p.b_zero_point = b.quant.zero_point[0];
    p.output_scale = y.quant.scale[0], p.output_zero_point = y.quant.zero_point[0];
    p.output_min = n.attrs.act_min, p.output_max = n.attrs.act_max;
    const std::string block = params(id, p);
    const std::string pa = operand(id, n, 0), pb = operand(id, n, 1);
    call(n, fmt::format("tightfit::sub<{}>({}, {}, {}, {})", ctype(y.dtype), block, pa, pb, pointer(n.outputs[0])));
  }
};

}  // namespace

extern const Operator kSub = [] {
  Operator op{};
  op.kind = ir::OpKind::Sub;
  op.imports = {{"", "Sub", [](ImportState& s, const NodeProto& n) { Translator(s).binary(n, ir::OpKind::Sub); }}};
  op.emit = [](EmissionState& s, const std::string& id, const ir::Node& n) { Emit(s).sub(id, n); };
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
  op.tflite_gap = no_tflite_form;
  return op;
}();

}  // namespace tightfit::ops
