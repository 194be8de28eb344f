#include "schedule/lifetimes.hpp"

#include <algorithm>
#include <climits>

namespace tightfit::schedule {

std::vector<ir::TensorId> view_roots(const ir::Graph& g) {
  std::vector<ir::TensorId> root(g.tensors.size());
  for (std::size_t i = 0; i < root.size(); ++i) root[i] = static_cast<ir::TensorId>(i);
  // A Concat input written in place lies in the Concat's output (whose producer is no view).
  for (std::size_t i = 0; i < root.size(); ++i)
    if (g.tensors[i].slice_of != ir::kNoTensor) root[i] = g.tensors[i].slice_of;
  for (const ir::Node& n : g.nodes)  // schedule order: a view's input already has its root
    if (n.op == ir::OpKind::Reshape) root[n.outputs[0]] = root[n.inputs[0]];
  // A band of a tiled stage's input (passes/tile.cpp) may lie in a Reshape's output, a Concat
  // input in a band of a stage's output, which lies in that output.
  for (bool changed = true; changed;) {
    changed = false;
    for (std::size_t i = 0; i < root.size(); ++i)
      if (g.tensors[i].slice_of != ir::kNoTensor && root[i] != root[g.tensors[i].slice_of]) {
        root[i] = root[g.tensors[i].slice_of];
        changed = true;
      }
  }
  return root;
}

namespace {

// The steps of [first, last] where a tensor touched at `touches` is dead because the If branch
// running there does not need it (kBeforeFirst, kAfterLast: touched at the graph's edges). A step
// is live when the tensor is touched at or before it and at or after it by steps that can run in
// the same call (not in the other branch of the same If). So a value read by the else branch
// alone is dead over the then branch; the If's output, written by the last step of each branch,
// over the else branch before its last step.
constexpr int kBeforeFirst = -1, kAfterLast = INT_MAX;

std::vector<plan::StepRange> exclusive_gaps(const ir::Graph& g, const std::vector<int>& touches, int first, int last) {
  std::vector<plan::StepRange> gaps;
  for (int step = first; step <= last; ++step) {
    const ir::Guard& here = g.nodes[static_cast<std::size_t>(step)].guard;
    bool before = false, after = false;
    for (const int t : touches) {
      if (t != kBeforeFirst && t != kAfterLast && g.nodes[static_cast<std::size_t>(t)].guard.excludes(here)) continue;
      before = before || t <= step;
      after = after || t >= step;
    }
    if (before && after) continue;
    if (!gaps.empty() && gaps.back().last == step - 1)
      gaps.back().last = step;
    else
      gaps.push_back({step, step});
  }
  return gaps;
}

// The overlap pair of every node whose output may lie over an input dying at it.
void add_overlaps(const ir::Graph& g, const LifetimeOptions& options, Lifetimes& result) {
  std::vector<plan::Buffer>& buffers = result.problem.buffers;
  // The model's inputs are read again by the next run(); its outputs (or views of them) live
  // past the last step, so the last step's output must not lie over one of them.
  std::vector<bool> at_boundary(buffers.size(), false);
  for (const auto& ids : {g.inputs, g.outputs})
    for (const ir::TensorId t : ids)
      if (result.tensor_buffer[t] >= 0) at_boundary[result.tensor_buffer[t]] = true;
  for (int step = 0; step < static_cast<int>(g.nodes.size()); ++step) {
    const ir::Node& n = g.nodes[step];
    if (n.op == ir::OpKind::Reshape || n.outputs.size() != 1) continue;
    const int out = result.tensor_buffer[n.outputs[0]];
    // An output written into part of a Concat's output (which is live before this step, holding
    // the other parts) overlaps nothing: the pair's distances are for a buffer of its own.
    if (out < 0 || g.tensors[n.outputs[0]].slice_of != ir::kNoTensor || buffers[out].first_step != step) continue;
    std::optional<plan::Overlap> best;
    std::uint64_t best_saving = 0;
    for (std::size_t i = 0; i < n.inputs.size(); ++i) {
      // An input read in place from part of a buffer (a band of a tiled stage's input): the
      // distances are for an input at the start of its own buffer.
      if (n.inputs[i] == ir::kNoTensor || g.tensors[n.inputs[i]].slice_of != ir::kNoTensor) continue;
      const int in = result.tensor_buffer[n.inputs[i]];
      if (in < 0 || in == out || at_boundary[in] || buffers[in].last_step != step) continue;
      // A buffer with gaps (an If's) overlaps nothing: the pair's steps would need to be per branch.
      if (!buffers[in].gaps.empty() || !buffers[out].gaps.empty()) continue;
      // A distance must hold for every operand slot that reads this buffer.
      plan::OverlapDistances d{0, 0};
      auto widen = [](std::optional<std::uint64_t>& all, const std::optional<std::uint64_t>& slot) {
        all = all && slot ? std::optional<std::uint64_t>(std::max(*all, *slot)) : std::nullopt;
      };
      for (std::size_t j = 0; j < n.inputs.size(); ++j) {
        if (n.inputs[j] == ir::kNoTensor || result.tensor_buffer[n.inputs[j]] != in) continue;
        const plan::OverlapDistances slot = options.overlap_distance(n, j);
        widen(d.below, slot.below);
        widen(d.above, slot.above);
      }
      // Only distances that let the two share a byte.
      if (d.below && *d.below >= buffers[out].size) d.below.reset();
      if (d.above && *d.above >= buffers[in].size) d.above.reset();
      const std::uint64_t saving = std::max(d.below ? std::min(buffers[out].size - *d.below, buffers[in].size) : 0,
                                            d.above ? std::min(buffers[in].size - *d.above, buffers[out].size) : 0);
      if (saving > best_saving) {
        best = plan::Overlap{out, in, d.below, d.above};
        best_saving = saving;
      }
    }
    if (!best) continue;
    result.problem.overlaps.push_back(*best);
    result.overlap_step.push_back(step);
  }
}

}  // namespace

Lifetimes compute_lifetimes(const ir::Graph& g, const std::function<std::uint64_t(const ir::Node&)>& scratch_bytes,
                            const LifetimeOptions& options) {
  const int last_step = std::max<int>(0, static_cast<int>(g.nodes.size()) - 1);
  const std::vector<ir::TensorId> root = view_roots(g);

  // Live interval and traffic (bytes read + written) per root tensor; first > last means unused.
  const std::size_t count = g.tensors.size();
  std::vector<int> first(count, last_step + 1), last(count, -1);
  std::vector<std::uint64_t> traffic(count, 0);
  // With an If, the steps each root tensor is read or written at (-1: the graph's edge, before
  // the first step or after the last), for its gaps.
  const bool has_if = g.has_if();
  std::vector<std::vector<int>> touches(has_if ? count : 0);
  auto touch = [&](ir::TensorId t, int step) {
    const ir::TensorId r = root[t];
    first[r] = std::min(first[r], step);
    last[r] = std::max(last[r], step);
    traffic[r] += static_cast<std::uint64_t>(g.tensors[t].bytes());
    if (has_if) touches[r].push_back(step);
  };
  for (int step = 0; step < static_cast<int>(g.nodes.size()); ++step) {
    const ir::Node& n = g.nodes[step];
    if (n.op == ir::OpKind::Reshape) {  // a view moves no bytes, but keeps its source alive
      last[root[n.inputs[0]]] = std::max(last[root[n.inputs[0]]], step);
      if (has_if) touches[root[n.inputs[0]]].push_back(step);
      continue;
    }
    for (ir::TensorId t : n.inputs)
      if (t != ir::kNoTensor && !g.tensors[t].is_constant) touch(t, step);
    for (ir::TensorId t : n.outputs) touch(t, step);
    // An If's condition is read by the `if` before its then branch's first step.
    if (n.guard.guarded() && (step == 0 || !(g.nodes[step - 1].guard.condition == n.guard.condition)))
      touch(n.guard.condition, step);
  }
  std::vector<bool> at_boundary(count, false);
  for (ir::TensorId t : g.inputs) {
    first[root[t]] = 0;
    last[root[t]] = std::max(last[root[t]], 0);
    at_boundary[root[t]] = true;
    if (has_if) touches[root[t]].push_back(kBeforeFirst);
  }
  for (ir::TensorId t : g.outputs) {
    first[root[t]] = std::min(first[root[t]], last_step);
    last[root[t]] = last_step;
    at_boundary[root[t]] = true;
    if (has_if) touches[root[t]].push_back(kAfterLast);
  }

  Lifetimes result;
  result.tensor_buffer.assign(count, -1);
  result.node_scratch.assign(g.nodes.size(), -1);
  auto add_buffer = [&](const std::string& name, std::uint64_t size, int from, int to, std::uint64_t bytes_moved,
                        std::uint32_t element_bytes = 1) {
    plan::Buffer b;
    b.name = name;
    b.size = size;
    // An int32 or float32 tensor is read as such: never less than its element size (4), whatever
    // --alignment says, or a Cortex-M0 would fault on it.
    b.alignment = std::max(options.alignment, element_bytes);
    b.first_step = from;
    b.last_step = to;
    b.traffic = bytes_moved;
    result.problem.buffers.push_back(std::move(b));
    return static_cast<int>(result.problem.buffers.size() - 1);
  };

  for (std::size_t t = 0; t < count; ++t) {
    const ir::Tensor& tensor = g.tensors[t];
    if (tensor.is_constant || root[t] != static_cast<ir::TensorId>(t) || first[t] > last[t]) continue;
    if (at_boundary[t] && !options.io_in_arena) continue;
    const int b = add_buffer(tensor.name, static_cast<std::uint64_t>(tensor.bytes()), first[t], last[t], traffic[t],
                             static_cast<std::uint32_t>(ir::dtype_size(tensor.dtype)));
    result.buffer_tensor.push_back(static_cast<ir::TensorId>(t));
    result.buffer_scratch_node.push_back(-1);
    result.tensor_buffer[t] = b;
    if (has_if) result.problem.buffers[b].gaps = exclusive_gaps(g, touches[t], first[t], last[t]);
  }
  for (std::size_t t = 0; t < count; ++t)
    if (root[t] != static_cast<ir::TensorId>(t)) result.tensor_buffer[t] = result.tensor_buffer[root[t]];

  if (options.overlap_distance) add_overlaps(g, options, result);

  for (int step = 0; step < static_cast<int>(g.nodes.size()); ++step) {
    const std::uint64_t bytes = scratch_bytes(g.nodes[step]);
    if (bytes == 0) continue;
    result.node_scratch[step] = add_buffer(g.nodes[step].name + ":scratch", bytes, step, step, 2 * bytes);
    result.buffer_tensor.push_back(ir::kNoTensor);
    result.buffer_scratch_node.push_back(step);
  }
  return result;
}

}  // namespace tightfit::schedule
