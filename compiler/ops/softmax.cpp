// Softmax: over attrs.axis (one axis); attrs.softmax_integer_rule for QLinearSoftmax's
// integer rounding and saturation (runtime/include/tightfit/kernels.hpp, softmax).
#include <tightfit/kernels.hpp>

#include "ops/operator.hpp"
#include "ops/tflite_numerics.hpp"
#include "ops/emission.hpp"
#include "ops/translator.hpp"

namespace tightfit::ops {
namespace {

using namespace import;

struct Import : Translator {
  using Translator::Translator;

  // Softmax's axis. Before opset 13 Softmax flattens to 2-D at `axis`: that is one softmax over
  // an axis only when the axis is the last one.
  std::int64_t softmax_axis(const NodeProto& n, const Shape& x, int semantics_opset) const {
    const std::int64_t fallback = semantics_opset < 13 ? 1 : -1;
    const std::int64_t axis = normalize_axis(int_attr(n, "axis", fallback), x.size());
    if (semantics_opset < 13 && axis != static_cast<std::int64_t>(x.size()) - 1)
      throw Error(fmt::format("Softmax over axes {}.. (opset below 13) is only supported on the last axis", axis));
    return axis;
  }

  // Between DequantizeLinear and QuantizeLinear, the integer kernel; anywhere else (a float island,
  // or a dequantized value going on in float to a float graph output) the float one.
  void qdq(const NodeProto& n) {
    if (!integer_form(n, 1)) {
      const ir::TensorId x = float_operand(n, 0);
      ir::Node& node = float_node(n, ir::OpKind::Softmax, {x}, tensor(x).shape);
      node.attrs.axis = softmax_axis(n, tensor(x).shape, state_.opset_);
      return;
    }
    qdq_unary(n, ir::OpKind::Softmax, [&](const Shape& x, ir::Attrs& a) {
      a.axis = softmax_axis(n, x, state_.opset_);
      return x;
    });
  }

  // QLinearSoftmax(X, x_scale, x_zp, y_scale, y_zp).
  void qlinear(const NodeProto& n) {
    allow_attributes(n, {"axis", "opset"});
    qlinear_unary(n, ir::OpKind::Softmax, [&](const Shape& x, ir::Attrs& a) {
      const auto* opset = find_attr(n, "opset");
      if (!opset) throw Error("attribute opset is missing");
      a.axis = softmax_axis(n, x, static_cast<int>(opset->i()));
      a.softmax_integer_rule = true;
      return x;
    });
  }
};

using namespace emit;

struct Emit : Emission {
  using Emission::Emission;

  void softmax(const std::string& id, const Node& n) {
    const Tensor &x = in(n, 0), &y = out(n);
    if (y.dtype == DType::Float32) {
      require_float(n, {0});
      if (n.attrs.axis != static_cast<std::int64_t>(x.shape.size()) - 1)
        refuse(n, "a float Softmax must run over the last axis (ORT transposes the others there first)");
      const std::int64_t row = x.shape.empty() ? 1 : x.shape.back();
      return call(n, fmt::format("tightfit::softmax_float({}, {}, {}, {})", x.elements() / row, row,
                                 pointer(n.inputs[0]), pointer(n.outputs[0])));
    }
    require_per_tensor(n, x);
    require_per_tensor(n, y);
    if (n.attrs.axis != static_cast<std::int64_t>(x.shape.size()) - 1)
      refuse(n, "softmax must run over the innermost axis in memory");
    const std::int64_t row = x.shape.back();
    if (tflite()) {
      // CMSIS-NN's arm_softmax_s8 (int8 in, scale 1/256 and zero point -128 out: passes/numerics.cpp).
      const tightfit::SoftmaxTfliteParams p =
          tightfit::tflite_softmax_params(i32(x.elements() / row), i32(row), x.quant.scale[0]);
      const std::string block = params(id, p);
      return call(
          n, fmt::format("tightfit::softmax_tflite({}, {}, {})", block, pointer(n.inputs[0]), pointer(n.outputs[0])));
    }
    float table[256];
    tightfit::build_softmax_table(x.quant.scale[0], i32(row), x.dtype == DType::Int8, table);
    const std::string t = array(id + "_table", "float", std::vector<float>(table, table + 256));
    tightfit::SoftmaxParams p{};
    p.rows = i32(x.elements() / row), p.row_len = i32(row);
    p.output_zero_point = y.quant.zero_point[0];
    p.output_scale_inv = tightfit::softmax_output_scale_inv(y.quant.scale[0]);
    p.output_min = n.attrs.act_min, p.output_max = n.attrs.act_max;
    p.integer_rule = n.attrs.softmax_integer_rule ? 1 : 0;
    const std::string block = params(id, p);
    call(n, fmt::format("tightfit::softmax<{}>({}, {}, {}, {})", t_of(n), block, t, pointer(n.inputs[0]),
                        pointer(n.outputs[0])));
  }
};

plan::OverlapDistances overlap(const ir::Graph&, const ir::Node&, std::size_t) {
  return overlap_distances(tightfit::softmax_distance(), tightfit::kNoOverlap);
}

std::string tflite_gap(const ir::Graph& g, const ir::Node& n) {
  const ir::Tensor& y = g.tensors[n.outputs[0]];
  if (y.dtype != ir::DType::Int8 || !quantized_as(y, 1.0f / 256, -128))
    return "TFLite's int8 softmax writes scale 1/256, zero point -128";
  return {};
}

}  // namespace

extern const Operator kSoftmax = [] {
  Operator op{};
  op.kind = ir::OpKind::Softmax;
  op.imports = {{"", "Softmax", [](ImportState& s, const NodeProto& n) { Import(s).qdq(n); }},
                {"com.microsoft", "QLinearSoftmax", [](ImportState& s, const NodeProto& n) { Import(s).qlinear(n); }}};
  op.emit = [](EmissionState& s, const std::string& id, const ir::Node& n) { Emit(s).softmax(id, n); };
  op.overlap = overlap;
  op.scratch = nullptr;
  op.shared_kernel = SharedKernel::own;
  op.layout = LayoutRule::axis_attribute;
  op.tile_window = TileWindow::none;
  op.pad_fold = PadFold::none;
  op.output_range = OutputRange::unbounded;
  op.strided_output = StridedOutput::contiguous_only;
  op.macs = no_macs;
  op.cost_key = named_for_operator;
  op.cost_work = CostWork::whole_tensors;
  op.tflite_gap = tflite_gap;
  return op;
}();

}  // namespace tightfit::ops
