// ReduceMean: the mean over attrs.axes (ONNX order), keepdims 0 or 1, between DequantizeLinear and
// QuantizeLinear (ONNX Runtime has no QLinear kernel for it, com.microsoft's QLinearReduceMean
// included: the QDQ form only). The mean over H and W of a 4-D tensor is a GlobalAveragePool (with
// keepdims 0, a Reshape view to [N, C] after it): the pool's kernel, as ORT's
// QLinearGlobalAveragePool computes it. Other axes: the runtime's reduce_mean kernel (ORT's float
// order: exact integer sum, times the scale, divided by the count, QuantizeLinear), up to 4 dims.
// A ReduceMean whose input is a float island's value or whose output is not quantized runs in the
// island, adding in ORT's float order: over trailing axes tightfit::reduce_mean_float_rows (ORT's
// Eigen sum, bit-exact), over others tightfit::reduce_mean_float (index order, as ORT's
// FastReduceRK), then divided by the count.
#include "ops/operator.hpp"
#include "ops/tflite_numerics.hpp"
#include "ops/emission.hpp"
#include "ops/translator.hpp"

namespace tightfit::ops {
namespace {

using namespace import;

struct Import : Translator {
  using Translator::Translator;

  // The reduced axes, normalized and sorted, from the attribute (opset 18 moved them to an input,
  // but tightfit takes opsets up to 17); none given means all.
  std::vector<std::int64_t> reduced_axes(const NodeProto& n, std::size_t rank) const {
    std::vector<std::int64_t> axes = ints_attr(n, "axes");
    if (axes.empty()) {
      if (int_attr(n, "noop_with_empty_axes", 0) != 0)
        throw Error("noop_with_empty_axes=1 without axes is not supported");
      for (std::size_t a = 0; a < rank; ++a) axes.push_back(static_cast<std::int64_t>(a));
    }
    for (auto& a : axes) a = normalize_axis(a, rank);
    std::sort(axes.begin(), axes.end());
    axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
    return axes;
  }

  // The shape of a reduction of `xs` over `axes`: `kept` with each reduced dim 1, and the output
  // (`kept`, or without the reduced dims when keepdims is 0).
  struct ReducedShape {
    Shape kept, y;
  };
  static ReducedShape reduced_shape(const Shape& xs, const std::vector<std::int64_t>& axes, bool keepdims) {
    ReducedShape r{xs, {}};
    for (std::size_t d = 0; d < xs.size(); ++d) {
      const bool reduced = std::count(axes.begin(), axes.end(), static_cast<std::int64_t>(d)) > 0;
      if (reduced) r.kept[d] = 1;
      if (!reduced || keepdims) r.y.push_back(r.kept[d]);
    }
    return r;
  }

  // ReduceMax and ReduceMin: float islands only (exact in float32).
  void reduce_extreme(const NodeProto& n, ir::OpKind kind) {
    allow_attributes(n, {"axes", "keepdims", "noop_with_empty_axes"});
    const ir::TensorId x = float_operand(n, 0);
    const std::vector<std::int64_t> axes = reduced_axes(n, tensor(x).shape.size());
    const Shape y = reduced_shape(tensor(x).shape, axes, int_attr(n, "keepdims", 1) != 0).y;
    float_node(n, kind, {x}, y).attrs.axes = axes;
  }

