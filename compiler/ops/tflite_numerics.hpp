// What the operators' TfliteGap rules share: the quantization tests TFLite's int8 specification makes
// (docs/numerics.md, "TFLite numerics"). Each rule lives in its operator's file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/ir.hpp"

namespace tightfit::ops {

// True when `t` carries the scale and zero point of `like` (a copy or a max changes no value).
inline bool same_scale_and_zero_point(const ir::Tensor& t, const ir::Tensor& like) {
  return t.quant.scale == like.quant.scale && t.quant.zero_point == like.quant.zero_point;
}

// True when `t` is quantized per tensor with this scale and zero point.
inline bool quantized_as(const ir::Tensor& t, float scale, std::int32_t zero_point) {
  return t.quant.scale == std::vector<float>{scale} && t.quant.zero_point == std::vector<std::int32_t>{zero_point};
}

// True when `n` reads and writes int8 (the element-wise kernels of TFLite Micro take no other).
inline bool int8_to_int8(const ir::Graph& g, const ir::Node& n) {
  return g.tensors[n.inputs[0]].dtype == ir::DType::Int8 && g.tensors[n.outputs[0]].dtype == ir::DType::Int8;
}

// TFLite Micro's int8 LOGISTIC and TANH (`name`) fix their output's quantization and rescale the
// input into Q4.27 (host.hpp, build_tflite_activation_table).
inline std::string tflite_activation_gap(const ir::Graph& g, const ir::Node& n, const char* name, float out_scale,
                                         std::int32_t out_zero_point, const char* out_quantization) {
  const ir::Tensor& x = g.tensors[n.inputs[0]];
  if (!int8_to_int8(g, n)) return std::string("TFLite Micro's ") + name + " takes int8";
  if (!quantized_as(g.tensors[n.outputs[0]], out_scale, out_zero_point))
    return std::string("TFLite's int8 ") + name + " writes " + out_quantization;
  if (x.quant.scale.size() != 1 || x.quant.scale[0] < 0x1p-28f)
    return "TFLite's Q4.27 input rescaling needs one input scale of at least 2^-28";
  return {};
}

}  // namespace tightfit::ops
