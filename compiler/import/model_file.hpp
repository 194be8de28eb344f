// Reading a model file into a ModelProto that the translator can trust structurally.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

namespace tightfit::import {

// The opset range of the default ONNX domain we accept (QuantizeLinear exists from 10;
// ONNX 1.12, whose checker we run, knows opsets up to 17).
constexpr int kMinOpset = 10;
constexpr int kMaxOpset = 17;

// Files above this size are refused before parsing (protobuf's own limit is 2 GiB).
constexpr long long kMaxModelBytes = 1LL << 30;

// Reads `path`, inlines external data (only from files inside the model's folder), checks the
// opsets, sorts the nodes topologically (refusing cycles and inputs nobody produces), runs ONNX's
// checker and shape inference. Throws tightfit::Error ("<path>: <reason>") on any failure.
onnx::ModelProto load_model(const std::string& path);

}  // namespace tightfit::import
