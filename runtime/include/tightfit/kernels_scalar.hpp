// tightfit runtime: the convolution and fully connected kernels for cores without SIMD: ARMv6-M
// (Cortex-M0, M0+: no DSP extension, 16-bit Thumb, eight low registers that most instructions can
// use, LDRSB/LDRB with a register offset but no post-increment) and RV32IMC (the ESP32-C3's core:
// no float unit, no packed SIMD). Included by kernels.hpp; not a header to include on its own.
//
// Compiled in for ARMv6-M (__ARM_ARCH_6M__) and RISC-V (__riscv); kernels.hpp calls them unless
// TIGHTFIT_PORTABLE_KERNELS is defined; they live in namespace tightfit::scalar next to
// tightfit::portable so that a test can run both on the same data. Bit-exact with the portable
// path: the same integer sums (modulo 2^32, which the portable path never leaves either) and the
// same requantize() (in integers on these cores: numerics.hpp, requantize_integer(), or TFLite's
// fixed-point one for QuantizedMultiplier multipliers).
//
// The work: one row of bytes (a pixel's channels, a fully connected row, or the receptive field
// gathered into a byte patch, a kernel row's taps inside the image as one byte copy) against two
// weight rows at a time. On ARMv6-M that is one assembly loop that keeps everything in r0-r7: per
// pair of MACs one input load, its zero point added from a high register, two weight loads with
// the same index, two MULS and two ADDS (5 instructions per MAC; GCC's own loop for the portable
// kernel takes about twice that). On RV32IMC it is C unrolled four steps, each value loaded once
// at an immediate offset (about 4.5 instructions per MAC). Depthwise lists the taps inside the
// image once per pixel and runs each channel down the list.
//
// Read/write order (for outputs that overlap their inputs in memory): every kernel here writes
// its output in the portable kernel's raster order, pixel after pixel, channels ascending within
// a pixel, each output after every input it needs has been read, never ahead of the portable
// kernel's output position; it reads only the inputs of the pixel being computed. No __restrict.
#pragma once

#include <cstdint>
#include <type_traits>

#include "tightfit/numerics.hpp"
#include "tightfit/params.hpp"

