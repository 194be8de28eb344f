// Log and Exp between DequantizeLinear and QuantizeLinear: 256-entry tables (the runtime's lookup
// kernel; the tables are host.hpp's build_log_table and build_exp_table, in float as ONNX Runtime
// computes them: the function of the dequantized value, then QuantizeLinear; log(0) = -inf
// saturates to the lowest code). ONNX Runtime has no QLinear form of either. Anywhere else (a float
// island's value, or a dequantized one going on in float, to a float graph output say) they run
// in float32: tightfit::log_float and exp_float, ORT's own approximations (float_math.hpp).
#include "ops/operator.hpp"
#include "ops/emission.hpp"
#include "ops/translator.hpp"
#include "tightfit/kernels.hpp"

namespace tightfit::ops {
namespace {

using namespace import;

void import_table(ImportState& s, const NodeProto& n, ir::OpKind kind) {
  Translator t(s);
  if (t.integer_form(n, 1)) return t.qdq_unary(n, kind, Translator::same_shape);
  const ir::TensorId x = t.float_operand(n, 0);
  t.float_node(n, kind, {x}, t.tensor(x).shape);
}

using namespace emit;

struct Emit : Emission {
  using Emission::Emission;

  void elementwise_float(const Node& n, const char* kernel) {
    require_float(n, {0});
    call(n, fmt::format("tightfit::{}({}, {}, {})", kernel, out(n).elements(), pointer(n.inputs[0]),
                        pointer(n.outputs[0])));
  }

  void log(const std::string& id, const Node& n) {
    if (out(n).dtype == DType::Float32) return elementwise_float(n, "log_float");
    lookup(id, n, [](bool s8, float xs, std::int32_t xz, float ys, std::int32_t yz, std::uint8_t table[256]) {
      s8 ? tightfit::build_log_table<std::int8_t>(xs, xz, ys, yz, table)
         : tightfit::build_log_table<std::uint8_t>(xs, xz, ys, yz, table);
    });
  }

  void exp(const std::string& id, const Node& n) {
    if (out(n).dtype == DType::Float32) return elementwise_float(n, "exp_float");
    lookup(id, n, [](bool s8, float xs, std::int32_t xz, float ys, std::int32_t yz, std::uint8_t table[256]) {
      s8 ? tightfit::build_exp_table<std::int8_t>(xs, xz, ys, yz, table)
         : tightfit::build_exp_table<std::uint8_t>(xs, xz, ys, yz, table);
    });
  }
};

// The float kernels write element i from element i alone: in place is fine.
plan::OverlapDistances overlap(const ir::Graph& g, const ir::Node& n, std::size_t input) {
  if (g.tensors[n.outputs[0]].dtype == ir::DType::Float32) return overlap_distances(0, tightfit::kNoOverlap);
  return lookup_overlap(g, n, input);
}

}  // namespace

extern const Operator kLog = [] {
  Operator op{};
  op.kind = ir::OpKind::Log;
  op.imports = {{"", "Log", [](ImportState& s, const NodeProto& n) { import_table(s, n, ir::OpKind::Log); }}};
  op.emit = [](EmissionState& s, const std::string& id, const ir::Node& n) { Emit(s).log(id, n); };
  op.overlap = overlap;
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

extern const Operator kExp = [] {
  Operator op{};
  op.kind = ir::OpKind::Exp;
  op.imports = {{"", "Exp", [](ImportState& s, const NodeProto& n) { import_table(s, n, ir::OpKind::Exp); }}};
  op.emit = [](EmissionState& s, const std::string& id, const ir::Node& n) { Emit(s).exp(id, n); };
  op.overlap = overlap;
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

}  // namespace tightfit::ops
