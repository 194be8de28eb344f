// Slice: the box of the input from attrs.starts (ONNX order, one per dim) with the output's
// shape; steps of 1. Split is imported as one Slice per output. Pure data movement: the output
// keeps the input's dtype and quantization, in the integer form and between DequantizeLinear and
// QuantizeLinear alike. The kernel (tightfit::slice) is a strided copy in the arena's order, so a
// channel slice of a channels-last tensor copies a run of channels from each pixel.
#include <tightfit/kernels.hpp>

#include "ops/operator.hpp"
#include "ops/emission.hpp"
#include "ops/translator.hpp"

namespace tightfit::ops {
namespace {

using namespace import;

struct Import : Translator {
  using Translator::Translator;

  // ONNX's clamping of a slice bound (steps of 1): negative counts from the end, then [0, dim].
  static std::int64_t clamp_bound(std::int64_t v, std::int64_t dim) {
    if (v < 0) v += dim;
    return std::clamp<std::int64_t>(v, 0, dim);
  }

  // Slice(data, starts, ends, axes, steps), as from opset 10 (tightfit's oldest).
  void slice(const NodeProto& n) {
    data_movement(n, ir::OpKind::Slice, [&](const ir::Tensor& x, bool, ir::Attrs& attrs) {
      const std::vector<std::int64_t> starts = constant_ints(n, 1), ends = constant_ints(n, 2);
      std::vector<std::int64_t> axes = has_input(n, 3) ? constant_ints(n, 3) : std::vector<std::int64_t>{};
      if (has_input(n, 4))
        for (std::int64_t step : constant_ints(n, 4))
          if (step != 1) throw Error(fmt::format("step {} is not supported (only steps of 1)", step));
      if (starts.size() != ends.size()) throw Error("starts and ends differ in length");
      if (axes.empty())
        for (std::size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<std::int64_t>(i));
      if (axes.size() != starts.size()) throw Error("axes and starts differ in length");
      Shape y = x.shape;
      attrs.starts.assign(x.shape.size(), 0);
      for (std::size_t i = 0; i < axes.size(); ++i) {
        const std::size_t a = static_cast<std::size_t>(normalize_axis(axes[i], x.shape.size()));
        const std::int64_t begin = clamp_bound(starts[i], x.shape[a]), end = clamp_bound(ends[i], x.shape[a]);
        if (end <= begin) throw Error(fmt::format("the slice of axis {} is empty", a));
        attrs.starts[a] = begin;
        y[a] = end - begin;
      }
      return y;
    });
  }

  // Split(input, split) along `axis`: sizes from the `split` input (opset 13+) or attribute, else
  // as many equal parts as outputs. Each output is a Slice node. (Opset 18's num_outputs is not
  // reached: tightfit takes opsets up to 17.)
  void split(const NodeProto& n) {
    allow_attributes(n, {"axis", "split"});
    const bool dequantized = value(n.input(0)).kind == Value::Kind::Dequantized;
    const ir::TensorId x = activation_input(n, 0, dequantized);
    const Shape xs = tensor(x).shape;
    const std::size_t axis = static_cast<std::size_t>(normalize_axis(int_attr(n, "axis", 0), xs.size()));
    const std::int64_t dim = xs[axis], parts = n.output_size();
    std::vector<std::int64_t> sizes = state_.opset_ >= 13
                                          ? (has_input(n, 1) ? constant_ints(n, 1) : std::vector<std::int64_t>{})
                                          : ints_attr(n, "split");
    if (sizes.empty()) {
      if (dim % parts != 0)
        throw Error(fmt::format("axis {} of {} elements does not split into {} equal parts", axis, dim, parts));
      sizes.assign(static_cast<std::size_t>(parts), dim / parts);
    }
    if (static_cast<std::int64_t>(sizes.size()) != parts)
      throw Error(fmt::format("{} split sizes for {} outputs", sizes.size(), parts));
    std::int64_t begin = 0;
    for (std::int64_t k = 0; k < parts; ++k) {
      if (sizes[k] <= 0) throw Error(fmt::format("split size {} of output {} is not positive", sizes[k], k));
      Shape y = xs;
      y[axis] = sizes[k];
      const std::string& name = n.output(static_cast<int>(k));
      if (!name.empty() &&
          (state_.consumers_.count(name) || state_.graph_outputs_.count(name))) {  // an unread part costs nothing
        const ir::TensorId out = add_like(name, x, y);
        ir::Node& node = emit(n, ir::OpKind::Slice, dequantized ? "Split (QDQ)" : "Split", {x}, out);
        node.name = fmt::format("{}:{}", node_name(n), k);
        node.attrs.starts.assign(xs.size(), 0);
        node.attrs.starts[axis] = begin;
        set_value(name, Value{dequantized ? Value::Kind::Dequantized : Value::Kind::Integer, out, nullptr});
      }
      begin += sizes[k];
    }
    if (begin != dim)
      throw Error(fmt::format("split sizes add up to {}, not the {} elements of axis {}", begin, dim, axis));
  }
};

using namespace emit;

struct Emit : Emission {
  using Emission::Emission;

  void slice(const std::string& id, const Node& n) {
    const Tensor &x = in(n, 0), &y = out(n);
    const std::size_t rank = x.shape.size();
    if (rank > 4) refuse(n, "a slice of more than 4 dimensions is not supported");
    const std::vector<std::int64_t> strides = strides_of(x.shape);
    tightfit::SliceParams p{};  // leading dims of 1 pad to 4
    for (std::int32_t& d : p.out_dims) d = 1;
    std::int64_t offset = 0;
    for (std::size_t m = 0; m < rank; ++m) {
      p.out_dims[4 - rank + m] = i32(y.shape[m]);
      p.in_strides[4 - rank + m] = i32(strides[m]);
      offset += n.attrs.starts[onnx_axis(x, m)] * strides[m];
    }
    p.offset = i32(offset);
    const std::string block = params(id, p);
    call(n,
         fmt::format("tightfit::slice<{}>({}, {}, {})", t_of(n), block, pointer(n.inputs[0]), pointer(n.outputs[0])));
  }
};

plan::OverlapDistances overlap(const ir::Graph&, const ir::Node&, std::size_t) {
  return overlap_distances(tightfit::slice_distance(), tightfit::kNoOverlap);
}

}  // namespace

extern const Operator kSlice = [] {
  Operator op{};
  op.kind = ir::OpKind::Slice;
  op.imports = {{"", "Slice", [](ImportState& s, const NodeProto& n) { Import(s).slice(n); }},
                {"", "Split", [](ImportState& s, const NodeProto& n) { Import(s).split(n); }}};
  op.emit = [](EmissionState& s, const std::string& id, const ir::Node& n) { Emit(s).slice(id, n); };
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
  op.tflite_gap = tflite_exact;
  return op;
}();

}  // namespace tightfit::ops
