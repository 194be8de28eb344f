// HardSigmoid: max(0, min(1, alpha * x + beta)), attrs.alpha and attrs.beta (ONNX's defaults 0.2
// and 0.5; PyTorch exports 1/6 and 0.5). HardSwish (opset 14): x * HardSigmoid(x) with alpha 1/6
// and beta 0.5, ONNX's definition of it. Both run as a 256-entry table (the runtime's lookup
// kernel; the tables are host.hpp's build_hard_sigmoid_table and build_hard_swish_table, in float
// as ONNX Runtime computes them between DequantizeLinear and QuantizeLinear; under --numerics
// tflite HardSwish's is build_hard_swish_table_tflite, TFLite Micro's HARD_SWISH). ONNX Runtime
// has no QLinear form of either: the QDQ form only.
#include "ops/operator.hpp"
#include "emit/emission.hpp"
#include "import/translator.hpp"

namespace tightfit::ops {
namespace {

using namespace import;

void import_hard_sigmoid(ImportState& s, const NodeProto& n) {
  Translator(s).qdq_unary(n, ir::OpKind::HardSigmoid, [&](const Shape& x, ir::Attrs& attrs) {
    attrs.alpha = Translator::float_attr(n, "alpha", 0.2f);
    attrs.beta = Translator::float_attr(n, "beta", 0.5f);
    return x;
  });
}

void import_hard_swish(ImportState& s, const NodeProto& n) {
  Translator(s).qdq_unary(n, ir::OpKind::HardSwish, Translator::same_shape);
}

using namespace emit;

struct Emit : Emission {
  using Emission::Emission;

  void hard_sigmoid(const std::string& id, const Node& n) {
    lookup(id, n, [&n](bool s8, float xs, std::int32_t xz, float ys, std::int32_t yz, std::uint8_t table[256]) {
      s8 ? tightfit::build_hard_sigmoid_table<std::int8_t>(n.attrs.alpha, n.attrs.beta, xs, xz, ys, yz, table)
         : tightfit::build_hard_sigmoid_table<std::uint8_t>(n.attrs.alpha, n.attrs.beta, xs, xz, ys, yz, table);
    });
  }

  void hard_swish(const std::string& id, const Node& n) {
    // TFLite Micro's int8 HARD_SWISH (--numerics tflite): its 16-bit fixed point, whose output
    // multiplier passes/numerics.cpp checked.
    if (tflite())
      return lookup(id, n, [](bool, float xs, std::int32_t xz, float ys, std::int32_t yz, std::uint8_t table[256]) {
        tightfit::build_hard_swish_table_tflite(xs, xz, ys, yz, table);
      });
    lookup(id, n, [](bool s8, float xs, std::int32_t xz, float ys, std::int32_t yz, std::uint8_t table[256]) {
      s8 ? tightfit::build_hard_swish_table<std::int8_t>(xs, xz, ys, yz, table)
         : tightfit::build_hard_swish_table<std::uint8_t>(xs, xz, ys, yz, table);
    });
  }
};

}  // namespace

extern const Operator kHardSigmoid = [] {
  Operator op{};
  op.kind = ir::OpKind::HardSigmoid;
  op.imports = {{"", "HardSigmoid", import_hard_sigmoid}};
  op.emit = [](EmissionState& s, const std::string& id, const ir::Node& n) { Emit(s).hard_sigmoid(id, n); };
  op.overlap = lookup_overlap;
  op.scratch = nullptr;
  op.shared_kernel = SharedKernel::lookup_table;
  op.layout = LayoutRule::as_it_comes;
  op.tile_window = TileWindow::elementwise;
  op.pad_fold = PadFold::none;
  op.output_range = OutputRange::clamped_to_act_range;
  op.strided_output = StridedOutput::contiguous_only;
  op.macs = no_macs;
  op.cost_key = lookup_table_cost;
  return op;
}();

extern const Operator kHardSwish = [] {
  Operator op{};
  op.kind = ir::OpKind::HardSwish;
  op.imports = {{"", "HardSwish", import_hard_swish}};
  op.emit = [](EmissionState& s, const std::string& id, const ir::Node& n) { Emit(s).hard_swish(id, n); };
  op.overlap = lookup_overlap;
  op.scratch = nullptr;
  op.shared_kernel = SharedKernel::lookup_table;
  op.layout = LayoutRule::as_it_comes;
  op.tile_window = TileWindow::elementwise;
  op.pad_fold = PadFold::none;
  op.output_range = OutputRange::clamped_to_act_range;
  op.strided_output = StridedOutput::contiguous_only;
  op.macs = no_macs;
  op.cost_key = lookup_table_cost;
  return op;
}();

}  // namespace tightfit::ops
