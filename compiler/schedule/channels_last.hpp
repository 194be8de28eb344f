// The channels-last stage: the step between the imported IR and the memory plan.
//
// The kernels work on channels-last (NHWC) activations, as is usual on microcontrollers: a pixel's
// channels sit together, so convolutions read contiguous runs. ONNX describes images NCHW. This
// stage rewrites the graph so that every 4-D activation is stored NHWC, its `shape` rewritten to
// memory order, and inserts a Transpose only where an operator needs ONNX's order (a Reshape or
// Flatten of an image with several channels and pixels) and the two orders differ.
//
// It also takes the float edges off the schedule: a QuantizeLinear on a float graph input and a
// DequantizeLinear on a float graph output become the generated API's quantize / dequantize
// helpers, so the arena holds the 1-byte tensor, never the 4-byte float one.
#pragma once

#include "ir/ir.hpp"

namespace tightfit::schedule {

// Throws tightfit::Error (naming the node) for a graph it cannot lay out.
void to_channels_last(ir::Graph& graph);

}  // namespace tightfit::schedule
