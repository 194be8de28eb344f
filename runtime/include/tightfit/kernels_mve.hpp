// tightfit runtime: the Helium (M-profile Vector Extension, MVE) fast paths of the convolution
// and fully connected kernels, for Cortex-M55 and other Armv8.1-M cores with integer MVE.
// Included by kernels.hpp; not a header to include on its own.
//
// Compiled in where the target has integer MVE (__ARM_FEATURE_MVE & 1), through the intrinsics
// of <arm_mve.h>. kernels.hpp calls them unless TIGHTFIT_PORTABLE_KERNELS is defined (the DSP
// paths of kernels_dsp.hpp are not used on such a core); they live in namespace tightfit::mve,
// next to tightfit::portable, so that a test can run both on the same data.
//
// Bit-exact with the portable path: the integer sums are the same values modulo 2^32 (the
// portable path does not overflow int32 either), and the requantization is the same IEEE
// single-precision conversion and multiply, rounded half to even by VCVTN, with the clamp moved
// after the rounding (the same result: rounding is monotonic and the bounds are integers); it
// needs the float part of MVE (__ARM_FEATURE_MVE & 2: Cortex-M55 with its FPU) and FPSCR's
// default round-to-nearest mode.
//
// How the work is laid out (16 int8/uint8 lanes per 128-bit vector, the last vector of a run
// predicated so that lanes past its end load as 0):
//  * pointwise conv and fully connected: one row (pixel) against 4 output channels at a time:
//    each 16-byte input vector is loaded once and summed with VMLADAVA against 4 weight vectors;
//    the zero points come off afterwards through sum(x) (once per row) and sum(w) (VADDVA on the
//    weight vectors already loaded): sum (x - zx)(w - zw) =
//    sum x w - zw sum x - zx sum w + n zx zw. The 4 accumulators are requantized together in
//    one float vector and stored as 4 bytes with one narrowing store.
//  * general conv with one group: the pixel's receptive field gathered into a byte patch on the
//    stack (padding taps hold the input zero point, so that they add nothing), then the patch is
//    one row of the same 1 x 4 product.
//  * depthwise (depth multiplier 1): 4 adjacent channels per vector of 32-bit lanes (VLDRB
//    widening each byte), the taps inside the image found once per pixel; 4 outputs requantized
//    and stored per vector.
//  * mixed activation/weight signedness and depth multipliers > 1 go to the portable kernels.
//
// Read/write order (for outputs that overlap their inputs in memory): every kernel here writes
// its output in the portable kernel's raster order, pixel after pixel, channels ascending within
// a pixel, and writes the outputs of pixel p only after it has read every input that pixel p
// needs; it never writes an output before the portable kernel would have. It reads inputs only
// of the pixel being computed (no reading ahead into later pixels). No __restrict anywhere.
#pragma once

#include <arm_mve.h>

#include <cstdint>
#include <type_traits>

#include "tightfit/numerics.hpp"
#include "tightfit/params.hpp"

namespace tightfit {
namespace mve {
namespace lanes {

// Loads of 16 bytes (the first `n` of them with a predicated load: the others read as 0).
inline int8x16_t load(const int8_t* p) { return vldrbq_s8(p); }
inline uint8x16_t load(const uint8_t* p) { return vldrbq_u8(p); }
inline int8x16_t load(const int8_t* p, mve_pred16_t m) { return vldrbq_z_s8(p, m); }
inline uint8x16_t load(const uint8_t* p, mve_pred16_t m) { return vldrbq_z_u8(p, m); }

// a + the sum of the 16 lane products (VMLADAVA), modulo 2^32.
inline int32_t dot(int32_t a, int8x16_t x, int8x16_t w) { return vmladavaq_s8(a, x, w); }
inline int32_t dot(int32_t a, uint8x16_t x, uint8x16_t w) {
  return static_cast<int32_t>(vmladavaq_u8(static_cast<uint32_t>(a), x, w));
}
// a + the sum of the 16 lanes (VADDVA).
inline int32_t sum(int32_t a, int8x16_t v) { return vaddvaq_s8(a, v); }
inline int32_t sum(int32_t a, uint8x16_t v) { return static_cast<int32_t>(vaddvaq_u8(static_cast<uint32_t>(a), v)); }

// Narrowing store of the low byte of `count` (1 to 4) 32-bit lanes.
inline void store4(int8_t* y, int32x4_t q, int32_t count) { vstrbq_p_s32(y, q, vctp32q(count)); }
inline void store4(uint8_t* y, int32x4_t q, int32_t count) {
  vstrbq_p_u32(y, vreinterpretq_u32_s32(q), vctp32q(count));
}

}  // namespace lanes

// What every output of a conv / fully connected call shares, as vectors: requantizes 4
// accumulators (bias not yet added) of channels c .. c + 3 and stores the first `count`.
struct Output {
  const int32_t* bias;
  const float* multipliers;
  int32_t per_channel;
  int32_t zero_point;
  int32x4_t lo, hi;  // clamp bounds less the zero point

