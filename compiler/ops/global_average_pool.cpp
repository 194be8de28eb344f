// GlobalAveragePool: the mean over H and W of a 4-D input, per channel.
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

  static Shape global_pool_shape(const Shape& x) {
    if (x.size() != 4) throw Error(fmt::format("input shape {} is not 4-D (N, C, H, W)", shape_text(x)));
    return {x[0], x[1], 1, 1};
  }

  void qdq(const NodeProto& n) {
    qdq_unary(n, ir::OpKind::GlobalAveragePool, [](const Shape& x, ir::Attrs&) { return global_pool_shape(x); });
  }

  // QLinearGlobalAveragePool(X, x_scale, x_zp, y_scale, y_zp).
  void qlinear(const NodeProto& n) {
    allow_attributes(n, {"channels_last"});
    if (int_attr(n, "channels_last", 0) != 0) throw Error("attribute channels_last=1 is not supported");
    qlinear_unary(n, ir::OpKind::GlobalAveragePool, [](const Shape& x, ir::Attrs&) { return global_pool_shape(x); });
  }
};

using namespace emit;

struct Emit : Emission {
  using Emission::Emission;

  void global_average_pool(const std::string& id, const Node& n) {
    const Tensor &x = in(n, 0), &y = out(n);
    const std::int64_t image = x.shape[1] * x.shape[2];
    if (tflite()) {
      // TFLite's AVERAGE_POOL_2D over the whole image: its integer mean (the quantization is the
      // input's, passes/numerics.cpp checks it).
      tightfit::AveragePoolParams p{};  // one window over the whole image: no pads
      p.batch = i32(x.shape[0]);
      p.in_h = i32(x.shape[1]), p.in_w = i32(x.shape[2]), p.channels = i32(x.shape[3]);
      p.out_h = 1, p.out_w = 1;
      p.kernel_h = i32(x.shape[1]), p.kernel_w = i32(x.shape[2]);
      p.stride_h = 1, p.stride_w = 1;
      p.input_scale = x.quant.scale[0], p.input_zero_point = x.quant.zero_point[0];
      p.output_scale = y.quant.scale[0], p.output_zero_point = y.quant.zero_point[0];
      p.output_min = n.attrs.act_min, p.output_max = n.attrs.act_max;
      const std::string block = params(id, p);
      return call(n, fmt::format("tightfit::average_pool_tflite<{}>({}, {}, {})", t_of(n), block, pointer(n.inputs[0]),
                                 pointer(n.outputs[0])));
    }
    const float m = tightfit::global_average_pool_multiplier(x.quant.scale[0], y.quant.scale[0], i32(image));
    tightfit::GlobalAveragePoolParams p{};
    p.batch = i32(x.shape[0]), p.image_size = i32(image), p.channels = i32(x.shape[3]);
    p.input_zero_point = x.quant.zero_point[0], p.output_zero_point = y.quant.zero_point[0];
    p.multiplier = m;
    p.output_min = n.attrs.act_min, p.output_max = n.attrs.act_max;
    const std::string block = params(id, p);
    call(n, fmt::format("tightfit::global_average_pool<{}>({}, {}, {})", t_of(n), block, pointer(n.inputs[0]),
                        pointer(n.outputs[0])));
  }
};

plan::OverlapDistances overlap(const ir::Graph&, const ir::Node&, std::size_t) {
  return overlap_distances(tightfit::global_average_pool_distance({}), tightfit::kNoOverlap);
}

// TFLite's average pool writes its input's quantization.
std::string tflite_gap(const ir::Graph& g, const ir::Node& n) {
  if (!same_scale_and_zero_point(g.tensors[n.inputs[0]], g.tensors[n.outputs[0]]))
    return "TFLite's average pool needs the input's scale and zero point on the output";
  return {};
}

}  // namespace

extern const Operator kGlobalAveragePool = [] {
  Operator op{};
  op.kind = ir::OpKind::GlobalAveragePool;
  op.imports = {
      {"", "GlobalAveragePool", [](ImportState& s, const NodeProto& n) { Import(s).qdq(n); }},
      {"com.microsoft", "QLinearGlobalAveragePool", [](ImportState& s, const NodeProto& n) { Import(s).qlinear(n); }}};
  op.emit = [](EmissionState& s, const std::string& id, const ir::Node& n) { Emit(s).global_average_pool(id, n); };
  op.overlap = overlap;
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
  op.tflite_gap = tflite_gap;
  return op;
}();

}  // namespace tightfit::ops
