// Passes over the integer IR. Each takes a Graph and either rewrites it or checks it.
#pragma once

#include "ir/ir.hpp"

namespace tightfit::passes {

// Turns Reshape [N, K] -> [N, K, 1, 1], pointwise Conv, Reshape -> [N, M] (the QOperator way of
// writing a Gemm) into one FullyConnected with the weight viewed as [M, K]. Exact.
void conv1x1_to_fully_connected(ir::Graph& graph);

// Removes the tensors that no node and no graph input or output refers to (the importer creates
// constants before it knows whether a fold consumes them), renumbering the rest in order.
void prune_unused_tensors(ir::Graph& graph);

// Checks what ir.hpp promises to later stages: ids in range, every tensor produced before it is
// read and produced once, static positive shapes, integer activations quantized per-tensor with
// zero points in their dtype's range, constants holding exactly their bytes, act_min <= act_max
// inside the output dtype. Throws tightfit::Error("<source>: IR check: <what>") on the first
// violation: a failure is a bug in the stage that produced the graph.
void verify(const ir::Graph& graph);

}  // namespace tightfit::passes
