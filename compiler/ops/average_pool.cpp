// AveragePool: 2-D; attrs kernel_shape, strides, pads, count_include_pad, ceil_mode.
#include <tightfit/kernels.hpp>

#include "ops/operator.hpp"
#include "ops/tflite_numerics.hpp"
#include "ops/emission.hpp"
#include "ops/translator.hpp"

namespace tightfit::ops {
namespace {

using namespace import;

struct Import : Translator {
  using Translator::Translator;

  Shape pool(const NodeProto& n, const Shape& x, ir::Attrs& attrs) const {
    Shape y;
    attrs = pool_attrs(n, x, y);
    return y;
  }

  void qdq(const NodeProto& n) {
    qdq_unary(n, ir::OpKind::AveragePool, [&](const Shape& x, ir::Attrs& a) { return pool(n, x, a); });
  }

  // QLinearAveragePool(X, x_scale, x_zp, y_scale, y_zp).
  void qlinear(const NodeProto& n) {
    allow_attributes(
        n, {"auto_pad", "ceil_mode", "channels_last", "count_include_pad", "kernel_shape", "pads", "strides"});
    if (int_attr(n, "channels_last", 0) != 0) throw Error("attribute channels_last=1 is not supported");
    qlinear_unary(n, ir::OpKind::AveragePool, [&](const Shape& x, ir::Attrs& a) { return pool(n, x, a); });
  }
};

using namespace emit;

struct Emit : Emission {
  using Emission::Emission;

  void average_pool(const std::string& id, const Node& n) {
    const std::string block = params(id, average_pool_params(state_.g_, n));
    // TFLite's rule: an integer mean rounded half away from zero (passes/numerics.cpp checks that
    // the input's quantization is the output's).
    const char* kernel = tflite() ? "average_pool_tflite" : "average_pool";
    call(n, fmt::format("tightfit::{}<{}>({}, {}, {})", kernel, t_of(n), block, pointer(n.inputs[0]),
                        pointer(n.outputs[0])));
  }
};

plan::OverlapDistances overlap(const ir::Graph& g, const ir::Node& n, std::size_t) {
  return overlap_distances(tightfit::average_pool_distance(emit::average_pool_params(g, n)), tightfit::kNoOverlap);
}

// TFLite's average pool writes its input's quantization and never counts padding.
std::string tflite_gap(const ir::Graph& g, const ir::Node& n) {
  if (!same_scale_and_zero_point(g.tensors[n.inputs[0]], g.tensors[n.outputs[0]]))
    return "TFLite's average pool needs the input's scale and zero point on the output";
  if (n.attrs.count_include_pad)
    for (std::int64_t pad : n.attrs.pads)
      if (pad != 0) return "TFLite's average pool never counts padding (count_include_pad=1 with pads)";
  return {};
}

}  // namespace

extern const Operator kAveragePool = [] {
  Operator op{};
  op.kind = ir::OpKind::AveragePool;
  op.imports = {
      {"", "AveragePool", [](ImportState& s, const NodeProto& n) { Import(s).qdq(n); }},
      {"com.microsoft", "QLinearAveragePool", [](ImportState& s, const NodeProto& n) { Import(s).qlinear(n); }}};
  op.emit = [](EmissionState& s, const std::string& id, const ir::Node& n) { Emit(s).average_pool(id, n); };
  op.overlap = overlap;
  op.scratch = nullptr;
  op.shared_kernel = SharedKernel::own;
  op.layout = LayoutRule::as_it_comes;
  op.tile_window = TileWindow::averaging_pool;
  op.pad_fold = PadFold::average_pool;
  op.output_range = OutputRange::unbounded;
  op.strided_output = StridedOutput::contiguous_only;
  op.macs = no_macs;
  op.cost_key = named_for_operator;
  op.cost_work = CostWork::pooling_window;
  op.tflite_gap = tflite_gap;
  return op;
}();

}  // namespace tightfit::ops
