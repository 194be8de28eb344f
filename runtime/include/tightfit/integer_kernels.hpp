// tightfit runtime: integer matrix kernels outside the QLinearConv / fully connected family.
//
//  * conv_accumulate, matmul_accumulate: ONNX ConvInteger and MatMulInteger. The output is the
//    int32 accumulator itself, sum((x - x_zero_point) * (w - w_zero_point)), with no bias and no
//    requantization (exact: the sums of the models tightfit takes fit int32).
//  * requantize_accumulator: such an int32 output through DequantizeLinear -> QuantizeLinear.
//  * dynamic_quantize_linear: ONNX DynamicQuantizeLinear (a graph input quantized with parameters
//    computed from it, returned as outputs).
//  * matmul_requantize: ONNX QLinearMatMul whose constant B has batch dimensions ([..., K, N],
//    one matrix per batch), requantized as fully_connected() does (ORT: MlasGemm +
//    MlasRequantizeOutput).
//
// Same rules as kernels.hpp: freestanding C++17, no heap, no scratch; `out` overlaps no input
// except requantize_accumulator()'s, by requantize_accumulator_distance(). Included by kernels.hpp.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tightfit/numerics.hpp"
#include "tightfit/params.hpp"

namespace tightfit {

// A matrix product with constant weights, in `batches` independent blocks: block b multiplies its
// `rows` x `in_features` slice of the input by weights[b] ([out_features][in_features], the
// transpose of ONNX's B) into a `rows` x `out_features` slice of the output. A 2-D B is one block.
#define TIGHTFIT_MAT_MUL_PARAMS(X)                           \
  X(int32_t, batches)                                        \
  X(int32_t, rows) /* rows of A per block */                 \
  X(int32_t, in_features)                                    \
  X(int32_t, out_features)                                   \
  X(int32_t, input_zero_point)                               \
  X(int32_t, weight_zero_point)                              \
  X(int32_t, output_zero_point) /* matmul_requantize only */ \
  X(int32_t, output_min)        /* matmul_requantize only */ \
  X(int32_t, output_max)        /* matmul_requantize only */ \
  X(int32_t, per_channel)       /* matmul_requantize: multipliers[out_features] (else [0]) */
struct MatMulParams {
  TIGHTFIT_MAT_MUL_PARAMS(TIGHTFIT_DECLARE_FIELD)
};

namespace detail {

template <typename T, typename TW>
inline int32_t centred_dot(const T* x, const TW* w, int32_t n, int32_t x_zero_point, int32_t w_zero_point) {
  int32_t acc = 0;
  for (int32_t i = 0; i < n; ++i)
    acc += (static_cast<int32_t>(x[i]) - x_zero_point) * (static_cast<int32_t>(w[i]) - w_zero_point);
  return acc;
}

}  // namespace detail

// ONNX ConvInteger, NHWC, weights OHWI [out_c][kh][kw][in_c/groups] for every group count
// (depthwise included: one input channel per group). Taps in the padding contribute nothing
// (ONNX pads x with its zero point). Reads only the geometry and the input and weight zero
// points of `p`.
template <typename T, typename TW>
inline void conv_accumulate(const ConvParams& p, const T* in, const TW* weights, int32_t* out) {
  const int32_t group_in_c = p.in_c / p.groups;
  const int32_t group_out_c = p.out_c / p.groups;
  for (int32_t b = 0; b < p.batch; ++b) {
    for (int32_t oy = 0; oy < p.out_h; ++oy) {
      for (int32_t ox = 0; ox < p.out_w; ++ox) {
        int32_t* y = out + static_cast<std::ptrdiff_t>((b * p.out_h + oy) * p.out_w + ox) * p.out_c;
        for (int32_t oc = 0; oc < p.out_c; ++oc) {
          const int32_t first_ic = (oc / group_out_c) * group_in_c;
          int32_t acc = 0;
          for (int32_t ky = 0; ky < p.kernel_h; ++ky) {
            const int32_t iy = oy * p.stride_h - p.pad_top + ky * p.dilation_h;
            if (iy < 0 || iy >= p.in_h) continue;
            for (int32_t kx = 0; kx < p.kernel_w; ++kx) {
              const int32_t ix = ox * p.stride_w - p.pad_left + kx * p.dilation_w;
              if (ix < 0 || ix >= p.in_w) continue;
              const T* x = in + ((b * p.in_h + iy) * p.in_w + ix) * p.in_c + first_ic;
              const TW* w = weights + ((oc * p.kernel_h + ky) * p.kernel_w + kx) * group_in_c;
              acc += detail::centred_dot(x, w, group_in_c, p.input_zero_point, p.weight_zero_point);
            }
          }
          y[oc] = acc;
        }
      }
    }
  }
}

// ONNX MatMulInteger with a constant B (2-D, or one matrix per batch): int32 accumulators.
template <typename T, typename TW>
inline void matmul_accumulate(const MatMulParams& p, const T* in, const TW* weights, int32_t* out) {
  for (int32_t b = 0; b < p.batches; ++b) {
    const TW* wb = weights + b * p.out_features * p.in_features;
    for (int32_t r = 0; r < p.rows; ++r) {
      const T* x = in + (b * p.rows + r) * p.in_features;
      int32_t* y = out + static_cast<std::ptrdiff_t>(b * p.rows + r) * p.out_features;
      for (int32_t o = 0; o < p.out_features; ++o)
        y[o] = detail::centred_dot(x, wb + o * p.in_features, p.in_features, p.input_zero_point, p.weight_zero_point);
    }
  }
}

// ONNX QLinearMatMul with a constant B with batch dimensions: every block requantized with
// requantize() (ORT's MlasRequantizeOutput), as fully_connected() does for a 2-D B.
template <typename T, typename TW>
inline void matmul_requantize(const MatMulParams& p, const T* in, const TW* weights, const float* multipliers, T* out) {
  for (int32_t b = 0; b < p.batches; ++b) {
    const TW* wb = weights + b * p.out_features * p.in_features;
    for (int32_t r = 0; r < p.rows; ++r) {
      const T* x = in + (b * p.rows + r) * p.in_features;
      T* y = out + (b * p.rows + r) * p.out_features;
      for (int32_t o = 0; o < p.out_features; ++o) {
        const int32_t acc =
            detail::centred_dot(x, wb + o * p.in_features, p.in_features, p.input_zero_point, p.weight_zero_point);
        y[o] = requantize<T>(acc, multipliers[p.per_channel ? o : 0], p.output_zero_point, p.output_min, p.output_max);
      }
    }
  }
}

// An int32 accumulator tensor (ConvInteger/MatMulInteger) requantized as DequantizeLinear then
// QuantizeLinear compute it in ONNX Runtime: float(x - x_zero_point) * x_scale, then
// quantize_linear() (a division, rounded half to even, saturated); then a fused Relu/Clip's clamp.
#define TIGHTFIT_ACCUMULATOR_REQUANTIZE_PARAMS(X) \
  X(int32_t, count)                               \
  TIGHTFIT_FLOAT_REQUANTIZE_PARAMS(X)
struct AccumulatorRequantizeParams {
  TIGHTFIT_ACCUMULATOR_REQUANTIZE_PARAMS(TIGHTFIT_DECLARE_FIELD)
};

// This header's parameter blocks, as TIGHTFIT_PARAMS_BLOCKS lists params.hpp's.
#define TIGHTFIT_INTEGER_KERNEL_BLOCKS(X)  \
  X(MatMulParams, TIGHTFIT_MAT_MUL_PARAMS) \
  X(AccumulatorRequantizeParams, TIGHTFIT_ACCUMULATOR_REQUANTIZE_PARAMS)

template <typename T>
inline void requantize_accumulator(const AccumulatorRequantizeParams& p, const int32_t* in, T* out) {
  for (int32_t i = 0; i < p.count; ++i) {
    const float real = dequantize_linear(in[i], p.input_scale, p.input_zero_point);
    const int32_t q = static_cast<int32_t>(quantize_linear<T>(real, p.output_scale, p.output_zero_point));
    out[i] = static_cast<T>(clamp_int(q, p.output_min, p.output_max));
  }
}

// Output over the input (kernels.hpp, "The overlap contract"): 0. Element i (1 byte) is
// written after int32 element i (4 bytes, at 4 i) is read: always below what is still to read.
constexpr int32_t requantize_accumulator_distance() { return 0; }

// ONNX DynamicQuantizeLinear (ORT: DynamicQuantizeLinear<uint8_t>): the range of x widened to
// include 0, scale = (max - min) / 255 (1 when max == min), zero point = round half to even of
// clamp(0 - min / scale, 0, 255), then every element through quantize_linear() (MlasQuantizeLinear).
inline void dynamic_quantize_linear(int32_t count, const float* in, uint8_t* out, float* scale, uint8_t* zero_point) {
  float lo = 0.0f, hi = 0.0f;
  for (int32_t i = 0; i < count; ++i) {
    lo = in[i] < lo ? in[i] : lo;
    hi = in[i] > hi ? in[i] : hi;
  }
  const float s = hi == lo ? 1.0f : (hi - lo) / 255.0f;
  float z = 0.0f - lo / s;
  z = z < 0.0f ? 0.0f : (z > 255.0f ? 255.0f : z);
  const int32_t zp = static_cast<int32_t>(round_half_even(z));
  for (int32_t i = 0; i < count; ++i) out[i] = quantize_linear<uint8_t>(in[i], s, zp);
  *scale = s;
  *zero_point = static_cast<uint8_t>(zp);
}

}  // namespace tightfit
