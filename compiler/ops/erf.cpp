// Erf: the error function of a float32 tensor, in a float island (ORT's quantizer has no quantized
// form; PyTorch exports GELU as x * 0.5 * (1 + Erf(x / sqrt 2))). The kernel (tightfit::erf_float)
// is MLAS's MlasErfKernel, which ORT's Erf runs (float_math.hpp).
#include "ops/operator.hpp"
#include "ops/emission.hpp"
#include "ops/translator.hpp"
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

extern const Operator kErf = [] {
  Operator op{};
  op.kind = ir::OpKind::Erf;
  op.imports = {{"", "Erf", [](ImportState& s, const NodeProto& n) {
                   import::Translator t(s);
                   const ir::TensorId x = t.float_operand(n, 0);
                   t.float_node(n, ir::OpKind::Erf, {x}, t.tensor(x).shape);
                 }}};
  op.emit = [](EmissionState& s, const std::string&, const ir::Node& n) { Emit(s).erf(n); };
  op.overlap = [](const ir::Graph&, const ir::Node&, std::size_t) {
    return overlap_distances(0, tightfit::kNoOverlap);
  };
  op.scratch = nullptr;
  op.shared_kernel = SharedKernel::own;
  op.layout = LayoutRule::as_it_comes;
  op.tile_window = TileWindow::none;
  op.pad_fold = PadFold::none;
  op.output_range = OutputRange::unbounded;
  op.strided_output = StridedOutput::contiguous_only;
  op.macs = no_macs;
  op.cost_key = named_for_operator;
  op.cost_work = CostWork::whole_tensors;
  op.tflite_gap = no_tflite_form;
  return op;
}();

}  // namespace tightfit::ops
