// check_numerics(): under TFLite numerics, every node is one whose TFLite arithmetic the kernels
// reproduce (docs/numerics.md, "TFLite numerics"), or one that rounds nothing.
#include <fmt/format.h>
#include <tightfit/host.hpp>

#include "error.hpp"
#include "passes/passes.hpp"

namespace tightfit::passes {
namespace {

// True when `t` carries the quantization of `like` (a copy or a max changes no value).
bool same_quant(const ir::Tensor& t, const ir::Tensor& like) {
  return t.quant.scale == like.quant.scale && t.quant.zero_point == like.quant.zero_point;
}

// True when `t` is quantized per tensor with this scale and zero point.
bool quantized_as(const ir::Tensor& t, float scale, std::int32_t zero_point) {
  return t.quant.scale == std::vector<float>{scale} && t.quant.zero_point == std::vector<std::int32_t>{zero_point};
}

// True when `n` reads and writes int8 (the element-wise kernels of TFLite Micro take no other).
bool int8_to_int8(const ir::Graph& g, const ir::Node& n) {
  return g.tensors[n.inputs[0]].dtype == ir::DType::Int8 && g.tensors[n.outputs[0]].dtype == ir::DType::Int8;
}

// Why TFLite's arithmetic is not available for `n`, or empty when it is.
std::string tflite_gap(const ir::Graph& g, const ir::Node& n) {
  const ir::Tensor& y = g.tensors[n.outputs[0]];
  const bool float_node = y.dtype == ir::DType::Float32 && n.op != ir::OpKind::Dequantize;
  if (float_node) return "a float island has no TFLite integer form";
  switch (n.op) {
    case ir::OpKind::Conv:
    case ir::OpKind::FullyConnected:
    case ir::OpKind::Add:
    case ir::OpKind::Mul:
    case ir::OpKind::MaxPool:
    case ir::OpKind::ReduceMax:
    case ir::OpKind::ReduceMin:
    case ir::OpKind::Reshape:
    case ir::OpKind::Transpose:
    case ir::OpKind::Slice:
    case ir::OpKind::ChannelShuffle:
    case ir::OpKind::Pad:
    case ir::OpKind::Resize:
    case ir::OpKind::Clamp:
    case ir::OpKind::Quantize:
    case ir::OpKind::Dequantize:
      return {};
    case ir::OpKind::GlobalAveragePool:
    case ir::OpKind::AveragePool:
      if (!same_quant(g.tensors[n.inputs[0]], y))
        return "TFLite's average pool needs the input's scale and zero point on the output";
      if (n.op == ir::OpKind::AveragePool && n.attrs.count_include_pad)
        for (std::int64_t pad : n.attrs.pads)
          if (pad != 0) return "TFLite's average pool never counts padding (count_include_pad=1 with pads)";
      return {};
    case ir::OpKind::Softmax:
      if (y.dtype != ir::DType::Int8 || !quantized_as(y, 1.0f / 256, -128))
        return "TFLite's int8 softmax writes scale 1/256, zero point -128";
      return {};
    case ir::OpKind::Sigmoid:
    case ir::OpKind::Tanh: {
      // TFLite Micro's int8 LOGISTIC and TANH fix their output's quantization and rescale the
      // input into Q4.27 (host.hpp, build_tflite_activation_table).
      const bool logistic = n.op == ir::OpKind::Sigmoid;
      const ir::Tensor& x = g.tensors[n.inputs[0]];
      if (!int8_to_int8(g, n))
        return logistic ? "TFLite Micro's LOGISTIC takes int8" : "TFLite Micro's TANH takes int8";
      if (logistic && !quantized_as(y, 1.0f / 256, -128))
        return "TFLite's int8 LOGISTIC writes scale 1/256, zero point -128";
      if (!logistic && !quantized_as(y, 1.0f / 128, 0))
        return "TFLite's int8 TANH writes scale 1/128, zero point 0";
      if (x.quant.scale.size() != 1 || x.quant.scale[0] < 0x1p-28f)
        return "TFLite's Q4.27 input rescaling needs one input scale of at least 2^-28";
      return {};
    }
    case ir::OpKind::HardSwish: {
      const ir::Tensor& x = g.tensors[n.inputs[0]];
      if (!int8_to_int8(g, n)) return "TFLite Micro's HARD_SWISH takes int8";
      // TFLite Micro's Prepare requires the output multiplier's exponent to be at most 0.
      if (tightfit::tflite_hard_swish_params(x.quant.scale[0], y.quant.scale[0]).output_exponent > 0)
        return "TFLite Micro's HARD_SWISH needs an output scale above 1/128 of the input's";
      return {};
    }
    case ir::OpKind::Requantize:
      if (!int8_to_int8(g, n))
        return "TFLite's requantization (QUANTIZE) is int8 to int8 here";
      // TFLite Micro's RELU6 clamps in its input's quantization and writes the input's bytes: it
      // has no requantizing form (the importer labels nodes with the TFLite operator's name).
      if (n.onnx_op == "RELU6" || n.onnx_op == "RELU_N1_TO_1")
        return "TFLite Micro's RELU6 does not requantize: its output must be quantized as its input";
      return {};
    case ir::OpKind::ReduceMean:
      if (!int8_to_int8(g, n))
        return "TFLite Micro's int8 MEAN takes int8";
      return {};
    case ir::OpKind::Concat:
      // TFLite's int8 spec gives CONCATENATION's inputs the output's scale and zero point; TFLite
      // Micro copies their bytes unchanged whatever their quantization.
      for (ir::TensorId in : n.inputs)
        if (!same_quant(g.tensors[in], y))
          return "TFLite's int8 CONCATENATION needs every input quantized as its output (TFLite Micro would copy "
                 "the bytes unrequantized)";
      return {};
    default:
      return "no TFLite arithmetic for this operator yet";
  }
}

}  // namespace

void check_numerics(const ir::Graph& graph) {
  if (graph.numerics != ir::Numerics::Tflite) return;
  for (const ir::Node& n : graph.nodes) {
    const std::string gap = tflite_gap(graph, n);
    if (!gap.empty())
      throw Error(fmt::format("{}: {} ({}): TFLite numerics: {} (--numerics ort computes it as ONNX Runtime does)",
                              graph.source, n.name, n.onnx_op, gap));
  }
}

}  // namespace tightfit::passes
