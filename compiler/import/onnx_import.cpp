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
#include <fmt/ranges.h>

#include <functional>
#include <map>
#include <set>

#include "error.hpp"
#include "import/model_file.hpp"
#include "ops/translator.hpp"
#include "ops/operator.hpp"
namespace tightfit::import {

namespace {

// Constant and Identity only name values; every other operator is imported by its rule.
bool names_a_value(const NodeProto& n) {
  const bool onnx_domain = n.domain().empty() || n.domain() == "ai.onnx";
  return onnx_domain && (n.op_type() == "Constant" || n.op_type() == "Identity");
}

bool is_supported(const NodeProto& n) {
  return names_a_value(n) || ops::import_rule(n.domain(), n.op_type()) != nullptr;
}

// Walks the ONNX nodes in order and translates each (see translator.hpp for the toolkit).
class Importer : public Translator {
 public:
  using Translator::Translator;

  ir::Graph run() {
    state_.out_.source = state_.path_;
    require_quantized_model();
    for (const auto& t : state_.graph_.initializer())
      state_.values_[t.name()] = Value{Value::Kind::Constant, ir::kNoTensor, &t};
    for (const auto& v : state_.graph_.value_info()) state_.declared_[v.name()] = &v;
    for (const auto& v : state_.graph_.output()) {
      state_.declared_[v.name()] = &v;
      state_.graph_outputs_.insert(v.name());
    }
    for (const auto& v : state_.graph_.input())
      if (!state_.values_.count(v.name())) with_context("", [&] { add_graph_input(v); });
    for (int i = 0; i < state_.graph_.node_size(); ++i) {
      state_.index_[&state_.graph_.node(i)] = i;
      for (const auto& in : state_.graph_.node(i).input()) state_.consumers_[in].push_back(i);
      // An If's branches read values of the graph by name: the If consumes them too (a value it
      // reads is then no operator's alone to fold into a QuantizeLinear).
      for (const std::string& outer : outer_reads(state_.graph_.node(i))) state_.consumers_[outer].push_back(i);
    }
    state_.translate_node = [this](const NodeProto& n) {
      if (!state_.index_.count(&n)) {  // a branch's node: numbered after the graph's
        state_.index_[&n] = static_cast<int>(state_.index_.size());
        state_.absorbed_.resize(state_.index_.size(), false);
      }
      with_context(label(n), [&] { translate(n); });
    };

    state_.absorbed_.assign(state_.graph_.node_size(), false);
    for (int i = 0; i < state_.graph_.node_size(); ++i) {
      if (state_.absorbed_[i]) continue;
      with_context(label(state_.graph_.node(i)), [&] { translate(state_.graph_.node(i)); });
    }
    for (const auto& v : state_.graph_.output()) with_context("", [&] { add_graph_output(v.name()); });
    finish_pending_quantization();
    distinct_node_names();
    return std::move(state_.out_);
  }

  // The values a node's subgraphs (an If's branches) read from outside them.
  static std::set<std::string> outer_reads(const NodeProto& n) {
    std::set<std::string> reads;
    for (const auto& a : n.attribute()) {
      if (!a.has_g()) continue;
      std::set<std::string> made;
      for (const auto& t : a.g().initializer()) made.insert(t.name());
      for (const auto& sub : a.g().node()) {
        for (const auto& in : sub.input())
          if (!in.empty() && !made.count(in)) reads.insert(in);
        for (const std::string& inner : outer_reads(sub))
          if (!made.count(inner)) reads.insert(inner);
        for (const auto& out : sub.output()) made.insert(out);
      }
    }
    return reads;
  }

  // Later stages name nodes (a tiled stage lists its nodes by name), but ONNX only asks node
  // names to be unique, and "<op>_<index>" may be a named node's name too: a name met again
  // becomes "name (2)", "name (3)", ... (a name never used before).
  void distinct_node_names() {
    std::set<std::string> used;
    for (ir::Node& n : state_.out_.nodes) {
      std::string name = n.name;
      for (int k = 2; used.count(name); ++k) name = fmt::format("{} ({})", n.name, k);
      n.name = name;
      used.insert(name);
    }
  }

