// Stage 2 of import: a validated ModelProto -> the integer IR.
//
// The translator walks the ONNX nodes in (sorted) order and keeps, for every ONNX value name,
// what it stands for (a Value): an integer IR tensor, the exact float dequantization of one
// (the output of a DequantizeLinear), a float graph input still waiting for its QuantizeLinear,
// or a constant not yet placed in the IR.
//
// QDQ form. A float operator whose inputs are all dequantized values, and whose output goes
// (optionally through one Relu or Clip) into exactly one QuantizeLinear, becomes the integer
// operator writing the QuantizeLinear's output; the Relu/Clip and the QuantizeLinear are
// absorbed. Data-movement operators (Reshape, Transpose, MaxPool, ...) commute with
// dequantization, so they apply to the integer tensor and their output stays "dequantized".
// A QuantizeLinear of a dequantized value is an alias (same parameters) or a Requantize.
//
// QOperator form. QLinear* operators name their quantization parameters as constant inputs:
// they become the same IR operators directly. An integer tensor's quantization is fixed by its
// producer, or, for integer graph inputs, by its first consumer; later consumers must agree.
//
// Anything else is refused with the node named: we never approximate.
#include "import/onnx_import.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <limits>
#include <map>
#include <set>

#include "error.hpp"
#include "import/model_file.hpp"
#include "import/shape_rules.hpp"
#include "import/tensor_data.hpp"
#include "passes/passes.hpp"

namespace tightfit::import {

namespace {

using onnx::NodeProto;
using onnx::TensorProto;

// What an ONNX value name stands for during translation.
struct Value {
  enum class Kind {
    Integer,      // an integer IR tensor
    Dequantized,  // exactly DequantizeLinear(tensor): a float value that folds into its consumer
    FloatInput,   // a float graph input (IR tensor of dtype float32) waiting for a QuantizeLinear
    Constant,     // an initializer or Constant output not (yet) placed in the IR
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

struct Range {
  std::int64_t min, max;
};

Range dtype_range(ir::DType t) {
  switch (t) {
    case ir::DType::Int8: return {-128, 127};
    case ir::DType::UInt8: return {0, 255};
    default: return {std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max()};
  }
}

bool same_quant(const ir::Quant& a, const ir::Quant& b) {
  return a.axis == b.axis && a.scale == b.scale && a.zero_point == b.zero_point;
}

std::string quant_text(const ir::Quant& q) {
  if (q.scale.size() == 1) return fmt::format("scale {} zero point {}", q.scale[0], q.zero_point[0]);
  return fmt::format("{} per-channel scales", q.scale.size());
}

class Importer {
 public:
  Importer(std::string path, const onnx::ModelProto& model, const Options& options)
      : path_(std::move(path)), graph_(model.graph()), options_(options) {
    for (const auto& opset : model.opset_import())
      if (opset.domain().empty() || opset.domain() == "ai.onnx") opset_ = static_cast<int>(opset.version());
  }

  ir::Graph run() {
    out_.source = path_;
    require_quantized_model();
    for (const auto& t : graph_.initializer()) values_[t.name()] = Value{Value::Kind::Constant, ir::kNoTensor, &t};
    for (const auto& v : graph_.value_info()) declared_[v.name()] = &v;
    for (const auto& v : graph_.output()) {
      declared_[v.name()] = &v;
      graph_outputs_.insert(v.name());
    }
    for (const auto& v : graph_.input())
      if (!values_.count(v.name())) with_context("", [&] { add_graph_input(v); });
    for (int i = 0; i < graph_.node_size(); ++i) {
      index_[&graph_.node(i)] = i;
      for (const auto& in : graph_.node(i).input()) consumers_[in].push_back(i);
    }

    absorbed_.assign(graph_.node_size(), false);
    for (int i = 0; i < graph_.node_size(); ++i) {
      if (absorbed_[i]) continue;
      with_context(label(graph_.node(i)), [&] { translate(graph_.node(i)); });
    }
    for (const auto& v : graph_.output()) with_context("", [&] { add_graph_output(v.name()); });
    finish_pending_quantization();
    passes::conv1x1_to_fully_connected(out_);
    passes::prune_unused_tensors(out_);
    passes::verify(out_);
    return std::move(out_);
  }

 private:
  // ----- errors -------------------------------------------------------------------------------

  // Runs `work`; a bare reason thrown inside gets the file and the context (node label) prefixed.
  template <typename F>
  void with_context(const std::string& context, F&& work) {
    try {
      work();
    } catch (const Located&) {
      throw;
    } catch (const Error& e) {
      if (context.empty()) throw Located(fmt::format("{}: {}", path_, e.what()));
      throw Located(fmt::format("{}: {}: {}", path_, context, e.what()));
    }
  }

  std::string node_name(const NodeProto& n) const {
    return n.name().empty() ? fmt::format("{}_{}", n.op_type(), index_of(n)) : n.name();
  }
  std::string label(const NodeProto& n) const { return fmt::format("{} ({})", node_name(n), n.op_type()); }
  int index_of(const NodeProto& n) const { return index_.at(&n); }

  // A model with no quantization operator at all gets the clearest possible refusal.
  void require_quantized_model() const {
    static const std::set<std::string> quantized_ops = {
        "QuantizeLinear", "DequantizeLinear", "QLinearConv", "QLinearMatMul", "ConvInteger", "MatMulInteger",
        "QLinearAdd", "QLinearMul", "QLinearAveragePool", "QLinearGlobalAveragePool", "QLinearConcat",
        "QLinearSigmoid", "QLinearLeakyRelu", "QLinearSoftmax",
        "DynamicQuantizeLinear"};
    for (const auto& n : graph_.node())
      if (quantized_ops.count(n.op_type())) return;
    throw Error(fmt::format(
        "{}: not quantized: the model has no QuantizeLinear, DequantizeLinear or QLinear operator "
        "(quantize it first, e.g. with onnxruntime.quantization)", path_));
  }

  // ----- values and tensors -------------------------------------------------------------------

  const Value& value(const std::string& name) const {
    auto it = values_.find(name);
    if (it == values_.end()) throw Error(fmt::format("input '{}' has no value (it is not supported here)", name));
    return it->second;
  }

  void set_value(const std::string& name, Value v) { values_[name] = v; }

  ir::TensorId add_tensor(ir::Tensor t, bool quant_pending = false) {
    out_.tensors.push_back(std::move(t));
    pending_.push_back(quant_pending);
    pending_sources_.emplace_back();
    return static_cast<ir::TensorId>(out_.tensors.size() - 1);
  }

  ir::Tensor& tensor(ir::TensorId id) { return out_.tensors[id]; }

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
    return add_tensor(std::move(t), quant == nullptr && dtype != ir::DType::Float32);
  }

  // An integer activation with the same dtype and quantization (or pending state) as `like`.
  ir::TensorId add_like(const std::string& name, ir::TensorId like, const Shape& shape) {
    const ir::Tensor& src = tensor(like);
    const bool pending = pending_[like];
    const ir::Quant quant = src.quant;
    const ir::TensorId id = add_activation(name, src.dtype, shape, pending ? nullptr : &quant);
    if (pending) pending_sources_[id].push_back(like);
    return id;
  }

  void check_declared_shape(const std::string& name, const Shape& shape) const {
    auto it = declared_.find(name);
    if (it == declared_.end() || !it->second->type().has_tensor_type()) return;
    const auto& tt = it->second->type().tensor_type();
    if (!tt.has_shape()) return;
    Shape declared;
    for (const auto& d : tt.shape().dim()) {
      if (!d.has_dim_value()) return;  // symbolic: nothing static to compare against
      declared.push_back(d.dim_value());
    }
    if (declared != shape)
      throw Error(fmt::format("output '{}' has shape {} but the model declares {}", name, shape_text(shape), shape_text(declared)));
  }

