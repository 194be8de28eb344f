// The translator's toolkit: what the import rule of an operator (compiler/ops/<name>.cpp) works
// with. onnx_import.cpp (the Importer) walks the ONNX nodes and hands each to the rule of its
// operator (ops/operator.hpp), which reads inputs and attributes and adds IR tensors and nodes
// through a Translator. Every Translator of one import shares one ImportState.
//
// Errors: a rule throws tightfit::Error with a bare reason; the Importer prefixes the file and
// the node.
#pragma once

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "error.hpp"
#include "ops/shape_rules.hpp"
#include "ops/tensor_data.hpp"
#include "ir/ir.hpp"

namespace tightfit::import {

using onnx::NodeProto;
using onnx::TensorProto;

// What an ONNX value name stands for during translation.
struct Value {
  enum class Kind {
    Integer,      // an integer IR tensor
    Dequantized,  // exactly DequantizeLinear(tensor): a float value that folds into its consumer
    FloatInput,   // a float graph input (IR tensor of dtype float32) waiting for a QuantizeLinear
    Constant,     // an initializer or Constant output not (yet) placed in the IR
    Float,        // a float32 IR activation computed by a float island (docs/operators.md)
  };
  Kind kind = Kind::Constant;
  ir::TensorId tensor = ir::kNoTensor;
  const TensorProto* constant = nullptr;
};

// Quantization parameters read from a node's scale and zero-point inputs.
struct QParams {
  ir::Quant quant;
  ir::DType dtype = ir::DType::UInt8;  // the zero point's type: the quantized tensor's dtype
};

// Where the integer result of a folded float operator goes (see quantized_sink).
struct Sink {
  std::string name;  // the QuantizeLinear's output
  QParams q;
  std::int32_t act_min = 0, act_max = 0;
  std::string fused;  // "+Relu", "+Clip" or ""
};

// An Error whose line already names the file and node: passed through outer contexts unchanged.
struct Located : Error {
  using Error::Error;
};

using Range = ir::DTypeRange;
using ir::dtype_range;

inline bool same_quant(const ir::Quant& a, const ir::Quant& b) {
  return a.axis == b.axis && a.scale == b.scale && a.zero_point == b.zero_point;
}

inline std::string quant_text(const ir::Quant& q) {
  if (q.scale.size() == 1) return fmt::format("scale {} zero point {}", q.scale[0], q.zero_point[0]);
  return fmt::format("{} per-channel scales", q.scale.size());
}

// The state of one import, shared by every Translator working on it.
struct ImportState {
  ImportState(std::string path, const onnx::ModelProto& model) : path_(std::move(path)), graph_(model.graph()) {
    for (const auto& opset : model.opset_import())
      if (opset.domain().empty() || opset.domain() == "ai.onnx") opset_ = static_cast<int>(opset.version());
  }

  std::string path_;
  const onnx::GraphProto& graph_;
  int opset_ = 0;
  ir::Graph out_;
  std::vector<bool> pending_;  // per IR tensor: integer tensor whose quantization no one stated yet
  std::vector<std::vector<ir::TensorId>> pending_sources_;  // per IR tensor: pending tensors it copies
  std::map<std::string, Value> values_;
  std::map<std::string, const onnx::ValueInfoProto*> declared_;
  std::map<std::string, std::vector<int>> consumers_;  // value name -> indices of nodes reading it
  std::map<const NodeProto*, int> index_;              // node -> its index (protobuf nodes are not contiguous)
  std::set<std::string> graph_outputs_;
  std::vector<bool> absorbed_;                     // nodes folded into an earlier one
  std::deque<TensorProto> constant_nodes_;         // the tensors of Constant nodes (stable addresses)
  std::map<ir::TensorId, ir::TensorId> float_of_;  // integer activation -> its float32 Dequantize in an island
  // Values that are views (Flatten, Reshape, Squeeze, Unsqueeze) of a float graph input, by name:
  // the shape the view gives the input's bytes, in the same order.
  std::map<std::string, Shape> float_input_views_;
  // Translates one node as the Importer does (set by it), naming it in errors: the If rule
  // (ops/if_result.cpp) translates the nodes of a branch with it.
  std::function<void(const NodeProto&)> translate_node;
  bool in_branch_ = false;  // a branch of a data-dependent If is being translated
};

class Translator {
 public:
  explicit Translator(ImportState& s) : state_(s) {}

  // ----- errors -------------------------------------------------------------------------------

  // Runs `work`; a bare reason thrown inside gets the file and the context (node label) prefixed.
  template <typename F>
  void with_context(const std::string& context, F&& work) {
    try {
      work();
    } catch (const Located&) {
      throw;
    } catch (const Error& e) {
      if (context.empty()) throw Located(fmt::format("{}: {}", state_.path_, e.what()));
      throw Located(fmt::format("{}: {}: {}", state_.path_, context, e.what()));
    }
  }

  std::string node_name(const NodeProto& n) const {
    return n.name().empty() ? fmt::format("{}_{}", n.op_type(), index_of(n)) : n.name();
  }
  std::string label(const NodeProto& n) const { return fmt::format("{} ({})", node_name(n), n.op_type()); }
  int index_of(const NodeProto& n) const { return state_.index_.at(&n); }

  // ----- values and tensors -------------------------------------------------------------------

  const Value& value(const std::string& name) const {
    auto it = state_.values_.find(name);
    if (it == state_.values_.end())
      throw Error(fmt::format("input '{}' has no value (it is not supported here)", name));
    return it->second;
  }

  void set_value(const std::string& name, Value v) { state_.values_[name] = v; }

