// Reading a model file into a ModelProto that the translator can trust structurally.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstddef>
#include <string>

namespace tightfit::import {

// The opset range of the default ONNX domain we accept (QuantizeLinear exists from 10;
// ONNX 1.12, whose checker we run, knows opsets up to 17).
constexpr int kMinOpset = 10;
constexpr int kMaxOpset = 17;

// Models above this size (the file plus its external data) are refused before they are read:
// far above any microcontroller's flash, and it bounds the compiler's memory, which holds the
// weights several times over (raw bytes, protobuf, IR, and about 5 bytes of C++ text per byte).
constexpr long long kMaxModelBytes = 64LL << 20;

// Graphs above this many nodes are refused (microcontroller models have hundreds at most; the
// compile time grows faster than linearly in them), and so are node and tensor names above this
// many bytes (each is repeated in the outputs: a tensor's name once per step where it is live).
constexpr int kMaxNodes = 10000;
constexpr std::size_t kMaxNameBytes = 16384;

// Reads `path`, inlines external data (only from files inside the model's folder), checks the
// opsets, sorts the nodes topologically (refusing cycles and inputs nobody produces), runs ONNX's
// checker and shape inference. Throws tightfit::Error ("<path>: <reason>") on any failure.
onnx::ModelProto load_model(const std::string& path);

}  // namespace tightfit::import
