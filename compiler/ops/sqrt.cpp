// Sqrt: the square root of a float32 tensor, in a float island (ONNX Runtime's quantizer has no
// quantized form of it). The kernel (tightfit::sqrt_float) is correctly rounded, as std::sqrt:
// the FPU's VSQRT where the core has one, an integer square root of the significand elsewhere.
#include "ops/operator.hpp"
#include "emit/emission.hpp"
#include "import/translator.hpp"
#include "tightfit/kernels.hpp"

namespace tightfit::ops {
namespace {

using namespace emit;

struct Emit : Emission {
  using Emission::Emission;

  void sqrt(const Node& n) {
    require_float(n, {0});
    call(n, fmt::format("tightfit::sqrt_float({}, {}, {})", out(n).elements(), pointer(n.inputs[0]), pointer(n.outputs[0])));
  }
};

}  // namespace

extern const Operator kSqrt{
    ir::OpKind::Sqrt,
    {{"", "Sqrt",
      [](ImportState& s, const NodeProto& n) {
        import::Translator t(s);
        const ir::TensorId x = t.float_operand(n, 0);
        t.float_node(n, ir::OpKind::Sqrt, {x}, t.tensor(x).shape);
      }}},
    [](EmissionState& s, const std::string&, const ir::Node& n) { Emit(s).sqrt(n); },
    [](const ir::Graph&, const ir::Node&, std::size_t) { return overlap_distances(0, tightfit::kNoOverlap); }};

}  // namespace tightfit::ops
