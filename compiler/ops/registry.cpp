// The operator table: one entry per line of ops.def, each defined in its own file.
#include <string>

#include "error.hpp"
#include "ops/operator.hpp"
#include "tightfit/kernels.hpp"
#include "ops/emission.hpp"

namespace tightfit::ops {

#define TIGHTFIT_OP(name) extern const Operator k##name;
#include "ir/ops.def"
#undef TIGHTFIT_OP

const char* unstated_rule(const Operator& op) {
  if (op.shared_kernel == SharedKernel::unstated) return "shared kernel";
  if (op.layout == LayoutRule::unstated) return "layout";
  if (op.tile_window == TileWindow::unstated) return "tile window";
  if (op.pad_fold == PadFold::unstated) return "pad fold";
  if (op.output_range == OutputRange::unstated) return "output range";
  if (op.strided_output == StridedOutput::unstated) return "strided output";
  if (!op.macs) return "MACs";
  if (!op.cost_key) return "cost key";
  if (op.cost_work == CostWork::unstated) return "cost work";
  if (!op.tflite_gap) return "TFLite numerics";
  return nullptr;
}

std::string tflite_exact(const ir::Graph&, const ir::Node&) { return {}; }

std::string no_tflite_form(const ir::Graph&, const ir::Node&) { return "no TFLite arithmetic for this operator yet"; }

const std::vector<const Operator*>& operators() {
  static const std::vector<const Operator*> table = [] {
    const std::vector<const Operator*> t = {
#define TIGHTFIT_OP(name) &k##name,
#include "ir/ops.def"
#undef TIGHTFIT_OP
    };
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (static_cast<std::size_t>(t[i]->kind) != i)
        throw Error(std::string("internal error: operator ") + ir::op_name(t[i]->kind) +
                    " is out of place in the table");
      if (const char* rule = unstated_rule(*t[i]))
        throw Error(std::string("internal error: operator ") + ir::op_name(t[i]->kind) + " states no " + rule +
                    " rule");
    }
    return t;
  }();
  return table;
}

const Operator& of(ir::OpKind kind) { return *operators().at(static_cast<std::size_t>(kind)); }

plan::OverlapDistances overlap_distance(const ir::Graph& graph, const ir::Node& node, std::size_t input) {
  const Operator& op = of(node.op);
  return op.overlap ? op.overlap(graph, node, input) : plan::OverlapDistances{};
}

plan::OverlapDistances overlap_distances(std::int32_t below, std::int32_t above) {
  auto bytes = [](std::int32_t d) {
    return d == tightfit::kNoOverlap ? std::nullopt : std::optional<std::uint64_t>(static_cast<std::uint64_t>(d));
  };
  return {bytes(below), bytes(above)};
}

plan::OverlapDistances binary_overlap(const ir::Graph& graph, const ir::Node& node, std::size_t input) {
  const std::optional<tightfit::BinaryShape> shape = emit::binary_shape_of(graph, node);
  if (!shape) return {};
  return overlap_distances(tightfit::detail::binary_distance(*shape, static_cast<int>(input)), tightfit::kNoOverlap);
}

plan::OverlapDistances lookup_overlap(const ir::Graph& graph, const ir::Node& node, std::size_t input) {
  // The float form of Sigmoid and Tanh: elementwise, each element read before it is written.
  if (graph.tensors[node.inputs[input]].dtype == ir::DType::Float32) return overlap_distances(0, tightfit::kNoOverlap);
  const bool accumulator = graph.tensors[node.inputs[input]].dtype == ir::DType::Int32;
  return overlap_distances(accumulator ? tightfit::requantize_accumulator_distance() : tightfit::lookup_distance(),
                           tightfit::kNoOverlap);
}

std::int64_t no_macs(const ir::Graph&, const ir::Node&) { return 0; }

std::string named_for_operator(const ir::Graph&, const ir::Node& node) { return ir::op_name(node.op); }

std::string no_call(const ir::Graph&, const ir::Node&) { return ""; }

std::string lookup_table_cost(const ir::Graph& graph, const ir::Node& node) {
  const ir::DType x = graph.tensors[node.inputs[0]].dtype;
  return x == ir::DType::Int8 || x == ir::DType::UInt8 ? "Sigmoid" : ir::op_name(node.op);
}

std::int64_t macs(const ir::Graph& graph, const ir::Node& node) {
  if (node.outputs.empty() || node.inputs.size() < 2) return 0;
  return of(node.op).macs(graph, node);
}

std::int64_t model_macs(const ir::Graph& graph) {
  std::int64_t total = 0;
  for (const ir::Node& n : graph.nodes) total += macs(graph, n);
  return total;
}

const ImportRule* import_rule(const std::string& domain, const std::string& op_type) {
  const std::string d = domain == "ai.onnx" ? "" : domain;
  for (const Operator* op : operators())
    for (const ImportRule& rule : op->imports)
      if (d == rule.domain && op_type == rule.op_type) return &rule;
  return nullptr;
}

}  // namespace tightfit::ops
