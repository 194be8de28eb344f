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
// default round-to-nearest mode. With TFLite's multipliers (--numerics tflite) the vectors are
// requantized in integers as numerics.hpp's scalar fixed-point steps, lane by lane
// (scale_lanes()).
//
// How the work is laid out (16 int8/uint8 lanes per 128-bit vector, the last vector of a run
// predicated so that lanes past its end load as 0):
//  * pointwise conv and fully connected, weights' zero point 0 (matmul, pair_times_weights): two
//    rows (pixels) against two output channels at a time, each 16-byte step 4 loads and 4
//    VMLADAVA; the input's zero point is folded once per call into per-channel start values
//    bias - zx * sum(w) (PairStarts, on the stack), from which the 4 sums start; they are
//    requantized in one float vector and stored with one scatter. A row left over, and weights
//    with a zero point, go one row against 4 channels at a time (row_times_weights), the zero
//    points coming off through sum(x) and sum(w): sum (x - zx)(w - zw) =
//    sum x w - zw sum x - zx sum w + n zx zw.
//  * general conv with one group: the receptive fields of two pixels gathered into byte patches
//    on the stack (padding taps hold the input zero point, so that they add nothing), then the
//    two patches are a pair of rows as above (one pixel at a time when a patch is over half of
//    kPatchBytes or the weights have a zero point). A receptive field over kPatchBytes (with
//    dilation_w 1) is read where it lies instead, one run of bytes per kernel row inside the
//    image, one pixel against 4 channels at a time (conv_runs).
//  * depthwise (depth multiplier 1): 8 adjacent channels per pass in 16-bit lanes, VMULLB /
//    VMULLT into even / odd 32-bit sums that start from the bias, the taps inside the image found
//    once per pixel; the two vectors requantized and narrowed into one 8-byte store.
//  * global average pool: 8 channels per vector, 16-bit sums over runs of 128 pixels.
//  * activations and weights of different signedness (ONNX Runtime's default uint8 activations
//    with int8 weights): VMLADAV multiplies like with like, so the matrix kernels take the
//    activations in the weights' signedness, each byte's top bit flipped as it is loaded (or
//    gathered into a patch): x ^ 0x80 is x - 128 for a uint8 read as int8 (x + 128 for an int8
//    read as uint8), and the input zero point moves with it (zx - 128, zx + 128), so every
//    x - zx, and so every sum, is unchanged. The outputs need nothing: the requantized value
//    plus the output zero point is stored as its low byte, whatever the type. The depthwise
//    kernel widens both to 16 bits and needs no flip.
//  * depth multipliers > 1 go to the portable kernels.
//
// Read/write order (for outputs that overlap their inputs in memory): the depthwise kernel and
// the pool write in the portable kernel's raster order (pixel after pixel, channels ascending
// within a pixel; the depthwise pixels in reverse when run backwards), each output after every
// input it needs has been read; the matrix kernels in the DSP matrix kernel's order (pairs of
// rows, two channels at a time: kernels.hpp's dsp_matmul_distance and dsp_matmul_up_distance),
// which the stated distances already cover; the general conv in raster order, forwards only,
// pixel p's outputs written after pixel p + 1's inputs are gathered (later than the portable
// kernel would: never sooner), or, read where it lies, each block of 4 channels written after
// its reads of the window (as the portable kernel, which reads it again for every channel).
// No __restrict anywhere.
//
// GCC 12 miscompiles constant predicates other than all-true (a 0x0F0F mask was stored as
// 0xFFFF): predicates here come from VCTP, or an all-true case takes the unpredicated form.
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

// 16 activation bytes as lanes of the weights' type TW: as they are when T is TW, else with
// their top bit flipped (x ^ 0x80, see the top of this file); predicated: the lanes past the
// first `n` read as 0, as load()'s.
template <typename TW>
inline auto as_lanes(uint8x16_t v) {
  if constexpr (std::is_same_v<TW, int8_t>) {
    return vreinterpretq_s8_u8(v);
  } else {
    return v;
  }
}
template <typename TW, typename T>
inline auto load_as(const T* p) {
  if constexpr (std::is_same_v<T, TW>) {
    return load(p);
  } else {
    return as_lanes<TW>(veorq_u8(vldrbq_u8(reinterpret_cast<const uint8_t*>(p)), vdupq_n_u8(0x80)));
  }
}
template <typename TW, typename T>
inline auto load_as(const T* p, mve_pred16_t m) {
  if constexpr (std::is_same_v<T, TW>) {
    return load(p, m);
  } else {
    const uint8x16_t v = vldrbq_z_u8(reinterpret_cast<const uint8_t*>(p), m);
    return as_lanes<TW>(veorq_m_u8(vdupq_n_u8(0), v, vdupq_n_u8(0x80), m));
  }
}

// a + the sum of the 16 lane products (VMLADAVA), modulo 2^32.
inline int32_t dot(int32_t a, int8x16_t x, int8x16_t w) { return vmladavaq_s8(a, x, w); }
inline int32_t dot(int32_t a, uint8x16_t x, uint8x16_t w) {
  return static_cast<int32_t>(vmladavaq_u8(static_cast<uint32_t>(a), x, w));
}
// a + the sum of the 16 lanes (VADDVA).
inline int32_t sum(int32_t a, int8x16_t v) { return vaddvaq_s8(a, v); }
inline int32_t sum(int32_t a, uint8x16_t v) { return static_cast<int32_t>(vaddvaq_u8(static_cast<uint32_t>(a), v)); }

// Narrowing store of the low byte of 4 (or `count`, 1 to 4) 32-bit lanes.
inline void store4(int8_t* y, int32x4_t q) { vstrbq_s32(y, q); }
inline void store4(uint8_t* y, int32x4_t q) { vstrbq_u32(y, vreinterpretq_u32_s32(q)); }
inline void store4(int8_t* y, int32x4_t q, int32_t count) { vstrbq_p_s32(y, q, vctp32q(static_cast<uint32_t>(count))); }
inline void store4(uint8_t* y, int32x4_t q, int32_t count) {
  vstrbq_p_u32(y, vreinterpretq_u32_s32(q), vctp32q(static_cast<uint32_t>(count)));
}

}  // namespace lanes

// How far the input zero point moves when activations of type T are taken in the lanes of
// weights of type TW (lanes::load_as): -128 for uint8 as int8, +128 for int8 as uint8.
template <typename T, typename TW>
constexpr int32_t kZeroPointShift = std::is_same_v<T, TW>        ? 0
                                    : std::is_same_v<T, uint8_t> ? -128
                                                                 : 128;

// The multipliers of 4 lanes: float32x4_t (ONNX Runtime's requantization) or FixedPoint4
// (TFLite's, --numerics tflite: a QuantizedMultiplier per lane). Loaded from an array of the
// scalar multipliers (float or QuantizedMultiplier: TM) by the overloads below.
struct FixedPoint4 {
  int32x4_t multiplier, shift;
};

inline float32x4_t lane_multipliers(float m) { return vdupq_n_f32(m); }
inline FixedPoint4 lane_multipliers(const QuantizedMultiplier& m) {
  return {vdupq_n_s32(m.multiplier), vdupq_n_s32(m.shift)};
}
// Channels c .. c + 3 from m = multipliers + c (the lanes past the predicate 0).
inline float32x4_t load_multipliers(const float* m) { return vldrwq_f32(m); }
inline float32x4_t load_multipliers(const float* m, mve_pred16_t p) { return vldrwq_z_f32(m, p); }
// The channels at m + channel[lane] (the lanes past the predicate 0).
inline float32x4_t gather_multipliers(const float* m, uint32x4_t channel) {
  return vldrwq_gather_shifted_offset_f32(m, channel);
}
inline float32x4_t gather_multipliers(const float* m, uint32x4_t channel, mve_pred16_t p) {
  return vldrwq_gather_shifted_offset_z_f32(m, channel, p);
}
inline FixedPoint4 gather_multipliers(const QuantizedMultiplier* m, uint32x4_t channel) {
  const int32_t* words = reinterpret_cast<const int32_t*>(m);
  const uint32x4_t word = vshlq_n_u32(channel, 1);
  return {vldrwq_gather_shifted_offset_s32(words, word), vldrwq_gather_shifted_offset_s32(words + 1, word)};
}
inline FixedPoint4 gather_multipliers(const QuantizedMultiplier* m, uint32x4_t channel, mve_pred16_t p) {
  const int32_t* words = reinterpret_cast<const int32_t*>(m);
  const uint32x4_t word = vshlq_n_u32(channel, 1);
  return {vldrwq_gather_shifted_offset_z_s32(words, word, p), vldrwq_gather_shifted_offset_z_s32(words + 1, word, p)};
}
// A QuantizedMultiplier's 4 consecutive channels: the gathers of lanes 0 .. 3 (a VLD2 would
// deinterleave them, but GCC 12 emits its post-increment by a register, which the assembler refuses).
inline FixedPoint4 load_multipliers(const QuantizedMultiplier* m) { return gather_multipliers(m, vidupq_n_u32(0, 1)); }
inline FixedPoint4 load_multipliers(const QuantizedMultiplier* m, mve_pred16_t p) {
  return gather_multipliers(m, vidupq_n_u32(0, 1), p);
}