  // The IR tensor behind input `index` of a node: an integer activation, or with `dequantized`
  // the activation a DequantizeLinear output stands for. Anything else is refused with the reason.
  ir::TensorId activation_input(const NodeProto& n, int index, bool dequantized) const {
    if (index >= n.input_size() || n.input(index).empty()) throw Error(fmt::format("input {} is missing", index));
    const std::string& name = n.input(index);
    const Value& v = value(name);
    const auto want = dequantized ? Value::Kind::Dequantized : Value::Kind::Integer;
    if (v.kind == want && !out_.tensors[v.tensor].is_constant) return v.tensor;
    switch (v.kind) {
      case Value::Kind::FloatInput:
        throw Error(fmt::format("not quantized: input '{}' is a float graph input used without QuantizeLinear", name));
      case Value::Kind::Constant:
        if (dequantized)
          throw Error(fmt::format("not quantized: input '{}' is a float constant, not the output of a DequantizeLinear", name));
        throw Error(fmt::format("input '{}' must be an activation, not a constant", name));
      case Value::Kind::Integer:
        throw Error(fmt::format("input '{}' is an integer tensor where a float operator expects a DequantizeLinear output", name));
      case Value::Kind::Dequantized:
        if (out_.tensors[v.tensor].is_constant) throw Error(fmt::format("input '{}' must be an activation, not a constant", name));
        throw Error(fmt::format("input '{}' is a float (dequantized) value where an integer tensor is expected", name));
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
      throw Error(fmt::format("tensor '{}': dtype {} is not supported for quantized constants", c.name(), onnx_type_name(c.data_type())));
    if (*dtype != q.dtype)
      throw Error(fmt::format("tensor '{}' is {} but its zero point is {}", c.name(), ir::dtype_name(*dtype), ir::dtype_name(q.dtype)));
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
      throw Error(fmt::format("tensor '{}': quantization axis {} is out of range for shape {}", name, q.axis, shape_text(shape)));
    if (static_cast<std::int64_t>(q.scale.size()) != shape[q.axis])
      throw Error(fmt::format("tensor '{}': {} per-channel scales for {} channels on axis {}", name, q.scale.size(), shape[q.axis], q.axis));
  }

  // Binds an integer activation to the quantization a consumer states for it: the first statement
  // fixes a pending tensor (an integer graph input); later ones must agree.
  void bind_quant(ir::TensorId id, const QParams& q) {
    ir::Tensor& t = tensor(id);
    if (q.quant.per_channel())
      throw Error(fmt::format("per-channel quantization of activation '{}' is not supported (only of constant weights)", t.name));
    if (t.dtype != q.dtype)
      throw Error(fmt::format("tensor '{}' is {} but its zero point is {}", t.name, ir::dtype_name(t.dtype), ir::dtype_name(q.dtype)));
    if (pending_[id]) {
      t.quant = q.quant;
      t.quantized = true;
      pending_[id] = false;
      // A copy made by data movement from a pending tensor (an integer graph input): the
      // quantization stated for the copy is the source's too.
      for (ir::TensorId source : pending_sources_[id]) bind_quant(source, q);
      return;
    }
    if (!same_quant(t.quant, q.quant))
      throw Error(fmt::format("tensor '{}' is quantized with {} by its producer but read with {}", t.name,
                              quant_text(t.quant), quant_text(q.quant)));
  }

  // Integer tensors no consumer ever quantized (raw accumulators of ConvInteger/MatMulInteger,
  // integer graph inputs feeding only data movement) keep the identity quantization: scale 1,
  // zero point 0; an int32 one stays "not quantized".
  void finish_pending_quantization() {
    for (std::size_t i = 0; i < out_.tensors.size(); ++i) {
      if (!pending_[i]) continue;
      ir::Tensor& t = out_.tensors[i];
      if (t.dtype == ir::DType::Int32) continue;
      t.quantized = true;
      t.quant = ir::Quant{{1.0f}, {0}, -1};
    }
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
        throw Error(fmt::format("zero point '{}' has the unsupported dtype {}", z.name(), onnx_type_name(z.data_type())));
      q.dtype = *dtype;
      zps = tensor_ints(z);
      if (zps.size() != scales.size())
        throw Error(fmt::format("zero point '{}' has {} elements but scale '{}' has {}", z.name(), zps.size(), s.name(), scales.size()));
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

  // The clamp a Relu or Clip applies, in the integer domain of `q`. Exact because quantization
  // is monotonic: quantize(clip(x, a, b)) = clamp(quantize(x), quantize(a), quantize(b)).
  std::pair<std::int32_t, std::int32_t> activation_range(const NodeProto& act, const QParams& q) const {
    const Range r = dtype_range(q.dtype);
    float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
    if (act.op_type() == "Relu") {
      lo = 0.0f;
    } else if (opset_ < 11) {
      lo = float_attr(act, "min", lo);
      hi = float_attr(act, "max", hi);
    } else {
      if (has_input(act, 1)) lo = scalar_float(constant_input(act, 1));
      if (has_input(act, 2)) hi = scalar_float(constant_input(act, 2));
    }
    if (std::isnan(lo) || std::isnan(hi) || lo > hi) throw Error(fmt::format("{} has the bounds [{}, {}]", label(act), lo, hi));
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
  Sink quantized_sink(const NodeProto& n) {
    const std::string& y = n.output(0);
    auto single_user = [&](const std::string& name) -> const NodeProto* {
      if (graph_outputs_.count(name)) return nullptr;
      auto it = consumers_.find(name);
      if (it == consumers_.end() || it->second.size() != 1) return nullptr;
      return &graph_.node(it->second[0]);
    };
    const NodeProto* next = single_user(y);
    const NodeProto* act = nullptr;
    if (next && (next->op_type() == "Relu" || next->op_type() == "Clip") && next->domain().empty()) {
      act = next;
      next = single_user(act->output(0));
    }
    if (!next || next->op_type() != "QuantizeLinear")
      throw Error(fmt::format("its float output '{}' does not go to exactly one QuantizeLinear, so it cannot be "
                              "folded into an integer operator exactly", act ? act->output(0) : y));
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
      absorbed_[index_of(*act)] = true;
    }
    absorbed_[index_of(*next)] = true;
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
    out_.nodes.push_back(std::move(node));
    return out_.nodes.back();
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

  // ----- translation --------------------------------------------------------------------------

  void translate(const NodeProto& n) {
    const std::string& op = n.op_type();
    if (n.domain() == "com.microsoft") return translate_contrib(n);
    if (!n.domain().empty() && n.domain() != "ai.onnx")
      throw Error(fmt::format("unsupported operator: domain '{}' is not supported (see docs/operators.md)", n.domain()));
    if (op == "Constant") return add_constant_node(n);
    if (op == "QuantizeLinear") return quantize_linear(n);
    if (op == "DequantizeLinear") return dequantize_linear(n);
    if (op == "QLinearConv") return qlinear_conv(n);
    if (op == "QLinearMatMul") return qlinear_matmul(n);
    if (op == "ConvInteger") return conv_integer(n);
    if (op == "MatMulInteger") return matmul_integer(n);
    if (op == "DynamicQuantizeLinear") return dynamic_quantize_linear(n);
    if (op == "Conv") return qdq_conv(n);
    if (op == "Gemm" || op == "MatMul") return qdq_fully_connected(n);
    if (op == "Add" || op == "Mul") return qdq_binary(n);
    if (op == "AveragePool" || op == "GlobalAveragePool") return qdq_pool(n);
    if (op == "LeakyRelu" || op == "Sigmoid" || op == "Tanh" || op == "Softmax") return qdq_unary(n);
    if (op == "Relu" || op == "Clip") return standalone_activation(n);
    if (op == "Concat") return concat(n);
    if (op == "Identity") return set_value(n.output(0), value(n.input(0)));
    if (op == "MaxPool" || op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze" ||
        op == "Transpose" || op == "Pad" || op == "Resize")
      return data_movement(n);
    throw Error("unsupported operator (the supported ones are listed in docs/operators.md)");
  }

  void translate_contrib(const NodeProto& n) {
    const std::string& op = n.op_type();
    if (op == "QLinearAdd" || op == "QLinearMul") return qlinear_binary(n);
    if (op == "QLinearAveragePool" || op == "QLinearGlobalAveragePool") return qlinear_pool(n);
    if (op == "QLinearSigmoid" || op == "QLinearLeakyRelu" || op == "QLinearSoftmax") return qlinear_unary(n);
    if (op == "QLinearConcat") return qlinear_concat(n);
    throw Error("unsupported com.microsoft operator (the supported ones are listed in docs/operators.md)");
  }

  void add_graph_input(const onnx::ValueInfoProto& v) {
    const std::string where = fmt::format("tensor '{}'", v.name());
    if (!v.type().has_tensor_type()) throw Error(where + ": graph input is not a tensor");
    const auto& tt = v.type().tensor_type();
    const auto dtype = to_dtype(tt.elem_type());
    if (!dtype) throw Error(fmt::format("{}: dtype {} is not supported (int8, uint8, int32, float32)", where, onnx_type_name(tt.elem_type())));
    if (!tt.has_shape()) throw Error(where + ": graph input has no shape");
    Shape shape;
    for (int i = 0; i < tt.shape().dim_size(); ++i) {
      const auto& d = tt.shape().dim(i);
      if (d.has_dim_value()) {
        shape.push_back(d.dim_value());
        continue;
      }
      const std::string symbol = d.has_dim_param() ? fmt::format(" ('{}')", d.dim_param()) : "";
      if (i == 0 && options_.pin_batch) {
        shape.push_back(1);
        continue;
      }
      if (i == 0) throw Error(fmt::format("{}: dimension 0{} is dynamic; pass --pin-batch to fix the batch to 1", where, symbol));
      throw Error(fmt::format("{}: dimension {}{} is dynamic; tightfit needs static shapes", where, i, symbol));
    }
    checked_elements(shape, v.name());
    ir::Tensor t;
    t.name = v.name();
    t.dtype = *dtype;
    t.shape = shape;
    const ir::TensorId id = add_tensor(std::move(t), *dtype != ir::DType::Float32);
    out_.inputs.push_back(id);
    set_value(v.name(), Value{*dtype == ir::DType::Float32 ? Value::Kind::FloatInput : Value::Kind::Integer, id, nullptr});
  }

  void add_graph_output(const std::string& name) {
    const Value& v = value(name);
    const std::string where = fmt::format("tensor '{}'", name);
    if (v.kind == Value::Kind::Integer) {
      out_.outputs.push_back(v.tensor);
      return;
    }
    if (v.kind != Value::Kind::Dequantized || tensor(v.tensor).is_constant)
      throw Error(where + ": graph output is not computed from the input (a constant or a float input passed through)");
    // A float graph output: dequantize the integer tensor at the edge. The float tensor takes
    // the ONNX name; an integer tensor named like it (a view's output) gets a suffix.
    if (tensor(v.tensor).name == name) tensor(v.tensor).name += "_quantized";
    ir::Tensor f;
    f.name = name;
    f.dtype = ir::DType::Float32;
    f.shape = tensor(v.tensor).shape;
    const ir::TensorId id = add_tensor(std::move(f));
    ir::Node node;
    node.name = name + "_dequantize";
    node.onnx_op = "DequantizeLinear";
    node.op = ir::OpKind::Dequantize;
    node.inputs = {v.tensor};
    node.outputs = {id};
    out_.nodes.push_back(std::move(node));
    out_.outputs.push_back(id);
  }

  void add_constant_node(const NodeProto& n) {
    allow_attributes(n, {"value"});
    const auto* a = find_attr(n, "value");
    if (!a || !a->has_t()) throw Error("only the 'value' form of Constant is supported");
    constant_nodes_.push_back(a->t());
    constant_nodes_.back().set_name(n.output(0));
    set_value(n.output(0), Value{Value::Kind::Constant, ir::kNoTensor, &constant_nodes_.back()});
  }

  void quantize_linear(const NodeProto& n) {
    const Value& x = value(n.input(0));
    const Shape shape = x.kind == Value::Kind::Constant ? tensor_dims(*x.constant) : tensor(x.tensor).shape;
    const QParams q = read_qparams(n, 1, 2, ir::DType::UInt8, linear_axis(n, shape.size()));
    const std::string& y = n.output(0);
    if (q.quant.per_channel() && !(x.kind == Value::Kind::FloatInput && only_graph_output(y)))
      throw Error("per-channel quantization of an activation is not supported (only of constant weights, or of a float "
                  "graph input straight into a graph output)");
    if (q.dtype == ir::DType::Int32) throw Error("quantizing to int32 is not supported");
    if (x.kind == Value::Kind::FloatInput) {
      check_quant_fits(y, shape, q.quant);
      const ir::TensorId out = add_activation(y, q.dtype, shape, &q.quant);
      emit(n, ir::OpKind::Quantize, "QuantizeLinear", {x.tensor}, out);
      return set_value(y, Value{Value::Kind::Integer, out, nullptr});
    }
    if (x.kind == Value::Kind::Dequantized && !tensor(x.tensor).is_constant) {
      const ir::Tensor& src = tensor(x.tensor);
      if (src.dtype == q.dtype && same_quant(src.quant, q.quant)) return set_value(y, Value{Value::Kind::Integer, x.tensor, nullptr});
      const ir::TensorId out = add_activation(y, q.dtype, shape, &q.quant);
      emit(n, ir::OpKind::Requantize, "QuantizeLinear (requantize)", {x.tensor}, out);
      return set_value(y, Value{Value::Kind::Integer, out, nullptr});
    }
    throw Error(fmt::format("input '{}' is not a float graph input or a dequantized activation; a QuantizeLinear "
                            "anywhere else cannot be folded exactly", n.input(0)));
  }

  void dequantize_linear(const NodeProto& n) {
    const Value& x = value(n.input(0));
    if (x.kind == Value::Kind::Constant) {
      const TensorProto& c = constant(n.input(0));
      const QParams q = read_qparams(n, 1, 2, dtype_or_uint8(c), linear_axis(n, c.dims_size()));
      const ir::TensorId id = add_constant(c, q);
      return set_value(n.output(0), Value{Value::Kind::Dequantized, id, nullptr});
    }
    const ir::TensorId t = activation_input(n, 0, false);
    const QParams q = read_qparams(n, 1, 2, tensor(t).dtype, linear_axis(n, tensor(t).shape.size()));
    if (q.quant.per_channel() && edge_dequantize(n, t)) {
      // An integer graph input dequantized per channel straight into a graph output: the
      // generated get_output dequantizes each element with its channel's parameters.
      ir::Tensor& x = tensor(t);
      if (x.dtype != q.dtype)
        throw Error(fmt::format("tensor '{}' is {} but its zero point is {}", x.name, ir::dtype_name(x.dtype), ir::dtype_name(q.dtype)));
      check_quant_fits(x.name, x.shape, q.quant);
      x.quant = q.quant;
      x.quantized = true;
      pending_[t] = false;
    } else {
      bind_quant(t, q);
    }
    set_value(n.output(0), Value{Value::Kind::Dequantized, t, nullptr});
  }

  // DynamicQuantizeLinear(x) -> y, y_scale, y_zero_point, at the graph's edges only: x a float
  // graph input, every output a graph output that no node reads. The scale and zero point are
  // computed from x on every run, so no static quantization exists for a consumer to fold; a
  // model that quantizes with it and goes on computing is refused.
  void dynamic_quantize_linear(const NodeProto& n) {
    allow_attributes(n, {});
    const Value& x = value(n.input(0));
    if (x.kind != Value::Kind::FloatInput)
      throw Error(fmt::format("input '{}' must be a float graph input (tightfit runs DynamicQuantizeLinear only at the edges)", n.input(0)));
    if (n.output_size() != 3) throw Error("expects the outputs y, y_scale and y_zero_point");
    for (const auto& out : n.output())
      if (out.empty() || !only_graph_output(out))
        throw Error(fmt::format("output '{}' is read by another node or is not a graph output: its scale and zero point are "
                                "computed from the data at run time, and tightfit compiles only static quantization "
                                "(constant scales and zero points)", out));
    const Shape shape = tensor(x.tensor).shape;
    const ir::TensorId y = add_activation(n.output(0), ir::DType::UInt8, shape, nullptr);
    pending_[y] = false;  // not statically quantized: its parameters are the other two outputs
    const ir::TensorId scale = add_activation(n.output(1), ir::DType::Float32, {}, nullptr);
    const ir::TensorId zero_point = add_activation(n.output(2), ir::DType::UInt8, {}, nullptr);
    pending_[zero_point] = false;
    ir::Node& node = emit(n, ir::OpKind::DynamicQuantize, "DynamicQuantizeLinear", {x.tensor}, y);
    node.outputs = {y, scale, zero_point};
    for (int i = 0; i < 3; ++i) set_value(n.output(i), Value{Value::Kind::Integer, node.outputs[static_cast<std::size_t>(i)], nullptr});
  }

  // True when `name` is a graph output that no node reads.
  bool only_graph_output(const std::string& name) const {
    return graph_outputs_.count(name) && !consumers_.count(name);
  }

  // True when DequantizeLinear `n` reads an integer graph input whose quantization no one stated
  // yet, that nothing else reads, and writes a graph output that nothing reads.
  bool edge_dequantize(const NodeProto& n, ir::TensorId x) const {
    const bool graph_input = std::count(out_.inputs.begin(), out_.inputs.end(), x) > 0;
    auto readers = consumers_.find(n.input(0));
    return graph_input && pending_[x] && readers != consumers_.end() && readers->second.size() == 1 &&
           !graph_outputs_.count(n.input(0)) && only_graph_output(n.output(0));
  }

  const TensorProto& constant(const std::string& name) const {
    const Value& v = value(name);
    if (v.kind == Value::Kind::Constant) return *v.constant;
    if (v.tensor != ir::kNoTensor && std::count(out_.inputs.begin(), out_.inputs.end(), v.tensor))
      throw Error(fmt::format("input '{}' is a graph input; tightfit needs it to be a constant (an initializer)", name));
    throw Error(fmt::format("input '{}' must be a constant (an initializer or Constant)", name));
  }

  // A constant that a DequantizeLinear placed in the IR.
  ir::TensorId dequantized_constant(const NodeProto& n, int index, const char* what) const {
    if (!has_input(n, index)) throw Error(fmt::format("{} is missing", what));
    const Value& v = value(n.input(index));
    if (v.kind == Value::Kind::Dequantized && out_.tensors[v.tensor].is_constant) return v.tensor;
    if (v.kind == Value::Kind::Constant)
      throw Error(fmt::format("not quantized: {} '{}' is a float constant, not the output of a DequantizeLinear", what, n.input(index)));
    throw Error(fmt::format("{} '{}' must be a constant (a dequantized initializer); activations are not supported there", what, n.input(index)));
  }

  std::vector<std::int64_t> constant_ints(const NodeProto& n, int index) const { return tensor_ints(constant_input(n, index)); }
  std::vector<float> constant_floats(const NodeProto& n, int index) const { return tensor_floats(constant_input(n, index)); }

  // ----- Conv ---------------------------------------------------------------------------------

  // Attributes and output shape of a 2-D convolution of x by w ([M, C/group, kh, kw]).
  ir::Attrs conv_attrs(const NodeProto& n, const Shape& x, const Shape& w, Shape& y) const {
    if (w.size() != 4) throw Error(fmt::format("weight shape {} is not 4-D", shape_text(w)));
    ir::Attrs a;
    a.group = int_attr(n, "group", 1);
    if (x.size() != 4) throw Error(fmt::format("input shape {} is not 4-D (N, C, H, W)", shape_text(x)));
    if (a.group < 1 || x[1] % a.group != 0 || w[0] % a.group != 0 || w[1] * a.group != x[1])
      throw Error(fmt::format("group {} does not fit input {} and weight {}", a.group, shape_text(x), shape_text(w)));
    Window win{{w[2], w[3]}, ints_attr(n, "strides"), ints_attr(n, "dilations"), ints_attr(n, "pads"), false};
    const Shape kernel = ints_attr(n, "kernel_shape");
    if (!kernel.empty() && kernel != win.kernel)
      throw Error(fmt::format("kernel_shape {} differs from the weight's {}", shape_text(kernel), shape_text(win.kernel)));
    const Shape spatial = window_output(x, win, string_attr(n, "auto_pad", "NOTSET"));
    y = {x[0], w[0], spatial[0], spatial[1]};
    a.kernel_shape = win.kernel;
    a.strides = win.strides;
    a.dilations = win.dilations;
    a.pads = win.pads;
    return a;
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
        throw Error(fmt::format("bias '{}' has scale {} and zero point {}, not x_scale*w_scale = {} and 0, so it cannot be "
                                "added to the integer accumulator exactly", bias.name, actual, zp, expected));
    }
  }

  void check_bias(const ir::Tensor& bias, std::int64_t channels) const {
    if (bias.dtype != ir::DType::Int32) throw Error(fmt::format("bias '{}' is {}, not int32", bias.name, ir::dtype_name(bias.dtype)));
    if (bias.elements() != channels)
      throw Error(fmt::format("bias '{}' has {} elements for {} output channels", bias.name, bias.elements(), channels));
  }

  void qdq_conv(const NodeProto& n) {
    const ir::TensorId x = activation_input(n, 0, true);
    const ir::TensorId w = dequantized_constant(n, 1, "weight");
    check_weight(tensor(w), 0);
    Shape y;
    const ir::Attrs attrs = conv_attrs(n, tensor(x).shape, tensor(w).shape, y);
    std::vector<ir::TensorId> inputs = {x, w};
    if (has_input(n, 2)) {
      const ir::TensorId b = dequantized_constant(n, 2, "bias");
      check_bias(tensor(b), y[1]);
      check_bias_scale(tensor(b), tensor(x).quant, tensor(w).quant);
      inputs.push_back(b);
    }
    const Sink sink = quantized_sink(n);
    ir::Node& node = emit_to_sink(n, ir::OpKind::Conv, inputs, y, sink);
    keep_activation(node.attrs, attrs);
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
      throw Error(fmt::format("weight '{}' is quantized per channel along axis {}, not the output-channel axis {}", w.name,
                              w.quant.axis, channel_axis));
  }

  // QLinearConv(x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, [B]).
  void qlinear_conv(const NodeProto& n) {
    const ir::TensorId x = activation_input(n, 0, false);
    bind_quant(x, read_qparams(n, 1, 2, tensor(x).dtype, -1));
    const TensorProto& wc = constant_input(n, 3);
    const ir::TensorId w = add_constant(wc, read_qparams(n, 4, 5, dtype_or_uint8(wc), 0));
    check_weight(tensor(w), 0);
    const QParams yq = read_qparams(n, 6, 7, ir::DType::UInt8, -1);
    if (yq.quant.per_channel()) throw Error("per-channel output quantization is not supported");
    Shape y;
    const ir::Attrs attrs = conv_attrs(n, tensor(x).shape, tensor(w).shape, y);
    std::vector<ir::TensorId> inputs = {x, w};
    if (has_input(n, 8)) inputs.push_back(accumulator_bias(n, 8, tensor(x).quant, tensor(w).quant, y[1]));
    const ir::TensorId out = add_activation(n.output(0), yq.dtype, y, &yq.quant);
    ir::Node& node = emit(n, ir::OpKind::Conv, "QLinearConv", inputs, out);
    keep_activation(node.attrs, attrs);
    set_value(n.output(0), Value{Value::Kind::Integer, out, nullptr});
  }

  // An int32 bias constant of a QOperator node, quantized at x_scale * w_scale (as ONNX defines).
  ir::TensorId accumulator_bias(const NodeProto& n, int index, const ir::Quant& x, const ir::Quant& w, std::int64_t channels) {
    const TensorProto& bc = constant_input(n, index);
    QParams bq;
    bq.dtype = ir::DType::Int32;
    for (std::size_t c = 0; c < w.scale.size(); ++c) {
      bq.quant.scale.push_back(x.scale[0] * w.scale[c]);
      bq.quant.zero_point.push_back(0);
    }
    bq.quant.axis = w.per_channel() ? 0 : -1;
    if (to_dtype(bc.data_type()) != ir::DType::Int32) throw Error(fmt::format("bias '{}' is not int32", bc.name()));
    const Shape dims = tensor_dims(bc);
    if (dims.size() != 1 || dims[0] != channels) throw Error(fmt::format("bias '{}' has shape {} for {} output channels", bc.name(), shape_text(dims), channels));
    return add_constant(bc, bq);
  }

  // ConvInteger(x, w, [x_zp], [w_zp]) -> int32 accumulators (a Conv whose output is not
  // requantized). The scales are unknown here (1); a DequantizeLinear downstream may state them.
  void conv_integer(const NodeProto& n) {
    const ir::TensorId x = activation_input(n, 0, false);
    bind_zero_point(n, x, 2);
    const TensorProto& wc = constant_input(n, 1);
    const ir::TensorId w = add_constant(wc, unit_scale_params(n, 3, wc, 0));
    check_weight(tensor(w), 0);
    Shape y;
    const ir::Attrs attrs = conv_attrs(n, tensor(x).shape, tensor(w).shape, y);
    const ir::TensorId out = add_activation(n.output(0), ir::DType::Int32, y, nullptr);
    ir::Node& node = emit(n, ir::OpKind::Conv, "ConvInteger", {x, w}, out);
    keep_activation(node.attrs, attrs);
    set_value(n.output(0), Value{Value::Kind::Integer, out, nullptr});
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
    if (pending_[x]) {
      QParams q;
      q.dtype = t.dtype;
      q.quant = ir::Quant{{1.0f}, {static_cast<std::int32_t>(zps[0])}, -1};
      const Range r = dtype_range(t.dtype);
      if (zps[0] < r.min || zps[0] > r.max) throw Error(fmt::format("zero point {} is outside {}", zps[0], ir::dtype_name(t.dtype)));
      return bind_quant(x, q);
    }
    if (t.quant.zero_point[0] != zps[0])
      throw Error(fmt::format("zero point {} differs from the zero point {} of '{}'", zps[0], t.quant.zero_point[0], t.name));
  }

  // ----- fully connected ----------------------------------------------------------------------

  // The [M, K] weight of a FullyConnected from a [K, M] constant (MatMul, Gemm without transB):
  // transposed, with per-column quantization becoming per-row.
  ir::TensorId transposed_weight(ir::TensorId kxm) {
    const ir::Tensor src = tensor(kxm);
    if (src.quant.per_channel() && src.quant.axis != 1)
      throw Error(fmt::format("weight '{}' is quantized per row (axis 0) of a [K, M] matrix; only per output column is supported", src.name));
    const std::int64_t k = src.shape[0], m = src.shape[1];
    const std::size_t size = ir::dtype_size(src.dtype);
    ir::Tensor t = src;
    t.name = src.name + "_transposed";
    t.shape = {m, k};
    if (t.quant.per_channel()) t.quant.axis = 0;
    for (std::int64_t r = 0; r < k; ++r)
      for (std::int64_t c = 0; c < m; ++c)
        std::memcpy(&t.data[(c * k + r) * size], &src.data[(r * m + c) * size], size);
    return add_tensor(std::move(t));
  }

  // The output shape of x times a weight [M, K] (or [B, M, K], one matrix per batch).
  Shape fully_connected_shape(const Shape& x, const Shape& w_mxk) const {
    if (x.size() < 2) throw Error(fmt::format("input shape {} has rank below 2", shape_text(x)));
    if (x.back() != w_mxk.back())
      throw Error(fmt::format("input {} does not match weight {} (K differs)", shape_text(x), shape_text(w_mxk)));
    Shape y = x;
    y.back() = w_mxk[w_mxk.size() - 2];
    return y;
  }

  // The weight of a matmul with a constant B ([K, M], or [..., K, M] with batch dimensions): a
  // 2-D B becomes the FullyConnected weight [M, K]; a batched B must have exactly A's batch
  // dimensions (no broadcasting) and becomes [B, M, K], each matrix transposed, per tensor.
  ir::TensorId matmul_weight(ir::TensorId b, const Shape& a) {  // `a` must not refer into out_.tensors
    const ir::Tensor src = tensor(b);
    const std::size_t rank = src.shape.size();
    if (rank == 2) return transposed_weight(b);
    if (rank < 2) throw Error(fmt::format("weight '{}' has shape {}; a matmul weight has rank 2 or more", src.name, shape_text(src.shape)));
    if (a.size() != rank || !std::equal(a.begin(), a.end() - 2, src.shape.begin()))
      throw Error(fmt::format("weight '{}' has shape {} and input A {}: a batched matmul needs the same batch dimensions on both "
                              "(broadcasting is not supported)", src.name, shape_text(src.shape), shape_text(a)));
    if (src.quant.per_channel())
      throw Error(fmt::format("batched weight '{}' is quantized per channel; only per tensor is supported", src.name));
    std::int64_t batches = 1;
    for (std::size_t d = 0; d + 2 < rank; ++d) batches *= src.shape[d];
    const std::int64_t k = src.shape[rank - 2], m = src.shape[rank - 1];
    const std::size_t size = ir::dtype_size(src.dtype);
    ir::Tensor t = src;
    t.name = src.name + "_transposed";
    t.shape = {batches, m, k};
    for (std::int64_t bi = 0; bi < batches; ++bi)
      for (std::int64_t r = 0; r < k; ++r)
        for (std::int64_t c = 0; c < m; ++c)
          std::memcpy(&t.data[((bi * m + c) * k + r) * size], &src.data[((bi * k + r) * m + c) * size], size);
    return add_tensor(std::move(t));
  }

  void require_2d_weight(const ir::Tensor& w) const {
    if (w.shape.size() != 2)
      throw Error(fmt::format("weight '{}' has shape {}; only a 2-D weight (fully connected) is supported, not a batched matmul",
                              w.name, shape_text(w.shape)));
  }

  void qdq_fully_connected(const NodeProto& n) {
    const bool gemm = n.op_type() == "Gemm";
    const ir::TensorId x = activation_input(n, 0, true);
    ir::TensorId w = dequantized_constant(n, 1, "weight (B)");
    require_2d_weight(tensor(w));
    if (gemm) {
      if (int_attr(n, "transA", 0) != 0) throw Error("attribute transA=1 is not supported");
      if (float_attr(n, "alpha", 1.0f) != 1.0f) throw Error("attribute alpha other than 1 is not supported");
      if (has_input(n, 2) && float_attr(n, "beta", 1.0f) != 1.0f) throw Error("attribute beta other than 1 is not supported");
      if (tensor(x).shape.size() != 2) throw Error(fmt::format("Gemm input shape {} is not 2-D", shape_text(tensor(x).shape)));
    }
    const bool transposed = gemm && int_attr(n, "transB", 0) != 0;
    if (!transposed) w = transposed_weight(w);
    check_weight(tensor(w), 0);
    const Shape y = fully_connected_shape(tensor(x).shape, tensor(w).shape);
    std::vector<ir::TensorId> inputs = {x, w};
    if (gemm && has_input(n, 2)) {
      const ir::TensorId b = dequantized_constant(n, 2, "bias (C)");
      check_bias(tensor(b), tensor(w).shape[0]);
      check_bias_scale(tensor(b), tensor(x).quant, tensor(w).quant);
      inputs.push_back(b);
    }
    const Sink sink = quantized_sink(n);
    emit_to_sink(n, ir::OpKind::FullyConnected, inputs, y, sink);
  }

  // QLinearMatMul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp) with a constant b: 2-D
  // (per tensor or per column), or with A's batch dimensions (per tensor).
  void qlinear_matmul(const NodeProto& n) {
    const ir::TensorId a = activation_input(n, 0, false);
    bind_quant(a, read_qparams(n, 1, 2, tensor(a).dtype, -1));
    const TensorProto& bc = constant_input(n, 3);
    const int column_axis = bc.dims_size() - 1;
    const Shape a_shape = tensor(a).shape;  // a copy: add_constant may move the tensors
    const ir::TensorId w = matmul_weight(add_constant(bc, read_qparams(n, 4, 5, dtype_or_uint8(bc), column_axis)), a_shape);
    check_weight(tensor(w), 0);
    const QParams yq = read_qparams(n, 6, 7, ir::DType::UInt8, -1);
    if (yq.quant.per_channel()) throw Error("per-channel output quantization is not supported");
    const Shape y = fully_connected_shape(tensor(a).shape, tensor(w).shape);
    const ir::TensorId out = add_activation(n.output(0), yq.dtype, y, &yq.quant);
    emit(n, ir::OpKind::FullyConnected, "QLinearMatMul", {a, w}, out);
    set_value(n.output(0), Value{Value::Kind::Integer, out, nullptr});
  }

  // MatMulInteger(A, B, [a_zp], [b_zp]) -> int32 accumulators, B constant [K, M] (or with A's
  // batch dimensions).
  void matmul_integer(const NodeProto& n) {
    const ir::TensorId a = activation_input(n, 0, false);
    bind_zero_point(n, a, 2);
    const TensorProto& bc = constant_input(n, 1);
    const Shape a_shape = tensor(a).shape;  // a copy: add_constant may move the tensors
    const ir::TensorId w = matmul_weight(add_constant(bc, unit_scale_params(n, 3, bc, bc.dims_size() - 1)), a_shape);
    check_weight(tensor(w), 0);
    const Shape y = fully_connected_shape(tensor(a).shape, tensor(w).shape);
    const ir::TensorId out = add_activation(n.output(0), ir::DType::Int32, y, nullptr);
    emit(n, ir::OpKind::FullyConnected, "MatMulInteger", {a, w}, out);
    set_value(n.output(0), Value{Value::Kind::Integer, out, nullptr});
  }

  // ----- elementwise, pools, activations ------------------------------------------------------

  // An operand of Add/Mul: a dequantized activation or a per-tensor dequantized constant.
  ir::TensorId elementwise_operand(const NodeProto& n, int index) const {
    const Value& v = value(n.input(index));
    if (v.kind == Value::Kind::Dequantized) {
      if (out_.tensors[v.tensor].quant.per_channel())
        throw Error(fmt::format("constant '{}' is quantized per channel; elementwise operands must be per-tensor", n.input(index)));
      return v.tensor;
    }
    return activation_input(n, index, true);  // throws the right "not quantized" message
  }

  void qdq_binary(const NodeProto& n) {
    const ir::TensorId a = elementwise_operand(n, 0), b = elementwise_operand(n, 1);
    const Shape y = broadcast(tensor(a).shape, tensor(b).shape);
    const Sink sink = quantized_sink(n);
    emit_to_sink(n, n.op_type() == "Add" ? ir::OpKind::Add : ir::OpKind::Mul, {a, b}, y, sink);
  }

  // QLinearAdd/QLinearMul(A, A_scale, A_zp, B, B_scale, B_zp, C_scale, C_zp).
  void qlinear_binary(const NodeProto& n) {
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
    emit(n, n.op_type() == "QLinearAdd" ? ir::OpKind::Add : ir::OpKind::Mul, n.op_type(), operands, out);
    set_value(n.output(0), Value{Value::Kind::Integer, out, nullptr});
  }

  QParams output_qparams(const NodeProto& n, int scale_index, int zp_index, ir::DType default_dtype) const {
    const QParams q = read_qparams(n, scale_index, zp_index, default_dtype, -1);
    if (q.quant.per_channel()) throw Error("per-channel output quantization is not supported");
    if (q.dtype == ir::DType::Int32) throw Error("an int32 output is not supported");
    return q;
  }

  // Pool attributes and output shape (AveragePool, MaxPool and their QLinear forms).
  ir::Attrs pool_attrs(const NodeProto& n, const Shape& x, Shape& y) const {
    ir::Attrs a;
    Window win{ints_attr(n, "kernel_shape"), ints_attr(n, "strides"), ints_attr(n, "dilations"), ints_attr(n, "pads"),
               int_attr(n, "ceil_mode", 0) != 0};
    if (win.kernel.empty()) throw Error("attribute kernel_shape is missing");
    const Shape spatial = window_output(x, win, string_attr(n, "auto_pad", "NOTSET"));
    y = {x[0], x[1], spatial[0], spatial[1]};
    a.kernel_shape = win.kernel;
    a.strides = win.strides;
    a.dilations = win.dilations;
    a.pads = win.pads;
    a.ceil_mode = win.ceil_mode;
    a.count_include_pad = int_attr(n, "count_include_pad", 0) != 0;
    return a;
  }

  static Shape global_pool_shape(const Shape& x) {
    if (x.size() != 4) throw Error(fmt::format("input shape {} is not 4-D (N, C, H, W)", shape_text(x)));
    return {x[0], x[1], 1, 1};
  }

  void qdq_pool(const NodeProto& n) {
    const ir::TensorId x = activation_input(n, 0, true);
    const bool global = n.op_type() == "GlobalAveragePool";
    Shape y;
    ir::Attrs attrs;
    if (global) y = global_pool_shape(tensor(x).shape);
    else attrs = pool_attrs(n, tensor(x).shape, y);
    const Sink sink = quantized_sink(n);
    ir::Node& node = emit_to_sink(n, global ? ir::OpKind::GlobalAveragePool : ir::OpKind::AveragePool, {x}, y, sink);
    keep_activation(node.attrs, attrs);
  }

  // QLinearAveragePool / QLinearGlobalAveragePool(X, x_scale, x_zp, y_scale, y_zp).
  void qlinear_pool(const NodeProto& n) {
    const bool global = n.op_type() == "QLinearGlobalAveragePool";
    if (global) allow_attributes(n, {"channels_last"});
    else allow_attributes(n, {"auto_pad", "ceil_mode", "channels_last", "count_include_pad", "kernel_shape", "pads", "strides"});
    if (int_attr(n, "channels_last", 0) != 0) throw Error("attribute channels_last=1 is not supported");
    const ir::TensorId x = activation_input(n, 0, false);
    bind_quant(x, read_qparams(n, 1, 2, tensor(x).dtype, -1));
    const QParams yq = output_qparams(n, 3, 4, tensor(x).dtype);
    Shape y;
    ir::Attrs attrs;
    if (global) y = global_pool_shape(tensor(x).shape);
    else attrs = pool_attrs(n, tensor(x).shape, y);
    const ir::TensorId out = add_activation(n.output(0), yq.dtype, y, &yq.quant);
    ir::Node& node = emit(n, global ? ir::OpKind::GlobalAveragePool : ir::OpKind::AveragePool, n.op_type(), {x}, out);
    keep_activation(node.attrs, attrs);
    set_value(n.output(0), Value{Value::Kind::Integer, out, nullptr});
  }

  // Softmax's axis. Before opset 13 Softmax flattens to 2-D at `axis`: that is one softmax over
  // an axis only when the axis is the last one.
  std::int64_t softmax_axis(const NodeProto& n, const Shape& x, int semantics_opset) const {
    const std::int64_t fallback = semantics_opset < 13 ? 1 : -1;
    const std::int64_t axis = normalize_axis(int_attr(n, "axis", fallback), x.size());
    if (semantics_opset < 13 && axis != static_cast<std::int64_t>(x.size()) - 1)
      throw Error(fmt::format("Softmax over axes {}.. (opset below 13) is only supported on the last axis", axis));
    return axis;
  }

  static ir::OpKind unary_kind(const std::string& op) {
    if (op == "LeakyRelu" || op == "QLinearLeakyRelu") return ir::OpKind::LeakyRelu;
    if (op == "Sigmoid" || op == "QLinearSigmoid") return ir::OpKind::Sigmoid;
    if (op == "Tanh") return ir::OpKind::Tanh;
    return ir::OpKind::Softmax;
  }

  void qdq_unary(const NodeProto& n) {
    const ir::TensorId x = activation_input(n, 0, true);
    ir::Attrs attrs;
    attrs.alpha = float_attr(n, "alpha", 0.01f);
    if (n.op_type() == "Softmax") attrs.axis = softmax_axis(n, tensor(x).shape, opset_);
    const Sink sink = quantized_sink(n);
    ir::Node& node = emit_to_sink(n, unary_kind(n.op_type()), {x}, tensor(x).shape, sink);
    keep_activation(node.attrs, attrs);
  }

  // QLinearSigmoid / QLinearLeakyRelu / QLinearSoftmax(X, x_scale, x_zp, y_scale, y_zp).
  void qlinear_unary(const NodeProto& n) {
    if (n.op_type() == "QLinearLeakyRelu") allow_attributes(n, {"alpha"});
    else if (n.op_type() == "QLinearSoftmax") allow_attributes(n, {"axis", "opset"});
    else allow_attributes(n, {});
    const ir::TensorId x = activation_input(n, 0, false);
    bind_quant(x, read_qparams(n, 1, 2, tensor(x).dtype, -1));
    const QParams yq = output_qparams(n, 3, 4, tensor(x).dtype);
    ir::Attrs attrs;
    attrs.alpha = float_attr(n, "alpha", 0.01f);
    if (n.op_type() == "QLinearSoftmax") {
      const auto* opset = find_attr(n, "opset");
      if (!opset) throw Error("attribute opset is missing");
      attrs.axis = softmax_axis(n, tensor(x).shape, static_cast<int>(opset->i()));
      attrs.softmax_wraps = true;
    }
    const ir::TensorId out = add_activation(n.output(0), yq.dtype, tensor(x).shape, &yq.quant);
    ir::Node& node = emit(n, unary_kind(n.op_type()), n.op_type(), {x}, out);
    keep_activation(node.attrs, attrs);
    set_value(n.output(0), Value{Value::Kind::Integer, out, nullptr});
  }

  // A Relu or Clip that no float operator absorbed, on a dequantized activation.
  void standalone_activation(const NodeProto& n) {
    const ir::TensorId x = activation_input(n, 0, true);
    const ir::Tensor& src = tensor(x);
    const std::string& y = n.output(0);
    auto users = consumers_.find(y);
    const bool to_quantize = !graph_outputs_.count(y) && users != consumers_.end() && users->second.size() == 1 &&
                             graph_.node(users->second[0]).op_type() == "QuantizeLinear";
    if (to_quantize) {
      // quantize(clip(dequantize(x))) = clamp(requantize(x)): a Requantize with the clamp fused.
      const NodeProto& q = graph_.node(users->second[0]);
      QParams yq;
      with_context(label(q), [&] { yq = output_qparams(q, 1, 2, ir::DType::UInt8); });
      absorbed_[index_of(q)] = true;
      const auto [lo, hi] = activation_range(n, yq);
      const bool same = yq.dtype == src.dtype && same_quant(yq.quant, src.quant);
      const ir::TensorId out = add_activation(q.output(0), yq.dtype, src.shape, &yq.quant);
      ir::Node& node = emit(n, same ? ir::OpKind::Clamp : ir::OpKind::Requantize, n.op_type() + " (QDQ)", {x}, out);
      node.attrs.act_min = lo;
      node.attrs.act_max = hi;
      return set_value(q.output(0), Value{Value::Kind::Integer, out, nullptr});
    }
    // Otherwise the clamped value must itself be exactly a dequantized integer tensor: the
    // bounds must lie on the quantization grid.
    QParams xq{src.quant, src.dtype};
    const auto [lo, hi] = activation_range(n, xq);
    for (float bound : clip_bounds(n)) {
      if (std::isinf(bound)) continue;
      const float grid = bound / src.quant.scale[0];
      if (grid != std::nearbyint(grid))
        throw Error(fmt::format("bound {} is not on the quantization grid of '{}' and no QuantizeLinear follows", bound, src.name));
    }
    const ir::TensorId out = add_like(y, x, src.shape);
    ir::Node& node = emit(n, ir::OpKind::Clamp, n.op_type() + " (QDQ)", {x}, out);
    node.attrs.act_min = lo;
    node.attrs.act_max = hi;
    set_value(y, Value{Value::Kind::Dequantized, out, nullptr});
  }

  std::vector<float> clip_bounds(const NodeProto& n) const {
    if (n.op_type() == "Relu") return {0.0f};
    const float inf = std::numeric_limits<float>::infinity();
    if (opset_ < 11) return {float_attr(n, "min", -inf), float_attr(n, "max", inf)};
    return {has_input(n, 1) ? scalar_float(constant_input(n, 1)) : -inf, has_input(n, 2) ? scalar_float(constant_input(n, 2)) : inf};
  }

  // ----- Concat -------------------------------------------------------------------------------

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
    for (auto t : inputs) uniform = uniform && !pending_[t] && tensor(t).dtype == tensor(inputs[0]).dtype &&
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
        if (tensor(t).dtype != tensor(inputs[0]).dtype || pending_[t] != pending_[inputs[0]] ||
            !same_quant(tensor(t).quant, tensor(inputs[0]).quant))
          throw Error(fmt::format("inputs '{}' and '{}' are quantized differently", tensor(inputs[0]).name, tensor(t).name));
    }
    const ir::TensorId out = target ? add_activation(output_name, target->dtype, y, &target->quant) : add_like(output_name, inputs[0], y);
    if (!target && pending_[out]) pending_sources_[out].assign(inputs.begin(), inputs.end());
    ir::Node& node = emit(n, ir::OpKind::Concat, onnx_op, inputs, out);
    node.attrs.axis = normalize_axis(axis_attr->i(), y.size());
    return out;
  }

