// tightfit runtime: the loops that the portable kernels share. The requantizing kernels
// (kernels.hpp: QLinearConv, QLinearMatMul; integer_kernels.hpp: batched QLinearMatMul) and the
// accumulator kernels (integer_kernels.hpp: ConvInteger, MatMulInteger) compute the same exact
// int32 sums of (x - x_zero_point) * (w - w_zero_point) and differ only in the output they make of
// each, so they run the same loops here and pass that as `output`; the convolutions and max
// pooling visit the same kernel windows. Included by both headers (integer_kernels.hpp comes first
// in kernels.hpp).
//
// The loops are forced inline, so that each kernel compiles to the loop nest it would have written
// out; the kernels' `output` lambdas capture their scalar arguments by value, as captured by
// reference those would have to live on the stack (a larger frame: measured on Cortex-M4).
//
// Same rules as kernels.hpp: freestanding C++17, no heap, no scratch.
#pragma once

#include <cstdint>

#include "tightfit/numerics.hpp"
#include "tightfit/params.hpp"

namespace tightfit {
namespace detail {

template <typename T, typename TW>
inline int32_t dot(const T* x, const TW* w, int32_t n, int32_t x_zero_point, int32_t w_zero_point) {
  int32_t acc = 0;
  for (int32_t i = 0; i < n; ++i) {
    acc += (static_cast<int32_t>(x[i]) - x_zero_point) * (static_cast<int32_t>(w[i]) - w_zero_point);
  }
  return acc;
}

// An output of a conv / fully connected / matmul kernel: the bias (nullptr: none) added, then
// requantize() (ORT's MlasRequantizeOutput) with the channel's multiplier. `Params` is any block
// with per_channel, output_zero_point, output_min and output_max.
template <typename T, typename Params>
inline T requantize_output(const Params& p, int32_t acc, int32_t channel, const int32_t* bias,
                           const float* multipliers) {
  if (bias != nullptr) acc += bias[channel];
  return requantize<T>(acc, multipliers[p.per_channel ? channel : 0], p.output_zero_point, p.output_min,
                       p.output_max);
}

// Calls tap(ky, kx, iy, ix) for every tap (ky, kx) of output pixel (oy, ox)'s kernel window that
// lies inside the image, (iy, ix) being the input pixel under it; taps in the padding are skipped.
// `Window` is a parameter block with the window geometry (ConvParams, MaxPoolParams).
template <typename Window, typename Tap>
__attribute__((always_inline)) inline void for_each_tap(const Window& p, int32_t oy, int32_t ox, Tap tap) {
  for (int32_t ky = 0; ky < p.kernel_h; ++ky) {
    const int32_t iy = oy * p.stride_h - p.pad_top + ky * p.dilation_h;
    if (iy < 0 || iy >= p.in_h) continue;
    for (int32_t kx = 0; kx < p.kernel_w; ++kx) {
      const int32_t ix = ox * p.stride_w - p.pad_left + kx * p.dilation_w;
      if (ix < 0 || ix >= p.in_w) continue;
      tap(ky, kx, iy, ix);
    }
  }
}

// The loop nest of a convolution, NHWC, weights OHWI [out_c][kh][kw][in_c/groups] for every
// group count: calls emit(index, oc, acc) for every output element, `index` being its place in
// the NHWC output and `acc` its sum over the kernel window. Taps in the padding contribute nothing
// (ONNX pads x with its zero point, and ORT skips them).
template <typename T, typename TW, typename Emit>
__attribute__((always_inline)) inline void conv_loop(const ConvParams& p, const T* in, const TW* weights, Emit emit) {
  const int32_t group_in_c = p.in_c / p.groups;
  const int32_t group_out_c = p.out_c / p.groups;
  for (int32_t b = 0; b < p.batch; ++b) {
    for (int32_t oy = 0; oy < p.out_h; ++oy) {
      for (int32_t ox = 0; ox < p.out_w; ++ox) {
        const int32_t pixel_offset = ((b * p.out_h + oy) * p.out_w + ox) * p.out_c;
        for (int32_t oc = 0; oc < p.out_c; ++oc) {
          const int32_t channel_offset = (oc / group_out_c) * group_in_c;
          const TW* w_oc = weights + oc * p.kernel_h * p.kernel_w * group_in_c;
          int32_t acc = 0;
          for_each_tap(p, oy, ox, [&](int32_t ky, int32_t kx, int32_t iy, int32_t ix) {
            const T* x = in + ((b * p.in_h + iy) * p.in_w + ix) * p.in_c + channel_offset;
            const TW* w = w_oc + (ky * p.kernel_w + kx) * group_in_c;
            acc += dot(x, w, group_in_c, p.input_zero_point, p.weight_zero_point);
          });
          emit(pixel_offset + oc, oc, acc);
        }
      }
    }
  }
}

// The loop nest of a matrix product with constant weights: the p.rows x p.in_features matrix
// `in` times the transpose of the [out_features][in_features] matrix `weights`; writes
// output(o, acc) to every element of the [rows][out_features] matrix `out`, `acc` being the
// element's sum. `Matrix` is a parameter block with those fields and the two zero points
// (FullyConnectedParams, MatMulParams).
template <typename Matrix, typename T, typename TW, typename TOut, typename Output>
__attribute__((always_inline)) inline void matmul_loop(const Matrix& p, const T* in, const TW* weights, TOut* out,
                                                       Output output) {
  for (int32_t r = 0; r < p.rows; ++r) {
    const T* x = in + r * p.in_features;
    TOut* y = out + r * p.out_features;
    for (int32_t o = 0; o < p.out_features; ++o)
      y[o] = output(o, dot(x, weights + o * p.in_features, p.in_features, p.input_zero_point, p.weight_zero_point));
  }
}

}  // namespace detail
}  // namespace tightfit
