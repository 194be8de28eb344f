// The integer IR: what the ONNX importer produces and every later stage reads.
//
// A Graph is a list of tensors and a list of nodes in schedule order (the ONNX node order,
// topologically sorted). Tensors keep ONNX's logical shapes and axis order (NCHW for images);
// choosing the kernels' memory layout is a later stage's business.
//
// Every activation tensor is int8 or uint8 with a per-tensor scale and zero point, or int32 and
// not quantized (the raw accumulators of ConvInteger/MatMulInteger); constant tensors (weights,
// biases) carry their data, int8/uint8 weights with per-tensor or per-channel quantization, int32
// biases. Float32 appears at the graph's edges: a Quantize node turns a float graph input into
// an integer tensor, a Dequantize node turns an integer tensor into a float graph output; and in
// float islands (operators ONNX Runtime's quantizer leaves float between DequantizeLinear and
// QuantizeLinear with no integer form here): float32 activations (not quantized, 4 bytes an
// element, in the arena like any other), computed by Add, Sub, Mul, Div, Pow, Sqrt and ReduceMean
// nodes whose output is float32, entered by a Dequantize node and left by a Quantize node. An
// activation that only such an edge node touches (a model that is one QuantizeLinear or one
// DequantizeLinear) may be quantized per channel, along an axis in ONNX's order. A model that is
// one DynamicQuantizeLinear keeps its float32 input and scale output as tensors of their own.
// Bool tensors (1 byte an element, 0 or 1) are what a comparison writes, and the condition of an If.
//
// A data-dependent If: both branches are nodes of the schedule, the then branch's first, then
// the else branch's, each node with a Guard naming the condition (a one-element bool tensor) and
// its branch; the generated code runs them under `if (condition)` / `else`. The last node of
// each branch is an IfResult writing the branch's result into the If's output, the one tensor
// produced twice. A branch's nodes read tensors of their own branch and tensors made before the
// If; nothing after the If reads a branch's tensors but the output (passes/verify.cpp checks it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tightfit::ir {

enum class DType { Int8, UInt8, Int32, Float32, Bool };

// How a tensor's elements lie in memory. The importer produces Logical tensors (ONNX's row-major
// order of `shape`); the channels-last stage turns 4-D activations into ChannelsLast, whose `shape`
// it rewrites to [N, H, W, C] so that every later stage reads shapes in memory order.
enum class Layout { Logical, ChannelsLast };

const char* dtype_name(DType t);  // "int8", "uint8", "int32", "float32", "bool"

// The values an integer dtype holds (int32's for float32 and bool): a node that clamps nothing
// has this activation range.
struct DTypeRange {
  std::int64_t min, max;
};
DTypeRange dtype_range(DType t);
std::size_t dtype_size(DType t);  // bytes per element

// Affine quantization: real = scale * (q - zero_point).
// Per-tensor: one scale and one zero point, axis = -1.
// Per-channel: one scale and one zero point per index along `axis`.
struct Quant {
  std::vector<float> scale;
  std::vector<std::int32_t> zero_point;
  int axis = -1;

  bool per_channel() const { return axis >= 0; }
};

using TensorId = int;
constexpr TensorId kNoTensor = -1;

struct Tensor {
  std::string name;  // the ONNX value name
  DType dtype = DType::Int8;
  std::vector<std::int64_t> shape;  // static; a scalar has an empty shape
  bool quantized = false;           // false only for float32 tensors and int32 with no scale
  Quant quant;
  // Constant tensors (initializers) hold their elements here, little-endian, dtype_size() each.
  bool is_constant = false;
  std::vector<std::uint8_t> data;
  Layout layout = Layout::Logical;
  // Set by the channels-last stage on a graph input or output whose model-level type is float32:
  // the schedule works on this integer tensor and the generated API quantizes / dequantizes it
  // with `quant` at the boundary.
  bool float_at_boundary = false;
  // A tensor with no memory of its own, lying in tensor `slice_of` (which may lie in another)
  // from element `slice_offset` on, one pixel (`shape.back()` elements) every
  // `slice_pixel_stride` elements; kNoTensor: the tensor is its own. Set by the zero-copy Concat pass
  // (passes/zero_copy_concat.cpp) on a Concat input its producer writes in place into the Concat's output, and by the
  // tiling pass (passes/tile.cpp) on a band of a tiled stage's input (read in place, no producer) and of its output
  // (written in place).
  TensorId slice_of = kNoTensor;
  std::int64_t slice_offset = 0;
  std::int64_t slice_pixel_stride = 0;

  std::int64_t elements() const;
  // ONNX's order of the dims whatever the layout: [N, C, H, W] for a channels-last tensor.
  std::vector<std::int64_t> onnx_shape() const;
  std::int64_t bytes() const { return elements() * static_cast<std::int64_t>(dtype_size(dtype)); }
};

