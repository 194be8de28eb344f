// If, and IfResult: the result of one branch of a data-dependent If copied into the If's output.
//
// Import of an If: with a constant condition, the branch it takes is translated in place of the
// If (its nodes become the graph's, its result the If's output), the other dropped. Otherwise the
// condition must be a one-element bool tensor (a comparison's, through Cast to bool), and both
// branches are translated one after the other, each node guarded by the condition and its branch
// (ir::Guard); each branch ends with an IfResult writing its result into the If's output, a
// tensor both write (ir/ir.hpp). A branch reads the graph's values by name; its initializers and
// Constants are constants. A value a branch dequantizes for a float operator is the branch's own,
// so the other does not read it. Ifs inside a branch are refused.
#include <fmt/format.h>

#include "ops/operator.hpp"
#include "ops/emission.hpp"
#include "ops/translator.hpp"

namespace tightfit::ops {
namespace {

using namespace emit;

struct Emit : Emission {
  using Emission::Emission;

  void if_result(const Node& n) {
    call(n,
         fmt::format("tightfit::copy_bytes({}, {}, {})", out(n).bytes(), pointer(n.inputs[0]), pointer(n.outputs[0])));
  }
};

struct Import : import::Translator {
  using Translator::Translator;

  static bool truth(const onnx::TensorProto& c) {
    if (c.data_type() != onnx::TensorProto::BOOL) throw Error(fmt::format("condition '{}' is not a bool", c.name()));
    if (!c.raw_data().empty()) return c.raw_data()[0] != 0;
    if (c.int32_data_size() > 0) return c.int32_data(0) != 0;
    throw Error(fmt::format("condition '{}' holds no element", c.name()));
  }

  const onnx::GraphProto& branch(const NodeProto& n, const char* name) {
    const auto* a = find_attr(n, name);
    if (!a || !a->has_g()) throw Error(fmt::format("the If has no {}", name));
    if (a->g().output_size() != 1)
      throw Error(fmt::format("its {} has {} outputs; one is supported", name, a->g().output_size()));
    return a->g();
  }

  // The branch's nodes, translated; the name of its result.
  const std::string& translate_branch(const onnx::GraphProto& g) {
    for (const auto& t : g.initializer())
      set_value(t.name(), import::Value{import::Value::Kind::Constant, ir::kNoTensor, &t});
    for (const auto& sub : g.node()) state_.translate_node(sub);
    return g.output(0).name();
  }

  void translate_if(const NodeProto& n) {
    allow_attributes(n, {"then_branch", "else_branch"});
    if (n.output_size() != 1) throw Error(fmt::format("an If with {} outputs; one is supported", n.output_size()));
    if (state_.in_branch_) throw Error("an If inside a branch of another If is not supported");
    const onnx::GraphProto &then_graph = branch(n, "then_branch"), &else_graph = branch(n, "else_branch");
    const import::Value condition = value(n.input(0));
    if (condition.kind == import::Value::Kind::Constant) {
      // Folded: the branch taken is the graph's, its result the If's output.
      const std::string& result = translate_branch(truth(*condition.constant) ? then_graph : else_graph);
      return set_value(n.output(0), value(result));
    }
    const ir::Tensor& c = tensor(condition.tensor);
    if (condition.kind != import::Value::Kind::Integer || c.dtype != ir::DType::Bool || c.elements() != 1)
      throw Error(fmt::format("condition '{}' is not a one-element bool tensor", n.input(0)));
    state_.in_branch_ = true;
    ir::TensorId output = ir::kNoTensor;
    std::string then_result;
    for (const bool then_branch : {true, false}) {
      const std::map<ir::TensorId, ir::TensorId> float_of = state_.float_of_;
      const std::size_t first = state_.out_.nodes.size();
      const std::string& name = translate_branch(then_branch ? then_graph : else_graph);
      const import::Value result = value(name);
      if (result.kind != import::Value::Kind::Float && result.kind != import::Value::Kind::Integer)
        throw Error(fmt::format("the result '{}' of its {} branch is not a float or integer activation", name,
                                then_branch ? "then" : "else"));
      const ir::Tensor r = tensor(result.tensor);
      if (output == ir::kNoTensor) {
        output = add_activation(n.output(0), r.dtype, r.shape, r.quantized ? &r.quant : nullptr);
        then_result = name;
      } else {
        const ir::Tensor& o = tensor(output);
        if (o.dtype != r.dtype || o.shape != r.shape || o.quantized != r.quantized ||
            (o.quantized && !import::same_quant(o.quant, r.quant)))
          throw Error(fmt::format("its branches' results '{}' and '{}' differ in type, shape or quantization",
                                  then_result, name));
      }
      ir::Node& copy = emit(n, ir::OpKind::IfResult, then_branch ? "If (then)" : "If (else)", {result.tensor}, output);
      copy.name = fmt::format("{} ({})", node_name(n), then_branch ? "then" : "else");
      for (std::size_t k = first; k < state_.out_.nodes.size(); ++k)
        state_.out_.nodes[k].guard = {condition.tensor, then_branch};
      state_.float_of_ = float_of;
    }
    state_.in_branch_ = false;
    const bool is_float = tensor(output).dtype == ir::DType::Float32;
    set_value(n.output(0),
              import::Value{is_float ? import::Value::Kind::Float : import::Value::Kind::Integer, output, nullptr});
  }
};

}  // namespace

extern const Operator kIfResult = [] {
  Operator op{};
  op.kind = ir::OpKind::IfResult;
  op.imports = {{"", "If", [](ImportState& s, const NodeProto& n) { Import(s).translate_if(n); }}};
  op.emit = [](EmissionState& s, const std::string&, const ir::Node& n) { Emit(s).if_result(n); };
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
  op.tflite_gap = no_tflite_form;
  return op;
}();

}  // namespace tightfit::ops
