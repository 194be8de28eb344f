// Log and Exp between DequantizeLinear and QuantizeLinear: 256-entry tables (the runtime's lookup
// kernel; the tables are host.hpp's build_log_table and build_exp_table, in float as ONNX Runtime
// computes them: the function of the dequantized value, then QuantizeLinear; log(0) = -inf
// saturates to the lowest code). ONNX Runtime has no QLinear form of either. A float island's Log
// or Exp (a float32 input) is refused: the runtime has no libm.
#include "ops/operator.hpp"
#include "emit/emission.hpp"
#include "import/translator.hpp"

namespace tightfit::ops {
namespace {

using namespace import;

void import_table(ImportState& s, const NodeProto& n, ir::OpKind kind) {
  Translator t(s);
  if (n.input_size() > 0 && t.value(n.input(0)).kind == Value::Kind::Float)
    throw Error(fmt::format("{} of a float32 value (a float island) is not supported: the runtime has no libm; "
                            "only {} between DequantizeLinear and QuantizeLinear runs (as a table)",
                            n.op_type(), n.op_type()));
  t.qdq_unary(n, kind, Translator::same_shape);
}

using namespace emit;

struct Emit : Emission {
  using Emission::Emission;

  void log(const std::string& id, const Node& n) {
    lookup(id, n, [](bool s8, float xs, std::int32_t xz, float ys, std::int32_t yz, std::uint8_t table[256]) {
      s8 ? tightfit::build_log_table<std::int8_t>(xs, xz, ys, yz, table)
         : tightfit::build_log_table<std::uint8_t>(xs, xz, ys, yz, table);
    });
  }

  void exp(const std::string& id, const Node& n) {
    lookup(id, n, [](bool s8, float xs, std::int32_t xz, float ys, std::int32_t yz, std::uint8_t table[256]) {
      s8 ? tightfit::build_exp_table<std::int8_t>(xs, xz, ys, yz, table)
         : tightfit::build_exp_table<std::uint8_t>(xs, xz, ys, yz, table);
    });
  }
};

}  // namespace

extern const Operator kLog{
    ir::OpKind::Log,
    {{"", "Log", [](ImportState& s, const NodeProto& n) { import_table(s, n, ir::OpKind::Log); }}},
    [](EmissionState& s, const std::string& id, const ir::Node& n) { Emit(s).log(id, n); },
    lookup_overlap};

extern const Operator kExp{
    ir::OpKind::Exp,
    {{"", "Exp", [](ImportState& s, const NodeProto& n) { import_table(s, n, ir::OpKind::Exp); }}},
    [](EmissionState& s, const std::string& id, const ir::Node& n) { Emit(s).exp(id, n); },
    lookup_overlap};

}  // namespace tightfit::ops
