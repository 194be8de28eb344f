// From the scheduled graph to the planner's problem: one buffer per tensor that needs memory,
// live from the step that writes it to the last step that reads it.
//
// The schedule is the node order: step i runs node i. Graph inputs are live from step 0 and graph
// outputs to the last step. A Reshape (view) writes nothing: its output shares its input's buffer,
// which then lives until the last reader of either. A Concat input written in place
// (passes/zero_copy_concat.cpp) lies in the Concat's output, which then lives from the first step
// that writes a part of it. A kernel's scratch buffer lives only during
// its own step.
//
// Overlap pairs: a node's output may lie over an input whose buffer dies at that node, from the
// kernel's distance below it, or above it for kernels that run backwards (plan::Overlap). When several inputs die
// there, the one the output can share the most bytes with. The model's inputs and outputs are never overwritten (run()
// may be called again on the same input; an output, or a view of it, is read after the last step).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "ir/ir.hpp"
#include "plan/planner.hpp"

namespace tightfit::schedule {

struct LifetimeOptions {
  std::uint32_t alignment = 4;  // bytes; every buffer's offset is a multiple of it
  bool io_in_arena = true;      // false: graph inputs and outputs live in buffers the user owns
  // The overlap distances of input `input` of a node; empty: no output overlaps an input
  // (--no-overlap).
  std::function<plan::OverlapDistances(const ir::Node&, std::size_t input)> overlap_distance;
};

struct Lifetimes {
  plan::Problem problem;  // buffers only: the caller adds the regions
  // What each buffer of problem.buffers holds: a tensor (the root of its views), or, for a
  // scratch buffer, kNoTensor and the node whose step it serves.
  std::vector<ir::TensorId> buffer_tensor;
  std::vector<int> buffer_scratch_node;
  // For every tensor: the index of the buffer that holds it, or -1 (constants, and graph
  // inputs/outputs when they live outside the arena).
  std::vector<int> tensor_buffer;
  // For every node: its scratch buffer's index, or -1.
  std::vector<int> node_scratch;
  // For every pair of problem.overlaps: the step (node) whose output may overlap its input.
  std::vector<int> overlap_step;
};

// scratch_bytes(node) gives the bytes of scratch memory the node's kernel needs (0 for none).
Lifetimes compute_lifetimes(const ir::Graph& graph, const std::function<std::uint64_t(const ir::Node&)>& scratch_bytes,
                            const LifetimeOptions& options);

// The tensor a view reads through to: follows Reshape nodes back to the tensor that owns the bytes;
// a tensor lying in another (ir::Tensor::slice_of: a Concat input written in place, a band of a
// tiled stage) goes to the one it lies in.
std::vector<ir::TensorId> view_roots(const ir::Graph& graph);

}  // namespace tightfit::schedule