 private:
  // A model with no quantization operator at all gets the clearest possible refusal.
  void require_quantized_model() const {
    static const std::set<std::string> quantized_ops = {
        "QuantizeLinear", "DequantizeLinear", "QLinearConv",      "QLinearMatMul",      "ConvInteger",
        "MatMulInteger",  "QLinearAdd",       "QLinearMul",       "QLinearAveragePool", "QLinearGlobalAveragePool",
        "QLinearConcat",  "QLinearSigmoid",   "QLinearLeakyRelu", "QLinearSoftmax",     "DynamicQuantizeLinear"};
    for (const auto& n : state_.graph_.node())
      if (quantized_ops.count(n.op_type())) return;
    throw Error(
        fmt::format("{}: not quantized: the model has no QuantizeLinear, DequantizeLinear or QLinear operator "
                    "(quantize it first, e.g. with onnxruntime.quantization){}",
                    state_.path_, missing_besides_quantization()));
  }

  // What a float model would still lack once quantized: its operators without an import rule,
  // those inside control-flow subgraphs too (Silero VAD hides its LSTMs in an If's branches),
  // and graph inputs of a type tightfit does not take. "" when nothing.
  std::string missing_besides_quantization() const {
    std::map<std::string, int> unsupported;
    std::function<void(const onnx::GraphProto&)> visit = [&](const onnx::GraphProto& g) {
      for (const auto& n : g.node()) {
        if (!is_supported(n)) ++unsupported[n.domain().empty() ? n.op_type() : n.domain() + ":" + n.op_type()];
        for (const auto& a : n.attribute()) {
          if (a.has_g()) visit(a.g());
          for (const auto& sub : a.graphs()) visit(sub);
        }
      }
    };
    visit(state_.graph_);
    std::vector<std::string> parts;
    for (const auto& [op, count] : unsupported) parts.push_back(count == 1 ? op : fmt::format("{} ({})", op, count));
    std::string text = parts.empty() ? "" : fmt::format("; unsupported operators besides: {}", fmt::join(parts, ", "));
    std::set<std::string> initializers;
    for (const auto& t : state_.graph_.initializer()) initializers.insert(t.name());
    for (const auto& v : state_.graph_.input()) {
      if (initializers.count(v.name()) || !v.type().has_tensor_type() || to_dtype(v.type().tensor_type().elem_type()))
        continue;
      text += fmt::format("; input '{}' is {}", v.name(), onnx_type_name(v.type().tensor_type().elem_type()));
    }
    return text;
  }

  // Integer tensors no consumer ever quantized (raw accumulators of ConvInteger/MatMulInteger,
  // integer graph inputs feeding only data movement) keep the identity quantization: scale 1,
  // zero point 0; an int32 one stays "not quantized". A copy made by data movement (Concat, Pad,
  // Reshape, ...) from a tensor a later consumer quantized takes that quantization: the copy
  // holds the same integers, and a Concat requantizes an input quantized otherwise than its output.
  void finish_pending_quantization() {
    for (std::size_t i = 0; i < state_.out_.tensors.size(); ++i) {  // sources come before their copies
      if (!state_.pending_[i]) continue;
      ir::Tensor& t = state_.out_.tensors[i];
      if (t.dtype == ir::DType::Int32) continue;
      t.quantized = true;
      t.quant = ir::Quant{{1.0f}, {0}, -1};
      const std::vector<ir::TensorId>& sources = state_.pending_sources_[i];
      if (sources.empty()) continue;
      t.quant = state_.out_.tensors[sources[0]].quant;
      for (const ir::TensorId source : sources)
        if (!same_quant(state_.out_.tensors[source].quant, t.quant))
          throw Error(fmt::format(
              "tensor '{}' copies integer tensors that later operators quantize differently ('{}' and '{}')", t.name,
              state_.out_.tensors[sources[0]].name, state_.out_.tensors[source].name));
    }
  }

  // ----- translation --------------------------------------------------------------------------

  // A node is translated by the rule of its operator (ops/operator.hpp), except the two that are
  // only names for values.
  void translate(const NodeProto& n) {
    const std::string& op = n.op_type();
    const bool contrib = n.domain() == "com.microsoft";
    if (!contrib && !n.domain().empty() && n.domain() != "ai.onnx")
      throw Error(
          fmt::format("unsupported operator: domain '{}' is not supported (see docs/operators.md)", n.domain()));
    if (names_a_value(n)) return op == "Constant" ? add_constant_node(n) : set_value(n.output(0), value(n.input(0)));
    if (const ops::ImportRule* rule = ops::import_rule(n.domain(), op)) return rule->translate(state_, n);
    throw Error(fmt::format("unsupported {}operator (the supported ones are listed in docs/operators.md){}",
                            contrib ? "com.microsoft " : "", others_unsupported(n)));
  }

