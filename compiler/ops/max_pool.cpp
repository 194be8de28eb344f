// MaxPool: 2-D; attrs kernel_shape, strides, dilations, pads, ceil_mode. Moves values only: it
// keeps its input's quantization.
#include <tightfit/kernels.hpp>

#include "ops/operator.hpp"
#include "ops/emission.hpp"
#include "ops/translator.hpp"

namespace tightfit::ops {
namespace {

using namespace import;

struct Import : Translator {
  using Translator::Translator;

  void max_pool(const NodeProto& n) {
    data_movement(n, ir::OpKind::MaxPool, [&](const ir::Tensor& x, bool, ir::Attrs& attrs) {
      if (n.output_size() > 1 && !n.output(1).empty()) throw Error("the Indices output is not supported");
      if (int_attr(n, "storage_order", 0) != 0) throw Error("attribute storage_order=1 is not supported");
      Shape y;
      attrs = pool_attrs(n, x.shape, y);
      return y;
    });
  }
};

using namespace emit;

struct Emit : Emission {
  using Emission::Emission;

  void max_pool(const std::string& id, const Node& n) {
    const Tensor &x = in(n, 0), &y = out(n);
    if (x.quant.scale != y.quant.scale || x.quant.zero_point != y.quant.zero_point)
      refuse(n, "MaxPool must keep its input's quantization");
    const std::string block = params(id, max_pool_params(state_.g_, n));
    call(n, fmt::format("tightfit::max_pool<{}>({}, {}, {})", t_of(n), block, pointer(n.inputs[0]),
                        pointer(n.outputs[0])));
  }
};

plan::OverlapDistances overlap(const ir::Graph& g, const ir::Node& n, std::size_t) {
  return overlap_distances(tightfit::max_pool_distance(emit::max_pool_params(g, n)), tightfit::kNoOverlap);
}

}  // namespace

extern const Operator kMaxPool = [] {
  Operator op{};
  op.kind = ir::OpKind::MaxPool;
  op.imports = {{"", "MaxPool", [](ImportState& s, const NodeProto& n) { Import(s).max_pool(n); }}};
  op.emit = [](EmissionState& s, const std::string& id, const ir::Node& n) { Emit(s).max_pool(id, n); };
  op.overlap = overlap;
  op.scratch = nullptr;
  op.shared_kernel = SharedKernel::own;
  op.layout = LayoutRule::as_it_comes;
  op.tile_window = TileWindow::pool;
  op.pad_fold = PadFold::max_pool;
  op.output_range = OutputRange::unbounded;
  op.strided_output = StridedOutput::contiguous_only;
  op.macs = no_macs;
  op.cost_key = named_for_operator;
  op.cost_work = CostWork::pooling_window;
  op.tflite_gap = tflite_exact;
  return op;
}();

}  // namespace tightfit::ops