  // The shape of value `name`, a float graph input, as its reader sees it: under the views taken of it.
  const Shape& float_input_shape(const std::string& name, const Value& v) const {
    auto view = state_.float_input_views_.find(name);
    return view != state_.float_input_views_.end() ? view->second : state_.out_.tensors[v.tensor].shape;
  }

  ir::TensorId add_tensor(ir::Tensor t, bool quant_pending = false) {
    state_.out_.tensors.push_back(std::move(t));
    state_.pending_.push_back(quant_pending);
    state_.pending_sources_.emplace_back();
    return static_cast<ir::TensorId>(state_.out_.tensors.size() - 1);
  }

  ir::Tensor& tensor(ir::TensorId id) { return state_.out_.tensors[id]; }

  // An activation produced by a node. Its shape is checked against what the model declares.
  ir::TensorId add_activation(const std::string& name, ir::DType dtype, const Shape& shape, const ir::Quant* quant) {
    check_declared_shape(name, shape);
    checked_elements(shape, name);
    ir::Tensor t;
    t.name = name;
    t.dtype = dtype;
    t.shape = shape;
    t.quantized = quant != nullptr;
    if (quant) t.quant = *quant;
    return add_tensor(std::move(t), quant == nullptr && dtype != ir::DType::Float32 && dtype != ir::DType::Bool);
  }

  // An integer activation with the same dtype and quantization (or pending state) as `like`.
  ir::TensorId add_like(const std::string& name, ir::TensorId like, const Shape& shape) {
    const ir::Tensor& src = tensor(like);
    const bool pending = state_.pending_[like];
    const ir::Quant quant = src.quant;
    const ir::TensorId id = add_activation(name, src.dtype, shape, pending ? nullptr : &quant);
    if (pending) state_.pending_sources_[id].push_back(like);
    return id;
  }

  void check_declared_shape(const std::string& name, const Shape& shape) const {
    auto it = state_.declared_.find(name);
    if (it == state_.declared_.end() || !it->second->type().has_tensor_type()) return;
    const auto& tt = it->second->type().tensor_type();
    if (!tt.has_shape()) return;
    Shape declared;
    for (const auto& d : tt.shape().dim()) {
      if (!d.has_dim_value()) return;  // symbolic: nothing static to compare against
      declared.push_back(d.dim_value());
    }
    if (declared != shape)
      throw Error(fmt::format("output '{}' has shape {} but the model declares {}", name, shape_text(shape),
                              shape_text(declared)));
  }

  // The IR tensor behind input `index` of a node: an integer activation, or with `dequantized`
  // the activation a DequantizeLinear output stands for. Anything else is refused with the reason.
  ir::TensorId activation_input(const NodeProto& n, int index, bool dequantized) const {
    if (index >= n.input_size() || n.input(index).empty()) throw Error(fmt::format("input {} is missing", index));
    const std::string& name = n.input(index);
    const Value& v = value(name);
    const auto want = dequantized ? Value::Kind::Dequantized : Value::Kind::Integer;
    if (v.kind == want && !state_.out_.tensors[v.tensor].is_constant) return v.tensor;
    switch (v.kind) {
      case Value::Kind::FloatInput:
        throw Error(fmt::format("not quantized: input '{}' is a float graph input used without QuantizeLinear", name));
      case Value::Kind::Constant:
        if (dequantized)
          throw Error(
              fmt::format("not quantized: input '{}' is a float constant, not the output of a DequantizeLinear", name));
        throw Error(fmt::format("input '{}' must be an activation, not a constant", name));
      case Value::Kind::Integer:
        throw Error(fmt::format(
            "input '{}' is an integer tensor where a float operator expects a DequantizeLinear output", name));
      case Value::Kind::Dequantized:
        if (state_.out_.tensors[v.tensor].is_constant)
          throw Error(fmt::format("input '{}' must be an activation, not a constant", name));
        throw Error(fmt::format("input '{}' is a float (dequantized) value where an integer tensor is expected", name));
      case Value::Kind::Float:
        throw Error(
            fmt::format("input '{}' is a float32 value of a float island, which this operator does not take "
                        "(it has no float kernel; see docs/operators.md)",
                        name));
    }
    throw Error(fmt::format("input '{}' is not supported here", name));
  }

  const TensorProto& constant_input(const NodeProto& n, int index) const {
    if (index >= n.input_size() || n.input(index).empty()) throw Error(fmt::format("input {} is missing", index));
    return constant(n.input(index));
  }

  static ir::DType dtype_or_uint8(const TensorProto& t) {
    const auto dtype = to_dtype(t.data_type());
    return dtype ? *dtype : ir::DType::UInt8;
  }

  bool has_input(const NodeProto& n, int index) const { return index < n.input_size() && !n.input(index).empty(); }

  // A constant placed in the IR as an integer tensor with its quantization.
  ir::TensorId add_constant(const TensorProto& c, const QParams& q) {
    const auto dtype = to_dtype(c.data_type());
    if (!dtype || *dtype == ir::DType::Float32)
      throw Error(fmt::format("tensor '{}': dtype {} is not supported for quantized constants", c.name(),
                              onnx_type_name(c.data_type())));
    if (*dtype != q.dtype)
      throw Error(fmt::format("tensor '{}' is {} but its zero point is {}", c.name(), ir::dtype_name(*dtype),
                              ir::dtype_name(q.dtype)));
    const std::vector<std::int64_t> values = tensor_ints(c);
    ir::Tensor t;
    t.name = c.name();
    t.dtype = *dtype;
    t.shape = tensor_dims(c);
    t.quantized = true;
    t.quant = q.quant;
    t.is_constant = true;
    check_quant_fits(t.name, t.shape, q.quant);
    const std::size_t size = ir::dtype_size(*dtype);
    t.data.resize(values.size() * size);
    for (std::size_t i = 0; i < values.size(); ++i) {
      const auto v = static_cast<std::int32_t>(values[i]);
      std::memcpy(t.data.data() + i * size, &v, size);  // little-endian: the low bytes first
    }
    return add_tensor(std::move(t));
  }

