// ONNX import: a quantized ONNX model (QDQ or QOperator form) -> the integer IR (ir/ir.hpp).
//
// The one entry point reads the file, validates it (ONNX's checker and shape inference, then
// our own shape and quantization checks) and folds the ONNX operators into integer IR nodes.
// Anything it cannot represent exactly is refused with a tightfit::Error carrying one line:
//   "<file>: <reason>", "<file>: tensor '<name>': <reason>" or "<file>: <node> (<op>): <reason>".
#pragma once

#include <string>
#include <vector>

#include "ir/ir.hpp"

namespace tightfit::import {

// A symbolic dimension 0 (the batch) of a graph input of rank 2 or more becomes 1, and the
// input's name goes to ir::Graph::batch_pinned; any other dynamic dimension is refused.
ir::Graph import_onnx(const std::string& path);

// A node whose operator no rule imports (docs/operators.md lists those that have one).
struct UnsupportedNode {
  std::string node;    // its name, or "<op>_<index>" when it has none (as error lines name it)
  std::string domain;  // "" for ONNX's own operators
  std::string op_type;
};

// Every unsupported node of the model at `path`, in the model's (sorted) order: the whole gap at
// once, where import_onnx stops at the first. Throws like import_onnx if the file cannot be read.
std::vector<UnsupportedNode> unsupported_nodes(const std::string& path);

}  // namespace tightfit::import
