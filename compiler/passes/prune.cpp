#include "passes/passes.hpp"

#include <vector>

namespace tightfit::passes {

void prune_unused_tensors(ir::Graph& graph) {
  std::vector<bool> used(graph.tensors.size(), false);
  auto mark = [&](ir::TensorId id) {
    if (id != ir::kNoTensor) used[id] = true;
  };
  for (const auto& n : graph.nodes) {
    for (auto id : n.inputs) mark(id);
    for (auto id : n.outputs) mark(id);
    mark(n.guard.condition);  // an If's condition is read by its branches' `if`
  }
  for (auto id : graph.inputs) mark(id);
  for (auto id : graph.outputs) mark(id);

  std::vector<ir::TensorId> new_id(graph.tensors.size(), ir::kNoTensor);
  std::vector<ir::Tensor> kept;
  for (std::size_t i = 0; i < graph.tensors.size(); ++i) {
    if (!used[i]) continue;
    new_id[i] = static_cast<ir::TensorId>(kept.size());
    kept.push_back(std::move(graph.tensors[i]));
  }
  graph.tensors = std::move(kept);
  auto renumber = [&](ir::TensorId& id) {
    if (id != ir::kNoTensor) id = new_id[id];
  };
  for (auto& n : graph.nodes) {
    for (auto& id : n.inputs) renumber(id);
    for (auto& id : n.outputs) renumber(id);
    renumber(n.guard.condition);
  }
  for (auto& id : graph.inputs) renumber(id);
  for (auto& id : graph.outputs) renumber(id);
}

}  // namespace tightfit::passes
