// LeakyRelu: attrs.alpha; a 256-entry table.
#include "ops/operator.hpp"
#include "ops/emission.hpp"
#include "ops/translator.hpp"

namespace tightfit::ops {
namespace {

using namespace import;

struct Import : Translator {
  using Translator::Translator;

  Shape alpha(const NodeProto& n, const Shape& x, ir::Attrs& attrs) const {
    attrs.alpha = float_attr(n, "alpha", 0.01f);
    return x;
  }

  void qdq(const NodeProto& n) {
    qdq_unary(n, ir::OpKind::LeakyRelu, [&](const Shape& x, ir::Attrs& a) { return alpha(n, x, a); });
  }

  // QLinearLeakyRelu(X, x_scale, x_zp, y_scale, y_zp).
  void qlinear(const NodeProto& n) {
    allow_attributes(n, {"alpha"});
    qlinear_unary(n, ir::OpKind::LeakyRelu, [&](const Shape& x, ir::Attrs& a) { return alpha(n, x, a); });
  }
};

using namespace emit;

struct Emit : Emission {
  using Emission::Emission;

  void leaky_relu(const std::string& id, const Node& n) {
    lookup(id, n, [&n](bool s8, float xs, std::int32_t xz, float ys, std::int32_t yz, std::uint8_t table[256]) {
      s8 ? tightfit::build_leaky_relu_table<std::int8_t>(n.attrs.alpha, xs, xz, ys, yz, table)
         : tightfit::build_leaky_relu_table<std::uint8_t>(n.attrs.alpha, xs, xz, ys, yz, table);
    });
  }
};

}  // namespace

extern const Operator kLeakyRelu = [] {
  Operator op{};
  op.kind = ir::OpKind::LeakyRelu;
  op.imports = {
      {"", "LeakyRelu", [](ImportState& s, const NodeProto& n) { Import(s).qdq(n); }},
      {"com.microsoft", "QLinearLeakyRelu", [](ImportState& s, const NodeProto& n) { Import(s).qlinear(n); }}};
  op.emit = [](EmissionState& s, const std::string& id, const ir::Node& n) { Emit(s).leaky_relu(id, n); };
  op.overlap = lookup_overlap;
  op.scratch = nullptr;
  op.shared_kernel = SharedKernel::lookup_table;
  op.layout = LayoutRule::as_it_comes;
  op.tile_window = TileWindow::elementwise;
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