  void check_quant_fits(const std::string& name, const Shape& shape, const ir::Quant& q) const {
    if (!q.per_channel()) return;
    if (q.axis >= static_cast<int>(shape.size()))
      throw Error(fmt::format("tensor '{}': quantization axis {} is out of range for shape {}", name, q.axis,
                              shape_text(shape)));
    if (static_cast<std::int64_t>(q.scale.size()) != shape[q.axis])
      throw Error(fmt::format("tensor '{}': {} per-channel scales for {} channels on axis {}", name, q.scale.size(),
                              shape[q.axis], q.axis));
  }

  // Binds an integer activation to the quantization a consumer states for it: the first statement
  // fixes a pending tensor (an integer graph input); later ones must agree.
  void bind_quant(ir::TensorId id, const QParams& q) {
    ir::Tensor& t = tensor(id);
    if (q.quant.per_channel())
      throw Error(fmt::format("per-channel quantization of activation '{}' is not supported (only of constant weights)",
                              t.name));
    if (t.dtype != q.dtype)
      throw Error(fmt::format("tensor '{}' is {} but its zero point is {}", t.name, ir::dtype_name(t.dtype),
                              ir::dtype_name(q.dtype)));
    if (state_.pending_[id]) {
      t.quant = q.quant;
      t.quantized = true;
      state_.pending_[id] = false;
      // A copy made by data movement from a pending tensor (an integer graph input): the
      // quantization stated for the copy is the source's too.
      for (ir::TensorId source : state_.pending_sources_[id]) bind_quant(source, q);
      return;
    }
    if (!same_quant(t.quant, q.quant))
      throw Error(fmt::format("tensor '{}' is quantized with {} by its producer but read with {}", t.name,
                              quant_text(t.quant), quant_text(q.quant)));
  }

  // ----- attributes ---------------------------------------------------------------------------

  static const onnx::AttributeProto* find_attr(const NodeProto& n, const std::string& name) {
    for (const auto& a : n.attribute())
      if (a.name() == name) return &a;
    return nullptr;
  }
  static std::int64_t int_attr(const NodeProto& n, const std::string& name, std::int64_t fallback) {
    const auto* a = find_attr(n, name);
    return a ? a->i() : fallback;
  }
  static float float_attr(const NodeProto& n, const std::string& name, float fallback) {
    const auto* a = find_attr(n, name);
    return a ? a->f() : fallback;
  }
  static std::string string_attr(const NodeProto& n, const std::string& name, const std::string& fallback) {
    const auto* a = find_attr(n, name);
    return a ? a->s() : fallback;
  }
  static std::vector<std::int64_t> ints_attr(const NodeProto& n, const std::string& name) {
    const auto* a = find_attr(n, name);
    return a ? std::vector<std::int64_t>(a->ints().begin(), a->ints().end()) : std::vector<std::int64_t>{};
  }

  // Refuses attributes outside `known`: the com.microsoft operators are not checked by ONNX's
  // checker, and silently ignoring an attribute could change the result.
  static void allow_attributes(const NodeProto& n, std::initializer_list<const char*> known) {
    for (const auto& a : n.attribute()) {
      bool found = false;
      for (const char* k : known) found = found || a.name() == k;
      if (!found) throw Error(fmt::format("unsupported attribute '{}'", a.name()));
    }
  }

  // ----- quantization parameters ---------------------------------------------------------------

  // Reads the scale (input `scale_index`) and zero point (`zp_index`, optional) of a node.
  // A scale with more than one element is per-channel along `axis`.
  QParams read_qparams(const NodeProto& n, int scale_index, int zp_index, ir::DType default_dtype, int axis) const {
    const TensorProto& s = constant_input(n, scale_index);
    const std::vector<float> scales = tensor_floats(s);
    if (scales.empty()) throw Error(fmt::format("scale '{}' is empty", s.name()));
    QParams q;
    q.dtype = default_dtype;
    std::vector<std::int64_t> zps(scales.size(), 0);
    if (has_input(n, zp_index)) {
      const TensorProto& z = constant_input(n, zp_index);
      const auto dtype = to_dtype(z.data_type());
      if (!dtype || *dtype == ir::DType::Float32)
        throw Error(
            fmt::format("zero point '{}' has the unsupported dtype {}", z.name(), onnx_type_name(z.data_type())));
      q.dtype = *dtype;
      zps = tensor_ints(z);
      if (zps.size() != scales.size())
        throw Error(fmt::format("zero point '{}' has {} elements but scale '{}' has {}", z.name(), zps.size(), s.name(),
                                scales.size()));
    }
    const Range range = dtype_range(q.dtype);
    for (std::size_t c = 0; c < scales.size(); ++c) {
      if (!std::isfinite(scales[c]) || !(scales[c] > 0))
        throw Error(fmt::format("scale '{}' has the value {} (must be positive and finite)", s.name(), scales[c]));
      if (zps[c] < range.min || zps[c] > range.max)
        throw Error(fmt::format("zero point {} is outside {}", zps[c], ir::dtype_name(q.dtype)));
      if (q.dtype == ir::DType::Int32 && zps[c] != 0) throw Error("an int32 zero point must be 0");
      q.quant.scale.push_back(scales[c]);
      q.quant.zero_point.push_back(static_cast<std::int32_t>(zps[c]));
    }
    q.quant.axis = scales.size() > 1 ? axis : -1;
    if (scales.size() > 1 && axis == -1)
      throw Error(fmt::format("scale '{}' is per-channel, which is supported only for constant weights", s.name()));
    if (scales.size() > 1 && axis < 0) throw Error(fmt::format("per-channel scale '{}' has no valid axis", s.name()));
    return q;
  }