// The operators, listed in ir/ops.def; what each node holds is described in its file,
// compiler/ops/<name>.cpp.
enum class OpKind {
#define TIGHTFIT_OP(name) name,
#include "ir/ops.def"
#undef TIGHTFIT_OP
};

const char* op_name(OpKind k);

struct Attrs {
  // Conv and pools (2-D): kernel [kh, kw], strides [sh, sw], dilations [dh, dw],
  // pads [top, left, bottom, right] (ONNX order: begins then ends).
  std::vector<std::int64_t> kernel_shape;
  std::vector<std::int64_t> strides;
  std::vector<std::int64_t> dilations;
  std::vector<std::int64_t> pads;
  std::int64_t group = 1;
  bool count_include_pad = false;  // AveragePool
  bool ceil_mode = false;          // pools

  std::int64_t axis = 0;              // Concat, Softmax (normalised to be non-negative)
  std::vector<std::int64_t> perm;     // Transpose
  float alpha = 0.01f;                // LeakyRelu, HardSigmoid; Pow: the exponent (2 or 3)
  float beta = 0.5f;                  // HardSigmoid
  float divisor = 1.0f;               // Div: the constant divisor, dequantized
  std::vector<std::int64_t> axes;     // ReduceMean: the reduced axes (ONNX order, sorted, non-negative)
  std::vector<std::int64_t> starts;   // Slice: the first index taken in each dim (ONNX order)
  bool softmax_integer_rule = false;  // Softmax from QLinearSoftmax: ORT's integer cast and saturation
  std::vector<float> scales;          // Resize (nearest): whole factors; output i reads input floor(i / scale)
  // LSTM, GRU: which of Y, Y_h, Y_c (GRU: Y, Y_h) the node writes, its outputs in that order; the
  // one direction running backwards in time (ONNX's "reverse"); GRU's linear_before_reset.
  std::vector<bool> rnn_outputs;
  bool reverse = false;
  bool linear_before_reset = false;
  std::string comparison;  // Compare: "Greater", "GreaterOrEqual", "Less", "LessOrEqual" or "Equal"

  // Fused activation in the output's integer domain: the kernel clamps its quantized result
  // to [act_min, act_max]. Without a fused Relu/Clip these are the dtype's limits.
  std::int32_t act_min = -128;
  std::int32_t act_max = 127;
};

// Which branch of which If a node belongs to; condition kNoTensor: it always runs.
struct Guard {
  TensorId condition = kNoTensor;
  bool then_branch = true;

  bool guarded() const { return condition != kNoTensor; }
  // Two nodes that never run in the same call: the two branches of one If.
  bool excludes(const Guard& other) const {
    return guarded() && condition == other.condition && then_branch != other.then_branch;
  }
};

struct Node {
  std::string name;     // the ONNX node's name (or "<op>_<index>" when it had none), unique:
                        // a name met again gets " (2)", " (3)", ... (import/onnx_import.cpp)
  std::string onnx_op;  // the ONNX operator(s) it came from, e.g. "QLinearConv" or "Conv+Relu (QDQ)"
  OpKind op = OpKind::Conv;
  std::vector<TensorId> inputs;  // kNoTensor for an absent optional input
  std::vector<TensorId> outputs;
  Attrs attrs;
  Guard guard;
};

// Whose integer arithmetic the kernels reproduce bit for bit (docs/numerics.md): ONNX Runtime's
// (float multipliers, round half to even), the default for an ONNX model; or TensorFlow Lite's
// (fixed-point multipliers with double rounding, its own ADD, average pool and softmax rules), the
// choice of `--numerics tflite` and a .tflite model's default.
enum class Numerics { Ort, Tflite };

struct Graph {
  // The format of the model file: a .tflite model's arrays are in TFLite's order (NHWC), an ONNX
  // model's in ONNX's (NCHW); `run` reads and writes .npy files in the model's order.
  enum class SourceFormat { Onnx, TFLite };

  std::string source;  // the model file it was imported from
  SourceFormat source_format = SourceFormat::Onnx;
  Numerics numerics = Numerics::Ort;
  std::vector<Tensor> tensors;
  std::vector<Node> nodes;       // in schedule order
  std::vector<TensorId> inputs;  // graph inputs (never constants)
  std::vector<TensorId> outputs;
  std::vector<std::string> batch_pinned;  // graph inputs whose symbolic dimension 0 became 1

  bool has_if() const;
  // Whether input `input` of `reader` was written in place into its output by its producer (a
  // Concat input, passes/zero_copy_concat.cpp): the reader has nothing to copy for it.
  bool written_in_place(const Node& reader, TensorId input) const {
    return tensors[input].slice_of == reader.outputs[0];
  }  // some node is guarded: the schedule holds an If's branches

  // Arithmetic helpers used by inspect, the planner front end and the report.
  std::int64_t weight_bytes(const Node& n) const;  // bytes of its constant inputs
};

}  // namespace tightfit::ir
