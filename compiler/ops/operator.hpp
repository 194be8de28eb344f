// One operator of tightfit's IR as one unit: the ONNX operators it is imported from and the kernel
// call it is emitted as. ops.def lists the operators; each is defined in compiler/ops/<name>.cpp
// (its kernels are in runtime/). The import and emission stages iterate over this table: the
// importer finds the rule of an ONNX node with import_rule(), the emitter the rule of an IR node
// with of().
#pragma once

#include <string>
#include <vector>

#include "ir/ir.hpp"
#include "schedule/lifetimes.hpp"

namespace onnx {
class NodeProto;
}
namespace tightfit::import {
struct ImportState;
class Translator;
}
namespace tightfit::emit {
struct EmissionState;
class Emission;
}

namespace tightfit::ops {

using emit::Emission;
using emit::EmissionState;
using import::ImportState;
using import::Translator;
using onnx::NodeProto;

// An ONNX operator, by domain ("" for ONNX's own, or "com.microsoft") and type, and how a node of
// it becomes IR tensors and nodes (through an import::Translator on the import's state).
struct ImportRule {
  const char* domain;
  const char* op_type;
  void (*translate)(ImportState& state, const NodeProto& node);
};

// Writes the constants and the kernel call of one node (through an emit::Emission on the
// emission's state); `id` names its constants.
using EmitRule = void (*)(EmissionState& state, const std::string& id, const ir::Node& node);

// How far below input `input` of a node its output may start and still overlap it, and how far
// above it when the kernel runs backwards: the distances the kernel its emission calls states
// beside itself (runtime/include/tightfit/kernels.hpp, `*_distance`). The emitted call runs
// backwards exactly when the plan puts the output above that input.
using OverlapRule = schedule::OverlapDistances (*)(const ir::Graph& graph, const ir::Node& node, std::size_t input);

struct Operator {
  ir::OpKind kind;
  std::vector<ImportRule> imports;
  EmitRule emit;                 // nullptr for a view (Reshape): it moves no bytes and has no code
  OverlapRule overlap = nullptr;  // nullptr: its output never overlaps an input
};

// Every operator, in ops.def's order (the order of ir::OpKind).
const std::vector<const Operator*>& operators();

// The operator of an IR node.
const Operator& of(ir::OpKind kind);

// The overlap distances of input `input` of `node` (its operator's OverlapRule; none without one).
schedule::OverlapDistances overlap_distance(const ir::Graph& graph, const ir::Node& node, std::size_t input);

// A kernel's distances (tightfit::kNoOverlap: not that way) as OverlapDistances.
schedule::OverlapDistances overlap_distances(std::int32_t below, std::int32_t above);

// The overlap rules several operators share: elementwise with broadcasting (Add, Mul, Sub), and a
// 256-entry table or the requantization of an int32 accumulator (Sigmoid, Tanh, LeakyRelu, Div,
// Requantize), or the float form of Sigmoid and Tanh.
schedule::OverlapDistances binary_overlap(const ir::Graph& graph, const ir::Node& node, std::size_t input);
schedule::OverlapDistances lookup_overlap(const ir::Graph& graph, const ir::Node& node, std::size_t input);

// The rule importing ONNX operator `op_type` of `domain` ("ai.onnx" is ""), or nullptr.
const ImportRule* import_rule(const std::string& domain, const std::string& op_type);

}  // namespace tightfit::ops
