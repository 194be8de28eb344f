// Concat: attrs.axis; any number of inputs of the output's dtype, each requantized to the
// output's quantization as it is copied, except the inputs written in place by their producers
// (passes/zero_copy_concat.cpp), which it skips; with all in place it has no call. Its output may
// lie over an input that dies there, from the kernel's concat_distance.
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

  // Concat of integer tensors, or of dequantized ones. An input quantized otherwise than the
  // output keeps its own parameters: the Concat requantizes it as it copies (as QLinearConcat
  // does), so no requantized copy takes memory of its own.
  void concat(const NodeProto& n) {
    allow_attributes(n, {"axis"});
    if (value(n.input(0)).kind == Value::Kind::Integer) {
      std::vector<ir::TensorId> inputs;
      for (int i = 0; i < n.input_size(); ++i) inputs.push_back(activation_input(n, i, false));
      const ir::TensorId out = concat_of(n, inputs, nullptr, n.output(0), "Concat");
      return set_value(n.output(0), Value{Value::Kind::Integer, out, nullptr});
    }
    std::vector<ir::TensorId> inputs;
    for (int i = 0; i < n.input_size(); ++i) inputs.push_back(activation_input(n, i, true));
    bool uniform = true;
    for (auto t : inputs)
      uniform = uniform && !state_.pending_[t] && tensor(t).dtype == tensor(inputs[0]).dtype &&
                same_quant(tensor(t).quant, tensor(inputs[0]).quant);
    if (uniform) {
      const ir::TensorId out = concat_of(n, inputs, nullptr, n.output(0), "Concat (QDQ)");
      return set_value(n.output(0), Value{Value::Kind::Dequantized, out, nullptr});
    }
    const Sink sink = quantized_sink(n);
    if (!sink.fused.empty()) throw Error("a Relu/Clip after a Concat of differently quantized inputs is not supported");
    const ir::TensorId out = concat_of(n, inputs, &sink.q, sink.name, "Concat (QDQ)");
    set_value(sink.name, Value{Value::Kind::Integer, out, nullptr});
  }

  // QLinearConcat(Y_scale, Y_zp, X1, X1_scale, X1_zp, X2, ...).
  void qlinear_concat(const NodeProto& n) {
    allow_attributes(n, {"axis"});
    if ((n.input_size() - 2) % 3 != 0 || n.input_size() < 5)
      throw Error("expects Y_scale, Y_zero_point and triples (X, X_scale, X_zero_point)");
    std::vector<ir::TensorId> inputs;
    for (int i = 2; i < n.input_size(); i += 3) {
      const ir::TensorId t = activation_input(n, i, false);
      bind_quant(t, read_qparams(n, i + 1, i + 2, tensor(t).dtype, -1));
      inputs.push_back(t);
    }
    const QParams yq = output_qparams(n, 0, 1, tensor(inputs[0]).dtype);
    const ir::TensorId out = concat_of(n, inputs, &yq, n.output(0), "QLinearConcat");
    set_value(n.output(0), Value{Value::Kind::Integer, out, nullptr});
  }

  // Emits the Concat writing `output_name`. With `target`, the output has that quantization and
  // each input keeps its own (only an input of another integer type is requantized first);
  // without, all inputs must share one quantization, which the output keeps.
  ir::TensorId concat_of(const NodeProto& n, std::vector<ir::TensorId> inputs, const QParams* target,
                         const std::string& output_name, const std::string& onnx_op) {
    const auto* axis_attr = find_attr(n, "axis");
    if (!axis_attr) throw Error("attribute axis is missing");
    std::vector<Shape> shapes;
    for (auto t : inputs) shapes.push_back(tensor(t).shape);
    const Shape y = import::concat(shapes, axis_attr->i());
    if (target) {
      for (auto& t : inputs) {
        if (tensor(t).dtype == target->dtype) continue;
        const std::string name = tensor(t).name + "_requantized";
        const ir::TensorId r = add_activation(name, target->dtype, tensor(t).shape, &target->quant);
        emit(n, ir::OpKind::Requantize, onnx_op + " (input requantized)", {t}, r).name = node_name(n) + "_" + name;
        t = r;
      }
    } else {
      for (auto t : inputs)
        if (tensor(t).dtype != tensor(inputs[0]).dtype || state_.pending_[t] != state_.pending_[inputs[0]] ||
            !same_quant(tensor(t).quant, tensor(inputs[0]).quant))
          throw Error(
              fmt::format("inputs '{}' and '{}' are quantized differently", tensor(inputs[0]).name, tensor(t).name));
    }
    const ir::TensorId out =
        target ? add_activation(output_name, target->dtype, y, &target->quant) : add_like(output_name, inputs[0], y);
    if (!target && state_.pending_[out]) state_.pending_sources_[out].assign(inputs.begin(), inputs.end());
    ir::Node& node = emit(n, ir::OpKind::Concat, onnx_op, inputs, out);
    node.attrs.axis = normalize_axis(axis_attr->i(), y.size());
    return out;
  }
};

// The Concat as ConcatParams sees it: with the axis fixed, each tensor is [outer][inner] in the
// arena layout.
struct Layout {
  std::int32_t outer = 1, output_inner = 0;
  std::vector<std::int32_t> input_inner;
};

Layout layout_of(const ir::Graph& g, const ir::Node& n) {
  const auto& y = g.tensors[n.outputs[0]].shape;
  const std::size_t axis = static_cast<std::size_t>(n.attrs.axis);
  std::int64_t outer = 1, after = 1;
  for (std::size_t d = 0; d < axis; ++d) outer *= y[d];
  for (std::size_t d = axis + 1; d < y.size(); ++d) after *= y[d];
  Layout layout;
  layout.outer = emit::i32(outer);
  layout.output_inner = emit::i32(y[axis] * after);
  for (const ir::TensorId x : n.inputs) layout.input_inner.push_back(emit::i32(g.tensors[x].shape[axis] * after));
  return layout;
}

