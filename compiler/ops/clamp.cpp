// Clamp: a standalone Relu/Clip that could not be fused, or a Max/Min of an activation and a
// constant (tf2onnx's clamp, left float by ORT's quantizer): clamp to [act_min, act_max]. ClipFloat:
// a Clip in a float island, its bounds constants or one-element float values (tightfit::clip_float).
#include <tightfit/kernels.hpp>

#include "ops/operator.hpp"
#include "ops/emission.hpp"
#include "ops/translator.hpp"

namespace tightfit::ops {
namespace {

using namespace import;

struct Import : Translator {
  using Translator::Translator;

  // A Clip of a float island's value, or with a bound computed in one (one element each): a float
  // node, ClipFloat.
  bool float_clip(const NodeProto& n) {
    if (n.op_type() != "Clip" || state_.opset_ < 11) return false;
    bool island = false;
    for (int i = 0; i < n.input_size(); ++i)
      island = island || (has_input(n, i) && value(n.input(i)).kind == Value::Kind::Float);
    if (!island) return false;
    std::vector<ir::TensorId> inputs = {float_operand(n, 0)};
    for (int i = 1; i <= 2; ++i) {
      if (!has_input(n, i)) continue;
      inputs.push_back(float_operand(n, i));
      if (tensor(inputs.back()).elements() != 1) throw Error(fmt::format("Clip bound {} must have one element", i));
    }
    ir::Node& node = float_node(n, ir::OpKind::ClipFloat, inputs, tensor(inputs[0]).shape);
    node.attrs.act_min = has_input(n, 1) ? 1 : 0;  // which bounds the inputs after x are
    node.attrs.act_max = has_input(n, 2) ? 1 : 0;
    return true;
  }

  // A Relu of a float island's value: ClipFloat with the low bound 0 (a NaN stays NaN, as ORT's).
  bool float_relu(const NodeProto& n) {
    if (n.op_type() != "Relu" || value(n.input(0)).kind != Value::Kind::Float) return false;
    const ir::TensorId x = float_operand(n, 0);
    const ir::TensorId zero = float_constant(n.output(0) + "_zero", {1}, {0.0f});
    ir::Node& node = float_node(n, ir::OpKind::ClipFloat, {x, zero}, tensor(x).shape);
    node.attrs.act_min = 1;
    node.attrs.act_max = 0;
    return true;
  }

  // A Relu, Clip, Max or Min that no float operator absorbed, on a dequantized activation.
  void standalone_activation(const NodeProto& n) {
    if (float_clip(n) || float_relu(n)) return;
    const ir::TensorId x = activation_input(n, clamped_operand(n), true);
    const ir::Tensor& src = tensor(x);
    const std::string& y = n.output(0);
    if (const NodeProto* q = quantize_ahead(y)) {
      if (q->input(0) == y) {
        // quantize(clip(dequantize(x))) = clamp(requantize(x)): a Requantize with the clamp fused.
        state_.absorbed_[index_of(*q)] = true;
        return set_value(q->output(0), Value{Value::Kind::Integer, clamp_into(n, x, *q, q->output(0)), nullptr});
      }
      // clip(dequantize(x)) reaches a QuantizeLinear through operators that only pick and move
      // values (tf2onnx's Max before a MaxPool that ORT's quantizer left float). Quantization is
      // monotonic, so it commutes with them: clamp(requantize(x)) to the QuantizeLinear's
      // parameters here, and those operators run on it in the integer domain as they do on any
      // dequantized activation, exactly.
      return set_value(y, Value{Value::Kind::Dequantized, clamp_into(n, x, *q, y), nullptr});
    }
    // Otherwise the clamped value must itself be exactly a dequantized integer tensor: the
    // bounds must lie on the quantization grid.
    QParams xq{src.quant, src.dtype};
    const auto [lo, hi] = activation_range(n, xq);
    const auto [low, high] = clamp_bounds(n);
    for (float bound : {low, high}) {
      if (std::isinf(bound)) continue;
      const float grid = bound / src.quant.scale[0];
      if (grid != std::nearbyint(grid))
        throw Error(fmt::format("bound {} is not on the quantization grid of '{}' and no QuantizeLinear follows", bound,
                                src.name));
    }
    const ir::TensorId out = add_like(y, x, src.shape);
    ir::Node& node = emit(n, ir::OpKind::Clamp, n.op_type() + " (QDQ)", {x}, out);
    node.attrs.act_min = lo;
    node.attrs.act_max = hi;
    set_value(y, Value{Value::Kind::Dequantized, out, nullptr});
  }

