// HardSigmoid: max(0, min(1, alpha * x + beta)), attrs.alpha and attrs.beta (ONNX's defaults 0.2
// and 0.5; PyTorch exports 1/6 and 0.5). HardSwish (opset 14): x * HardSigmoid(x) with alpha 1/6
// and beta 0.5, ONNX's definition of it. Both run as a 256-entry table (the runtime's lookup
// kernel; the tables are host.hpp's build_hard_sigmoid_table and build_hard_swish_table, in float
// as ONNX Runtime computes them between DequantizeLinear and QuantizeLinear; under --numerics
// tflite HardSwish's is build_hard_swish_table_tflite, TFLite Micro's HARD_SWISH). ONNX Runtime
// has no QLinear form of either: the QDQ form only.
#include <tightfit/host.hpp>

#include "ops/operator.hpp"
#include "ops/tflite_numerics.hpp"
#include "ops/emission.hpp"
#include "ops/translator.hpp"

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

std::string hard_swish_tflite_gap(const ir::Graph& g, const ir::Node& n) {
  if (!int8_to_int8(g, n)) return "TFLite Micro's HARD_SWISH takes int8";
  // TFLite Micro's Prepare requires the output multiplier's exponent to be at most 0.
  const float x_scale = g.tensors[n.inputs[0]].quant.scale[0], y_scale = g.tensors[n.outputs[0]].quant.scale[0];
  if (tightfit::tflite_hard_swish_params(x_scale, y_scale).output_exponent > 0)
    return "TFLite Micro's HARD_SWISH needs an output scale above 1/128 of the input's";
  return {};
}

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
  op.cost_work = CostWork::whole_tensors;
  op.tflite_gap = no_tflite_form;
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
  op.cost_work = CostWork::whole_tensors;
  op.tflite_gap = hard_swish_tflite_gap;
  return op;
}();

}  // namespace tightfit::ops
