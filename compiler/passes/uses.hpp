// Who reads and who writes each tensor of a graph: what the rewriting passes check first.
#pragma once

#include <vector>

#include "ir/ir.hpp"

namespace tightfit::passes {

struct TensorUses {
  std::vector<int> readers;   // per tensor: the node inputs that read it, plus 1 for a graph output and
                              // 1 for each node an If's condition guards
  std::vector<int> producer;  // per tensor: the index of the node that writes it, or -1
};

inline TensorUses tensor_uses(const ir::Graph& g) {
  TensorUses uses{std::vector<int>(g.tensors.size(), 0), std::vector<int>(g.tensors.size(), -1)};
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    for (auto id : g.nodes[i].inputs)
      if (id != ir::kNoTensor) ++uses.readers[id];
    if (g.nodes[i].guard.guarded()) ++uses.readers[g.nodes[i].guard.condition];
    for (auto id : g.nodes[i].outputs) uses.producer[id] = static_cast<int>(i);
  }
  for (auto id : g.outputs) ++uses.readers[id];
  return uses;
}

// Same type and the same per-tensor scale and zero point.
inline bool same_quant(const ir::Tensor& a, const ir::Tensor& b) {
  return a.dtype == b.dtype && a.quant.scale == b.quant.scale && a.quant.zero_point == b.quant.zero_point &&
         a.quant.axis == b.quant.axis && !a.quant.per_channel();
}

}  // namespace tightfit::passes