  // The Quantize/DequantizeLinear axis (opset 13+) made non-negative for a tensor of `rank`,
  // or kNoAxis when it is out of range (an error only if the scales are per-channel).
  static constexpr int kNoAxis = -2;
  int linear_axis(const NodeProto& n, std::size_t rank) const {
    const std::int64_t axis = int_attr(n, "axis", 1), r = static_cast<std::int64_t>(rank);
    if (axis < -r || axis >= r) return kNoAxis;
    return static_cast<int>(axis < 0 ? axis + r : axis);
  }

  // quantize(x) = saturate(round_half_even(x / scale) + zero_point), as QuantizeLinear does.
  static std::int64_t quantize_value(float x, const QParams& q) {
    const Range r = dtype_range(q.dtype);
    const double v = std::nearbyint(static_cast<double>(x / q.quant.scale[0])) + q.quant.zero_point[0];
    return static_cast<std::int64_t>(std::min<double>(r.max, std::max<double>(r.min, v)));
  }

  // The bounds [lo, hi] a clamping node applies to its activation: Relu [0, inf]; Clip its
  // attributes (before opset 11) or constant inputs; Max or Min of the activation and a one-element
  // float constant (tf2onnx writes a clamp as Max(x, -0.4)) [c, inf] or [-inf, c].
  std::pair<float, float> clamp_bounds(const NodeProto& act) const {
    const float inf = std::numeric_limits<float>::infinity();
    const std::string& op = act.op_type();
    float lo = -inf, hi = inf;
    if (op == "Relu") {
      lo = 0.0f;
    } else if (op == "Max" || op == "Min") {
      const float c = scalar_float(constant_input(act, clamped_operand(act) == 0 ? 1 : 0));
      (op == "Max" ? lo : hi) = c;
    } else if (state_.opset_ < 11) {
      lo = float_attr(act, "min", lo);
      hi = float_attr(act, "max", hi);
    } else {
      if (has_input(act, 1)) lo = scalar_float(constant_input(act, 1));
      if (has_input(act, 2)) hi = scalar_float(constant_input(act, 2));
    }
    if (std::isnan(lo) || std::isnan(hi) || lo > hi)
      throw Error(fmt::format("{} has the bounds [{}, {}]", label(act), lo, hi));
    return {lo, hi};
  }

  // The input of a clamping node that is the activation: 0, or for Max/Min of two inputs the one
  // that is not a float constant.
  int clamped_operand(const NodeProto& act) const {
    if (act.op_type() != "Max" && act.op_type() != "Min") return 0;
    if (act.input_size() != 2)
      throw Error(fmt::format("{} of {} inputs: only Max/Min of an activation and a one-element constant is supported",
                              act.op_type(), act.input_size()));
    auto is_float_constant = [&](int i) {
      const Value& v = value(act.input(i));
      return v.kind == Value::Kind::Constant && v.constant->data_type() == TensorProto::FLOAT;
    };
    if (is_float_constant(1)) return 0;
    if (is_float_constant(0)) return 1;
    throw Error(
        fmt::format("only {} of an activation and a one-element float constant is supported (a clamp)", act.op_type()));
  }

  // The clamp a Relu, Clip, or Max/Min with a constant applies, in the integer domain of `q`.
  // Exact because quantization is monotonic: quantize(clip(x, a, b)) = clamp(quantize(x),
  // quantize(a), quantize(b)).
  std::pair<std::int32_t, std::int32_t> activation_range(const NodeProto& act, const QParams& q) const {
    const Range r = dtype_range(q.dtype);
    const auto [lo, hi] = clamp_bounds(act);
    const std::int64_t qmin = std::isinf(lo) ? r.min : quantize_value(lo, q);
    const std::int64_t qmax = std::isinf(hi) ? r.max : quantize_value(hi, q);
    return {static_cast<std::int32_t>(qmin), static_cast<std::int32_t>(qmax)};
  }

  static float scalar_float(const TensorProto& t) {
    const auto v = tensor_floats(t);
    if (v.size() != 1) throw Error(fmt::format("tensor '{}' must hold one value", t.name()));
    return v[0];
  }

  static std::int32_t limit_min(ir::DType t) { return static_cast<std::int32_t>(dtype_range(t).min); }
  static std::int32_t limit_max(ir::DType t) { return static_cast<std::int32_t>(dtype_range(t).max); }

  // ----- the QDQ fold -------------------------------------------------------------------------

  // The QuantizeLinear (optionally after one Relu/Clip) that receives a float operator's output.
  // Absorbs them; refuses when the output is used any other way, since the integer operator's
  // output quantization would then be unknown.
  // The QuantizeLinear that receives `n`'s output (through at most one Relu/Clip, set in `act`),
  // or nullptr when the output is used any other way.
  const NodeProto* sink_quantize(const NodeProto& n, const NodeProto*& act) const {
    auto single_user = [&](const std::string& name) -> const NodeProto* {
      if (state_.graph_outputs_.count(name)) return nullptr;
      auto it = state_.consumers_.find(name);
      if (it == state_.consumers_.end() || it->second.size() != 1) return nullptr;
      return &state_.graph_.node(it->second[0]);
    };
    const NodeProto* next = single_user(n.output(0));
    act = nullptr;
    if (next && (next->op_type() == "Relu" || next->op_type() == "Clip") && next->domain().empty()) {
      act = next;
      next = single_user(act->output(0));
    }
    return next && next->op_type() == "QuantizeLinear" ? next : nullptr;
  }