  // How many more nodes are unsupported: the user should see the size of the gap, not only its start.
  std::string others_unsupported(const NodeProto& n) const {
    int count = 0;
    for (const auto& other : state_.graph_.node()) count += &other != &n && !is_supported(other);
    if (count == 0) return "";
    return fmt::format("; {} more unsupported node{} (tightfit inspect --json lists them all)", count,
                       count == 1 ? "" : "s");
  }

  void add_graph_input(const onnx::ValueInfoProto& v) {
    const std::string where = fmt::format("tensor '{}'", v.name());
    if (!v.type().has_tensor_type()) throw Error(where + ": graph input is not a tensor");
    const auto& tt = v.type().tensor_type();
    const auto dtype = to_dtype(tt.elem_type());
    if (!dtype)
      throw Error(fmt::format("{}: dtype {} is not supported (int8, uint8, int32, float32)", where,
                              onnx_type_name(tt.elem_type())));
    if (!tt.has_shape()) throw Error(where + ": graph input has no shape");
    Shape shape;
    for (int i = 0; i < tt.shape().dim_size(); ++i) {
      const auto& d = tt.shape().dim(i);
      if (d.has_dim_value()) {
        shape.push_back(d.dim_value());
        continue;
      }
      const std::string symbol = d.has_dim_param() ? fmt::format(" ('{}')", d.dim_param()) : "";
      // A symbolic batch: tightfit compiles for one sample at a time (the report says so). The one
      // dimension of a 1-D input is its length, not a batch.
      if (i == 0 && tt.shape().dim_size() >= 2) {
        shape.push_back(1);
        state_.out_.batch_pinned.push_back(v.name());
        continue;
      }
      throw Error(fmt::format("{}: dimension {}{} is dynamic; tightfit needs static shapes", where, i, symbol));
    }
    checked_elements(shape, v.name());
    ir::Tensor t;
    t.name = v.name();
    t.dtype = *dtype;
    t.shape = shape;
    const ir::TensorId id = add_tensor(std::move(t), *dtype != ir::DType::Float32);
    state_.out_.inputs.push_back(id);
    set_value(v.name(),
              Value{*dtype == ir::DType::Float32 ? Value::Kind::FloatInput : Value::Kind::Integer, id, nullptr});
  }

  void add_graph_output(const std::string& name) {
    const Value& v = value(name);
    const std::string where = fmt::format("tensor '{}'", name);
    if (v.kind == Value::Kind::Integer || v.kind == Value::Kind::Float) {  // a float island's value: as it is
      state_.out_.outputs.push_back(v.tensor);
      return;
    }
    if (v.kind != Value::Kind::Dequantized || tensor(v.tensor).is_constant)
      throw Error(where + ": graph output is not computed from the input (a constant or a float input passed through)");
    if (auto island = state_.float_of_.find(v.tensor); island != state_.float_of_.end()) {
      state_.out_.outputs.push_back(island->second);  // a float island dequantizes it already
      return;
    }
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
    state_.out_.nodes.push_back(std::move(node));
    state_.out_.outputs.push_back(id);
  }

  void add_constant_node(const NodeProto& n) {
    allow_attributes(n, {"value"});
    const auto* a = find_attr(n, "value");
    if (!a || !a->has_t()) throw Error("only the 'value' form of Constant is supported");
    state_.constant_nodes_.push_back(a->t());
    state_.constant_nodes_.back().set_name(n.output(0));
    set_value(n.output(0), Value{Value::Kind::Constant, ir::kNoTensor, &state_.constant_nodes_.back()});
  }
};

}  // namespace

ir::Graph import_onnx(const std::string& path) {
  const onnx::ModelProto model = load_model(path);
  ImportState state(path, model);
  return Importer(state).run();
}

std::vector<UnsupportedNode> unsupported_nodes(const std::string& path) {
  const onnx::ModelProto model = load_model(path);
  std::vector<UnsupportedNode> nodes;
  for (int i = 0; i < model.graph().node_size(); ++i) {
    const NodeProto& n = model.graph().node(i);
    if (is_supported(n)) continue;
    const std::string name = n.name().empty() ? fmt::format("{}_{}", n.op_type(), i) : n.name();
    nodes.push_back({name, n.domain(), n.op_type()});
  }
  return nodes;
}

}  // namespace tightfit::import
