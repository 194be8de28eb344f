// ShuffleNet's channel shuffle as exported: Reshape [N, C, H, W] -> [N, g, C/g, H, W], Transpose
// perm [0, 2, 1, 3, 4], Reshape -> [N, C, H, W]. The 5-D Transpose has no kernel of its own and
// around it the channels-last stage would add two layout transposes; as one ChannelShuffle node it
// is a permutation of each pixel's channels (docs/operators.md, docs/import.md).
#include "passes/passes.hpp"
#include "passes/uses.hpp"

namespace tightfit::passes {

void fuse_channel_shuffles(ir::Graph& g) {
  const TensorUses uses = tensor_uses(g);
  // The one node reading tensor t, when exactly one node does and it is not a graph output.
  auto only_reader = [&](ir::TensorId t) -> int {
    if (uses.readers[t] != 1) return -1;
    for (std::size_t i = 0; i < g.nodes.size(); ++i)
      for (ir::TensorId id : g.nodes[i].inputs)
        if (id == t) return static_cast<int>(i);
    return -1;
  };
  std::vector<bool> removed(g.nodes.size(), false);
  for (std::size_t r = 0; r < g.nodes.size(); ++r) {
    ir::Node& split = g.nodes[r];
    if (split.op != ir::OpKind::Reshape || removed[r]) continue;
    const std::vector<std::int64_t>& x = g.tensors[split.inputs[0]].shape;
    const std::vector<std::int64_t>& five = g.tensors[split.outputs[0]].shape;
    if (x.size() != 4 || five.size() != 5 || five[0] != x[0] || five[1] < 2 || five[1] * five[2] != x[1] ||
        five[3] != x[2] || five[4] != x[3])
      continue;
    const int t = only_reader(split.outputs[0]);
    if (t < 0 || g.nodes[t].op != ir::OpKind::Transpose ||
        g.nodes[t].attrs.perm != std::vector<std::int64_t>{0, 2, 1, 3, 4})
      continue;
    const int back = only_reader(g.nodes[t].outputs[0]);
    if (back < 0 || g.nodes[back].op != ir::OpKind::Reshape || g.tensors[g.nodes[back].outputs[0]].shape != x ||
        !same_quant(g.tensors[split.inputs[0]], g.tensors[g.nodes[back].outputs[0]]))
      continue;
    const std::int64_t groups = five[1];
    split.op = ir::OpKind::ChannelShuffle;
    split.onnx_op = "Reshape+Transpose+Reshape";
    split.outputs[0] = g.nodes[back].outputs[0];
    split.attrs.group = groups;
    removed[t] = removed[back] = true;
  }
  std::vector<ir::Node> kept;
  for (std::size_t i = 0; i < g.nodes.size(); ++i)
    if (!removed[i]) kept.push_back(std::move(g.nodes[i]));
  g.nodes = std::move(kept);
}

}  // namespace tightfit::passes