  Sink quantized_sink(const NodeProto& n) {
    const std::string& y = n.output(0);
    const NodeProto* act = nullptr;
    const NodeProto* next = sink_quantize(n, act);
    if (!next)
      throw Error(
          fmt::format("its float output '{}' does not go to exactly one QuantizeLinear, so it cannot be "
                      "folded into an integer operator exactly",
                      act ? act->output(0) : y));
    Sink sink;
    sink.name = next->output(0);
    with_context(label(*next), [&] {
      sink.q = read_qparams(*next, 1, 2, ir::DType::UInt8, -1);
      if (sink.q.quant.per_channel()) throw Error("per-channel quantization of an activation is not supported");
      if (sink.q.dtype == ir::DType::Int32) throw Error("quantizing to int32 is not supported");
    });
    sink.act_min = limit_min(sink.q.dtype);
    sink.act_max = limit_max(sink.q.dtype);
    if (act) {
      with_context(label(*act), [&] { std::tie(sink.act_min, sink.act_max) = activation_range(*act, sink.q); });
      sink.fused = "+" + act->op_type();
      state_.absorbed_[index_of(*act)] = true;
    }
    state_.absorbed_[index_of(*next)] = true;
    return sink;
  }

  ir::Node& emit(const NodeProto& n, ir::OpKind op, std::string onnx_op, std::vector<ir::TensorId> inputs,
                 ir::TensorId output) {
    ir::Node node;
    node.name = node_name(n);
    node.onnx_op = std::move(onnx_op);
    node.op = op;
    node.inputs = std::move(inputs);
    node.outputs = {output};
    node.attrs.act_min = limit_min(tensor(output).dtype);
    node.attrs.act_max = limit_max(tensor(output).dtype);
    state_.out_.nodes.push_back(std::move(node));
    return state_.out_.nodes.back();
  }

  // Emits `op` writing the sink's tensor, with the fused activation.
  ir::Node& emit_to_sink(const NodeProto& n, ir::OpKind op, std::vector<ir::TensorId> inputs, const Shape& shape,
                         const Sink& sink) {
    const ir::TensorId y = add_activation(sink.name, sink.q.dtype, shape, &sink.q.quant);
    set_value(sink.name, Value{Value::Kind::Integer, y, nullptr});
    ir::Node& node = emit(n, op, n.op_type() + sink.fused + " (QDQ)", std::move(inputs), y);
    node.attrs.act_min = sink.act_min;
    node.attrs.act_max = sink.act_max;
    return node;
  }

  // True when `name` is a graph output that no node reads.
  bool only_graph_output(const std::string& name) const {
    return state_.graph_outputs_.count(name) && !state_.consumers_.count(name);
  }

  const TensorProto& constant(const std::string& name) const {
    const Value& v = value(name);
    if (v.kind == Value::Kind::Constant) return *v.constant;
    if (v.tensor != ir::kNoTensor && std::count(state_.out_.inputs.begin(), state_.out_.inputs.end(), v.tensor))
      throw Error(
          fmt::format("input '{}' is a graph input; tightfit needs it to be a constant (an initializer)", name));
    throw Error(fmt::format("input '{}' must be a constant (an initializer or Constant)", name));
  }

  // A constant that a DequantizeLinear placed in the IR.
  ir::TensorId dequantized_constant(const NodeProto& n, int index, const char* what) const {
    if (!has_input(n, index)) throw Error(fmt::format("{} is missing", what));
    const Value& v = value(n.input(index));
    if (v.kind == Value::Kind::Dequantized && state_.out_.tensors[v.tensor].is_constant) return v.tensor;
    if (v.kind == Value::Kind::Constant)
      throw Error(fmt::format("not quantized: {} '{}' is a float constant, not the output of a DequantizeLinear", what,
                              n.input(index)));
    throw Error(
        fmt::format("{} '{}' must be a constant (a dequantized initializer); activations are not supported there", what,
                    n.input(index)));
  }

  std::vector<std::int64_t> constant_ints(const NodeProto& n, int index) const {
    return tensor_ints(constant_input(n, index));
  }
  std::vector<float> constant_floats(const NodeProto& n, int index) const {
    return tensor_floats(constant_input(n, index));
  }

  // The bias scale must be x_scale * w_scale (per channel) for the integer accumulator to add it
  // directly; a relative difference of a few float roundings is the same number computed twice.
  void check_bias_scale(const ir::Tensor& bias, const ir::Quant& x, const ir::Quant& w) const {
    const std::size_t count = static_cast<std::size_t>(bias.elements());
    for (std::size_t c = 0; c < count; ++c) {
      const float ws = w.scale[w.per_channel() ? c : 0];
      const float expected = x.scale[0] * ws;
      const float actual = bias.quant.scale[bias.quant.per_channel() ? c : 0];
      const std::int32_t zp = bias.quant.zero_point[bias.quant.per_channel() ? c : 0];
      if (zp != 0 || std::fabs(actual - expected) > 1e-5f * expected)
        throw Error(
            fmt::format("bias '{}' has scale {} and zero point {}, not x_scale*w_scale = {} and 0, so it cannot be "
                        "added to the integer accumulator exactly",
                        bias.name, actual, zp, expected));
    }
  }

  // The optional bias (input 2) of a QDQ convolution of x by w into `channels` outputs, appended
  // to `inputs`: a dequantized int32 constant, one value per channel, at scale x_scale * w_scale.
  void add_qdq_bias(const NodeProto& n, ir::TensorId x, ir::TensorId w, std::int64_t channels,
                    std::vector<ir::TensorId>& inputs) {
    if (!has_input(n, 2)) return;
    const ir::TensorId b = dequantized_constant(n, 2, "bias");
    check_bias(tensor(b), channels);
    check_bias_scale(tensor(b), tensor(x).quant, tensor(w).quant);
    inputs.push_back(b);
  }