  void reduce_mean(const NodeProto& n) {
    allow_attributes(n, {"axes", "keepdims", "noop_with_empty_axes"});
    const bool in_float = !(integer_form(n, 1) && !tensor(value(n.input(0)).tensor).is_constant);
    const ir::TensorId x = in_float ? float_operand(n, 0) : activation_input(n, 0, true);
    const Shape xs = tensor(x).shape;
    const std::vector<std::int64_t> axes = reduced_axes(n, xs.size());
    const bool keepdims = int_attr(n, "keepdims", 1) != 0;
    const auto [kept, y] = reduced_shape(xs, axes, keepdims);
    if (in_float) {
      float_node(n, ir::OpKind::ReduceMean, {x}, y).attrs.axes = axes;
      return;
    }
    const Sink sink = quantized_sink(n);
    if (xs.size() == 4 && axes == std::vector<std::int64_t>{2, 3}) {
      if (keepdims) {
        emit_to_sink(n, ir::OpKind::GlobalAveragePool, {x}, kept, sink).onnx_op =
            "ReduceMean" + sink.fused + " (QDQ, as GlobalAveragePool)";
        return;
      }
      const ir::TensorId pooled = add_activation(sink.name + ":pooled", sink.q.dtype, kept, &sink.q.quant);
      ir::Node& pool = emit(n, ir::OpKind::GlobalAveragePool,
                            "ReduceMean" + sink.fused + " (QDQ, as GlobalAveragePool)", {x}, pooled);
      pool.attrs.act_min = sink.act_min;
      pool.attrs.act_max = sink.act_max;
      const ir::TensorId out = add_activation(sink.name, sink.q.dtype, y, &sink.q.quant);
      emit(n, ir::OpKind::Reshape, "ReduceMean (keepdims=0)", {pooled}, out).name = node_name(n) + ":squeeze";
      return set_value(sink.name, Value{Value::Kind::Integer, out, nullptr});
    }
    emit_to_sink(n, ir::OpKind::ReduceMean, {x}, y, sink).attrs.axes = axes;
  }
};

using namespace emit;

struct Emit : Emission {
  using Emission::Emission;

  // True when the reduced axes, dims of 1 aside, all come after the kept ones (a float tensor is
  // in ONNX's order): each output element is the mean of a contiguous run of the input.
  bool trailing_axes(const Node& n) const {
    const Tensor& x = in(n, 0);
    bool reduced_seen = false;
    for (std::size_t d = 0; d < x.shape.size(); ++d) {
      if (x.shape[d] == 1) continue;
      const bool reduced = std::count(n.attrs.axes.begin(), n.attrs.axes.end(), static_cast<std::int64_t>(d)) > 0;
      if (!reduced && reduced_seen) return false;
      reduced_seen = reduced_seen || reduced;
    }
    return true;
  }

