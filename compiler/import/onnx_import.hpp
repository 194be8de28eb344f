// ONNX import: a quantized ONNX model (QDQ or QOperator form) -> the integer IR (ir/ir.hpp).
//
// The one entry point reads the file, validates it (ONNX's checker and shape inference, then
// our own shape and quantization checks) and folds the ONNX operators into integer IR nodes.
// Anything it cannot represent exactly is refused with a tightfit::Error carrying one line:
//   "<file>: <reason>", "<file>: tensor '<name>': <reason>" or "<file>: <node> (<op>): <reason>".
#pragma once

#include <string>

#include "ir/ir.hpp"

namespace tightfit::import {

struct Options {
  bool pin_batch = false;  // --pin-batch: a symbolic first dimension of a graph input becomes 1
};

ir::Graph import_onnx(const std::string& path, const Options& options);

}  // namespace tightfit::import
