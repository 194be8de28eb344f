// Transpose: attrs.perm.
#include "ops/operator.hpp"
#include "ops/emission.hpp"
#include "ops/translator.hpp"

namespace tightfit::ops {
namespace {

using namespace import;

struct Import : Translator {
  using Translator::Translator;

  void transpose(const NodeProto& n) {
    data_movement(n, ir::OpKind::Transpose, [&](const ir::Tensor& x, bool, ir::Attrs& attrs) {
      attrs.perm = ints_attr(n, "perm");
      if (attrs.perm.empty())
        for (std::size_t i = x.shape.size(); i-- > 0;) attrs.perm.push_back(static_cast<std::int64_t>(i));
      return import::transpose(x.shape, attrs.perm);
    });
  }
};

using namespace emit;

struct Emit : Emission {
  using Emission::Emission;

  void transpose(const std::string& id, const Node& n) {
    const Tensor& x = in(n, 0);
    const std::size_t rank = x.shape.size();
    if (rank > 4) refuse(n, "transposes of more than 4 dimensions are not supported");
    tightfit::TransposeParams p{};
    const std::size_t lead = 4 - rank;
    for (std::size_t i = 0; i < 4; ++i)
      p.perm[i] =
          i32(i < lead ? static_cast<std::int64_t>(i) : n.attrs.perm[i - lead] + static_cast<std::int64_t>(lead));
    const auto dims = padded4(x.shape, 1);
    std::copy(dims.begin(), dims.end(), p.in_dims);
    const std::string block = params(id, p);
    call(n, fmt::format("tightfit::transpose<{}>({}, {}, {})", t_of(n), block, pointer(n.inputs[0]),
                        pointer(n.outputs[0])));
  }
};

}  // namespace

extern const Operator kTranspose = [] {
  Operator op{};
  op.kind = ir::OpKind::Transpose;
  op.imports = {{"", "Transpose", [](ImportState& s, const NodeProto& n) { Import(s).transpose(n); }}};
  op.emit = [](EmissionState& s, const std::string& id, const ir::Node& n) { Emit(s).transpose(id, n); };
  op.overlap = nullptr;
  op.scratch = nullptr;
  op.shared_kernel = SharedKernel::own;
  op.layout = LayoutRule::permutation;
  op.tile_window = TileWindow::none;
  op.pad_fold = PadFold::none;
  op.output_range = OutputRange::unbounded;
  op.strided_output = StridedOutput::contiguous_only;
  op.macs = no_macs;
  op.cost_key = named_for_operator;
  op.cost_work = CostWork::whole_tensors;
  op.tflite_gap = tflite_exact;
  return op;
}();

}  // namespace tightfit::ops