  void check_bias(const ir::Tensor& bias, std::int64_t channels) const {
    if (bias.dtype != ir::DType::Int32)
      throw Error(fmt::format("bias '{}' is {}, not int32", bias.name, ir::dtype_name(bias.dtype)));
    if (bias.elements() != channels)
      throw Error(
          fmt::format("bias '{}' has {} elements for {} output channels", bias.name, bias.elements(), channels));
  }

  static void keep_activation(ir::Attrs& target, const ir::Attrs& source) {
    const std::int32_t lo = target.act_min, hi = target.act_max;
    target = source;
    target.act_min = lo;
    target.act_max = hi;
  }

  // Weights are int8/uint8, quantized per tensor or per output channel (`channel_axis`).
  void check_weight(const ir::Tensor& w, int channel_axis) const {
    if (w.dtype != ir::DType::Int8 && w.dtype != ir::DType::UInt8)
      throw Error(fmt::format("weight '{}' is {}, not int8 or uint8", w.name, ir::dtype_name(w.dtype)));
    if (w.quant.per_channel() && w.quant.axis != channel_axis)
      throw Error(fmt::format("weight '{}' is quantized per channel along axis {}, not the output-channel axis {}",
                              w.name, w.quant.axis, channel_axis));
  }

  // Zero points of ConvInteger/MatMulInteger (scale 1): per tensor or per `axis` of the weight.
  QParams unit_scale_params(const NodeProto& n, int zp_index, const TensorProto& w, int axis) const {
    QParams q;
    q.dtype = dtype_or_uint8(w);
    std::vector<std::int64_t> zps = {0};
    if (has_input(n, zp_index)) zps = constant_ints(n, zp_index);
    for (auto z : zps) {
      q.quant.scale.push_back(1.0f);
      q.quant.zero_point.push_back(static_cast<std::int32_t>(z));
    }
    q.quant.axis = zps.size() > 1 ? axis : -1;
    return q;
  }

  // The activation's zero point stated by ConvInteger/MatMulInteger: fixes a pending tensor
  // (scale 1), or must equal the zero point its producer gave it.
  void bind_zero_point(const NodeProto& n, ir::TensorId x, int zp_index) {
    std::vector<std::int64_t> zps = {0};
    if (has_input(n, zp_index)) zps = constant_ints(n, zp_index);
    if (zps.size() != 1) throw Error("a per-row activation zero point is not supported");
    ir::Tensor& t = tensor(x);
    if (state_.pending_[x]) {
      QParams q;
      q.dtype = t.dtype;
      q.quant = ir::Quant{{1.0f}, {static_cast<std::int32_t>(zps[0])}, -1};
      const Range r = dtype_range(t.dtype);
      if (zps[0] < r.min || zps[0] > r.max)
        throw Error(fmt::format("zero point {} is outside {}", zps[0], ir::dtype_name(t.dtype)));
      return bind_quant(x, q);
    }
    if (t.quant.zero_point[0] != zps[0])
      throw Error(
          fmt::format("zero point {} differs from the zero point {} of '{}'", zps[0], t.quant.zero_point[0], t.name));
  }

  // ----- elementwise, pools, activations ------------------------------------------------------

  // An operand of Add/Mul: a dequantized activation or a per-tensor dequantized constant.
  ir::TensorId elementwise_operand(const NodeProto& n, int index) const {
    const Value& v = value(n.input(index));
    if (v.kind == Value::Kind::Dequantized) {
      if (state_.out_.tensors[v.tensor].quant.per_channel())
        throw Error(fmt::format("constant '{}' is quantized per channel; elementwise operands must be per-tensor",
                                n.input(index)));
      return v.tensor;
    }
    return activation_input(n, index, true);  // throws the right "not quantized" message
  }

  void qdq_binary(const NodeProto& n, ir::OpKind kind) {
    const ir::TensorId a = elementwise_operand(n, 0), b = elementwise_operand(n, 1);
    const Shape y = broadcast(tensor(a).shape, tensor(b).shape);
    const Sink sink = quantized_sink(n);
    emit_to_sink(n, kind, {a, b}, y, sink);
  }

  // QLinearAdd/QLinearMul(A, A_scale, A_zp, B, B_scale, B_zp, C_scale, C_zp).
  void qlinear_binary(const NodeProto& n, ir::OpKind kind) {
    allow_attributes(n, {});
    std::vector<ir::TensorId> operands;
    for (int base : {0, 3}) {
      const Value& v = value(n.input(base));
      if (v.kind == Value::Kind::Constant) {
        const QParams q = read_qparams(n, base + 1, base + 2, dtype_or_uint8(constant(n.input(base))), -1);
        if (q.quant.per_channel()) throw Error("per-channel quantization of an elementwise operand is not supported");
        operands.push_back(add_constant(constant(n.input(base)), q));
        continue;
      }
      const ir::TensorId t = activation_input(n, base, false);
      bind_quant(t, read_qparams(n, base + 1, base + 2, tensor(t).dtype, -1));
      operands.push_back(t);
    }
    const QParams yq = output_qparams(n, 6, 7, tensor(operands[0]).dtype);
    const Shape y = broadcast(tensor(operands[0]).shape, tensor(operands[1]).shape);
    const ir::TensorId out = add_activation(n.output(0), yq.dtype, y, &yq.quant);
    emit(n, kind, n.op_type(), operands, out);
    set_value(n.output(0), Value{Value::Kind::Integer, out, nullptr});
  }

