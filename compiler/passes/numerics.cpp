// check_numerics(): under TFLite numerics, every node is one whose TFLite arithmetic the kernels
// reproduce (docs/numerics.md, "TFLite numerics"), or one that rounds nothing. Each operator states
// which in its unit (ops::Operator::tflite_gap).
#include <fmt/format.h>

#include "error.hpp"
#include "ops/operator.hpp"
#include "passes/passes.hpp"

namespace tightfit::passes {
namespace {

// Why TFLite's arithmetic is not available for `n`, or empty when it is.
std::string tflite_gap(const ir::Graph& g, const ir::Node& n) {
  // A float output from a float input: a float island (a Dequantize's input is integer).
  const bool float_node = g.tensors[n.outputs[0]].dtype == ir::DType::Float32 && !n.inputs.empty() &&
                          n.inputs[0] != ir::kNoTensor && g.tensors[n.inputs[0]].dtype == ir::DType::Float32;
  if (float_node) return "a float island has no TFLite integer form";
  return ops::of(n.op).tflite_gap(g, n);
}

}  // namespace

void check_numerics(const ir::Graph& graph) {
  if (graph.numerics != ir::Numerics::Tflite) return;
  for (const ir::Node& n : graph.nodes) {
    const std::string gap = tflite_gap(graph, n);
    if (!gap.empty())
      throw Error(fmt::format("{}: {} ({}): TFLite numerics: {} (--numerics ort computes it as ONNX Runtime does)",
                              graph.source, n.name, n.onnx_op, gap));
  }
}

}  // namespace tightfit::passes