  // ----- data movement ------------------------------------------------------------------------

  // Operators that only move (or select, for MaxPool) values commute with dequantization: they
  // apply to the integer tensor, keep its quantization, and their output is integer if the input
  // was, dequantized if it was.
  void data_movement(const NodeProto& n) {
    const std::string& op = n.op_type();
    const Value& in = value(n.input(0));
    const bool dequantized = in.kind == Value::Kind::Dequantized;
    const ir::TensorId x = activation_input(n, 0, dequantized);
    const Shape& xs = tensor(x).shape;
    ir::Attrs attrs;
    ir::OpKind kind = ir::OpKind::Reshape;
    Shape y;
    if (op == "Reshape") {
      y = reshape(xs, constant_ints(n, 1), int_attr(n, "allowzero", 0) != 0);
    } else if (op == "Flatten") {
      y = flatten(xs, int_attr(n, "axis", 1));
    } else if (op == "Squeeze" || op == "Unsqueeze") {
      const std::vector<std::int64_t> axes = opset_ < 13 ? ints_attr(n, "axes") : has_input(n, 1) ? constant_ints(n, 1) : std::vector<std::int64_t>{};
      if (op == "Unsqueeze" && axes.empty()) throw Error("Unsqueeze needs axes");
      y = op == "Squeeze" ? squeeze(xs, axes) : unsqueeze(xs, axes);
    } else if (op == "Transpose") {
      kind = ir::OpKind::Transpose;
      attrs.perm = ints_attr(n, "perm");
      if (attrs.perm.empty())
        for (std::size_t i = xs.size(); i-- > 0;) attrs.perm.push_back(static_cast<std::int64_t>(i));
      y = transpose(xs, attrs.perm);
    } else if (op == "MaxPool") {
      kind = ir::OpKind::MaxPool;
      if (n.output_size() > 1 && !n.output(1).empty()) throw Error("the Indices output is not supported");
      if (int_attr(n, "storage_order", 0) != 0) throw Error("attribute storage_order=1 is not supported");
      attrs = pool_attrs(n, xs, y);
    } else if (op == "Pad") {
      kind = ir::OpKind::Pad;
      attrs.pads = pad_attrs(n, tensor(x), dequantized);
      y = pad(xs, attrs.pads);
    } else {
      kind = ir::OpKind::Resize;
      attrs.scales = resize_scales(n, xs);
      for (std::size_t i = 0; i < xs.size(); ++i) y.push_back(xs[i] * static_cast<std::int64_t>(attrs.scales[i]));
    }
    const ir::TensorId out = add_like(n.output(0), x, y);
    ir::Node& node = emit(n, kind, dequantized ? op + " (QDQ)" : op, {x}, out);
    keep_activation(node.attrs, attrs);
    set_value(n.output(0), Value{dequantized ? Value::Kind::Dequantized : Value::Kind::Integer, out, nullptr});
  }