  QParams output_qparams(const NodeProto& n, int scale_index, int zp_index, ir::DType default_dtype) const {
    const QParams q = read_qparams(n, scale_index, zp_index, default_dtype, -1);
    if (q.quant.per_channel()) throw Error("per-channel output quantization is not supported");
    if (q.dtype == ir::DType::Int32) throw Error("an int32 output is not supported");
    return q;
  }

  // A window's attributes (its shape resolved by window_output()), as the IR keeps them.
  static void set_window(ir::Attrs& a, const Window& win) {
    a.kernel_shape = win.kernel;
    a.strides = win.strides;
    a.dilations = win.dilations;
    a.pads = win.pads;
    a.ceil_mode = win.ceil_mode;
  }

  // Pool attributes and output shape (AveragePool, MaxPool and their QLinear forms).
  ir::Attrs pool_attrs(const NodeProto& n, const Shape& x, Shape& y) const {
    ir::Attrs a;
    Window win{ints_attr(n, "kernel_shape"), ints_attr(n, "strides"), ints_attr(n, "dilations"), ints_attr(n, "pads"),
               int_attr(n, "ceil_mode", 0) != 0};
    if (win.kernel.empty()) throw Error("attribute kernel_shape is missing");
    const Shape spatial = window_output(x, win, string_attr(n, "auto_pad", "NOTSET"));
    y = {x[0], x[1], spatial[0], spatial[1]};
    set_window(a, win);
    a.count_include_pad = int_attr(n, "count_include_pad", 0) != 0;
    return a;
  }

  // How an operator of one input shapes its output: from the input's shape, filling in the
  // node's attributes.
  using OutputRule = std::function<Shape(const Shape& x, ir::Attrs& attrs)>;
  static Shape same_shape(const Shape& x, ir::Attrs&) { return x; }

  // A float operator of one dequantized input, folded with its QuantizeLinear into `kind`.
  void qdq_unary(const NodeProto& n, ir::OpKind kind, const OutputRule& rule) {
    const ir::TensorId x = activation_input(n, 0, true);
    ir::Attrs attrs;
    const Shape y = rule(tensor(x).shape, attrs);
    const Sink sink = quantized_sink(n);
    ir::Node& node = emit_to_sink(n, kind, {x}, y, sink);
    keep_activation(node.attrs, attrs);
  }

  // A com.microsoft QLinear operator of one input: (X, x_scale, x_zp, y_scale, y_zp).
  void qlinear_unary(const NodeProto& n, ir::OpKind kind, const OutputRule& rule) {
    const ir::TensorId x = activation_input(n, 0, false);
    bind_quant(x, read_qparams(n, 1, 2, tensor(x).dtype, -1));
    const QParams yq = output_qparams(n, 3, 4, tensor(x).dtype);
    ir::Attrs attrs;
    const Shape y = rule(tensor(x).shape, attrs);
    const ir::TensorId out = add_activation(n.output(0), yq.dtype, y, &yq.quant);
    ir::Node& node = emit(n, kind, n.op_type(), {x}, out);
    keep_activation(node.attrs, attrs);
    set_value(n.output(0), Value{Value::Kind::Integer, out, nullptr});
  }

  // ----- data movement ------------------------------------------------------------------------

  // Operators that only move (or select, for MaxPool) values commute with dequantization: they
  // apply to the integer tensor, keep its quantization, and their output is integer if the input
  // was, dequantized if it was. `rule` gives the output shape from the input and fills in the
  // node's attributes.
  using MovementRule = std::function<Shape(const ir::Tensor& x, bool dequantized, ir::Attrs& attrs)>;
  void data_movement(const NodeProto& n, ir::OpKind kind, const MovementRule& rule) {
    const std::string& op = n.op_type();
    const Value& in = value(n.input(0));
    if (in.kind == Value::Kind::FloatInput && kind == ir::OpKind::Reshape) {
      // A view of a float graph input before its QuantizeLinear (ORT's quantizer leaves a Flatten
      // there): no byte moves, so that QuantizeLinear quantizes the input itself, under the view's
      // shape, and set_input still takes the model's float values.
      ir::Tensor viewed = tensor(in.tensor);
      viewed.shape = float_input_shape(n.input(0), in);
      ir::Attrs unused;
      state_.float_input_views_[n.output(0)] = rule(viewed, false, unused);
      return set_value(n.output(0), in);
    }
    if (in.kind == Value::Kind::Float && kind == ir::OpKind::Reshape) {
      // A view of a float island's value (PyTorch's Squeeze of an LSTM's Y_h): the same bytes.
      ir::Attrs unused;
      const Shape y = rule(tensor(in.tensor), false, unused);
      const ir::TensorId out = add_activation(n.output(0), ir::DType::Float32, y, nullptr);
      emit(n, kind, op + " (float)", {in.tensor}, out);
      return set_value(n.output(0), Value{Value::Kind::Float, out, nullptr});
    }
    const bool dequantized = in.kind == Value::Kind::Dequantized;
    const ir::TensorId x = activation_input(n, 0, dequantized);
    ir::Attrs attrs;
    const Shape y = rule(tensor(x), dequantized, attrs);
    const ir::TensorId out = add_like(n.output(0), x, y);
    ir::Node& node = emit(n, kind, dequantized ? op + " (QDQ)" : op, {x}, out);
    keep_activation(node.attrs, attrs);
    set_value(n.output(0), Value{dequantized ? Value::Kind::Dequantized : Value::Kind::Integer, out, nullptr});
  }

  // ----- float islands ------------------------------------------------------------------------

