// Sigmoid: a 256-entry table between DequantizeLinear and QuantizeLinear; otherwise (a float
// island's value, a float graph output, a value read on in float) float32, tightfit::sigmoid_float
// (ORT's MlasComputeLogistic).
#include "ops/operator.hpp"
#include "ops/tflite_numerics.hpp"
#include "ops/emission.hpp"
#include "ops/translator.hpp"

namespace tightfit::ops {
namespace {

using namespace import;

struct Import : Translator {
  using Translator::Translator;

  // QLinearSigmoid(X, x_scale, x_zp, y_scale, y_zp).
  void qlinear(const NodeProto& n) {
    allow_attributes(n, {});
    qlinear_unary(n, ir::OpKind::Sigmoid, same_shape);
  }
};

using namespace emit;

struct Emit : Emission {
  using Emission::Emission;

  void sigmoid(const std::string& id, const Node& n) {
    if (out(n).dtype == DType::Float32) {
      require_float(n, {0});
      return call(n, fmt::format("tightfit::sigmoid_float({}, {}, {})", out(n).elements(), operand(id, n, 0),
                                 pointer(n.outputs[0])));
    }
    // TFLite Micro's int8 LOGISTIC (--numerics tflite): its fixed-point arithmetic, whose output
    // quantization passes/numerics.cpp checked.
    if (tflite())
      return lookup(id, n, [](bool, float xs, std::int32_t xz, float, std::int32_t, std::uint8_t table[256]) {
        tightfit::build_logistic_table_tflite(xs, xz, table);
      });
    lookup(id, n, [](bool s8, float xs, std::int32_t xz, float ys, std::int32_t yz, std::uint8_t table[256]) {
      s8 ? tightfit::build_sigmoid_table<std::int8_t>(xs, xz, ys, yz, table)
         : tightfit::build_sigmoid_table<std::uint8_t>(xs, xz, ys, yz, table);
    });
  }
};

std::string tflite_gap(const ir::Graph& g, const ir::Node& n) {
  return tflite_activation_gap(g, n, "LOGISTIC", 1.0f / 256, -128, "scale 1/256, zero point -128");
}

}  // namespace

extern const Operator kSigmoid = [] {
  Operator op{};
  op.kind = ir::OpKind::Sigmoid;
  op.imports = {
      {"", "Sigmoid", [](ImportState& s, const NodeProto& n) { Translator(s).unary(n, ir::OpKind::Sigmoid); }},
      {"com.microsoft", "QLinearSigmoid", [](ImportState& s, const NodeProto& n) { Import(s).qlinear(n); }}};
  op.emit = [](EmissionState& s, const std::string& id, const ir::Node& n) { Emit(s).sigmoid(id, n); };
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
  op.tflite_gap = tflite_gap;
  return op;
}();

}  // namespace tightfit::ops
