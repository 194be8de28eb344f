// Reshape: a view: the same bytes under a new shape (Reshape, Flatten, Squeeze, Unsqueeze). No code.
// A Cast to the type its input already has (float32 to float32) is the input itself: no node.
#include "ops/operator.hpp"
#include "ops/translator.hpp"

namespace tightfit::ops {
namespace {

using namespace import;

struct Import : Translator {
  using Translator::Translator;

  void reshape(const NodeProto& n) {
    data_movement(n, ir::OpKind::Reshape, [&](const ir::Tensor& x, bool, ir::Attrs&) {
      return import::reshape(x.shape, constant_ints(n, 1), int_attr(n, "allowzero", 0) != 0);
    });
  }

  void flatten(const NodeProto& n) {
    data_movement(n, ir::OpKind::Reshape, [&](const ir::Tensor& x, bool, ir::Attrs&) {
      return import::flatten(x.shape, int_attr(n, "axis", 1));
    });
  }

  // Squeeze and Unsqueeze.
  void squeeze(const NodeProto& n) {
    data_movement(n, ir::OpKind::Reshape, [&](const ir::Tensor& x, bool, ir::Attrs&) {
      const std::string& op = n.op_type();
      const std::vector<std::int64_t> axes = state_.opset_ < 13 ? ints_attr(n, "axes")
                                             : has_input(n, 1)  ? constant_ints(n, 1)
                                                                : std::vector<std::int64_t>{};
      if (op == "Unsqueeze" && axes.empty()) throw Error("Unsqueeze needs axes");
      return op == "Squeeze" ? import::squeeze(x.shape, axes) : import::unsqueeze(x.shape, axes);
    });
  }

  // Cast whose `to` is its input's type: an alias. Other casts are refused, naming both types.
  void cast(const NodeProto& n) {
    const Value& in = value(n.input(0));
    const int to = static_cast<int>(int_attr(n, "to", 0));
    int from = onnx::TensorProto::FLOAT;
    if (in.kind == Value::Kind::Constant)
      from = in.constant->data_type();
    else if (in.kind == Value::Kind::Integer)
      from = import::onnx_elem_type(tensor(in.tensor).dtype);
    if (from != to)
      throw Error(fmt::format("Cast from {} to {} is not supported (only a Cast to the type its input has, an alias)",
                              onnx_type_name(from), onnx_type_name(to)));
    set_value(n.output(0), in);
  }
};

}  // namespace

extern const Operator kReshape = [] {
  Operator op{};
  op.kind = ir::OpKind::Reshape;
  op.imports = {{"", "Reshape", [](ImportState& s, const NodeProto& n) { Import(s).reshape(n); }},
                {"", "Flatten", [](ImportState& s, const NodeProto& n) { Import(s).flatten(n); }},
                {"", "Squeeze", [](ImportState& s, const NodeProto& n) { Import(s).squeeze(n); }},
                {"", "Unsqueeze", [](ImportState& s, const NodeProto& n) { Import(s).squeeze(n); }},
                {"", "Cast", [](ImportState& s, const NodeProto& n) { Import(s).cast(n); }}};
  op.emit = nullptr;
  op.overlap = nullptr;
  op.scratch = nullptr;
  op.shared_kernel = SharedKernel::own;
  op.layout = LayoutRule::view;
  op.tile_window = TileWindow::none;
  op.pad_fold = PadFold::none;
  op.output_range = OutputRange::unbounded;
  op.strided_output = StridedOutput::contiguous_only;
  op.macs = no_macs;
  op.cost_key = no_call;
  op.cost_work = CostWork::whole_tensors;
  op.tflite_gap = tflite_exact;
  return op;
}();

}  // namespace tightfit::ops