  void reduce_mean(const std::string& id, const Node& n) {
    const Tensor &x = in(n, 0), &y = out(n);
    const bool in_float = y.dtype == DType::Float32;
    if (in_float) {
      require_float(n, {0});
    } else {
      require_per_tensor(n, x);
      require_per_tensor(n, y);
      require_one_type(n);
    }
    const std::size_t rank = x.shape.size();
    if (rank > 4) refuse(n, "a ReduceMean of more than 4 dimensions is not supported");
    const bool keepdims = y.shape.size() == rank;
    const std::vector<std::int64_t> in_strides = strides_of(x.shape), out_strides = strides_of(y.shape);
    tightfit::ReduceMeanParams p{};  // the geometry first; the quantization fields 0
    for (std::size_t d = 0; d < 4; ++d) p.kept_dims[d] = p.reduced_dims[d] = 1;
    std::int64_t count = 1;
    for (std::size_t m = 0; m < rank; ++m) {
      const std::size_t d = 4 - rank + m;  // leading dims of 1 pad to 4
      const std::int64_t a = static_cast<std::int64_t>(onnx_axis(x, m));
      p.in_strides[d] = i32(in_strides[m]);
      const auto at = std::find(n.attrs.axes.begin(), n.attrs.axes.end(), a);
      if (at != n.attrs.axes.end()) {
        p.reduced_dims[d] = i32(x.shape[m]);
        count *= x.shape[m];
        continue;
      }
      p.kept_dims[d] = i32(x.shape[m]);
      // The ONNX axis of y that this kept axis becomes, then where y holds it in memory.
      const std::int64_t before =
          std::count_if(n.attrs.axes.begin(), n.attrs.axes.end(), [a](std::int64_t r) { return r < a; });
      const std::size_t y_axis = static_cast<std::size_t>(keepdims ? a : a - before);
      p.out_strides[d] = i32(out_strides[memory_axis(y, y_axis)]);
    }
    p.count = i32(count);
    // The float kernels' block: index order, the quantization fields unused (their scales written 0.0f).
    auto float_block = [&] {
      ParamsText<tightfit::ReduceMeanParams> fields = ParamsText<tightfit::ReduceMeanParams>::of(p);
      fields.input_scale = fields.output_scale = "0.0f";
      return params(id, fields);
    };
    if (n.op == ir::OpKind::ReduceMax || n.op == ir::OpKind::ReduceMin) {
      const std::string block = float_block();
      call(n, fmt::format("tightfit::reduce_extreme_float({}, {}, {}, {})", block, pointer(n.inputs[0]),
                          pointer(n.outputs[0]), n.op == ir::OpKind::ReduceMax ? "true" : "false"));
      return;
    }
    if (in_float && trailing_axes(n)) {  // ORT's FastReduceKR: rows of contiguous elements, Eigen's sum
      call(n, fmt::format("tightfit::reduce_mean_float_rows({}, {}, {}, {})", y.elements(), count, pointer(n.inputs[0]),
                          pointer(n.outputs[0])));
      return;
    }
    if (in_float) {
      const std::string block = float_block();
      call(n,
           fmt::format("tightfit::reduce_mean_float({}, {}, {})", block, pointer(n.inputs[0]), pointer(n.outputs[0])));
      return;
    }
    if (tflite()) {  // TFLite Micro's MEAN: 1/count inside a fixed-point multiplier
      const tightfit::QuantizedMultiplier m =
          tightfit::tflite_mean_multiplier(x.quant.scale[0], y.quant.scale[0], count);
      tightfit::ReduceMeanTfliteParams t{};  // ReduceMeanParams' geometry
      std::copy(std::begin(p.kept_dims), std::end(p.kept_dims), t.kept_dims);
      std::copy(std::begin(p.reduced_dims), std::end(p.reduced_dims), t.reduced_dims);
      std::copy(std::begin(p.in_strides), std::end(p.in_strides), t.in_strides);
      std::copy(std::begin(p.out_strides), std::end(p.out_strides), t.out_strides);
      t.count = p.count;
      t.input_zero_point = x.quant.zero_point[0];
      t.multiplier = m;
      t.output_zero_point = y.quant.zero_point[0];
      t.output_min = n.attrs.act_min, t.output_max = n.attrs.act_max;
      const std::string block = params(id, t);
      return call(n, fmt::format("tightfit::reduce_mean_tflite<{}>({}, {}, {})", t_of(n), block, pointer(n.inputs[0]),
                                 pointer(n.outputs[0])));
    }
    p.input_scale = x.quant.scale[0], p.input_zero_point = x.quant.zero_point[0];
    p.output_scale = y.quant.scale[0], p.output_zero_point = y.quant.zero_point[0];
    p.output_min = n.attrs.act_min, p.output_max = n.attrs.act_max;
    const std::string block = params(id, p);
    call(n, fmt::format("tightfit::reduce_mean<{}>({}, {}, {})", t_of(n), block, pointer(n.inputs[0]),
                        pointer(n.outputs[0])));
  }
};

std::string mean_tflite_gap(const ir::Graph& g, const ir::Node& n) {
  if (!int8_to_int8(g, n)) return "TFLite Micro's int8 MEAN takes int8";
  return {};
}

}  // namespace

extern const Operator kReduceMean = [] {
  Operator op{};
  op.kind = ir::OpKind::ReduceMean;
  op.imports = {{"", "ReduceMean", [](ImportState& s, const NodeProto& n) { Import(s).reduce_mean(n); }}};
  op.emit = [](EmissionState& s, const std::string& id, const ir::Node& n) { Emit(s).reduce_mean(id, n); };
  op.overlap = nullptr;
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
  op.tflite_gap = mean_tflite_gap;
  return op;
}();

extern const Operator kReduceMax = [] {
  Operator op{};
  op.kind = ir::OpKind::ReduceMax;
  op.imports = {{"", "ReduceMax",
                 [](ImportState& s, const NodeProto& n) { Import(s).reduce_extreme(n, ir::OpKind::ReduceMax); }}};
  op.emit = [](EmissionState& s, const std::string& id, const ir::Node& n) { Emit(s).reduce_mean(id, n); };
  op.overlap = nullptr;
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
  op.tflite_gap = tflite_exact;
  return op;
}();

extern const Operator kReduceMin = [] {
  Operator op{};
  op.kind = ir::OpKind::ReduceMin;
  op.imports = {{"", "ReduceMin",
                 [](ImportState& s, const NodeProto& n) { Import(s).reduce_extreme(n, ir::OpKind::ReduceMin); }}};
  op.emit = [](EmissionState& s, const std::string& id, const ir::Node& n) { Emit(s).reduce_mean(id, n); };
  op.overlap = nullptr;
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
  op.tflite_gap = tflite_exact;
  return op;
}();

}  // namespace tightfit::ops
