// Add: elementwise with numpy broadcasting; inputs: a, b.
#include "ops/operator.hpp"
#include "ops/emission.hpp"
#include "ops/translator.hpp"

namespace tightfit::ops {
namespace {

using namespace emit;

struct Emit : Emission {
  using Emission::Emission;

  void add(const std::string& id, const Node& n) {
    if (out(n).dtype == DType::Float32) return float_binary(id, n, "add_float");
    const Tensor &a = in(n, 0), &b = in(n, 1), &y = out(n);
    for (const Tensor* t : {&a, &b, &y}) require_per_tensor(n, *t);
    // ORT picks its broadcast path from ONNX's order of the dims.
    const auto as = a.onnx_shape(), bs = b.onnx_shape();
    if (tflite()) return add_tflite(id, n);
    const tightfit::BroadcastForm form =
        tightfit::binary_broadcast_form(as.data(), static_cast<int>(as.size()), bs.data(), static_cast<int>(bs.size()));
    const tightfit::AddRequant r =
        tightfit::add_requant(a.quant.scale[0], a.quant.zero_point[0], b.quant.scale[0], b.quant.zero_point[0],
                              y.quant.scale[0], y.quant.zero_point[0], form);
    tightfit::AddParams p{};
    p.shape = binary_shape(n);
    p.form = form;
    p.a_zero_point = a.quant.zero_point[0], p.b_zero_point = b.quant.zero_point[0];
    p.a_ratio = r.a_ratio, p.b_ratio = r.b_ratio, p.fixed = r.fixed;
    p.output_min = n.attrs.act_min, p.output_max = n.attrs.act_max;
    const std::string block = params(id, p);
    const std::string pa = operand(id, n, 0), pb = operand(id, n, 1);
    call(n, fmt::format("tightfit::add<{}>({}, {}, {}, {})", ctype(y.dtype), block, pa, pb, pointer(n.outputs[0])));
  }

  // TFLite's ADD: fixed-point multipliers per input and for the sum (tflite_add_params).
  void add_tflite(const std::string& id, const Node& n) {
    const Tensor &a = in(n, 0), &b = in(n, 1), &y = out(n);
    const tightfit::AddTfliteParams p = tightfit::tflite_add_params(
        binary_shape(n), a.quant.scale[0], a.quant.zero_point[0], b.quant.scale[0], b.quant.zero_point[0],
        y.quant.scale[0], y.quant.zero_point[0], n.attrs.act_min, n.attrs.act_max);
    const std::string block = params(id, p);
    const std::string pa = operand(id, n, 0), pb = operand(id, n, 1);
    call(n,
         fmt::format("tightfit::add_tflite<{}>({}, {}, {}, {})", ctype(y.dtype), block, pa, pb, pointer(n.outputs[0])));
  }
};

}  // namespace

extern const Operator kAdd = [] {
  Operator op{};
  op.kind = ir::OpKind::Add;
  op.imports = {{"", "Add", [](ImportState& s, const NodeProto& n) { Translator(s).binary(n, ir::OpKind::Add); }},
                {"com.microsoft", "QLinearAdd",
                 [](ImportState& s, const NodeProto& n) { Translator(s).qlinear_binary(n, ir::OpKind::Add); }}};
  op.emit = [](EmissionState& s, const std::string& id, const ir::Node& n) { Emit(s).add(id, n); };
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