// The 4 accumulators times their multipliers, rounded (before the clamp and the zero point).
// float: the IEEE multiply, rounded half to even by VCVTN (numerics.hpp's requantize_float()).
inline int32x4_t scale_lanes(int32x4_t acc, float32x4_t m) { return vcvtnq_s32_f32(vmulq_f32(vcvtq_f32_s32(acc), m)); }
// TFLite's MultiplyByQuantizedMultiplier, lane by lane as numerics.hpp's scalar one (CMSIS-NN's
// arm_requantize_mve): VSHL by max(shift, 0) (wrapping, as the scalar shift), VQRDMULH (gemmlowp's
// SaturatingRoundingDoublingHighMul: rounded half up, INT32_MIN * INT32_MIN saturated), then
// RoundingDivideByPOT by -min(shift, 0): VRSHL rounds half up, so a negative value is first
// moved down by 1 (saturating), which turns half up into half away from zero for it.
inline int32x4_t scale_lanes(int32x4_t acc, const FixedPoint4& m) {
  const int32x4_t left = vmaxq_s32(m.shift, vdupq_n_s32(0)), right = vminq_s32(m.shift, vdupq_n_s32(0));
  const int32x4_t high = vqrdmulhq_s32(vshlq_s32(acc, left), m.multiplier);
  const int32x4_t fixup = vshrq_n_s32(vandq_s32(high, right), 31);  // -1: negative, and a shift right
  return vrshlq_s32(vqaddq_s32(high, fixup), right);
}

// What every output of a conv / fully connected call shares, as vectors: requantizes 4
// accumulators (bias not yet added) of channels c .. c + 3 and stores the first `count`.
template <typename TM>
struct Output {
  const int32_t* bias;
  const TM* multipliers;
  int32_t per_channel;
  int32_t zero_point;
  int32x4_t lo, hi;  // clamp bounds less the zero point

  template <typename T>
  void store(int32x4_t acc, int32_t c, int32_t count, T* y) const {
    const mve_pred16_t m = vctp32q(static_cast<uint32_t>(count));
    if (bias != nullptr) acc = vaddq_s32(acc, vldrwq_z_s32(bias + c, m));
    const auto scales = per_channel ? load_multipliers(multipliers + c, m) : lane_multipliers(multipliers[0]);
    int32x4_t q = scale_lanes(acc, scales);
    q = vminq_s32(vmaxq_s32(q, lo), hi);
    lanes::store4(y + c, vaddq_n_s32(q, zero_point), count);
  }

  // The bias of channels c + 2j (j < 4; 0 past the predicate's lanes, or without a bias): where
  // the sums of the even (c even) or the odd channels of a group of 8 start.
  int32x4_t bias_every_other(int32_t c, mve_pred16_t m) const {
    if (bias == nullptr) return vdupq_n_s32(0);
    return m == 0xFFFF ? vldrwq_gather_shifted_offset_s32(bias + c, vidupq_n_u32(0, 2))
                       : vldrwq_gather_shifted_offset_z_s32(bias + c, vidupq_n_u32(0, 2), m);
  }

  // Requantizes the sums of channels c .. c + 7 held as even (c, c + 2, ...) and odd (c + 1, ...)
  // lanes, bias included, and stores the first `count` in channel order (the two vectors
  // narrowed into the bottom and top halves of 16-bit lanes, then one narrowing store).
  template <typename T>
  void store_8(int32x4_t even, int32x4_t odd, int32_t c, int32_t count, T* y) const {
    const uint32x4_t every_other = vidupq_n_u32(0, 2);  // 0, 2, 4, 6
    using Lanes = decltype(lane_multipliers(multipliers[0]));
    Lanes even_scale, odd_scale;
    if (!per_channel) {
      even_scale = odd_scale = lane_multipliers(multipliers[0]);
    } else if (count == 8) {
      even_scale = gather_multipliers(multipliers + c, every_other);
      odd_scale = gather_multipliers(multipliers + c + 1, every_other);
    } else {
      even_scale = gather_multipliers(multipliers + c, every_other, vctp32q(static_cast<uint32_t>((count + 1) >> 1)));
      odd_scale = gather_multipliers(multipliers + c + 1, every_other, vctp32q(static_cast<uint32_t>(count >> 1)));
    }
    const int32x4_t e = vminq_s32(vmaxq_s32(scale_lanes(even, even_scale), lo), hi);
    const int32x4_t o = vminq_s32(vmaxq_s32(scale_lanes(odd, odd_scale), lo), hi);
    const int16x8_t q = vaddq_n_s16(vmovntq_s32(vmovnbq_s32(vdupq_n_s16(0), e), o), static_cast<int16_t>(zero_point));
    if constexpr (std::is_same_v<T, int8_t>) {
      if (count == 8) {
        vstrbq_s16(y + c, q);
      } else {
        vstrbq_p_s16(y + c, q, vctp16q(static_cast<uint32_t>(count)));
      }
    } else {
      if (count == 8) {
        vstrbq_u16(y + c, vreinterpretq_u16_s16(q));
      } else {
        vstrbq_p_u16(y + c, vreinterpretq_u16_s16(q), vctp16q(static_cast<uint32_t>(count)));
      }
    }
  }
};

template <typename TM>
inline Output<TM> output_of(const int32_t* bias, const TM* multipliers, int32_t per_channel, int32_t zero_point,
                            int32_t out_min, int32_t out_max) {
  return Output<TM>{
      bias, multipliers, per_channel, zero_point, vdupq_n_s32(out_min - zero_point), vdupq_n_s32(out_max - zero_point)};
}