  // Clamp node `n` of activation `x` in the integer domain of QuantizeLinear `q`, into a new tensor
  // `name`: a Requantize with the bounds fused, or a Clamp when the parameters are x's own.
  ir::TensorId clamp_into(const NodeProto& n, ir::TensorId x, const NodeProto& q, const std::string& name) {
    QParams yq;
    with_context(label(q), [&] { yq = output_qparams(q, 1, 2, ir::DType::UInt8); });
    const auto [lo, hi] = activation_range(n, yq);
    const ir::Tensor& src = tensor(x);
    const bool same = yq.dtype == src.dtype && same_quant(yq.quant, src.quant);
    const ir::TensorId out = add_activation(name, yq.dtype, src.shape, &yq.quant);
    ir::Node& node = emit(n, same ? ir::OpKind::Clamp : ir::OpKind::Requantize, n.op_type() + " (QDQ)", {x}, out);
    node.attrs.act_min = lo;
    node.attrs.act_max = hi;
    return out;
  }

  // The QuantizeLinear that value `name` reaches, as its only reader or through a chain of
  // single-reader MaxPool and view operators (each output order-preserving in its input's
  // values), or nullptr.
  const NodeProto* quantize_ahead(const std::string& name) const {
    std::string at = name;
    for (;;) {
      auto users = state_.consumers_.find(at);
      if (state_.graph_outputs_.count(at) || users == state_.consumers_.end() || users->second.size() != 1)
        return nullptr;
      const NodeProto& next = state_.graph_.node(users->second[0]);
      if (next.op_type() == "QuantizeLinear") return &next;
      if (!next.domain().empty() && next.domain() != "ai.onnx") return nullptr;
      static const std::set<std::string> kOrderPreserving = {"MaxPool", "Reshape",   "Flatten",
                                                             "Squeeze", "Unsqueeze", "Transpose"};
      if (!kOrderPreserving.count(next.op_type()) || next.input(0) != at || next.output_size() != 1) return nullptr;
      at = next.output(0);
    }
  }
};

using namespace emit;

struct Emit : Emission {
  using Emission::Emission;

  void clamp(const std::string& id, const Node& n) {
    const Tensor &x = in(n, 0), &y = out(n);
    if (x.quant.scale != y.quant.scale || x.quant.zero_point != y.quant.zero_point)
      refuse(n, "a standalone Relu/Clip must keep its input's quantization");
    tightfit::ClampParams p{};
    p.count = i32(x.elements()), p.min = n.attrs.act_min, p.max = n.attrs.act_max;
    const std::string block = params(id, p);
    call(n,
         fmt::format("tightfit::clamp<{}>({}, {}, {})", t_of(n), block, pointer(n.inputs[0]), pointer(n.outputs[0])));
  }
};

struct EmitFloat : Emission {
  using Emission::Emission;

  // out = min(max(x, lo), hi) (ORT's Clip: std::max then std::min), a missing bound none.
  void clip_float(const std::string& id, const Node& n) {
    require_float(n, {0});
    const std::string lo = n.attrs.act_min != 0 ? operand(id, n, 1) : "nullptr";
    const std::string hi = n.attrs.act_max != 0 ? operand(id, n, n.attrs.act_min != 0 ? 2 : 1) : "nullptr";
    call(n, fmt::format("tightfit::clip_float({}, {}, {}, {}, {})", out(n).elements(), pointer(n.inputs[0]), lo, hi,
                        pointer(n.outputs[0])));
  }
};

plan::OverlapDistances overlap(const ir::Graph&, const ir::Node&, std::size_t) {
  return overlap_distances(tightfit::clamp_distance(), tightfit::kNoOverlap);
}

}  // namespace

extern const Operator kClamp = [] {
  Operator op{};
  op.kind = ir::OpKind::Clamp;
  op.imports = {{"", "Relu", [](ImportState& s, const NodeProto& n) { Import(s).standalone_activation(n); }},
                {"", "Clip", [](ImportState& s, const NodeProto& n) { Import(s).standalone_activation(n); }},
                {"", "Max", [](ImportState& s, const NodeProto& n) { Import(s).standalone_activation(n); }},
                {"", "Min", [](ImportState& s, const NodeProto& n) { Import(s).standalone_activation(n); }}};
  op.emit = [](EmissionState& s, const std::string& id, const ir::Node& n) { Emit(s).clamp(id, n); };
  op.overlap = overlap;
  op.scratch = nullptr;
  op.shared_kernel = SharedKernel::own;
  op.layout = LayoutRule::as_it_comes;
  op.tile_window = TileWindow::elementwise;
  op.pad_fold = PadFold::none;
  op.output_range = OutputRange::clamped_to_act_range;
  op.strided_output = StridedOutput::contiguous_only;
  op.macs = no_macs;
  op.cost_key = named_for_operator;
  op.cost_work = CostWork::whole_tensors;
  op.tflite_gap = tflite_exact;
  return op;
}();

extern const Operator kClipFloat = [] {
  Operator op{};
  op.kind = ir::OpKind::ClipFloat;
  op.imports = {};
  op.emit = [](EmissionState& s, const std::string& id, const ir::Node& n) { EmitFloat(s).clip_float(id, n); };
  op.overlap = [](const ir::Graph&, const ir::Node&, std::size_t input) {
    return input == 0 ? overlap_distances(0, tightfit::kNoOverlap) : plan::OverlapDistances{};
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