  // Pad: constant mode with the value zero (real 0 = the zero point, which is what the IR pads
  // with); for an integer tensor the pad value must be its zero point.
  std::vector<std::int64_t> pad_attrs(const NodeProto& n, const ir::Tensor& x, bool dequantized) const {
    if (string_attr(n, "mode", "constant") != "constant") throw Error(fmt::format("mode '{}' is not supported (only constant)", string_attr(n, "mode", "")));
    std::vector<std::int64_t> pads = opset_ < 11 ? ints_attr(n, "pads") : constant_ints(n, 1);
    if (opset_ < 11) {
      if (float_attr(n, "value", 0.0f) != 0.0f) throw Error("a pad value other than 0 is not supported");
    } else if (has_input(n, 2)) {
      const Value& v = value(n.input(2));
      if (dequantized) {
        // A float 0, or a dequantized constant holding the zero point (real 0).
        bool zero = false;
        if (v.kind == Value::Kind::Constant) {
          const auto values = constant_floats(n, 2);
          zero = values.size() == 1 && values[0] == 0.0f;
        } else if (v.kind == Value::Kind::Dequantized && out_.tensors[v.tensor].is_constant) {
          const ir::Tensor& c = out_.tensors[v.tensor];
          zero = c.elements() == 1 && c.data.size() == 1 && static_cast<std::int32_t>(c.dtype == ir::DType::Int8
                     ? static_cast<std::int8_t>(c.data[0]) : c.data[0]) == c.quant.zero_point[0];
        }
        if (!zero) throw Error("a pad value other than 0 is not supported");
      } else {
        const auto value = constant_ints(n, 2);
        // An integer graph input read by no QLinear operator before this Pad has no zero point yet.
        if (x.quant.zero_point.empty())
          throw Error(fmt::format("the pad value cannot be checked against the zero point of '{}': no operator states "
                                  "its quantization before this Pad", x.name));
        if (value.size() != 1 || value[0] != x.quant.zero_point[0]) throw Error("the pad value must be the input's zero point");
      }
    }
    return pads;
  }