  template <typename T>
  void store(int32x4_t acc, int32_t c, int32_t count, T* y) const {
    const mve_pred16_t m = vctp32q(count);
    if (bias != nullptr) acc = vaddq_s32(acc, vldrwq_z_s32(bias + c, m));
    const float32x4_t scale = per_channel ? vldrwq_z_f32(multipliers + c, m) : vdupq_n_f32(multipliers[0]);
    int32x4_t q = vcvtnq_s32_f32(vmulq_f32(vcvtq_f32_s32(acc), scale));
    q = vminq_s32(vmaxq_s32(q, lo), hi);
    lanes::store4(y + c, vaddq_n_s32(q, zero_point), count);
  }

  // The same for channels c, c + 2, c + 4, c + 6 (the first `count`).
  template <typename T>
  void store_every_other(int32x4_t acc, int32_t c, int32_t count, T* y) const {
    const mve_pred16_t m = vctp32q(count);
    const uint32x4_t every_other = vidupq_n_u32(0, 2);  // 0, 2, 4, 6
    if (bias != nullptr) acc = vaddq_s32(acc, vldrwq_gather_shifted_offset_z_s32(bias + c, every_other, m));
    const float32x4_t scale = per_channel ? vldrwq_gather_shifted_offset_z_f32(multipliers + c, every_other, m)
                                          : vdupq_n_f32(multipliers[0]);
    int32x4_t q = vcvtnq_s32_f32(vmulq_f32(vcvtq_f32_s32(acc), scale));
    q = vaddq_n_s32(vminq_s32(vmaxq_s32(q, lo), hi), zero_point);
    if constexpr (std::is_same_v<T, int8_t>) {
      vstrbq_scatter_offset_p_s32(y + c, every_other, q, m);
    } else {
      vstrbq_scatter_offset_p_u32(y + c, every_other, vreinterpretq_u32_s32(q), m);
    }
  }
};

inline Output output_of(const int32_t* bias, const float* multipliers, int32_t per_channel, int32_t zero_point,
                        int32_t out_min, int32_t out_max) {
  return Output{bias, multipliers, per_channel, zero_point, vdupq_n_s32(out_min - zero_point),
                vdupq_n_s32(out_max - zero_point)};
}

// Sum of the n bytes at x.
template <typename T>
inline int32_t row_sum(const T* x, int32_t n) {
  int32_t s = 0;
  int32_t i = 0;
  for (; i + 16 <= n; i += 16) s = lanes::sum(s, lanes::load(x + i));
  if (i < n) s = lanes::sum(s, lanes::load(x + i, vctp8q(n - i)));
  return s;
}

// Accumulators of 4 output channels: a[j] = sum_i x[i] w_j[i] (plus, in the folded form, the
// zero point's share), s[j] = sum_i w_j[i] where it is needed.
struct Sums4 {
  int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0, s0 = 0, s1 = 0, s2 = 0, s3 = 0;
};

// One step of 16 bytes, general form: sum x w and sum w for each of the 4 weight rows.
template <typename V>
inline void step_general(V xv, V v0, V v1, V v2, V v3, Sums4& r) {
  r.a0 = lanes::dot(r.a0, xv, v0);
  r.s0 = lanes::sum(r.s0, v0);
  r.a1 = lanes::dot(r.a1, xv, v1);
  r.s1 = lanes::sum(r.s1, v1);
  r.a2 = lanes::dot(r.a2, xv, v2);
  r.s2 = lanes::sum(r.s2, v2);
  r.a3 = lanes::dot(r.a3, xv, v3);
  r.s3 = lanes::sum(r.s3, v3);
}

// One step of 16 bytes, int8 with the input zero point folded in: a += x . w + c . w (+ 1 . w
// when -zx is 128, which no int8 lane holds: 127 + 1), with c = -zx in every lane. Four
// accumulators only: VMLADAV's must be even-numbered registers, and eight would not fit.
template <bool kPlusOne>
inline void step_folded(int8x16_t xv, int8x16_t c, int8x16_t v0, int8x16_t v1, int8x16_t v2, int8x16_t v3,
                        Sums4& r) {
  r.a0 = vmladavaq_s8(vmladavaq_s8(r.a0, xv, v0), c, v0);
  r.a1 = vmladavaq_s8(vmladavaq_s8(r.a1, xv, v1), c, v1);
  r.a2 = vmladavaq_s8(vmladavaq_s8(r.a2, xv, v2), c, v2);
  r.a3 = vmladavaq_s8(vmladavaq_s8(r.a3, xv, v3), c, v3);
  if constexpr (kPlusOne) {
    r.a0 = vaddvaq_s8(r.a0, v0);
    r.a1 = vaddvaq_s8(r.a1, v1);
    r.a2 = vaddvaq_s8(r.a2, v2);
    r.a3 = vaddvaq_s8(r.a3, v3);
  }
}

// Runs `step` over n bytes of x and of the 4 weight rows, the last part predicated.
template <typename T, typename TW, typename Step>
inline void over_row(const T* x, const TW* w0, const TW* w1, const TW* w2, const TW* w3, int32_t n, Step step) {
  int32_t i = 0;
  for (; i + 16 <= n; i += 16)
    step(lanes::load(x + i), lanes::load(w0 + i), lanes::load(w1 + i), lanes::load(w2 + i), lanes::load(w3 + i));
  if (i < n) {
    const mve_pred16_t m = vctp8q(n - i);
    step(lanes::load(x + i, m), lanes::load(w0 + i, m), lanes::load(w1 + i, m), lanes::load(w2 + i, m),
         lanes::load(w3 + i, m));
  }
}

// The int8 row with the input zero point folded in (weights' zero point 0), every output
// channel: the hot loop of pointwise convolutions and fully connected layers, kept free of
// branches and of anything else so that its values stay in registers: whole blocks of 4
// channels walk the weights, the bias and the multipliers with pointers (a per-tensor multiplier
// and a missing bias are 4-lane copies that do not advance), the last partial block goes through
// Output::store. Reads x[0 .. n) (again for each block), then writes y[c .. c + 3] per block,
// ascending.
template <bool kPlusOne>
inline void row_times_weights_int8(const int8_t* x, const int8_t* w, int32_t n, int32_t out_c, int32_t zx,
                                   const Output& o, int8_t* y) {
  const int8x16_t c_lanes = vdupq_n_s8(static_cast<int8_t>(kPlusOne ? 127 : -zx));
  const int32x4_t lo = o.lo, hi = o.hi;
  const int32_t zero_point = o.zero_point;
  alignas(16) static constexpr int32_t kNoBias[4] = {0, 0, 0, 0};
  alignas(16) const float tensor_scale[4] = {o.multipliers[0], o.multipliers[0], o.multipliers[0], o.multipliers[0]};
  const int32_t* bias = o.bias != nullptr ? o.bias : kNoBias;
  const int32_t bias_step = o.bias != nullptr ? 4 : 0;
  const float* scale = o.per_channel ? o.multipliers : tensor_scale;
  const int32_t scale_step = o.per_channel ? 4 : 0;
  const int32_t blocks = out_c >> 2;
  const int8_t* w0 = w;
  int8_t* yc = y;
  for (int32_t block = 0; block < blocks; ++block) {
    const int8_t* w1 = w0 + n;
    const int8_t* w2 = w1 + n;
    const int8_t* w3 = w2 + n;
    Sums4 r;
    over_row(x, w0, w1, w2, w3, n, [&](int8x16_t xv, int8x16_t v0, int8x16_t v1, int8x16_t v2, int8x16_t v3) {
      step_folded<kPlusOne>(xv, c_lanes, v0, v1, v2, v3, r);
    });
    int32x4_t acc = vsetq_lane_s32(r.a3, vsetq_lane_s32(r.a2, vsetq_lane_s32(r.a1, vdupq_n_s32(r.a0), 1), 2), 3);
    acc = vaddq_s32(acc, vldrwq_s32(bias));
    int32x4_t q = vcvtnq_s32_f32(vmulq_f32(vcvtq_f32_s32(acc), vldrwq_f32(scale)));
    q = vaddq_n_s32(vminq_s32(vmaxq_s32(q, lo), hi), zero_point);
    vstrbq_s32(yc, q);
    w0 = w3 + n;
    yc += 4;
    bias += bias_step;
    scale += scale_step;
  }
  const int32_t count = out_c & 3;
  if (count != 0) {
    // The missing rows repeat the first one: read, then never stored.
    const int8_t* w1 = count > 1 ? w0 + n : w0;
    const int8_t* w2 = count > 2 ? w0 + 2 * n : w0;
    Sums4 r;
    over_row(x, w0, w1, w2, w0, n, [&](int8x16_t xv, int8x16_t v0, int8x16_t v1, int8x16_t v2, int8x16_t v3) {
      step_folded<kPlusOne>(xv, c_lanes, v0, v1, v2, v3, r);
    });
    const int32x4_t acc =
        vsetq_lane_s32(r.a3, vsetq_lane_s32(r.a2, vsetq_lane_s32(r.a1, vdupq_n_s32(r.a0), 1), 2), 3);
    o.store(acc, out_c - count, count, y);
  }
}

// y[c] = requant(bias[c] + sum_i (x[i] - zx)(w[c][i] - zw)) for c < out_c: one row x of n bytes
// against out_c weight rows of n bytes each (w[c] = w + c * n), 4 channels at a time.
// Reads: x[0 .. n) and the weights; writes: y[0 .. out_c), in ascending order of c, 4 at a time,
// each after all of x has been read.
template <typename T, typename TW>
inline void row_times_weights(const T* x, const TW* w, int32_t n, int32_t out_c, int32_t zx, int32_t zw,
                              const Output& o, T* y) {
  if constexpr (std::is_same_v<T, int8_t> && std::is_same_v<TW, int8_t>) {
    if (zw == 0) {
      if (zx == -128) {
        row_times_weights_int8<true>(x, w, n, out_c, zx, o, y);
      } else {
        row_times_weights_int8<false>(x, w, n, out_c, zx, o, y);
      }
      return;
    }
  }
  const int32_t x_term = -zw * row_sum(x, n) + n * zx * zw;
  for (int32_t c = 0; c < out_c; c += 4) {
    const int32_t count = out_c - c < 4 ? out_c - c : 4;
    const TW* w0 = w + c * n;
    const TW* w1 = count > 1 ? w0 + n : w0;
    const TW* w2 = count > 2 ? w0 + 2 * n : w0;
    const TW* w3 = count > 3 ? w0 + 3 * n : w0;
    Sums4 r;
    using V = decltype(lanes::load(x));
    over_row(x, w0, w1, w2, w3, n, [&](V xv, V v0, V v1, V v2, V v3) { step_general(xv, v0, v1, v2, v3, r); });
    const int32x4_t acc = vsetq_lane_s32(
        r.a3 - zx * r.s3,
        vsetq_lane_s32(r.a2 - zx * r.s2, vsetq_lane_s32(r.a1 - zx * r.s1, vdupq_n_s32(r.a0 - zx * r.s0), 1), 2), 3);
    o.store(vaddq_n_s32(acc, x_term), c, count, y);
  }
}

// n bytes copied or set, 16 at a time (the last vector predicated).
template <typename T>
inline void copy_bytes(T* to, const T* from, int32_t n) {
  for (int32_t i = 0; i < n; i += 16) {
    const mve_pred16_t m = vctp8q(n - i);
    vstrbq_p_u8(reinterpret_cast<uint8_t*>(to + i), vldrbq_z_u8(reinterpret_cast<const uint8_t*>(from + i), m), m);
  }
}
template <typename T>
inline void fill_bytes(T* to, int32_t n, T value) {
  const uint8x16_t v = vdupq_n_u8(static_cast<uint8_t>(value));
  for (int32_t i = 0; i < n; i += 16) vstrbq_p_u8(reinterpret_cast<uint8_t*>(to + i), v, vctp8q(n - i));
}

namespace impl {

// 8 bytes widened to 16-bit lanes (|byte - zero point| < 2^9 fits); the predicated forms read
// the lanes at and past the group's end as 0 (their values never reach the output).
inline int16x8_t widen8(const int8_t* p) { return vldrbq_s16(p); }
inline int16x8_t widen8(const uint8_t* p) { return vreinterpretq_s16_u16(vldrbq_u16(p)); }
inline int16x8_t widen8(const int8_t* p, mve_pred16_t m) { return vldrbq_z_s16(p, m); }
inline int16x8_t widen8(const uint8_t* p, mve_pred16_t m) { return vreinterpretq_s16_u16(vldrbq_z_u16(p, m)); }

// The taps of one output pixel for 8 channels: even += (x - zx)(w - zw) of lanes 0, 2, 4, 6 and
// odd += those of lanes 1, 3, 5, 7 (VMULLB / VMULLT), over ky in [ky_lo, ky_hi) and kx in
// [kx_lo, kx_hi). kWeightOffset: the weights' zero point is not 0. kPartial: fewer than 8
// channels are left (predicated loads).
template <bool kWeightOffset, bool kPartial, typename T, typename TW>
inline void depthwise_taps(const T* x_row, const TW* w_row, int32_t rows, int32_t taps, int32_t x_row_step,
                           int32_t x_tap_step, int32_t w_row_step, int32_t w_tap_step, int16x8_t zx, int16x8_t zw,
                           mve_pred16_t m, int32x4_t& even, int32x4_t& odd) {
  for (int32_t ky = 0; ky < rows; ++ky) {
    const T* xt = x_row;
    const TW* wt = w_row;
    for (int32_t kx = 0; kx < taps; ++kx) {
      int16x8_t xv, wv;
      if constexpr (kPartial) {
        xv = widen8(xt, m);
        wv = widen8(wt, m);
      } else {
        xv = widen8(xt);
        wv = widen8(wt);
      }
      xv = vsubq_s16(xv, zx);
      if constexpr (kWeightOffset) wv = vsubq_s16(wv, zw);
      even = vaddq_s32(even, vmullbq_int_s16(xv, wv));
      odd = vaddq_s32(odd, vmulltq_int_s16(xv, wv));
      xt += x_tap_step;
      wt += w_tap_step;
    }
    x_row += x_row_step;
    w_row += w_row_step;
  }
}

// Depthwise, depth multiplier 1: out[p][c] = requant(bias[c] + sum over the taps of pixel p
// inside the image of (x[tap][c] - zx)(w[tap][c] - zw)), 8 channels per vector of 16-bit lanes:
// VMULLB / VMULLT multiply the even and the odd lanes into two vectors of 32-bit sums, which are
// requantized and stored apart (channels c, c + 2, ... and c + 1, c + 3, ...).
// Reads: for output pixel p, the input pixels of its taps, channels c .. c + 7, then writes
// y[p][c .. c + 7]; pixels in raster order, channel groups ascending.
template <typename T, typename TW>
inline void conv_depthwise(const ConvParams& p, const T* in, const TW* weights, const int32_t* bias,
                           const float* multipliers, T* out) {
  const Output o = output_of(bias, multipliers, p.per_channel, p.output_zero_point, p.output_min, p.output_max);
  const int32_t channels = p.in_c;
  const int16x8_t zx = vdupq_n_s16(static_cast<int16_t>(p.input_zero_point));
  const int16x8_t zw = vdupq_n_s16(static_cast<int16_t>(p.weight_zero_point));
  const bool weight_offset = p.weight_zero_point != 0;
  for (int32_t b = 0; b < p.batch; ++b) {
    for (int32_t oy = 0; oy < p.out_h; ++oy) {
      const int32_t iy0 = oy * p.stride_h - p.pad_top;
      int32_t ky_lo, ky_hi;
      conv_tap_range(iy0, p.dilation_h, p.kernel_h, p.in_h, ky_lo, ky_hi);
      for (int32_t ox = 0; ox < p.out_w; ++ox) {
        const int32_t ix0 = ox * p.stride_w - p.pad_left;
        int32_t kx_lo, kx_hi;
        conv_tap_range(ix0, p.dilation_w, p.kernel_w, p.in_w, kx_lo, kx_hi);
        T* y = out + ((b * p.out_h + oy) * p.out_w + ox) * conv_out_stride(p);
        const T* x_first =
            in + ((b * p.in_h + iy0 + ky_lo * p.dilation_h) * p.in_w + ix0 + kx_lo * p.dilation_w) * channels;
        const TW* w_first = weights + (ky_lo * p.kernel_w + kx_lo) * channels;
        const int32_t x_row_step = p.dilation_h * p.in_w * channels, x_tap_step = p.dilation_w * channels;
        const int32_t w_row_step = p.kernel_w * channels;
        for (int32_t c = 0; c < channels; c += 8) {
          const int32_t count = channels - c < 8 ? channels - c : 8;
          const mve_pred16_t m = vctp16q(count);
          int32x4_t even = vdupq_n_s32(0), odd = vdupq_n_s32(0);
          const int32_t rows = ky_hi - ky_lo, taps = kx_hi - kx_lo;
          const T* x_row = x_first + c;
          const TW* w_row = w_first + c;
          if (count == 8 && !weight_offset) {
            depthwise_taps<false, false>(x_row, w_row, rows, taps, x_row_step, x_tap_step, w_row_step, channels, zx,
                                         zw, m, even, odd);
          } else {
            depthwise_taps<true, true>(x_row, w_row, rows, taps, x_row_step, x_tap_step, w_row_step, channels, zx,
                                       zw, m, even, odd);
          }
          o.store_every_other(even, c, (count + 1) >> 1, y);
          if (count > 1) o.store_every_other(odd, c + 1, count >> 1, y);
        }
      }
    }
  }
}

// The largest receptive field (kh * kw * in_c bytes) that the general conv gathers on the stack.
constexpr int32_t kPatchBytes = 256;

// General conv with one group and kh * kw * in_c <= kPatchBytes: the receptive field of output
// pixel p gathered into a patch (taps in the padding hold the input zero point), then one row
// against all output channels. Reads: the input pixels of pixel p's taps; then writes
// y[p][0 .. out_c) in ascending order; pixels in raster order.
template <typename T, typename TW>
inline void conv_patch(const ConvParams& p, const T* in, const TW* weights, const int32_t* bias,
                       const float* multipliers, T* out) {
  const Output o = output_of(bias, multipliers, p.per_channel, p.output_zero_point, p.output_min, p.output_max);
  const int32_t len = p.kernel_h * p.kernel_w * p.in_c;
  const T padding = static_cast<T>(p.input_zero_point);
  const int32_t row_bytes = p.kernel_w * p.in_c;
  alignas(16) T patch[kPatchBytes];
  for (int32_t b = 0; b < p.batch; ++b) {
    for (int32_t oy = 0; oy < p.out_h; ++oy) {
      for (int32_t ox = 0; ox < p.out_w; ++ox) {
        T* e = patch;
        int32_t kx_lo, kx_hi;
        const int32_t ix0 = ox * p.stride_w - p.pad_left;
        conv_tap_range(ix0, p.dilation_w, p.kernel_w, p.in_w, kx_lo, kx_hi);
        for (int32_t ky = 0; ky < p.kernel_h; ++ky, e += row_bytes) {
          const int32_t iy = oy * p.stride_h - p.pad_top + ky * p.dilation_h;
          if (iy < 0 || iy >= p.in_h || kx_lo >= kx_hi) {
            fill_bytes(e, row_bytes, padding);
          } else if (p.dilation_w == 1) {
            // The taps of the row inside the image are one run of bytes; the rest is padding.
            fill_bytes(e, kx_lo * p.in_c, padding);
            copy_bytes(e + kx_lo * p.in_c, in + ((b * p.in_h + iy) * p.in_w + ix0 + kx_lo) * p.in_c,
                       (kx_hi - kx_lo) * p.in_c);
            fill_bytes(e + kx_hi * p.in_c, (p.kernel_w - kx_hi) * p.in_c, padding);
          } else {
            for (int32_t kx = 0; kx < p.kernel_w; ++kx) {
              const int32_t ix = ix0 + kx * p.dilation_w;
              if (ix < 0 || ix >= p.in_w) {
                fill_bytes(e + kx * p.in_c, p.in_c, padding);
              } else {
                copy_bytes(e + kx * p.in_c, in + ((b * p.in_h + iy) * p.in_w + ix) * p.in_c, p.in_c);
              }
            }
          }
        }
        T* y = out + ((b * p.out_h + oy) * p.out_w + ox) * conv_out_stride(p);
        row_times_weights(patch, weights, len, p.out_c, p.input_zero_point, p.weight_zero_point, o, y);
      }
    }
  }
}

}  // namespace impl

// The MVE kernels; same contract as the portable ones (kernels.hpp). Activations and weights of
// the same signedness (VMLADAV multiplies like with like); the others take the portable loops.
template <typename T, typename TW>
constexpr bool kSameSignedness = std::is_same_v<T, TW>;

// Pointwise: each pixel (rows in raster order) is one row against all output channels. Reads
// pixel p's input channels, then writes pixel p's outputs, channels ascending.
template <typename T, typename TW>
inline void conv_pointwise(const ConvParams& p, const T* in, const TW* weights, const int32_t* bias,
                           const float* multipliers, T* out) {
  if constexpr (!kSameSignedness<T, TW>) {
    portable::conv_pointwise(p, in, weights, bias, multipliers, out);
  } else {
    const Output o = output_of(bias, multipliers, p.per_channel, p.output_zero_point, p.output_min, p.output_max);
    const int32_t pixels = p.batch * p.in_h * p.in_w;
    for (int32_t px = 0; px < pixels; ++px)
      row_times_weights(in + px * p.in_c, weights, p.in_c, p.out_c, p.input_zero_point, p.weight_zero_point, o,
                        out + px * conv_out_stride(p));
  }
}

// Depthwise: see impl::conv_depthwise for the read/write order.
template <typename T, typename TW>
inline void conv_depthwise(const ConvParams& p, const T* in, const TW* weights, const int32_t* bias,
                           const float* multipliers, T* out) {
  if (p.out_c != p.in_c) {
    portable::conv_depthwise(p, in, weights, bias, multipliers, out);
  } else {
    impl::conv_depthwise(p, in, weights, bias, multipliers, out);
  }
}

// General conv: see impl::conv_patch for the read/write order.
template <typename T, typename TW>
inline void conv_general(const ConvParams& p, const T* in, const TW* weights, const int32_t* bias,
                         const float* multipliers, T* out) {
  if constexpr (!kSameSignedness<T, TW>) {
    portable::conv_general(p, in, weights, bias, multipliers, out);
  } else {
    if (p.groups == 1 && p.kernel_h * p.kernel_w * p.in_c <= impl::kPatchBytes) {
      impl::conv_patch(p, in, weights, bias, multipliers, out);
    } else {
      portable::conv_general(p, in, weights, bias, multipliers, out);
    }
  }
}

// Fully connected: each row, in order, against all output features. Reads row r, then writes
// row r's outputs, features ascending.
template <typename T, typename TW>
inline void fully_connected(const FullyConnectedParams& p, const T* in, const TW* weights, const int32_t* bias,
                            const float* multipliers, T* out) {
  if constexpr (!kSameSignedness<T, TW>) {
    portable::fully_connected(p, in, weights, bias, multipliers, out);
  } else {
    const Output o = output_of(bias, multipliers, p.per_channel, p.output_zero_point, p.output_min, p.output_max);
    for (int32_t r = 0; r < p.rows; ++r)
      row_times_weights(in + r * p.in_features, weights, p.in_features, p.out_features, p.input_zero_point,
                        p.weight_zero_point, o, out + r * p.out_features);
  }
}

}  // namespace mve
}  // namespace tightfit
