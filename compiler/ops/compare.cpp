// Compare: ONNX Greater, GreaterOrEqual, Less, LessOrEqual and Equal on float32 operands with numpy
// broadcasting, into a bool tensor (attrs.comparison names which). Operands are float values: a
// float island's, or a DequantizeLinear's (a Dequantize node first, as ORT computes it: dequantize,
// then compare in float), or float constants. One IEEE comparison per element, so exact; NaN
// compares false, as in ORT. The condition of an If is such a tensor (ops/if_result.cpp).
#include "ops/operator.hpp"
#include "ops/emission.hpp"
#include "ops/translator.hpp"

namespace tightfit::ops {
namespace {

using namespace emit;

struct Emit : Emission {
  using Emission::Emission;

  void compare(const std::string& id, const Node& n) {
    for (std::size_t i = 0; i < 2; ++i)
      if (in(n, i).dtype != DType::Float32 || in(n, i).layout != ir::Layout::Logical)
        refuse(n, "tensor '" + in(n, i).name + "' must be a float32 tensor in ONNX's order");
    const char* kernel = n.attrs.comparison == "Greater"          ? "greater_float"
                         : n.attrs.comparison == "GreaterOrEqual" ? "greater_or_equal_float"
                         : n.attrs.comparison == "Less"           ? "less_float"
                         : n.attrs.comparison == "LessOrEqual"    ? "less_or_equal_float"
                                                                  : "equal_float";
    const std::string block = params(id, binary_shape(n));
    const std::string pa = operand(id, n, 0), pb = operand(id, n, 1);
    call(n, fmt::format("tightfit::{}({}, {}, {}, {})", kernel, block, pa, pb, pointer(n.outputs[0])));
  }
};

void import_compare(ImportState& s, const NodeProto& n) {
  import::Translator t(s);
  const ir::TensorId a = t.float_operand(n, 0), b = t.float_operand(n, 1);
  const ir::TensorId y =
      t.add_activation(n.output(0), ir::DType::Bool, import::broadcast(t.tensor(a).shape, t.tensor(b).shape), nullptr);
  t.set_value(n.output(0), import::Value{import::Value::Kind::Integer, y, nullptr});
  t.emit(n, ir::OpKind::Compare, n.op_type() + " (float)", {a, b}, y).attrs.comparison = n.op_type();
}

}  // namespace

extern const Operator kCompare = [] {
  Operator op{};
  op.kind = ir::OpKind::Compare;
  op.imports = {{"", "Greater", import_compare},
                {"", "GreaterOrEqual", import_compare},
                {"", "Less", import_compare},
                {"", "LessOrEqual", import_compare},
                {"", "Equal", import_compare}};
  op.emit = [](EmissionState& s, const std::string& id, const ir::Node& n) { Emit(s).compare(id, n); };
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
  op.tflite_gap = no_tflite_form;
  return op;
}();

}  // namespace tightfit::ops