  // Resize, nearest, by whole factors: output index i reads input index floor(i / factor).
  // That is what ONNX computes for (asymmetric, floor) and, with whole factors, for
  // (half_pixel or pytorch_half_pixel, round_prefer_floor or round_prefer_ceil).
  std::vector<float> resize_scales(const NodeProto& n, const Shape& x) const {
    if (string_attr(n, "mode", "nearest") != "nearest") throw Error(fmt::format("mode '{}' is not supported (only nearest)", string_attr(n, "mode", "")));
    const std::string ctm = string_attr(n, "coordinate_transformation_mode", "half_pixel");
    const std::string nearest = string_attr(n, "nearest_mode", "round_prefer_floor");
    const bool asymmetric_floor = ctm == "asymmetric" && nearest == "floor";
    const bool half_pixel_round = (ctm == "half_pixel" || ctm == "pytorch_half_pixel") &&
                                  (nearest == "round_prefer_floor" || nearest == "round_prefer_ceil");
    if (opset_ >= 11 && !asymmetric_floor && !half_pixel_round)
      throw Error(fmt::format("coordinate_transformation_mode '{}' with nearest_mode '{}' is not supported", ctm, nearest));
    if (int_attr(n, "exclude_outside", 0) != 0) throw Error("attribute exclude_outside=1 is not supported");
    std::vector<float> scales;
    const int scales_index = opset_ < 11 ? 1 : 2;
    if (has_input(n, scales_index) && !constant(n.input(scales_index)).dims().empty() && constant(n.input(scales_index)).dims(0) > 0) {
      scales = constant_floats(n, scales_index);
    } else if (has_input(n, 3)) {
      const auto sizes = constant_ints(n, 3);
      if (sizes.size() != x.size()) throw Error("sizes has the wrong length");
      for (std::size_t i = 0; i < x.size(); ++i) {
        if (sizes[i] % x[i] != 0) throw Error(fmt::format("output size {} is not a whole multiple of {}", sizes[i], x[i]));
        scales.push_back(static_cast<float>(sizes[i] / x[i]));
      }
    } else {
      throw Error("neither scales nor sizes is given");
    }
    if (scales.size() != x.size()) throw Error(fmt::format("{} scales for rank {}", scales.size(), x.size()));
    for (float s : scales)
      if (!(s >= 1.0f) || s != std::floor(s) || s > 4096.0f) throw Error(fmt::format("scale {} is not a whole factor of at least 1", s));
    return scales;
  }

