// Reshape [N, K] -> [N, K, 1, 1], a 1x1 Conv, Reshape [N, M, 1, 1] -> [N, M]: the way a Gemm is
// written in QOperator form (ONNX has no QLinearGemm). It computes exactly a FullyConnected, so
// it becomes one: the QOperator twin of a QDQ model then gives the same IR, and the kernel is
// the simpler one.
#include <map>

#include "passes/passes.hpp"

namespace tightfit::passes {

namespace {

bool is_pointwise(const ir::Attrs& a) {
  auto all = [](const std::vector<std::int64_t>& v, std::int64_t x) {
    for (auto e : v)
      if (e != x) return false;
    return true;
  };
  return a.group == 1 && all(a.kernel_shape, 1) && all(a.strides, 1) && all(a.dilations, 1) && all(a.pads, 0);
}

}  // namespace

void conv1x1_to_fully_connected(ir::Graph& g) {
  // How many readers each tensor has (a graph output counts as one).
  std::vector<int> readers(g.tensors.size(), 0);
  std::map<ir::TensorId, std::size_t> producer;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    for (auto id : g.nodes[i].inputs)
      if (id != ir::kNoTensor) ++readers[id];
    for (auto id : g.nodes[i].outputs) producer[id] = i;
  }
  for (auto id : g.outputs) ++readers[id];

  std::vector<bool> removed(g.nodes.size(), false);
  for (std::size_t c = 0; c < g.nodes.size(); ++c) {
    ir::Node& conv = g.nodes[c];
    if (conv.op != ir::OpKind::Conv || !is_pointwise(conv.attrs)) continue;
    const ir::TensorId in4 = conv.inputs[0], out4 = conv.outputs[0];
    auto before = producer.find(in4);
    if (before == producer.end() || readers[in4] != 1 || readers[out4] != 1) continue;
    const ir::Node& flatten = g.nodes[before->second];
    if (flatten.op != ir::OpKind::Reshape) continue;
    const ir::Tensor& x = g.tensors[flatten.inputs[0]];
    const ir::Tensor& x4 = g.tensors[in4];
    if (x.shape.size() != 2 || x4.shape != std::vector<std::int64_t>{x.shape[0], x.shape[1], 1, 1}) continue;
    // The one reader of the conv's output must be the Reshape back to [N, M].
    std::size_t r = c + 1;
    while (r < g.nodes.size() && (g.nodes[r].inputs.empty() || g.nodes[r].inputs[0] != out4)) ++r;
    if (r == g.nodes.size() || g.nodes[r].op != ir::OpKind::Reshape) continue;
    const ir::Tensor& y4 = g.tensors[out4];
    const ir::Tensor& y = g.tensors[g.nodes[r].outputs[0]];
    if (y.shape != std::vector<std::int64_t>{y4.shape[0], y4.shape[1]}) continue;

    ir::Tensor w = g.tensors[conv.inputs[1]];  // [M, K, 1, 1] -> [M, K]: same bytes
    w.shape = {w.shape[0], w.shape[1]};
    g.tensors.push_back(std::move(w));
    conv.op = ir::OpKind::FullyConnected;
    conv.onnx_op = "Reshape+" + conv.onnx_op + "+Reshape";
    conv.inputs[0] = flatten.inputs[0];
    conv.inputs[1] = static_cast<ir::TensorId>(g.tensors.size() - 1);
    conv.outputs[0] = g.nodes[r].outputs[0];
    const std::int32_t act_min = conv.attrs.act_min, act_max = conv.attrs.act_max;
    conv.attrs = ir::Attrs{};
    conv.attrs.act_min = act_min;
    conv.attrs.act_max = act_max;
    removed[before->second] = removed[r] = true;
  }
  std::vector<ir::Node> kept;
  for (std::size_t i = 0; i < g.nodes.size(); ++i)
    if (!removed[i]) kept.push_back(std::move(g.nodes[i]));
  g.nodes = std::move(kept);
}

}  // namespace tightfit::passes
