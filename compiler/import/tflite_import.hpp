// TFLite import: an int8 .tflite model (TensorFlow Lite's flatbuffer, schema version 3) -> the
// integer IR (ir/ir.hpp), as import_onnx does for ONNX.
//
// The buffer is verified (flatbuffers' Verifier, against import/tflite_schema.fbs) before anything
// is read. Subgraph 0 alone, int8 activations quantized per tensor, int8 weights per tensor or per
// channel, int32 biases; the builtin operators docs/import.md lists. TFLite's NHWC tensors become
// the IR's logical NCHW ones (weights reordered to ONNX's layouts), which the channels-last stage
// lays out as NHWC again, so no byte moves for the layout. Anything else is refused with a
// tightfit::Error carrying one line: "<file>: <reason>", "<file>: tensor '<name>': <reason>" or
// "<file>: operator <index> (<OP>): <reason>".
#pragma once

#include <string>

#include "ir/ir.hpp"

namespace tightfit::import {

// True when `path` is to be read as a .tflite model: its bytes carry TFLite's file identifier
// ("TFL3" at offset 4), or its name ends in ".tflite" (then a file that is not one is refused as
// such, not as an ONNX model).
bool is_tflite_file(const std::string& path);

ir::Graph import_tflite(const std::string& path);

}  // namespace tightfit::import