  // ----- state --------------------------------------------------------------------------------

  std::string path_;
  const onnx::GraphProto& graph_;
  Options options_;
  int opset_ = 0;
  ir::Graph out_;
  std::vector<bool> pending_;  // per IR tensor: integer tensor whose quantization no one stated yet
  std::vector<std::vector<ir::TensorId>> pending_sources_;  // per IR tensor: pending tensors it copies
  std::map<std::string, Value> values_;
  std::map<std::string, const onnx::ValueInfoProto*> declared_;
  std::map<std::string, std::vector<int>> consumers_;  // value name -> indices of nodes reading it
  std::map<const NodeProto*, int> index_;              // node -> its index (protobuf nodes are not contiguous)
  std::set<std::string> graph_outputs_;
  std::vector<bool> absorbed_;                      // nodes folded into an earlier one
  std::deque<TensorProto> constant_nodes_;          // the tensors of Constant nodes (stable addresses)
};

// Names inside a model are arbitrary bytes: a control character (a newline above all) must not
// break the one-line message.
std::string printable(const std::string& line) {
  std::string out = line;
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return out;
}

}  // namespace

ir::Graph import_onnx(const std::string& path, const Options& options) {
  try {
    const onnx::ModelProto model = load_model(path);
    return Importer(path, model, options).run();
  } catch (const Error& e) {
    throw Error(printable(e.what()), e.exit_code());
  }
}

}  // namespace tightfit::import