namespace tightfit {
namespace scalar {

// a0 += sum_i (x[i] - zx) (w0[i] - zw), a1 += the same with w1, for i < n.
template <typename T, typename TW>
inline void dot2(const T* x, const TW* w0, const TW* w1, int32_t n, int32_t zx, int32_t zw, int32_t& a0, int32_t& a1) {
#if defined(__OPTIMIZE__) && defined(__ARM_ARCH_6M__)
  const int32_t pairs = n & ~1;
  if (pairs > 0 && zw == 0) {
    // i runs from -pairs up to 0 over pointers to the ends: one ADDS both steps and tests.
    const T* xe = x + pairs;
    const TW* w0e = w0 + pairs;
    const TW* w1e = w1 + pairs;
    int32_t i = -pairs, xv, t;
    const int32_t minus_zx = -zx;
#define TIGHTFIT_V6M_DOT2(LDX, LDW)                                             \
  __asm__ volatile(                                                             \
      ".syntax unified\n"                                                       \
      "1:\n\t" LDX                                                              \
      " %[xv], [%[xe], %[i]]\n\t"                                               \
      "add %[xv], %[mzx]\n\t" LDW                                               \
      " %[t], [%[w0e], %[i]]\n\t"                                               \
      "muls %[t], %[xv], %[t]\n\t"                                              \
      "adds %[a0], %[a0], %[t]\n\t" LDW                                         \
      " %[t], [%[w1e], %[i]]\n\t"                                               \
      "muls %[t], %[xv], %[t]\n\t"                                              \
      "adds %[a1], %[a1], %[t]\n\t"                                             \
      "adds %[i], %[i], #1\n\t" LDX                                             \
      " %[xv], [%[xe], %[i]]\n\t"                                               \
      "add %[xv], %[mzx]\n\t" LDW                                               \
      " %[t], [%[w0e], %[i]]\n\t"                                               \
      "muls %[t], %[xv], %[t]\n\t"                                              \
      "adds %[a0], %[a0], %[t]\n\t" LDW                                         \
      " %[t], [%[w1e], %[i]]\n\t"                                               \
      "muls %[t], %[xv], %[t]\n\t"                                              \
      "adds %[a1], %[a1], %[t]\n\t"                                             \
      "adds %[i], %[i], #1\n\t"                                                 \
      "bne 1b"                                                                  \
      : [a0] "+l"(a0), [a1] "+l"(a1), [i] "+l"(i), [xv] "=&l"(xv), [t] "=&l"(t) \
      : [xe] "l"(xe), [w0e] "l"(w0e), [w1e] "l"(w1e), [mzx] "h"(minus_zx)       \
      : "cc", "memory")
    if constexpr (std::is_same_v<T, int8_t> && std::is_same_v<TW, int8_t>) {
      TIGHTFIT_V6M_DOT2("ldrsb", "ldrsb");
    } else if constexpr (std::is_same_v<T, int8_t>) {
      TIGHTFIT_V6M_DOT2("ldrsb", "ldrb");
    } else if constexpr (std::is_same_v<TW, int8_t>) {
      TIGHTFIT_V6M_DOT2("ldrb", "ldrsb");
    } else {
      TIGHTFIT_V6M_DOT2("ldrb", "ldrb");
    }
#undef TIGHTFIT_V6M_DOT2
    x += pairs, w0 += pairs, w1 += pairs, n -= pairs;
  }
#else
  if (zw == 0) {
    // Four steps per pass, each value loaded once at an immediate offset (RV32: LB, SUB, two LBs,
    // two MULs, two ADDs per two MACs; the pointers move once a pass).
    int32_t s0 = 0, s1 = 0;
    const T* const end = x + (n & ~3);
    for (; x != end; x += 4, w0 += 4, w1 += 4) {
      const int32_t x0 = static_cast<int32_t>(x[0]) - zx, x1 = static_cast<int32_t>(x[1]) - zx;
      const int32_t x2 = static_cast<int32_t>(x[2]) - zx, x3 = static_cast<int32_t>(x[3]) - zx;
      s0 += x0 * static_cast<int32_t>(w0[0]) + x1 * static_cast<int32_t>(w0[1]) + x2 * static_cast<int32_t>(w0[2]) +
            x3 * static_cast<int32_t>(w0[3]);
      s1 += x0 * static_cast<int32_t>(w1[0]) + x1 * static_cast<int32_t>(w1[1]) + x2 * static_cast<int32_t>(w1[2]) +
            x3 * static_cast<int32_t>(w1[3]);
    }
    a0 += s0;
    a1 += s1;
    n &= 3;
  }
#endif
  for (int32_t k = 0; k < n; ++k) {
    const int32_t xv = static_cast<int32_t>(x[k]) - zx;
    a0 += xv * (static_cast<int32_t>(w0[k]) - zw);
    a1 += xv * (static_cast<int32_t>(w1[k]) - zw);
  }
}

// y[c] = requant(bias[c] + sum_i (x[i] - zx)(w[c][i] - zw)) for c < out_c, the weight rows n
// bytes apart, two channels at a time. Reads x[0 .. n) (for each pair), then writes y[c] and
// y[c + 1], ascending.
template <typename T, typename TW, typename TM>
inline void row_times_weights(const T* x, const TW* w, int32_t n, int32_t out_c, int32_t zx, int32_t zw,
                              const int32_t* bias, const TM* multipliers, int32_t per_channel, int32_t zero_point,
                              int32_t out_min, int32_t out_max, T* y) {
  for (int32_t c = 0; c < out_c; c += 2) {
    const bool pair = c + 1 < out_c;
    const TW* w0 = w + c * n;
    int32_t a0 = bias != nullptr ? bias[c] : 0;
    int32_t a1 = pair && bias != nullptr ? bias[c + 1] : 0;
    // The last odd channel runs its row twice and keeps one result.
    dot2(x, w0, pair ? w0 + n : w0, n, zx, zw, a0, a1);
    y[c] = requantize<T>(a0, multipliers[per_channel ? c : 0], zero_point, out_min, out_max);
    if (pair) y[c + 1] = requantize<T>(a1, multipliers[per_channel ? c + 1 : 0], zero_point, out_min, out_max);
  }
}

// Pointwise: every pixel, in order, is one row against all output channels.
template <typename T, typename TW, typename TM>
inline void conv_pointwise(const ConvParams& p, const T* in, const TW* weights, const int32_t* bias,
                           const TM* multipliers, T* out) {
  const int32_t pixels = p.batch * p.in_h * p.in_w;
  for (int32_t px = 0; px < pixels; ++px)
    row_times_weights(in + px * p.in_c, weights, p.in_c, p.out_c, p.input_zero_point, p.weight_zero_point, bias,
                      multipliers, p.per_channel, p.output_zero_point, p.output_min, p.output_max,
                      out + px * conv_out_stride(p));
}

// Fully connected: every row, in order, against all output features.
template <typename T, typename TW, typename TM>
inline void fully_connected(const FullyConnectedParams& p, const T* in, const TW* weights, const int32_t* bias,
                            const TM* multipliers, T* out) {
  for (int32_t r = 0; r < p.rows; ++r)
    row_times_weights(in + r * p.in_features, weights, p.in_features, p.out_features, p.input_zero_point,
                      p.weight_zero_point, bias, multipliers, p.per_channel, p.output_zero_point, p.output_min,
                      p.output_max, out + r * p.out_features);
}

// The most kernel taps the depthwise kernel lists per pixel (3x3 and 5x5 kernels fit).
constexpr int32_t kMaxTaps = 25;

// Depthwise, depth multiplier 1: for each output pixel the taps inside the image are listed once
// (input and weight offsets of channel 0), then each channel runs down that list: a loop of a
// few values, which GCC keeps in the low registers. Reads pixel p's taps for channel c, then
// writes y[p][c]; channels ascending, pixels in raster order, or in reverse raster order when
// kBackward (the portable kernel's orders).
template <typename T, typename TW, bool kBackward = false, typename TM>
inline void conv_depthwise(const ConvParams& p, const T* in, const TW* weights, const int32_t* bias,
                           const TM* multipliers, T* out) {
  if (p.out_c != p.in_c || p.kernel_h * p.kernel_w > kMaxTaps)
    return portable::conv_depthwise<T, TW, kBackward>(p, in, weights, bias, multipliers, out);
  const int32_t channels = p.in_c, zx = p.input_zero_point, zw = p.weight_zero_point;
  int32_t x_offset[kMaxTaps], w_offset[kMaxTaps];
  for (int32_t bi = 0; bi < p.batch; ++bi) {
    const int32_t b = kBackward ? p.batch - 1 - bi : bi;
    const T* image = in + b * p.in_h * p.in_w * channels;
    for (int32_t oyi = 0; oyi < p.out_h; ++oyi) {
      const int32_t oy = kBackward ? p.out_h - 1 - oyi : oyi;
      const int32_t iy0 = oy * p.stride_h - p.pad_top;
      int32_t ky_lo, ky_hi;
      conv_tap_range(iy0, p.dilation_h, p.kernel_h, p.in_h, ky_lo, ky_hi);
      for (int32_t oxi = 0; oxi < p.out_w; ++oxi) {
        const int32_t ox = kBackward ? p.out_w - 1 - oxi : oxi;
        const int32_t ix0 = ox * p.stride_w - p.pad_left;
        int32_t kx_lo, kx_hi;
        conv_tap_range(ix0, p.dilation_w, p.kernel_w, p.in_w, kx_lo, kx_hi);
        int32_t taps = 0;
        for (int32_t ky = ky_lo; ky < ky_hi; ++ky) {
          for (int32_t kx = kx_lo; kx < kx_hi; ++kx, ++taps) {
            x_offset[taps] = ((iy0 + ky * p.dilation_h) * p.in_w + ix0 + kx * p.dilation_w) * channels;
            w_offset[taps] = (ky * p.kernel_w + kx) * channels;
          }
        }
        T* y = out + ((b * p.out_h + oy) * p.out_w + ox) * conv_out_stride(p);
        for (int32_t c = 0; c < channels; ++c) {
          const T* x = image + c;
          const TW* w = weights + c;
          int32_t acc = bias != nullptr ? bias[c] : 0;
          for (int32_t t = 0; t < taps; ++t)
            acc += (static_cast<int32_t>(x[x_offset[t]]) - zx) * (static_cast<int32_t>(w[w_offset[t]]) - zw);
          y[c] =
              requantize<T>(acc, multipliers[p.per_channel ? c : 0], p.output_zero_point, p.output_min, p.output_max);
        }
      }
    }
  }
}

// The largest receptive field (kh * kw * in_c bytes) that the general conv gathers on the stack.
constexpr int32_t kPatchBytes = 256;

// General conv with one group and kh * kw * in_c <= kPatchBytes: the receptive field of output
// pixel p gathered into a byte patch (taps in the padding hold the input zero point, so that they
// add nothing), then one row against all output channels. Reads the input pixels of pixel p's
// taps, then writes y[p][0 .. out_c) ascending; pixels in raster order. Other convs: portable.
template <typename T, typename TW, typename TM>
inline void conv_general(const ConvParams& p, const T* in, const TW* weights, const int32_t* bias,
                         const TM* multipliers, T* out) {
  if (p.groups != 1 || p.kernel_h * p.kernel_w * p.in_c > kPatchBytes)
    return portable::conv_general(p, in, weights, bias, multipliers, out);
  const int32_t len = p.kernel_h * p.kernel_w * p.in_c;
  const T padding = static_cast<T>(p.input_zero_point);
  T patch[kPatchBytes];
  for (int32_t b = 0; b < p.batch; ++b) {
    for (int32_t oy = 0; oy < p.out_h; ++oy) {
      for (int32_t ox = 0; ox < p.out_w; ++ox) {
        gather_window(p, in, b, oy, ox, padding, patch);
        row_times_weights(static_cast<const T*>(patch), weights, len, p.out_c, p.input_zero_point, p.weight_zero_point,
                          bias, multipliers, p.per_channel, p.output_zero_point, p.output_min, p.output_max,
                          out + ((b * p.out_h + oy) * p.out_w + ox) * conv_out_stride(p));
      }
    }
  }
}

}  // namespace scalar
}  // namespace tightfit
