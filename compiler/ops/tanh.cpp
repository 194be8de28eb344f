// Tanh: a 256-entry table (ONNX Runtime has no QLinear form).
#include "ops/operator.hpp"
#include "emit/emission.hpp"
#include "import/translator.hpp"

namespace tightfit::ops {
namespace {

using namespace emit;

struct Emit : Emission {
  using Emission::Emission;

  void tanh(const std::string& id, const Node& n) {
    lookup(id, n, [](bool s8, float xs, std::int32_t xz, float ys, std::int32_t yz, std::uint8_t table[256]) {
      s8 ? tightfit::build_tanh_table<std::int8_t>(xs, xz, ys, yz, table)
         : tightfit::build_tanh_table<std::uint8_t>(xs, xz, ys, yz, table);
    });
  }
};

}  // namespace

extern const Operator kTanh{
    ir::OpKind::Tanh,
    {{"", "Tanh", [](ImportState& s, const NodeProto& n) { Translator(s).qdq_unary(n, ir::OpKind::Tanh, Translator::same_shape); }}},
    [](EmissionState& s, const std::string& id, const ir::Node& n) { Emit(s).tanh(id, n); },
    lookup_overlap};

}  // namespace tightfit::ops
