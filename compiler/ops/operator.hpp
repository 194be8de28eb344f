// One operator of tightfit's IR as one unit: the ONNX operators it is imported from and the kernel
// call it is emitted as. ops.def lists the operators; each is defined in compiler/ops/<name>.cpp
// (its kernels are in runtime/). The import and emission stages iterate over this table: the
// importer finds the rule of an ONNX node with import_rule(), the emitter the rule of an IR node
// with of().
#pragma once

#include <string>
#include <vector>

#include "ir/ir.hpp"

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

struct Operator {
  ir::OpKind kind;
  std::vector<ImportRule> imports;
  EmitRule emit;  // nullptr for a view (Reshape): it moves no bytes and has no code
};

// Every operator, in ops.def's order (the order of ir::OpKind).
const std::vector<const Operator*>& operators();

// The operator of an IR node.
const Operator& of(ir::OpKind kind);

// The rule importing ONNX operator `op_type` of `domain` ("ai.onnx" is ""), or nullptr.
const ImportRule* import_rule(const std::string& domain, const std::string& op_type);

}  // namespace tightfit::ops