// The output over an input it copies: the kernel's distance. (A Concat some of whose inputs are
// written in place has an output live before its step, which the lifetimes never pair.)
plan::OverlapDistances overlap(const ir::Graph& g, const ir::Node& n, std::size_t input) {
  const Layout layout = layout_of(g, n);
  tightfit::ConcatParams p{};
  p.num_inputs = static_cast<std::int32_t>(n.inputs.size());
  p.outer = layout.outer, p.output_inner = layout.output_inner;
  p.input_inner = layout.input_inner.data();
  return overlap_distances(tightfit::concat_distance(p, static_cast<std::int32_t>(input)), tightfit::kNoOverlap);
}

using namespace emit;

struct Emit : Emission {
  using Emission::Emission;

  void concat(const std::string& id, const Node& n) {
    const Tensor& y = out(n);
    require_per_tensor(n, y);
    const Layout layout = layout_of(state_.g_, n);
    std::vector<std::string> inputs, tables;
    std::size_t in_place = 0;  // inputs their producers wrote into the output (zero-copy Concat)
    for (std::size_t i = 0; i < n.inputs.size(); ++i) {
      const Tensor& x = in(n, i);
      require_per_tensor(n, x);
      if (state_.g_.written_in_place(n, n.inputs[i])) {
        inputs.push_back("nullptr");
        tables.push_back("nullptr");
        ++in_place;
        continue;
      }
      inputs.push_back(operand(id, n, i));
      if (x.quant.scale == y.quant.scale && x.quant.zero_point == y.quant.zero_point) {
        tables.push_back("nullptr");
        continue;
      }
      std::uint8_t table[256];
      x.dtype == DType::Int8
          ? tightfit::build_requantize_table<std::int8_t>(x.quant.scale[0], x.quant.zero_point[0], y.quant.scale[0],
                                                          y.quant.zero_point[0], table)
          : tightfit::build_requantize_table<std::uint8_t>(x.quant.scale[0], x.quant.zero_point[0], y.quant.scale[0],
                                                           y.quant.zero_point[0], table);
      tables.push_back(
          array(fmt::format("{}_table{}", id, i), "std::uint8_t", std::vector<std::uint8_t>(table, table + 256)));
    }
    if (in_place == n.inputs.size()) return;  // nothing left to copy: no call
    tightfit::ConcatParams p{};
    p.num_inputs = static_cast<std::int32_t>(n.inputs.size());
    p.outer = layout.outer, p.output_inner = layout.output_inner;
    ParamsText<tightfit::ConcatParams> fields = ParamsText<tightfit::ConcatParams>::of(p);
    fields.input_inner = array(id + "_inner", "std::int32_t", layout.input_inner);
    const std::string block = params(id, fields);
    state_.constants_ +=
        fmt::format("constexpr const std::uint8_t* {}_tables[] = {{{}}};\n", id, fmt::join(tables, ", "));
    const std::string type = ctype(y.dtype);
    call(n, fmt::format(
                "const {0}* const {1}_inputs[] = {{{2}}};\n  tightfit::concat<{0}>({1}, {1}_inputs, {1}_tables, {3})",
                type, id, fmt::join(inputs, ", "), pointer(n.outputs[0])));
  }
};

// The concat kernel, or no call when every input was written in place by its producer
// (passes/zero_copy_concat.cpp): nothing is left to copy.
std::string concat_kernel(const ir::Graph& g, const ir::Node& n) {
  const bool all_in_place =
      std::all_of(n.inputs.begin(), n.inputs.end(), [&](ir::TensorId t) { return g.written_in_place(n, t); });
  return all_in_place ? "" : ir::op_name(n.op);
}

// TFLite's int8 spec gives CONCATENATION's inputs the output's scale and zero point; TFLite
// Micro copies their bytes unchanged whatever their quantization.
std::string tflite_gap(const ir::Graph& g, const ir::Node& n) {
  for (ir::TensorId in : n.inputs)
    if (!same_scale_and_zero_point(g.tensors[in], g.tensors[n.outputs[0]]))
      return "TFLite's int8 CONCATENATION needs every input quantized as its output (TFLite Micro would copy "
             "the bytes unrequantized)";
  return {};
}

}  // namespace

extern const Operator kConcat = [] {
  Operator op{};
  op.kind = ir::OpKind::Concat;
  op.imports = {
      {"", "Concat", [](ImportState& s, const NodeProto& n) { Import(s).concat(n); }},
      {"com.microsoft", "QLinearConcat", [](ImportState& s, const NodeProto& n) { Import(s).qlinear_concat(n); }}};
  op.emit = [](EmissionState& s, const std::string& id, const ir::Node& n) { Emit(s).concat(id, n); };
  op.overlap = overlap;
  op.scratch = nullptr;
  op.shared_kernel = SharedKernel::own;
  op.layout = LayoutRule::axis_attribute;
  op.tile_window = TileWindow::channel_concat;
  op.pad_fold = PadFold::none;
  op.output_range = OutputRange::unbounded;
  op.strided_output = StridedOutput::contiguous_only;
  op.macs = no_macs;
  op.cost_key = concat_kernel;
  op.cost_work = CostWork::copies_inputs;
  op.tflite_gap = tflite_gap;
  return op;
}();

}  // namespace tightfit::ops
