// Erf: the error function of a float32 tensor, in a float island (ORT's quantizer has no quantized
// form; PyTorch exports GELU as x * 0.5 * (1 + Erf(x / sqrt 2))). The kernel (tightfit::erf_float)
// is MLAS's MlasErfKernel, which ORT's Erf runs (float_math.hpp).
#include "ops/operator.hpp"
#include "emit/emission.hpp"
#include "import/translator.hpp"
#include "tightfit/kernels.hpp"

namespace tightfit::ops {
namespace {

using namespace emit;

struct Emit : Emission {
  using Emission::Emission;

  void erf(const Node& n) {
    require_float(n, {0});
    call(n, fmt::format("tightfit::erf_float({}, {}, {})", out(n).elements(), pointer(n.inputs[0]),
                        pointer(n.outputs[0])));
  }
};

}  // namespace

extern const Operator kErf{
    ir::OpKind::Erf,
    {{"", "Erf",
      [](ImportState& s, const NodeProto& n) {
        import::Translator t(s);
        const ir::TensorId x = t.float_operand(n, 0);
        t.float_node(n, ir::OpKind::Erf, {x}, t.tensor(x).shape);
      }}},
    [](EmissionState& s, const std::string&, const ir::Node& n) { Emit(s).erf(n); },
    [](const ir::Graph&, const ir::Node&, std::size_t) { return overlap_distances(0, tightfit::kNoOverlap); }};

}  // namespace tightfit::ops