// Sum of the n bytes at x, in the lanes of TW (lanes::load_as).
template <typename TW, typename T>
inline int32_t row_sum(const T* x, int32_t n) {
  int32_t s = 0;
  int32_t i = 0;
  for (; i + 16 <= n; i += 16) s = lanes::sum(s, lanes::load_as<TW>(x + i));
  if (i < n) s = lanes::sum(s, lanes::load_as<TW>(x + i, vctp8q(static_cast<uint32_t>(n - i))));
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
inline void step_folded(int8x16_t xv, int8x16_t c, int8x16_t v0, int8x16_t v1, int8x16_t v2, int8x16_t v3, Sums4& r) {
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

// Runs `step` over n bytes of x (in the weights' lanes) and of the 4 weight rows, the last part
// predicated.
template <typename T, typename TW, typename Step>
inline void over_row(const T* x, const TW* w0, const TW* w1, const TW* w2, const TW* w3, int32_t n, Step step) {
  int32_t i = 0;
  for (; i + 16 <= n; i += 16)
    step(lanes::load_as<TW>(x + i), lanes::load(w0 + i), lanes::load(w1 + i), lanes::load(w2 + i), lanes::load(w3 + i));
  if (i < n) {
    const mve_pred16_t m = vctp8q(static_cast<uint32_t>(n - i));
    step(lanes::load_as<TW>(x + i, m), lanes::load(w0 + i, m), lanes::load(w1 + i, m), lanes::load(w2 + i, m),
         lanes::load(w3 + i, m));
  }
}

// The row in int8 lanes (int8 weights: x taken as int8, zx with it) with the input zero point
// folded in (weights' zero point 0), every output channel: the hot loop of pointwise convolutions and fully connected
// layers, kept free of branches and of anything else so that its values stay in registers: whole blocks of 4 channels
// walk the weights, the bias and the multipliers with pointers (a per-tensor multiplier and a missing bias are 4-lane
// copies that do not advance), the last partial block goes through Output::store. Reads x[0 .. n) (again for each
// block), then writes y[c .. c + 3] per block, ascending.
template <bool kPlusOne, typename T, typename TY, typename TM>
inline void row_times_weights_int8(const T* x, const int8_t* w, int32_t n, int32_t out_c, int32_t zx,
                                   const Output<TM>& o, TY* y) {
  const int8x16_t c_lanes = vdupq_n_s8(static_cast<int8_t>(kPlusOne ? 127 : -zx));
  const int32x4_t lo = o.lo, hi = o.hi;
  const int32_t zero_point = o.zero_point;
  alignas(16) static constexpr int32_t kNoBias[4] = {0, 0, 0, 0};
  alignas(16) const TM tensor_scale[4] = {o.multipliers[0], o.multipliers[0], o.multipliers[0], o.multipliers[0]};
  const int32_t* bias = o.bias != nullptr ? o.bias : kNoBias;
  const int32_t bias_step = o.bias != nullptr ? 4 : 0;
  const TM* scale = o.per_channel ? o.multipliers : tensor_scale;
  const int32_t scale_step = o.per_channel ? 4 : 0;
  const int32_t blocks = out_c >> 2;
  const int8_t* w0 = w;
  TY* yc = y;
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
    int32x4_t q = scale_lanes(acc, load_multipliers(scale));
    q = vaddq_n_s32(vminq_s32(vmaxq_s32(q, lo), hi), zero_point);
    lanes::store4(yc, q);
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
    const int32x4_t acc = vsetq_lane_s32(r.a3, vsetq_lane_s32(r.a2, vsetq_lane_s32(r.a1, vdupq_n_s32(r.a0), 1), 2), 3);
    o.store(acc, out_c - count, count, y);
  }
}

// y[c] = requant(bias[c] + sum_i (x[i] - zx)(w[c][i] - zw)) for c < out_c: one row x of n bytes
// against out_c weight rows of n bytes each (w[c] = w + c * n), 4 channels at a time; x in the
// weights' lanes (lanes::load_as) and zx in their terms (kZeroPointShift added).
// Reads: x[0 .. n) and the weights; writes: y[0 .. out_c), in ascending order of c, 4 at a time,
// each after all of x has been read.
template <typename T, typename TW, typename TY, typename TM>
inline void row_times_weights(const T* x, const TW* w, int32_t n, int32_t out_c, int32_t zx, int32_t zw,
                              const Output<TM>& o, TY* y) {
  if constexpr (std::is_same_v<TW, int8_t>) {
    if (zw == 0) {
      if (zx == -128) {
        row_times_weights_int8<true>(x, w, n, out_c, zx, o, y);
      } else {
        row_times_weights_int8<false>(x, w, n, out_c, zx, o, y);
      }
      return;
    }
  }
  const int32_t x_term = -zw * row_sum<TW>(x, n) + n * zx * zw;
  for (int32_t c = 0; c < out_c; c += 4) {
    const int32_t count = out_c - c < 4 ? out_c - c : 4;
    const TW* w0 = w + c * n;
    // cppcheck-suppress knownConditionTrueFalse ; cppcheck 2.10 false positive: count is out_c - c >= 1 here
    const TW* w1 = count > 1 ? w0 + n : w0;
    // cppcheck-suppress knownConditionTrueFalse ; cppcheck 2.10 false positive: count is out_c - c >= 1 here
    const TW* w2 = count > 2 ? w0 + 2 * n : w0;
    // cppcheck-suppress knownConditionTrueFalse ; cppcheck 2.10 false positive: count is out_c - c >= 1 here
    const TW* w3 = count > 3 ? w0 + 3 * n : w0;
    Sums4 r;
    using V = decltype(lanes::load(w0));
    over_row(x, w0, w1, w2, w3, n, [&](V xv, V v0, V v1, V v2, V v3) { step_general(xv, v0, v1, v2, v3, r); });
    const int32x4_t acc = vsetq_lane_s32(
        r.a3 - zx * r.s3,
        vsetq_lane_s32(r.a2 - zx * r.s2, vsetq_lane_s32(r.a1 - zx * r.s1, vdupq_n_s32(r.a0 - zx * r.s0), 1), 2), 3);
    o.store(vaddq_n_s32(acc, x_term), c, count, y);
  }
}

// The matrix kernels' pairs of rows (weights' zero point 0): two rows x0 and x1 of n bytes
// against two weight rows w0 and w1, d[r][c] = sum_i x_r[i] w_c[i]. Each 16-byte step is 4
// loads and 4 VMLADAVA for 64 MACs; the input's zero point is in the channel's start value
// (PairStarts), not in the loop.
struct Dots2x2 {
  int32_t d00 = 0, d01 = 0, d10 = 0, d11 = 0;
};

template <typename V>
inline void step_2x2(V a, V b, V u, V v, Dots2x2& r) {
  r.d00 = lanes::dot(r.d00, a, u);
  r.d10 = lanes::dot(r.d10, b, u);
  r.d01 = lanes::dot(r.d01, a, v);
  r.d11 = lanes::dot(r.d11, b, v);
}

// r += the dots of the 2 x 2 block over `steps` whole vectors and a tail of `tail` bytes (x in
// the weights' lanes).
template <typename T, typename TW>
inline void dot_2x2(const T* x0, const T* x1, const TW* w0, const TW* w1, int32_t steps, int32_t tail, Dots2x2& r) {
  for (; steps > 0; --steps) {
    step_2x2(lanes::load_as<TW>(x0), lanes::load_as<TW>(x1), lanes::load(w0), lanes::load(w1), r);
    x0 += 16, x1 += 16, w0 += 16, w1 += 16;
  }
  if (tail != 0) {
    const mve_pred16_t m = vctp8q(static_cast<uint32_t>(tail));
    step_2x2(lanes::load_as<TW>(x0, m), lanes::load_as<TW>(x1, m), lanes::load(w0, m), lanes::load(w1, m), r);
  }
}

// Where the sums of up to kStartChannels output channels start, on the stack (the matrix
// kernels' only memory besides their operands: 4 bytes a channel, 256 bytes at most):
// bias[c] - zx * sum_i w[c][i], so that sum_i (x[i] - zx) w[c][i] + bias[c] = start[c] + sum_i
// x[i] w[c][i] (the same value modulo 2^32; x and zx in the weights' terms). Layers with more output channels have the
// starts of each group of kStartChannels recomputed for every pair of rows.
constexpr int32_t kStartChannels = 64;

// NOLINTNEXTLINE(cppcoreguidelines-pro-type-member-init): start[0, count) is read only after fill() wrote it
struct PairStarts {
  alignas(16) int32_t start[kStartChannels];
  int32_t first = 0, count = 0;  // the channels held: [first, first + count)

  template <typename TW>
  void fill(const TW* w, int32_t n, const int32_t* bias, int32_t zx, int32_t from, int32_t out_c) {
    first = from;
    count = out_c - from < kStartChannels ? out_c - from : kStartChannels;
    for (int32_t c = 0; c < count; ++c)
      start[c] = (bias != nullptr ? bias[from + c] : 0) - zx * row_sum<TW>(w + (from + c) * n, n);
  }
};

// One block of pair_times_weights: the sums of channels c and c + 1 over both rows from their
// starts, requantized in one vector and stored at y + to (lanes: (row 0, c), (row 0, c + 1),
// (row 1, c), (row 1, c + 1)). An odd last channel is the block of c with itself: start[1] ==
// start[0], w1 == w0 and `to` sending lanes 1 and 3 to the bytes of lanes 0 and 2 (the same
// values twice: no predicate, whose constants GCC 12 miscompiles).
template <typename T, typename TW, typename TY, typename TS>
__attribute__((always_inline)) inline void pair_block(const T* x0, const T* x1, const TW* w0, const TW* w1,
                                                      int32_t steps, int32_t tail, int32_t start0, int32_t start1,
                                                      const TS& scales, int32x4_t lo, int32x4_t hi, int32_t zero_point,
                                                      uint32x4_t to, TY* y) {
  Dots2x2 r{start0, start1, start0, start1};
  dot_2x2(x0, x1, w0, w1, steps, tail, r);
  const int32x4_t acc =
      vsetq_lane_s32(r.d11, vsetq_lane_s32(r.d10, vsetq_lane_s32(r.d01, vdupq_n_s32(r.d00), 1), 2), 3);
  int32x4_t q = scale_lanes(acc, scales);
  q = vaddq_n_s32(vminq_s32(vmaxq_s32(q, lo), hi), zero_point);
  if constexpr (std::is_same_v<TY, int8_t>) {
    vstrbq_scatter_offset_s32(y, to, q);
  } else {
    vstrbq_scatter_offset_u32(y, to, vreinterpretq_u32_s32(q));
  }
}

// Two rows, x0 and x1 = x0 + x_step (n bytes each), against the out_c weight rows: y0[c] and
// y1[c] = y0[c + y_step] for every c, in the order of the DSP matrix kernel (kernels.hpp,
// dsp_matmul_distance): the channels two at a time over both rows, then an odd last channel;
// each block's 4 (2) outputs are requantized in one vector and stored after all of x0 and x1
// has been read for it. `starts` holds the first channels' starts on entry (refilled past them).
// x in the weights' lanes, zx in their terms (kZeroPointShift added).
template <typename T, typename TW, typename TY, typename TM>
inline void pair_times_weights(const T* x0, int32_t x_step, const TW* w, int32_t n, int32_t out_c, int32_t zx,
                               const Output<TM>& o, PairStarts& starts, TY* y0, int32_t y_step) {
  const T* x1 = x0 + x_step;
  // Lanes: (row 0, channel c), (row 0, c + 1), (row 1, c), (row 1, c + 1).
  const uint32x4_t pair = vreinterpretq_u32_s32(vsetq_lane_s32(1, vsetq_lane_s32(1, vdupq_n_s32(0), 1), 3));
  const uint32x4_t to =
      vaddq_u32(pair, vreinterpretq_u32_s32(vsetq_lane_s32(y_step, vsetq_lane_s32(y_step, vdupq_n_s32(0), 2), 3)));
  const int32_t zero_point = o.zero_point, steps = n >> 4, tail = n & 15;
  const int32x4_t lo = o.lo, hi = o.hi;
  const auto tensor_scale = lane_multipliers(o.multipliers[0]);
  const bool per_channel = o.per_channel != 0;
  for (int32_t group = 0; group < out_c; group += kStartChannels) {
    if (starts.first != group) starts.fill(w, n, o.bias, zx, group, out_c);
    const int32_t count = starts.count;
    const TM* scale = o.multipliers + group;
    const int32_t* start = starts.start;
    const TW* w0 = w + group * n;
    TY* y = y0 + group;
    for (int32_t left = count >> 1; left > 0; --left) {
      const auto scales = per_channel ? gather_multipliers(scale, pair) : tensor_scale;
      pair_block(x0, x1, w0, w0 + n, steps, tail, start[0], start[1], scales, lo, hi, zero_point, to, y);
      w0 += 2 * n;
      y += 2;
      start += 2;
      scale += 2;
    }
    if ((count & 1) != 0) {
      const auto scales = per_channel ? lane_multipliers(scale[0]) : tensor_scale;
      const uint32x4_t to_odd = vreinterpretq_u32_s32(
          vsetq_lane_s32(y_step, vsetq_lane_s32(y_step, vdupq_n_s32(0), 2), 3));  // 0, 0, y_step, y_step
      pair_block(x0, x1, w0, w0, steps, tail, start[0], start[0], scales, lo, hi, zero_point, to_odd, y);
    }
  }
}

// The matrix kernels (pointwise conv, fully connected): rows of n bytes, in pairs when the
// weights' zero point is 0, else one at a time; row r reads x + r * n and writes y + r * y_stride
// (out_c, or more for a channel slice of a Concat's output).
// The order of the DSP matrix kernel (kernels.hpp, dsp_matmul_distance and
// dsp_matmul_up_distance): the pairs from the first (from the last when kBackward), then an odd
// row left over (the last row; row 0 when kBackward) alone; without pairs, the rows one by one
// as the portable kernel takes them. The rows are read in the weights' lanes (flipped as loaded
// when of the other signedness).
template <bool kBackward, typename T, typename TW, typename TM>
inline void matmul(const T* x, const TW* w, int32_t rows, int32_t n, int32_t out_c, int32_t input_zero_point,
                   int32_t zw, const Output<TM>& o, T* y, int32_t y_stride) {
  const int32_t zx = input_zero_point + kZeroPointShift<T, TW>;
  int32_t paired = 0;
  if (zw == 0 && rows >= 2) {
    PairStarts starts;
    starts.fill(w, n, o.bias, zx, 0, out_c);
    paired = rows & ~1;
    for (int32_t i = 0; i < paired; i += 2) {
      const int32_t r = kBackward ? rows - 2 - i : i;
      pair_times_weights(x + r * n, n, w, n, out_c, zx, o, starts, y + r * y_stride, y_stride);
    }
  }
  for (int32_t i = paired; i < rows; ++i) {
    const int32_t r = kBackward ? rows - 1 - i : i;
    row_times_weights(x + r * n, w, n, out_c, zx, zw, o, y + r * y_stride);
  }
}

// 16 bytes (those of predicate m) copied from `from` to `to`, each XORed with kXor (0x80: into
// the other signedness, as lanes::load_as; 0: as they are).
template <uint8_t kXor>
inline void copy16(void* to, const void* from, mve_pred16_t m) {
  uint8x16_t v = vldrbq_z_u8(static_cast<const uint8_t*>(from), m);
  if constexpr (kXor != 0) v = veorq_u8(v, vdupq_n_u8(kXor));
  vstrbq_p_u8(static_cast<uint8_t*>(to), v, m);
}

// n bytes copied (XORed with kXor) or set, 16 at a time (the last vector predicated).
template <uint8_t kXor, typename T, typename TW>
inline void copy_bytes(TW* to, const T* from, int32_t n) {
  for (int32_t i = 0; i < n; i += 16) copy16<kXor>(to + i, from + i, vctp8q(static_cast<uint32_t>(n - i)));
}
template <typename T>
inline void fill_bytes(T* to, int32_t n, T value) {
  const uint8x16_t v = vdupq_n_u8(static_cast<uint8_t>(value));
  for (int32_t i = 0; i < n; i += 16)
    vstrbq_p_u8(reinterpret_cast<uint8_t*>(to + i), v, vctp8q(static_cast<uint32_t>(n - i)));
}

namespace impl {

// 8 bytes widened to 16-bit lanes (|byte - zero point| < 2^9 fits); the predicated forms read
// the lanes at and past the group's end as 0 (their values never reach the output).
inline int16x8_t widen8(const int8_t* p) { return vldrbq_s16(p); }
inline int16x8_t widen8(const uint8_t* p) { return vreinterpretq_s16_u16(vldrbq_u16(p)); }
inline int16x8_t widen8(const int8_t* p, mve_pred16_t m) { return vldrbq_z_s16(p, m); }
inline int16x8_t widen8(const uint8_t* p, mve_pred16_t m) { return vreinterpretq_s16_u16(vldrbq_z_u16(p, m)); }

// The sums of one output pixel for 8 channels, as two vectors of 32-bit lanes: the even and the
// odd channels.
struct Depthwise8 {
  int32x4_t even, odd;
};

// Where one depthwise output pixel's taps are: rows x taps of them inside the image, the first
// at x / w, the next tap tap_step bytes on in the input (channels bytes in the weights), the
// next row x_row_step / w_row_step bytes on.
template <typename T, typename TW>
struct DepthwiseTaps {
  const T* x;
  const TW* w;
  int32_t rows, taps, x_row_step, tap_step, w_row_step, channels;
};

// One tap for 8 channels: (x - zx)(w - zw) added to the even and the odd lanes' sums, in 16-bit
// lanes (VMULLB / VMULLT multiply the even and the odd lanes into 32 bits). kWeightOffset: the
// weights' zero point is not 0. kPartial: fewer than 8 channels are left (predicated loads: the
// lanes past the end read as 0 and are never stored).
template <bool kWeightOffset, bool kPartial, typename T, typename TW>
inline void depthwise_tap(const T* x, const TW* w, int16_t zx, int16_t zw, mve_pred16_t m, Depthwise8& r) {
  int16x8_t xv, wv;
  if constexpr (kPartial) {
    xv = widen8(x, m), wv = widen8(w, m);
  } else {
    xv = widen8(x), wv = widen8(w);
  }
  xv = vsubq_n_s16(xv, zx);
  if constexpr (kWeightOffset) wv = vsubq_n_s16(wv, zw);
  r.even = vaddq_s32(r.even, vmullbq_int_s16(xv, wv));
  r.odd = vaddq_s32(r.odd, vmulltq_int_s16(xv, wv));
}

// Every tap of one output pixel for channels c .. c + 7, added to r (which holds the bias).
template <bool kWeightOffset, bool kPartial, typename T, typename TW>
inline void depthwise_taps(const DepthwiseTaps<T, TW>& t, int32_t c, int16_t zx, int16_t zw, mve_pred16_t m,
                           Depthwise8& r) {
  const T* x_row = t.x + c;
  const TW* w_row = t.w + c;
  for (int32_t ky = 0; ky < t.rows; ++ky, x_row += t.x_row_step, w_row += t.w_row_step) {
    const T* x = x_row;
    const TW* w = w_row;
    for (int32_t kx = 0; kx < t.taps; ++kx, x += t.tap_step, w += t.channels)
      depthwise_tap<kWeightOffset, kPartial>(x, w, zx, zw, m, r);
  }
}

// Depthwise, depth multiplier 1: out[p][c] = requant(bias[c] + sum over the taps of pixel p
// inside the image of (x[tap][c] - zx)(w[tap][c] - zw)), 8 channels per pass (the taps inside
// the image found once per pixel), the sums starting from the bias and kept as the even and the
// odd channels. Reads: for output pixel p, the input pixels of its taps, channels c .. c + 7,
// then writes y[p][c .. c + 7]; channel groups ascending within a pixel; pixels in raster order,
// or in reverse raster order when kBackward (the portable kernel's orders: kernels.hpp's
// conv_depthwise_distance and conv_depthwise_up_distance hold for both).
template <typename T, typename TW, bool kBackward, typename TM>
inline void conv_depthwise(const ConvParams& p, const T* in, const TW* weights, const int32_t* bias,
                           const TM* multipliers, T* out) {
  const auto o = output_of(bias, multipliers, p.per_channel, p.output_zero_point, p.output_min, p.output_max);
  const int32_t channels = p.in_c;
  const int16_t zx = static_cast<int16_t>(p.input_zero_point), zw = static_cast<int16_t>(p.weight_zero_point);
  // Whole groups of 8 without predicates when the weights' zero point is 0; the others with.
  const int32_t whole = zw == 0 ? channels & ~7 : 0;
  DepthwiseTaps<T, TW> t{
      nullptr, nullptr, 0, 0, p.dilation_h * p.in_w * channels, p.dilation_w * channels, p.kernel_w * channels,
      channels};
  for (int32_t bi = 0; bi < p.batch; ++bi) {
    const int32_t b = kBackward ? p.batch - 1 - bi : bi;
    for (int32_t oyi = 0; oyi < p.out_h; ++oyi) {
      const int32_t oy = kBackward ? p.out_h - 1 - oyi : oyi;
      const int32_t iy0 = oy * p.stride_h - p.pad_top;
      int32_t ky_lo, ky_hi;
      conv_tap_range(iy0, p.dilation_h, p.kernel_h, p.in_h, ky_lo, ky_hi);
      t.rows = ky_hi - ky_lo;
      for (int32_t oxi = 0; oxi < p.out_w; ++oxi) {
        const int32_t ox = kBackward ? p.out_w - 1 - oxi : oxi;
        const int32_t ix0 = ox * p.stride_w - p.pad_left;
        int32_t kx_lo, kx_hi;
        conv_tap_range(ix0, p.dilation_w, p.kernel_w, p.in_w, kx_lo, kx_hi);
        t.taps = kx_hi - kx_lo;
        t.x = in + ((b * p.in_h + iy0 + ky_lo * p.dilation_h) * p.in_w + ix0 + kx_lo * p.dilation_w) * channels;
        t.w = weights + (ky_lo * p.kernel_w + kx_lo) * channels;
        T* y = out + ((b * p.out_h + oy) * p.out_w + ox) * conv_out_stride(p);
        int32_t c = 0;
        for (; c < whole; c += 8) {
          Depthwise8 r{o.bias_every_other(c, 0xFFFF), o.bias_every_other(c + 1, 0xFFFF)};
          depthwise_taps<false, false>(t, c, zx, zw, 0xFFFF, r);
          o.store_8(r.even, r.odd, c, 8, y);
        }
        for (; c < channels; c += 8) {
          const int32_t count = channels - c < 8 ? channels - c : 8;
          Depthwise8 r{o.bias_every_other(c, vctp32q(static_cast<uint32_t>((count + 1) >> 1))),
                       o.bias_every_other(c + 1, vctp32q(static_cast<uint32_t>(count >> 1)))};
          depthwise_taps<true, true>(t, c, zx, zw, vctp16q(static_cast<uint32_t>(count)), r);
          o.store_8(r.even, r.odd, c, count, y);
        }
      }
    }
  }
}

// The largest receptive field (kh * kw * in_c bytes) that the general conv gathers on the stack:
// two pixels of a 3x3 layer of 16 channels (ResNet-8's first stack: in pairs of pixels, a third
// fewer instructions than one at a time).
constexpr int32_t kPatchBytes = 288;

// The receptive field of output pixel (b, oy, ox) as len = kh * kw * in_c bytes at e, in the
// weights' lanes (each byte's top bit flipped when T is not TW, as lanes::load_as), taps in the
// padding holding the input zero point (so that they add nothing).
template <typename TW, typename T>
inline void gather_patch(const ConvParams& p, const T* in, int32_t b, int32_t oy, int32_t ox, TW* e) {
  constexpr uint8_t kXor = std::is_same_v<T, TW> ? 0 : 0x80;
  const TW padding = static_cast<TW>(p.input_zero_point ^ kXor);
  const int32_t row_bytes = p.kernel_w * p.in_c;
  int32_t kx_lo, kx_hi, ky_lo, ky_hi;
  const int32_t ix0 = ox * p.stride_w - p.pad_left, iy0 = oy * p.stride_h - p.pad_top;
  conv_tap_range(ix0, p.dilation_w, p.kernel_w, p.in_w, kx_lo, kx_hi);
  conv_tap_range(iy0, p.dilation_h, p.kernel_h, p.in_h, ky_lo, ky_hi);
  if (p.dilation_w == 1 && kx_lo == 0 && kx_hi == p.kernel_w && ky_lo == 0 && ky_hi == p.kernel_h) {
    // Inside the image: kernel_h runs of row_bytes bytes, one predicated vector each when short.
    const T* x = in + ((b * p.in_h + iy0) * p.in_w + ix0) * p.in_c;
    const int32_t x_step = p.dilation_h * p.in_w * p.in_c;
    if (row_bytes <= 16) {
      const mve_pred16_t m = vctp8q(static_cast<uint32_t>(row_bytes));
      for (int32_t ky = 0; ky < p.kernel_h; ++ky, e += row_bytes, x += x_step) copy16<kXor>(e, x, m);
    } else {
      for (int32_t ky = 0; ky < p.kernel_h; ++ky, e += row_bytes, x += x_step) copy_bytes<kXor>(e, x, row_bytes);
    }
    return;
  }
  for (int32_t ky = 0; ky < p.kernel_h; ++ky, e += row_bytes) {
    const int32_t iy = iy0 + ky * p.dilation_h;
    if (iy < 0 || iy >= p.in_h || kx_lo >= kx_hi) {
      fill_bytes(e, row_bytes, padding);
    } else if (p.dilation_w == 1) {
      // The taps of the row inside the image are one run of bytes; the rest is padding.
      fill_bytes(e, kx_lo * p.in_c, padding);
      copy_bytes<kXor>(e + kx_lo * p.in_c, in + ((b * p.in_h + iy) * p.in_w + ix0 + kx_lo) * p.in_c,
                       (kx_hi - kx_lo) * p.in_c);
      fill_bytes(e + kx_hi * p.in_c, (p.kernel_w - kx_hi) * p.in_c, padding);
    } else {
      for (int32_t kx = 0; kx < p.kernel_w; ++kx) {
        const int32_t ix = ix0 + kx * p.dilation_w;
        if (ix < 0 || ix >= p.in_w) {
          fill_bytes(e + kx * p.in_c, p.in_c, padding);
        } else {
          copy_bytes<kXor>(e + kx * p.in_c, in + ((b * p.in_h + iy) * p.in_w + ix) * p.in_c, p.in_c);
        }
      }
    }
  }
}

// General conv with one group and kh * kw * in_c <= kPatchBytes: the receptive field of each
// output pixel gathered into a patch, then the patch is a row against all output channels; with
// the weights' zero point 0 and a patch of at most half kPatchBytes, two pixels at a time (the
// matrix kernels' pairs of rows). The patch is gathered in the weights' lanes (flipped once
// there, not at every load). Reads: the input pixels of pixel p's taps (and of pixel p + 1's
// when in pairs); then writes y[p][0 .. out_c) (and y[p + 1]) in ascending order; pixels in
// raster order.
template <typename T, typename TW, typename TM>
inline void conv_patch(const ConvParams& p, const T* in, const TW* weights, const int32_t* bias, const TM* multipliers,
                       T* out) {
  const auto o = output_of(bias, multipliers, p.per_channel, p.output_zero_point, p.output_min, p.output_max);
  const int32_t len = p.kernel_h * p.kernel_w * p.in_c;
  const int32_t pixels = p.batch * p.out_h * p.out_w;
  const int32_t zx = p.input_zero_point + kZeroPointShift<T, TW>;
  alignas(16) TW patch[kPatchBytes];
  int32_t b = 0, oy = 0, ox = 0;  // pixel q
  auto advance = [&] {
    if (++ox == p.out_w) {
      ox = 0;
      if (++oy == p.out_h) oy = 0, ++b;
    }
  };
  int32_t q = 0;
  if (p.weight_zero_point == 0 && 2 * len <= kPatchBytes && pixels >= 2) {
    PairStarts starts;
    starts.fill(weights, len, bias, zx, 0, p.out_c);
    for (; q + 2 <= pixels; q += 2) {
      gather_patch(p, in, b, oy, ox, patch);
      advance();
      gather_patch(p, in, b, oy, ox, patch + len);
      advance();
      pair_times_weights(patch, len, weights, len, p.out_c, zx, o, starts, out + q * conv_out_stride(p),
                         conv_out_stride(p));
    }
  }
  for (; q < pixels; ++q) {
    gather_patch(p, in, b, oy, ox, patch);
    advance();
    row_times_weights(patch, weights, len, p.out_c, zx, p.weight_zero_point, o, out + q * conv_out_stride(p));
  }
}

// General conv with one group, dilation_w 1 and a receptive field over kPatchBytes (ResNet-8's
// 3x3 layers of 32 and 64 channels): each output pixel's taps inside the image are read where
// they lie, one run of bytes per kernel row, against 4 output channels at a time; the taps
// outside add nothing, so the sum is over the inside taps only: sum (x - zx)(w - zw) =
// sum x w - zx sum w - zw sum x + n zx zw, with x in the weights' lanes (lanes::load_as) and zx
// in their terms. Reads: pixel p's taps for channels c .. c + 3, then writes y[p][c .. c + 3];
// channel blocks ascending, pixels in raster order (each write no sooner than the portable
// kernel's, which reads the window again for every output channel).
template <typename T, typename TW, typename TM>
inline void conv_runs(const ConvParams& p, const T* in, const TW* weights, const int32_t* bias, const TM* multipliers,
                      T* out) {
  const auto o = output_of(bias, multipliers, p.per_channel, p.output_zero_point, p.output_min, p.output_max);
  const int32_t zx = p.input_zero_point + kZeroPointShift<T, TW>, zw = p.weight_zero_point;
  const int32_t len = p.kernel_h * p.kernel_w * p.in_c, row_bytes = p.kernel_w * p.in_c;
  const int32_t x_step = p.dilation_h * p.in_w * p.in_c;
  for (int32_t b = 0; b < p.batch; ++b) {
    for (int32_t oy = 0; oy < p.out_h; ++oy) {
      const int32_t iy0 = oy * p.stride_h - p.pad_top;
      int32_t ky_lo, ky_hi;
      conv_tap_range(iy0, p.dilation_h, p.kernel_h, p.in_h, ky_lo, ky_hi);
      for (int32_t ox = 0; ox < p.out_w; ++ox) {
        const int32_t ix0 = ox * p.stride_w - p.pad_left;
        int32_t kx_lo, kx_hi;
        conv_tap_range(ix0, 1, p.kernel_w, p.in_w, kx_lo, kx_hi);
        const int32_t rows = kx_lo < kx_hi ? ky_hi - ky_lo : 0, run = (kx_hi - kx_lo) * p.in_c;
        const T* x = in + ((b * p.in_h + iy0 + ky_lo * p.dilation_h) * p.in_w + ix0 + kx_lo) * p.in_c;
        const int32_t w_first = (ky_lo * p.kernel_w + kx_lo) * p.in_c;
        int32_t x_term = 0;
        if (zw != 0) {
          for (int32_t r = 0; r < rows; ++r) x_term += -zw * row_sum<TW>(x + r * x_step, run) + run * zx * zw;
        }
        T* y = out + ((b * p.out_h + oy) * p.out_w + ox) * conv_out_stride(p);
        for (int32_t c = 0; c < p.out_c; c += 4) {
          const int32_t count = p.out_c - c < 4 ? p.out_c - c : 4;
          const TW* w0 = weights + c * len + w_first;
          // cppcheck-suppress knownConditionTrueFalse ; cppcheck 2.10 false positive: count is out_c - c >= 1 here
          const TW* w1 = count > 1 ? w0 + len : w0;
          // cppcheck-suppress knownConditionTrueFalse ; cppcheck 2.10 false positive: count is out_c - c >= 1 here
          const TW* w2 = count > 2 ? w0 + 2 * len : w0;
          // cppcheck-suppress knownConditionTrueFalse ; cppcheck 2.10 false positive: count is out_c - c >= 1 here
          const TW* w3 = count > 3 ? w0 + 3 * len : w0;
          Sums4 s;
          using V = decltype(lanes::load(w0));
          for (int32_t r = 0; r < rows; ++r) {
            const int32_t wr = r * row_bytes;
            over_row(x + r * x_step, w0 + wr, w1 + wr, w2 + wr, w3 + wr, run,
                     [&](V xv, V v0, V v1, V v2, V v3) { step_general(xv, v0, v1, v2, v3, s); });
          }
          const int32x4_t acc = vsetq_lane_s32(
              s.a3 - zx * s.s3,
              vsetq_lane_s32(s.a2 - zx * s.s2, vsetq_lane_s32(s.a1 - zx * s.s1, vdupq_n_s32(s.a0 - zx * s.s0), 1), 2),
              3);
          o.store(vaddq_n_s32(acc, x_term), c, count, y);
        }
      }
    }
  }
}

}  // namespace impl

// Global average pool (kernels.hpp, global_average_pool): 8 channels at a time, the pixels' bytes
// summed in 16-bit lanes (128 pixels at most per run: 128 * 255 fits), each run widened into
// the even and the odd channels' 32-bit sums, which start at -zx * image_size, then requantized
// as a conv's outputs. Reads channels c .. c + 7 of every pixel of image b, then writes
// y[b][c .. c + 7]; channel groups ascending, images in order (distance 0, as the portable loop).
template <typename T>
inline void global_average_pool(const GlobalAveragePoolParams& p, const T* in, T* out) {
  const float multiplier[1] = {p.multiplier};
  const auto o = output_of(nullptr, multiplier, 0, p.output_zero_point, p.output_min, p.output_max);
  const int32_t start = -p.input_zero_point * p.image_size;
  constexpr int32_t kRun = 128;
  for (int32_t b = 0; b < p.batch; ++b) {
    const T* x = in + b * p.image_size * p.channels;
    T* y = out + b * p.channels;
    for (int32_t c = 0; c < p.channels; c += 8) {
      const int32_t count = p.channels - c < 8 ? p.channels - c : 8;
      const mve_pred16_t m = vctp16q(static_cast<uint32_t>(count));
      int32x4_t even = vdupq_n_s32(start), odd = even;
      for (int32_t first = 0; first < p.image_size; first += kRun) {
        const int32_t n = p.image_size - first < kRun ? p.image_size - first : kRun;
        const T* xp = x + first * p.channels + c;
        int16x8_t sum = vdupq_n_s16(0);
        if (count == 8) {
          for (int32_t i = 0; i < n; ++i, xp += p.channels) sum = vaddq_s16(sum, impl::widen8(xp));
        } else {
          for (int32_t i = 0; i < n; ++i, xp += p.channels) sum = vaddq_s16(sum, impl::widen8(xp, m));
        }
        even = vaddq_s32(even, vmovlbq_s16(sum));
        odd = vaddq_s32(odd, vmovltq_s16(sum));
      }
      o.store_8(even, odd, c, count, y);
    }
  }
}

// The MVE kernels; same contract as the portable ones (kernels.hpp), for every pair of
// activation and weight types (of different signedness: the activations flipped into the
// weights', see the top of this file).

// Pointwise: each pixel is a row against all output channels (the matrix kernel's order).
template <typename T, typename TW, bool kBackward = false, typename TM>
inline void conv_pointwise(const ConvParams& p, const T* in, const TW* weights, const int32_t* bias,
                           const TM* multipliers, T* out) {
  const auto o = output_of(bias, multipliers, p.per_channel, p.output_zero_point, p.output_min, p.output_max);
  matmul<kBackward>(in, weights, p.batch * p.in_h * p.in_w, p.in_c, p.out_c, p.input_zero_point, p.weight_zero_point, o,
                    out, conv_out_stride(p));
}

// Depthwise: see impl::conv_depthwise for the read/write order.
template <typename T, typename TW, bool kBackward = false, typename TM>
inline void conv_depthwise(const ConvParams& p, const T* in, const TW* weights, const int32_t* bias,
                           const TM* multipliers, T* out) {
  if (p.out_c != p.in_c) {
    portable::conv_depthwise<T, TW, kBackward>(p, in, weights, bias, multipliers, out);
  } else {
    impl::conv_depthwise<T, TW, kBackward>(p, in, weights, bias, multipliers, out);
  }
}

// General conv: see impl::conv_patch and impl::conv_runs for the read/write orders (forwards
// only); grouped convolutions, and large receptive fields with dilation_w > 1, take the
// portable loop.
template <typename T, typename TW, typename TM>
inline void conv_general(const ConvParams& p, const T* in, const TW* weights, const int32_t* bias,
                         const TM* multipliers, T* out) {
  if (p.groups == 1 && p.kernel_h * p.kernel_w * p.in_c <= impl::kPatchBytes) {
    impl::conv_patch(p, in, weights, bias, multipliers, out);
  } else if (p.groups == 1 && p.dilation_w == 1) {
    impl::conv_runs(p, in, weights, bias, multipliers, out);
  } else {
    portable::conv_general(p, in, weights, bias, multipliers, out);
  }
}

// Fully connected: each row against all output features (the matrix kernel's order).
template <typename T, typename TW, bool kBackward = false, typename TM>
inline void fully_connected(const FullyConnectedParams& p, const T* in, const TW* weights, const int32_t* bias,
                            const TM* multipliers, T* out) {
  const auto o = output_of(bias, multipliers, p.per_channel, p.output_zero_point, p.output_min, p.output_max);
  matmul<kBackward>(in, weights, p.rows, p.in_features, p.out_features, p.input_zero_point, p.weight_zero_point, o, out,
                    p.out_features);
}

// ---------------------------------------------------------------------------
// Pools and elementwise operators, channels (or elements) across the lanes. Each block is read
// whole before it is written, in the portable loops' order of pixels and elements, so the
// portable kernels' overlap distances hold.

namespace impl {

inline int8x16_t splat16(int8_t v) { return vdupq_n_s8(v); }
inline uint8x16_t splat16(uint8_t v) { return vdupq_n_u8(v); }
inline int8x16_t max16(int8x16_t a, int8x16_t b) { return vmaxq_s8(a, b); }
inline uint8x16_t max16(uint8x16_t a, uint8x16_t b) { return vmaxq_u8(a, b); }
inline void store16(int8_t* y, int8x16_t v, mve_pred16_t m) { vstrbq_p_s8(y, v, m); }
inline void store16(uint8_t* y, uint8x16_t v, mve_pred16_t m) { vstrbq_p_u8(y, v, m); }

}  // namespace impl

// Max pool (kernels.hpp, portable::max_pool): 16 channels of an output pixel at a time, the
// maximum over the window's taps inside the image.
template <typename T>
inline void max_pool(const MaxPoolParams& p, const T* in, T* out) {
  for (int32_t b = 0; b < p.batch; ++b) {
    for (int32_t oy = 0; oy < p.out_h; ++oy) {
      for (int32_t ox = 0; ox < p.out_w; ++ox) {
        T* y = out + ((b * p.out_h + oy) * p.out_w + ox) * p.channels;
        for (int32_t c = 0; c < p.channels; c += 16) {
          const mve_pred16_t m = vctp8q(static_cast<uint32_t>(p.channels - c));
          auto best = impl::splat16(static_cast<T>(QuantLimits<T>::kMin));
          for (int32_t ky = 0; ky < p.kernel_h; ++ky) {
            const int32_t iy = oy * p.stride_h - p.pad_top + ky * p.dilation_h;
            if (iy < 0 || iy >= p.in_h) continue;
            for (int32_t kx = 0; kx < p.kernel_w; ++kx) {
              const int32_t ix = ox * p.stride_w - p.pad_left + kx * p.dilation_w;
              if (ix < 0 || ix >= p.in_w) continue;
              best = impl::max16(best, lanes::load(in + ((b * p.in_h + iy) * p.in_w + ix) * p.channels + c, m));
            }
          }
          impl::store16(y + c, best, m);
        }
      }
    }
  }
}

namespace impl {

// 4 elements widened to 32 bits (the first `count` of them; the others read as 0).
inline int32x4_t widen4(const int8_t* x, mve_pred16_t m) { return vldrbq_z_s32(x, m); }
inline int32x4_t widen4(const uint8_t* x, mve_pred16_t m) { return vreinterpretq_s32_u32(vldrbq_z_u32(x, m)); }

// saturate_round (kernels.hpp) on 4 lanes: clamp in float, round half to even, store narrow.
template <typename T>
inline void store_rounded(T* y, float32x4_t v, float lo, float hi, int32_t count) {
  v = vminnmq_f32(vmaxnmq_f32(v, vdupq_n_f32(lo)), vdupq_n_f32(hi));
  lanes::store4(y, vcvtnq_s32_f32(v), count);
}

}  // namespace impl

// Average pool away from the whole image (kernels.hpp, portable::average_pool): 4 channels of an
// output pixel at a time, each tap dequantized and summed in float in the portable loop's tap
// order; the division by the count and by the output scale stay scalar (Helium has no vector
// divide, and a reciprocal would round differently).
template <typename T>
inline void average_pool_window(const AveragePoolParams& p, const T* in, T* out) {
  const float output_zero_point = static_cast<float>(p.output_zero_point);
  for (int32_t b = 0; b < p.batch; ++b) {
    for (int32_t oy = 0; oy < p.out_h; ++oy) {
      for (int32_t ox = 0; ox < p.out_w; ++ox) {
        const PoolWindow w = average_pool_window_of(p, oy, ox);
        const float count = static_cast<float>(w.count);
        T* y = out + ((b * p.out_h + oy) * p.out_w + ox) * p.channels;
        for (int32_t c = 0; c < p.channels; c += 4) {
          const int32_t n = p.channels - c < 4 ? p.channels - c : 4;
          const mve_pred16_t m = vctp32q(static_cast<uint32_t>(n));
          float32x4_t sum = vdupq_n_f32(0.0f);
          for (int32_t iy = w.y_start; iy < w.y_end; ++iy) {
            for (int32_t ix = w.x_start; ix < w.x_end; ++ix) {
              const int32x4_t v = impl::widen4(in + ((b * p.in_h + iy) * p.in_w + ix) * p.channels + c, m);
              const float32x4_t centred = vcvtq_f32_s32(vsubq_n_s32(v, p.input_zero_point));
              sum = vaddq_f32(sum, vmulq_n_f32(centred, p.input_scale));
            }
          }
          float sums[4];
          vst1q_f32(sums, sum);
          for (int32_t k = 0; k < n; ++k) {
            const float mean = sums[k] / count;
            const int32_t q = static_cast<int32_t>(round_half_even(mean / p.output_scale + output_zero_point));
            y[c + k] = static_cast<T>(q < p.output_min ? p.output_min : q > p.output_max ? p.output_max : q);
          }
        }
      }
    }
  }
}

// Whether an elementwise call's innermost axis is contiguous or broadcast in both operands (the
// shape the Helium loops take; others take the portable loop).
inline bool binary_vectorizable(const BinaryShape& s) {
  return (s.a_strides[3] == 0 || s.a_strides[3] == 1) && (s.b_strides[3] == 0 || s.b_strides[3] == 1);
}

namespace impl {

// An operand's 4 elements from `at` (stride 1) or its one element repeated (stride 0).
template <typename T>
inline float32x4_t operand4(const T* x, int32_t at, int32_t stride, mve_pred16_t m) {
  return stride == 0 ? vdupq_n_f32(static_cast<float>(x[at])) : vcvtq_f32_s32(widen4(x + at, m));
}
template <typename T>
inline int32x4_t operand4_int(const T* x, int32_t at, int32_t stride, mve_pred16_t m) {
  return stride == 0 ? vdupq_n_s32(static_cast<int32_t>(x[at])) : widen4(x + at, m);
}

// for_each_broadcast (kernels.hpp) over rows of the innermost axis, 4 elements at a time.
template <typename Fn>
inline void for_each_row(const BinaryShape& s, Fn fn) {
  int32_t o = 0;
  for (int32_t i0 = 0; i0 < s.out_dims[0]; ++i0) {
    for (int32_t i1 = 0; i1 < s.out_dims[1]; ++i1) {
      for (int32_t i2 = 0; i2 < s.out_dims[2]; ++i2) {
        const int32_t a_base = i0 * s.a_strides[0] + i1 * s.a_strides[1] + i2 * s.a_strides[2];
        const int32_t b_base = i0 * s.b_strides[0] + i1 * s.b_strides[1] + i2 * s.b_strides[2];
        for (int32_t i3 = 0; i3 < s.out_dims[3]; i3 += 4) {
          const int32_t n = s.out_dims[3] - i3 < 4 ? s.out_dims[3] - i3 : 4;
          fn(o + i3, a_base + i3 * s.a_strides[3], b_base + i3 * s.b_strides[3], n);
        }
        o += s.out_dims[3];
      }
    }
  }
}

}  // namespace impl

// QLinearAdd (kernels.hpp, portable::add): the same two fused multiply-adds, in the same operand
// order, on 4 lanes (VFMA is fused, as fmaf). Only for binary_vectorizable() shapes.
template <typename T>
inline void add(const AddParams& p, const T* a, const T* b, T* out) {
  const float lo = static_cast<float>(p.output_min), hi = static_cast<float>(p.output_max);
  const bool a_first = p.form == BroadcastForm::kScalarA;
  impl::for_each_row(p.shape, [&](int32_t o, int32_t ia, int32_t ib, int32_t n) {
    const mve_pred16_t m = vctp32q(static_cast<uint32_t>(n));
    const float32x4_t va = impl::operand4(a, ia, p.shape.a_strides[3], m);
    const float32x4_t vb = impl::operand4(b, ib, p.shape.b_strides[3], m);
    const float32x4_t fixed = vdupq_n_f32(p.fixed);
    const float32x4_t value = a_first ? vfmaq_n_f32(vfmaq_n_f32(fixed, va, p.a_ratio), vb, p.b_ratio)
                                      : vfmaq_n_f32(vfmaq_n_f32(fixed, vb, p.b_ratio), va, p.a_ratio);
    impl::store_rounded(out + o, value, lo, hi, n);
  });
}

// QLinearMul (kernels.hpp, portable::mul): the integer product of the centred inputs, times the
// ratio, plus the output zero point (two roundings, as the scalar code), on 4 lanes.
template <typename T>
inline void mul(const MulParams& p, const T* a, const T* b, T* out) {
  const float lo = static_cast<float>(p.output_min), hi = static_cast<float>(p.output_max);
  const float zero_point = static_cast<float>(p.output_zero_point);
  impl::for_each_row(p.shape, [&](int32_t o, int32_t ia, int32_t ib, int32_t n) {
    const mve_pred16_t m = vctp32q(static_cast<uint32_t>(n));
    const int32x4_t va = vsubq_n_s32(impl::operand4_int(a, ia, p.shape.a_strides[3], m), p.a_zero_point);
    const int32x4_t vb = vsubq_n_s32(impl::operand4_int(b, ib, p.shape.b_strides[3], m), p.b_zero_point);
    const float32x4_t value = vaddq_n_f32(vmulq_n_f32(vcvtq_f32_s32(vmulq_s32(va, vb)), p.ratio), zero_point);
    impl::store_rounded(out + o, value, lo, hi, n);
  });
}

// TFLite's int8 ADD (tflite_kernels.hpp, portable::add_tflite): the same integer steps on 4 lanes,
// each MultiplyByQuantizedMultiplier as scale_lanes(). Only for binary_vectorizable() shapes.
template <typename T>
inline void add_tflite(const AddTfliteParams& p, const T* a, const T* b, T* out) {
  const FixedPoint4 ma = lane_multipliers(p.a_multiplier), mb = lane_multipliers(p.b_multiplier);
  const FixedPoint4 my = lane_multipliers(p.output_multiplier);
  const int32x4_t lo = vdupq_n_s32(p.output_min), hi = vdupq_n_s32(p.output_max);
  const int32_t scale = int32_t{1} << p.left_shift;
  impl::for_each_row(p.shape, [&](int32_t o, int32_t ia, int32_t ib, int32_t n) {
    const mve_pred16_t m = vctp32q(static_cast<uint32_t>(n));
    const int32x4_t xa = vaddq_n_s32(impl::operand4_int(a, ia, p.shape.a_strides[3], m), p.a_offset);
    const int32x4_t xb = vaddq_n_s32(impl::operand4_int(b, ib, p.shape.b_strides[3], m), p.b_offset);
    const int32x4_t va = vmulq_n_s32(xa, scale), vb = vmulq_n_s32(xb, scale);
    const int32x4_t sum = vaddq_s32(scale_lanes(va, ma), scale_lanes(vb, mb));
    const int32x4_t y = vaddq_n_s32(scale_lanes(sum, my), p.output_offset);
    lanes::store4(out + o, vminq_s32(vmaxq_s32(y, lo), hi), n);
  });
}

}  // namespace mve
}  // namespace tightfit