  // True when an operator with an integer form takes it: inputs 0 .. count-1 are all dequantized
  // values (activations or constants) and the output goes to exactly one QuantizeLinear (through
  // at most one Relu/Clip). Otherwise it runs in float (float_operand, float_node).
  bool integer_form(const NodeProto& n, int count) const {
    for (int i = 0; i < count; ++i)
      if (!has_input(n, i) || value(n.input(i)).kind != Value::Kind::Dequantized) return false;
    const NodeProto* act = nullptr;
    return sink_quantize(n, act) != nullptr;
  }

  // Input `index` of a float operator as a float32 IR tensor: a float island's value; an integer
  // activation's DequantizeLinear, made once per activation (a Dequantize node, kernel
  // tightfit::dequantize); a dequantized or float constant, as float32 constant elements (ORT's
  // DequantizeLinear: float(q - zero point) * scale).
  ir::TensorId float_operand(const NodeProto& n, int index) {
    if (!has_input(n, index)) throw Error(fmt::format("input {} is missing", index));
    const std::string& name = n.input(index);
    const Value& v = value(name);
    switch (v.kind) {
      case Value::Kind::Float:
        return v.tensor;
      case Value::Kind::Constant:
        return float_constant(name, tensor_dims(*v.constant), tensor_floats(*v.constant));
      case Value::Kind::Dequantized: {
        const ir::Tensor& t = tensor(v.tensor);
        if (t.is_constant) return float_constant(name, t.shape, dequantized_elements(t));
        auto known = state_.float_of_.find(v.tensor);
        if (known != state_.float_of_.end()) return known->second;
        if (t.quant.per_channel()) throw Error(fmt::format("activation '{}' is quantized per channel", name));
        const ir::TensorId f = add_activation(name, ir::DType::Float32, t.shape, nullptr);
        ir::Node& dq = emit(n, ir::OpKind::Dequantize, "DequantizeLinear (float island)", {v.tensor}, f);
        dq.name = name + ":dequantize";
        state_.float_of_[v.tensor] = f;
        return f;
      }
      case Value::Kind::FloatInput:  // a float chain before the input's QuantizeLinear: the input stays float32
        if (state_.float_input_views_.count(name))
          throw Error(fmt::format("input '{}' is a view of a float graph input, read in float", name));
        return v.tensor;
      case Value::Kind::Integer:
        throw Error(fmt::format("input '{}' is an integer tensor where a float operator expects a float value", name));
    }
    throw Error(fmt::format("input '{}' is not supported here", name));
  }

  // The real values of a quantized constant, as ORT's DequantizeLinear computes them.
  static std::vector<float> dequantized_elements(const ir::Tensor& t) {
    const std::int64_t count = t.elements();
    std::vector<float> out(static_cast<std::size_t>(count));
    std::int64_t inner = 1;  // elements per index of the quantization axis
    if (t.quant.per_channel())
      for (std::size_t d = static_cast<std::size_t>(t.quant.axis) + 1; d < t.shape.size(); ++d) inner *= t.shape[d];
    for (std::int64_t i = 0; i < count; ++i) {
      std::int32_t q = 0;
      switch (t.dtype) {
        case ir::DType::Int8:
          q = static_cast<std::int8_t>(t.data[i]);
          break;
        case ir::DType::UInt8:
          q = t.data[i];
          break;
        case ir::DType::Int32:
          std::memcpy(&q, t.data.data() + 4 * i, 4);
          break;
        case ir::DType::Float32:
          throw Error(fmt::format("constant '{}' is float32, not quantized", t.name));
        case ir::DType::Bool:
          throw Error(fmt::format("constant '{}' is bool, not quantized", t.name));
      }
      const std::size_t c = t.quant.per_channel() ? static_cast<std::size_t>((i / inner) % t.shape[t.quant.axis]) : 0;
      out[static_cast<std::size_t>(i)] = static_cast<float>(q - t.quant.zero_point[c]) * t.quant.scale[c];
    }
    return out;
  }

  ir::TensorId float_constant(const std::string& name, const Shape& shape, const std::vector<float>& values) {
    ir::Tensor t;
    t.name = name;
    t.dtype = ir::DType::Float32;
    t.shape = shape;
    t.is_constant = true;
    t.data.resize(values.size() * 4);
    std::memcpy(t.data.data(), values.data(), t.data.size());
    return add_tensor(std::move(t));
  }

  // A float operator's node writing ONNX output 0 as a float32 activation of `shape`.
  ir::Node& float_node(const NodeProto& n, ir::OpKind op, std::vector<ir::TensorId> inputs, const Shape& shape) {
    const ir::TensorId y = add_activation(n.output(0), ir::DType::Float32, shape, nullptr);
    set_value(n.output(0), Value{Value::Kind::Float, y, nullptr});
    return emit(n, op, n.op_type() + " (float)", std::move(inputs), y);
  }

  // Sigmoid, Tanh: the integer form (a table) when it applies, else the float kernel (the output
  // a graph output or read in float, or the input a float island's value).
  void unary(const NodeProto& n, ir::OpKind kind) {
    if (integer_form(n, 1)) return qdq_unary(n, kind, same_shape);
    const ir::TensorId x = float_operand(n, 0);
    float_node(n, kind, {x}, tensor(x).shape);
  }

  // Add, Sub, Mul: the integer form when it applies, else the float kernel.
  void binary(const NodeProto& n, ir::OpKind kind) {
    if (integer_form(n, 2)) return qdq_binary(n, kind);
    const ir::TensorId a = float_operand(n, 0), b = float_operand(n, 1);
    float_node(n, kind, {a, b}, broadcast(tensor(a).shape, tensor(b).shape));
  }

 protected:
  // The state of the import, shared by every Translator working on it.
  ImportState& state_;
};

}  // namespace tightfit::import
