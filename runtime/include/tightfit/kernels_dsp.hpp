// tightfit runtime: the Cortex-M DSP-extension fast paths of the convolution
// and fully connected kernels.  Included by kernels.hpp; not a header to
// include on its own.
//
// Compiled in where the target has the DSP extension (__ARM_FEATURE_DSP:
// Cortex-M4, M7, M33, M35P, M55), through the ACLE intrinsics of <arm_acle.h>
// plus the rotated forms of SXTB16/SXTAB16/UXTB16/UXTAB16, which GCC does not
// fold from a separate rotate (inline assembly, one instruction each).
// kernels.hpp calls them unless TIGHTFIT_PORTABLE_KERNELS is defined; they are
// in namespace tightfit::dsp either way, next to tightfit::portable, so that a
// test can run both on the same data.
//
// Bit-exact with the portable path: the integer sums are exact either way (the
// same value modulo 2^32, and the portable path does not overflow int32
// either), and the requantization is the same IEEE single-precision multiply,
// clamp and round half to even (VCVTR under the default round-to-nearest-even
// mode of FPSCR is that rounding; saturating it and clamping afterwards in
// integers gives what clamping in float first gives, the bounds being
// integers). With TFLite's multipliers (QuantizedMultiplier, --numerics tflite)
// each output is numerics.hpp's fixed-point requantize(), as in the portable path.
//
// How the work is laid out (4 int8/uint8 values per 32-bit load; unaligned
// loads are 4-byte memcpy, or memory operands of assembly blocks: one LDR on
// Cortex-M4/M7, which allow unaligned LDR):
//  * pointwise conv and fully connected: 2 rows (pixels) x 2 output channels
//    at a time (rows outermost, so that the output may overlap the input), so every loaded input word serves two
//    channels and every weight word two pixels; both halves of a word are widened to 16-bit pairs (SXTB16, and SXTB16
//    with ROR #8) and summed with SMLAD: 16 MACs per 4 loads, 8 widenings and 8 SMLAD.  The input zero point is folded
//    into the starting value (-zx * sum(w - zw), once per pair of channels); a single row widens with SXTAB16 against
//    the negated zero point instead.
//  * depthwise (depth multiplier 1): 4 adjacent channels (adjacent bytes in
//    NHWC, and in the [kh][kw][out_c] weights) at a time, one SMLABB/SMLATT per
//    channel and tap; the taps inside the image are found once per pixel.
//  * general conv with one group and kh * kw * in_c <= 128: the pixel's
//    window copied once, a kernel row's taps inside the image as one run of
//    bytes and padding as the zero point, then widened 4 bytes at a time into
//    a 16-bit patch on the stack (zero point off, padding 0), then a run of
//    SMLADs per pair of output channels.
//  * other general and grouped convs: 2 output channels at a time; with one
//    group and no horizontal dilation the valid taps of a kernel row are one
//    contiguous run of kw * in_c bytes on both sides, 4 bytes at a time.
//  * depth multipliers > 1 and int8 weights with a nonzero zero point go to the
//    portable kernels (one instantiation per type pair keeps the code small).
// The hottest steps are single assembly blocks (when optimizing): left to
// itself, GCC hoists the loads of the next steps and spills accumulators.
#pragma once

#include <arm_acle.h>

#include <cstdint>
#include <type_traits>

#include "tightfit/numerics.hpp"
#include "tightfit/params.hpp"

namespace tightfit {
namespace simd {

inline int32_t load4(const void* p) {
  int32_t v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}

// Both halves of 4 bytes as two 16-bit pairs: lo = bytes 0 and 2, hi = bytes 1
// and 3; the `off` forms add a 16-bit pair to each (SXTAB16/UXTAB16).
template <typename T>
struct Widen;

template <>
struct Widen<int8_t> {
  static int32_t lo(int32_t x) { return __sxtb16(x); }
  static int32_t hi(int32_t x) {
    int32_t r;
    __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(x));
    return r;
  }
  static int32_t lo(int32_t off, int32_t x) { return __sxtab16(off, x); }
  static int32_t hi(int32_t off, int32_t x) {
    int32_t r;
    __asm__("sxtab16 %0, %1, %2, ror #8" : "=r"(r) : "r"(off), "r"(x));
    return r;
  }
};

template <>
struct Widen<uint8_t> {
  // NOLINTNEXTLINE(bugprone-narrowing-conversions): GCC's arm_acle.h takes uint8x4_t here, clang's int8x4_t
  static int32_t lo(int32_t x) { return static_cast<int32_t>(__uxtb16(static_cast<uint32_t>(x))); }
  static int32_t hi(int32_t x) {
    int32_t r;
    __asm__("uxtb16 %0, %1, ror #8" : "=r"(r) : "r"(x));
    return r;
  }
  static int32_t lo(int32_t off, int32_t x) {
    // NOLINTNEXTLINE(bugprone-narrowing-conversions): GCC's arm_acle.h takes uint16x2_t, uint8x4_t, clang's signed types
    return static_cast<int32_t>(__uxtab16(static_cast<uint32_t>(off), static_cast<uint32_t>(x)));
  }
  static int32_t hi(int32_t off, int32_t x) {
    int32_t r;
    __asm__("uxtab16 %0, %1, %2, ror #8" : "=r"(r) : "r"(off), "r"(x));
    return r;
  }
};

// -zero_point in both 16-bit halves: widening with it subtracts the zero point.
inline int32_t offset_pair(int32_t zero_point) {
  const uint32_t half = static_cast<uint32_t>(-zero_point) & 0xFFFFu;
  return static_cast<int32_t>(half | (half << 16));
}

// A weight word widened, with its zero point taken off when kWeightOffset.
template <typename TW, bool kWeightOffset>
inline void widen_weights(int32_t w, int32_t offset, int32_t& lo, int32_t& hi) {
  if constexpr (kWeightOffset) {
    lo = Widen<TW>::lo(offset, w);
    hi = Widen<TW>::hi(offset, w);
  } else {
    (void)offset;
    lo = Widen<TW>::lo(w);
    hi = Widen<TW>::hi(w);
  }
}

inline int32_t wrapping_add(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
}

// The requantization of numerics.hpp's requantize() with the rounding done by
// VCVTR (round to nearest, ties to even, in FPSCR's default mode) where the
// FPU has single precision; the clamp moves after the rounding (same result:
// rounding is monotonic and the bounds are integers). `lo`/`hi` are
// out_min - zero_point and out_max - zero_point.
template <typename T>
inline T requantize(int32_t acc, float multiplier, int32_t zero_point, int32_t lo, int32_t hi) {
#if defined(__ARM_FP) && (__ARM_FP & 4) && !defined(__SOFTFP__)
  const float value = static_cast<float>(acc) * multiplier;
  float rounded_bits;
  __asm__("vcvtr.s32.f32 %0, %1" : "=t"(rounded_bits) : "t"(value));
  int32_t q;
  __builtin_memcpy(&q, &rounded_bits, sizeof q);
  q = q < lo ? lo : q;
  q = q > hi ? hi : q;
  return static_cast<T>(q + zero_point);
#else
  return tightfit::requantize<T>(acc, multiplier, zero_point, lo + zero_point, hi + zero_point);
#endif
}

// TFLite's fixed-point requantization (--numerics tflite): numerics.hpp's, the clamp bounds
// taken back to output values.
template <typename T>
inline T requantize(int32_t acc, const QuantizedMultiplier& multiplier, int32_t zero_point, int32_t lo, int32_t hi) {
  return tightfit::requantize<T>(acc, multiplier, zero_point, lo + zero_point, hi + zero_point);
}

// What every output of a conv / fully connected call shares. TM: float (ONNX Runtime's
// requantization) or QuantizedMultiplier (TFLite's).
template <typename TM>
struct Output {
  const int32_t* bias;
  const TM* multipliers;
  int32_t per_channel;
  int32_t zero_point;
  int32_t lo, hi;  // clamp bounds less the zero point

  int32_t base(int32_t channel) const { return bias != nullptr ? bias[channel] : 0; }
  TM multiplier(int32_t channel) const { return multipliers[per_channel ? channel : 0]; }
  template <typename T>
  T operator()(int32_t acc, const TM& multiplier) const {
    return simd::requantize<T>(acc, multiplier, zero_point, lo, hi);
  }
};

template <typename TM>
inline Output<TM> output_of(const int32_t* bias, const TM* multipliers, int32_t per_channel, int32_t zero_point,
                            int32_t out_min, int32_t out_max) {
  return Output<TM>{bias, multipliers, per_channel, zero_point, out_min - zero_point, out_max - zero_point};
}

// Sum of (w - zw) over n bytes.
template <typename TW, bool kWeightOffset>
inline int32_t weight_sum(const TW* w, int32_t n, int32_t w_offset) {
  constexpr int32_t kOnes = 0x00010001;
  int32_t a = 0;
  const TW* const end = w + (n & ~3);
  while (w != end) {
    int32_t lo, hi;
    widen_weights<TW, kWeightOffset>(load4(w), w_offset, lo, hi);
    w += 4;
    a = __smlad(lo, kOnes, a);
    a = __smlad(hi, kOnes, a);
  }
  const int32_t zw = -static_cast<int16_t>(w_offset & 0xFFFF);
  for (int32_t i = 0; i < (n & 3); ++i) a += static_cast<int32_t>(w[i]) - zw;
  return a;
}

// Sums of x (w - zw) over n bytes -- the input's zero point NOT taken off: the
// caller adds -zx * sum(w - zw) -- for 2 x-rows and 2 w-rows, added to a00
// (x0.w0), a01 (x0.w1), a10 (x1.w0), a11 (x1.w1).  x1 = x0 + step and
// w1 = w0 + step.  (Leaving the input offset out frees the register that the
// loop needs to run without spills.)
typedef uint32_t __attribute__((may_alias, aligned(1))) UnalignedWord;

// One x word against two widened weight words: a0 += x . w0, a1 += x . w1.
// One assembly block holding its own load (memory operand), so that the
// compiler cannot hoist the loads of the next steps and run out of registers.
#define TIGHTFIT_X_STEP(XW)                                                                                \
  __asm__ volatile("ldr %[xv], %[xm]\n\t" XW                                                               \
                   " %[t], %[xv]\n\t"                                                                      \
                   "smlad %[a0], %[t], %[w0l], %[a0]\n\t"                                                  \
                   "smlad %[a1], %[t], %[w1l], %[a1]\n\t" XW                                               \
                   " %[xv], %[xv], ror #8\n\t"                                                             \
                   "smlad %[a0], %[xv], %[w0h], %[a0]\n\t"                                                 \
                   "smlad %[a1], %[xv], %[w1h], %[a1]"                                                     \
                   : [a0] "+r"(a0), [a1] "+r"(a1), [xv] "=&r"(xv), [t] "=&r"(t)                            \
                   : [xm] "m"(*reinterpret_cast<const UnalignedWord*>(x)), [w0l] "r"(w0l), [w0h] "r"(w0h), \
                     [w1l] "r"(w1l), [w1h] "r"(w1h))

template <typename T>
inline void x_step(const T* x, int32_t w0l, int32_t w0h, int32_t w1l, int32_t w1h, int32_t& a0, int32_t& a1) {
#if defined(__OPTIMIZE__)
  int32_t xv, t;
  if constexpr (std::is_same_v<T, int8_t>) {
    TIGHTFIT_X_STEP("sxtb16");
  } else {
    TIGHTFIT_X_STEP("uxtb16");
  }
#else
  const int32_t xv = load4(x);
  const int32_t xl = Widen<T>::lo(xv), xh = Widen<T>::hi(xv);
  a0 = __smlad(xl, w0l, a0);
  a1 = __smlad(xl, w1l, a1);
  a0 = __smlad(xh, w0h, a0);
  a1 = __smlad(xh, w1h, a1);
#endif
}
#undef TIGHTFIT_X_STEP

// Two weight words (w and w + step) loaded and widened, in one block (volatile,
// like x_step's, so that the blocks keep their order and the loads of the next
// step do not move up).
template <typename TW, bool kWeightOffset>
inline void load_weights(const TW* w, int32_t step, int32_t w_offset, int32_t& w0l, int32_t& w0h, int32_t& w1l,
                         int32_t& w1h) {
#if defined(__OPTIMIZE__)
  if constexpr (!kWeightOffset) {
    (void)w_offset;
#define TIGHTFIT_W_LOAD(WW)                                                                                         \
  __asm__ volatile(                                                                                                 \
      "ldr %[w0h], %[wa]\n\t"                                                                                       \
      "ldr %[w1h], %[wb]\n\t" WW " %[w0l], %[w0h]\n\t" WW " %[w1l], %[w1h]\n\t" WW " %[w0h], %[w0h], ror #8\n\t" WW \
      " %[w1h], %[w1h], ror #8"                                                                                     \
      : [w0l] "=&r"(w0l), [w0h] "=&r"(w0h), [w1l] "=&r"(w1l), [w1h] "=&r"(w1h)                                      \
      : [wa] "m"(*reinterpret_cast<const UnalignedWord*>(w)), [wb] "m"(                                             \
                                                                  *reinterpret_cast<const UnalignedWord*>(w + step)))
    if constexpr (std::is_same_v<TW, int8_t>) {
      TIGHTFIT_W_LOAD("sxtb16");
    } else {
      TIGHTFIT_W_LOAD("uxtb16");
    }
#undef TIGHTFIT_W_LOAD
    return;
  }
#endif
  widen_weights<TW, kWeightOffset>(load4(w), w_offset, w0l, w0h);
  widen_weights<TW, kWeightOffset>(load4(w + step), w_offset, w1l, w1h);
}

template <typename T, typename TW, bool kWeightOffset>
inline void mac_2x2_step(const T*& x0, const TW*& w0, int32_t step, int32_t w_offset, int32_t& a00, int32_t& a01,
                         int32_t& a10, int32_t& a11) {
  int32_t w0l, w0h, w1l, w1h;
  load_weights<TW, kWeightOffset>(w0, step, w_offset, w0l, w0h, w1l, w1h);
  w0 += 4;
  x_step<T>(x0, w0l, w0h, w1l, w1h, a00, a01);
  x_step<T>(x0 + step, w0l, w0h, w1l, w1h, a10, a11);
  x0 += 4;
}

template <typename T, typename TW, bool kWeightOffset>
inline void mac_2x2(const T* x0, const TW* w0, int32_t step, int32_t n, int32_t w_offset, int32_t& a00, int32_t& a01,
                    int32_t& a10, int32_t& a11) {
  // 8 bytes a round, so that the loop's own instructions count once per 32 MACs.
  const T* const end = x0 + (n & ~7);
  while (x0 != end) {
    mac_2x2_step<T, TW, kWeightOffset>(x0, w0, step, w_offset, a00, a01, a10, a11);
    mac_2x2_step<T, TW, kWeightOffset>(x0, w0, step, w_offset, a00, a01, a10, a11);
  }
  if (n & 4) mac_2x2_step<T, TW, kWeightOffset>(x0, w0, step, w_offset, a00, a01, a10, a11);
  if (n & 3) {
    const int32_t zw = -static_cast<int16_t>(w_offset & 0xFFFF);
    for (int32_t i = 0; i < (n & 3); ++i) {
      const int32_t xv0 = static_cast<int32_t>(x0[i]), xv1 = static_cast<int32_t>(x0[step + i]);
      const int32_t wv0 = static_cast<int32_t>(w0[i]) - zw, wv1 = static_cast<int32_t>(w0[step + i]) - zw;
      a00 += xv0 * wv0;
      a01 += xv0 * wv1;
      a10 += xv1 * wv0;
      a11 += xv1 * wv1;
    }
  }
}

// One x-row against 2 w-rows (w1 = w0 + w_step).
template <typename T, typename TW, bool kWeightOffset>
inline void mac_1x2(const T* x, const TW* w0, int32_t w_step, int32_t n, int32_t x_offset, int32_t w_offset,
                    int32_t& a0, int32_t& a1) {
  const T* const end = x + (n & ~3);
  while (x != end) {
    const int32_t xa = load4(x);
    const int32_t wa = load4(w0), wb = load4(w0 + w_step);
    x += 4;
    w0 += 4;
    int32_t w0l, w0h, w1l, w1h;
    widen_weights<TW, kWeightOffset>(wa, w_offset, w0l, w0h);
    widen_weights<TW, kWeightOffset>(wb, w_offset, w1l, w1h);
    const int32_t xl = Widen<T>::lo(x_offset, xa);
    const int32_t xh = Widen<T>::hi(x_offset, xa);
    a0 = __smlad(xl, w0l, a0);
    a1 = __smlad(xl, w1l, a1);
    a0 = __smlad(xh, w0h, a0);
    a1 = __smlad(xh, w1h, a1);
  }
  if (n & 3) {
    const int32_t zx = -static_cast<int16_t>(x_offset & 0xFFFF);
    const int32_t zw = -static_cast<int16_t>(w_offset & 0xFFFF);
    for (int32_t i = 0; i < (n & 3); ++i) {
      const int32_t xv = static_cast<int32_t>(x[i]) - zx;
      a0 += xv * (static_cast<int32_t>(w0[i]) - zw);
      a1 += xv * (static_cast<int32_t>(w0[w_step + i]) - zw);
    }
  }
}

// One x-row against one w-row.
template <typename T, typename TW, bool kWeightOffset>
inline int32_t mac_1x1(const T* x, const TW* w, int32_t n, int32_t x_offset, int32_t w_offset, int32_t a) {
  const T* const end = x + (n & ~3);
  while (x != end) {
    const int32_t xa = load4(x), wa = load4(w);
    x += 4;
    w += 4;
    int32_t wl, wh;
    widen_weights<TW, kWeightOffset>(wa, w_offset, wl, wh);
    a = __smlad(Widen<T>::lo(x_offset, xa), wl, a);
    a = __smlad(Widen<T>::hi(x_offset, xa), wh, a);
  }
  if (n & 3) {
    const int32_t zx = -static_cast<int16_t>(x_offset & 0xFFFF);
    const int32_t zw = -static_cast<int16_t>(w_offset & 0xFFFF);
    for (int32_t i = 0; i < (n & 3); ++i) a += (static_cast<int32_t>(x[i]) - zx) * (static_cast<int32_t>(w[i]) - zw);
  }
  return a;
}

// Weight sums cached on the stack by matmul(): up to this many output channels (1 KiB); the
// channels past it have theirs recomputed for every pair of rows.
constexpr int32_t kCachedWeightSums = 256;

// bias[o] - zx * sum_k (w[o][k] - zw): where channel o's sum starts for a pair of rows.
template <typename TW, bool kWeightOffset, typename TM>
__attribute__((noinline)) int32_t pair_start(const TW* w, int32_t k, int32_t o, int32_t x_zero_point, int32_t wo,
                                             const Output<TM>& out) {
  return wrapping_add(out.base(o),
                      static_cast<int32_t>(static_cast<uint32_t>(-x_zero_point) *
                                           static_cast<uint32_t>(weight_sum<TW, kWeightOffset>(w + o * k, k, wo))));
}

// One pair of rows (x0, x0 + k) against every channel, into (y0, y0 + n): the channels two at a
// time, then an odd last one row by row. Out of line, so that the caller's loop state does not
// take the registers of the multiply-accumulate loop (inlined, it made that loop spill: +44%
// instructions on DS-CNN's pointwise layers).
template <typename T, typename TW, bool kWeightOffset, typename TM>
__attribute__((noinline)) void matmul_row_pair(const T* x0, const TW* w, int32_t k, int32_t n, const int32_t* start,
                                               int32_t cached, int32_t x_zero_point, int32_t xo, int32_t wo,
                                               const Output<TM>& out, T* y0, int32_t y_stride) {
  int32_t o = 0;
  for (; o + 2 <= n; o += 2) {
    const int32_t c0 = o < cached ? start[o] : pair_start<TW, kWeightOffset>(w, k, o, x_zero_point, wo, out);
    const int32_t c1 =
        o + 1 < cached ? start[o + 1] : pair_start<TW, kWeightOffset>(w, k, o + 1, x_zero_point, wo, out);
    int32_t a00 = c0, a01 = c1, a10 = c0, a11 = c1;
    mac_2x2<T, TW, kWeightOffset>(x0, w + o * k, k, k, wo, a00, a01, a10, a11);
    const auto m0 = out.multiplier(o), m1 = out.multiplier(o + 1);
    y0[o] = out.template operator()<T>(a00, m0);
    y0[o + 1] = out.template operator()<T>(a01, m1);
    y0[y_stride + o] = out.template operator()<T>(a10, m0);
    y0[y_stride + o + 1] = out.template operator()<T>(a11, m1);
  }
  if (o < n) {
    const int32_t b0 = out.base(o);
    const auto m0 = out.multiplier(o);
    y0[o] = out.template operator()<T>(mac_1x1<T, TW, kWeightOffset>(x0, w + o * k, k, xo, wo, b0), m0);
    y0[y_stride + o] = out.template operator()<T>(mac_1x1<T, TW, kWeightOffset>(x0 + k, w + o * k, k, xo, wo, b0), m0);
  }
}

// out[r][o] = requant(bias[o] + sum_k (x[r][k] - zx)(w[o][k] - zw)): the
// pointwise conv (rows = pixels) and the fully connected layer.  Output row r
// starts at y + r * y_stride (n, or more for a slice of a Concat's output).
//
// Loop order (the overlap distances of kernels.hpp, dsp_matmul_distance() and
// dsp_matmul_up_distance(), follow it): rows in pairs, outermost, so that an input row is dead
// once its pair is done and the output may be written over it; within a pair, the channels two
// at a time, then an odd last channel one row at a time; an odd last row alone at the end.
// kBackward: the pairs from the last, the odd row (row 0) at the end.
template <typename T, typename TW, bool kWeightOffset, bool kBackward, typename TM>
inline void matmul(int32_t rows, int32_t k, int32_t n, const T* x, const TW* w, int32_t x_zero_point,
                   int32_t w_zero_point, const Output<TM>& out, T* y, int32_t y_stride) {
  const int32_t xo = offset_pair(x_zero_point), wo = offset_pair(w_zero_point);
  // The input's zero point, once per channel: bias - zx * sum(w - zw) starts each pair of rows.
  int32_t start[kCachedWeightSums];
  const int32_t cached = rows >= 2 ? (n < kCachedWeightSums ? n : kCachedWeightSums) : 0;
  for (int32_t o = 0; o < cached; ++o) start[o] = pair_start<TW, kWeightOffset>(w, k, o, x_zero_point, wo, out);
  for (int32_t pair = 0; pair < rows / 2; ++pair) {
    const int32_t r = kBackward ? rows - 2 - 2 * pair : 2 * pair;
    matmul_row_pair<T, TW, kWeightOffset>(x + r * k, w, k, n, start, cached, x_zero_point, xo, wo, out,
                                          y + r * y_stride, y_stride);
  }
  if (rows % 2 == 1) {
    const int32_t r = kBackward ? 0 : rows - 1;
    const T* x0 = x + r * k;
    T* y0 = y + r * y_stride;
    int32_t o = 0;
    for (; o + 2 <= n; o += 2) {
      int32_t a0 = out.base(o), a1 = out.base(o + 1);
      mac_1x2<T, TW, kWeightOffset>(x0, w + o * k, k, k, xo, wo, a0, a1);
      y0[o] = out.template operator()<T>(a0, out.multiplier(o));
      y0[o + 1] = out.template operator()<T>(a1, out.multiplier(o + 1));
    }
    if (o < n)
      y0[o] = out.template operator()<T>(mac_1x1<T, TW, kWeightOffset>(x0, w + o * k, k, xo, wo, out.base(o)),
                                         out.multiplier(o));
  }
}

}  // namespace simd

namespace portable {
template <typename T, typename TW, bool kBackward, typename TM>
inline void conv_pointwise(const ConvParams&, const T*, const TW*, const int32_t*, const TM*, T*);
template <typename T, typename TW, bool kBackward, typename TM>
inline void conv_depthwise(const ConvParams&, const T*, const TW*, const int32_t*, const TM*, T*);
template <typename T, typename TW, typename TM>
inline void conv_general(const ConvParams&, const T*, const TW*, const int32_t*, const TM*, T*);
template <typename T, typename TW, bool kBackward, typename TM>
inline void fully_connected(const FullyConnectedParams&, const T*, const TW*, const int32_t*, const TM*, T*);
}  // namespace portable

namespace dsp {
namespace impl {

// One depthwise tap for 4 adjacent channels: a0..a3 += (x[c] - zx) * (w[c] - zw)
// for the bytes at x + offset and w + offset.  One assembly block, so that the
// compiler cannot hoist the loads of the next taps and run out of registers
// (which it does with the same code as intrinsics); the loads are memory
// operands, so the compiler knows what the block reads.
using simd::UnalignedWord;

#define TIGHTFIT_DW_TAP(XW, WW, WOFF)                                                                             \
  __asm__(                                                                                                        \
      "ldr %[xv], %[xm]\n\t"                                                                                      \
      "ldr %[wv], %[wm]\n\t" XW " %[t], %[xo], %[xv]\n\t" WW " %[u], " WOFF                                       \
      "%[wv]\n\t"                                                                                                 \
      "smlabb %[a0], %[t], %[u], %[a0]\n\t"                                                                       \
      "smlatt %[a2], %[t], %[u], %[a2]\n\t" XW " %[xv], %[xo], %[xv], ror #8\n\t" WW " %[wv], " WOFF              \
      "%[wv], ror #8\n\t"                                                                                         \
      "smlabb %[a1], %[xv], %[wv], %[a1]\n\t"                                                                     \
      "smlatt %[a3], %[xv], %[wv], %[a3]"                                                                         \
      : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [xv] "=&r"(xv), [wv] "=&r"(wv), [t] "=&r"(t), \
        [u] "=&r"(u)                                                                                              \
      : [xm] "m"(*reinterpret_cast<const UnalignedWord*>(x + offset)),                                            \
        [wm] "m"(*reinterpret_cast<const UnalignedWord*>(w + offset)), [xo] "r"(xo))

template <typename T, typename TW, bool kWeightOffset>
inline void dw_tap(const T* x, const TW* w, int32_t offset, int32_t xo, int32_t wo, int32_t& a0, int32_t& a1,
                   int32_t& a2, int32_t& a3) {
#if defined(__OPTIMIZE__)
  // (Unoptimized builds, and the rarer weights with a zero point, have too few
  // registers free for the block: they take the intrinsics below.)
  if constexpr (!kWeightOffset) {
    int32_t xv, wv, t, u;
    if constexpr (std::is_same_v<T, int8_t> && std::is_same_v<TW, int8_t>) {
      TIGHTFIT_DW_TAP("sxtab16", "sxtb16", "");
    } else if constexpr (std::is_same_v<T, uint8_t> && std::is_same_v<TW, int8_t>) {
      TIGHTFIT_DW_TAP("uxtab16", "sxtb16", "");
    } else if constexpr (std::is_same_v<T, uint8_t>) {
      TIGHTFIT_DW_TAP("uxtab16", "uxtb16", "");
    } else {
      TIGHTFIT_DW_TAP("sxtab16", "uxtb16", "");
    }
    return;
  }
#endif
  const int32_t xv = simd::load4(x + offset), wv = simd::load4(w + offset);
  int32_t wl, wh;
  simd::widen_weights<TW, kWeightOffset>(wv, wo, wl, wh);
  const int32_t xl = simd::Widen<T>::lo(xo, xv);
  a0 = __smlabb(xl, wl, a0);
  a2 = __smlatt(xl, wl, a2);
  const int32_t xh = simd::Widen<T>::hi(xo, xv);
  a1 = __smlabb(xh, wh, a1);
  a3 = __smlatt(xh, wh, a3);
}
#undef TIGHTFIT_DW_TAP

template <typename T, typename TW, bool kWeightOffset, bool kBackward, typename TM>
inline void conv_depthwise(const ConvParams& p, const T* in, const TW* weights, const int32_t* bias,
                           const TM* multipliers, T* out) {
  const auto o = simd::output_of(bias, multipliers, p.per_channel, p.output_zero_point, p.output_min, p.output_max);
  const int32_t channels = p.out_c;
  const int32_t blocks = channels & ~3;
  const int32_t xo = simd::offset_pair(p.input_zero_point), wo = simd::offset_pair(p.weight_zero_point);
  const int32_t zx = p.input_zero_point, zw = p.weight_zero_point;
  const int32_t x_tap_step = p.dilation_w * channels;
  const int32_t two_channels = 2 * channels;
  const bool three_taps = p.kernel_w == 3 && p.dilation_w == 1;
  for (int32_t bi = 0; bi < p.batch; ++bi) {
    const int32_t b = kBackward ? p.batch - 1 - bi : bi;
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
        const int32_t taps_w = kx_hi - kx_lo;
        T* y = out + ((b * p.out_h + oy) * p.out_w + ox) * conv_out_stride(p);
        // First tap of the window inside the image, for channel 0.
        const T* x_first =
            in + ((b * p.in_h + iy0 + ky_lo * p.dilation_h) * p.in_w + ix0 + kx_lo * p.dilation_w) * channels;
        const TW* w_first = weights + (ky_lo * p.kernel_w + kx_lo) * channels;
        const int32_t x_row_step = p.dilation_h * p.in_w * channels;
        const int32_t w_row_step = p.kernel_w * channels;
        for (int32_t c = 0; c < blocks; c += 4) {
          int32_t a0 = o.base(c), a1 = o.base(c + 1), a2 = o.base(c + 2), a3 = o.base(c + 3);
          const T* x_row = x_first + c;
          const TW* w_row = w_first + c;
          if (three_taps && taps_w == 3) {
            // A whole row of a 3-wide kernel, dilation 1: the taps are channels and 2 * channels
            // apart in the input and in the weights alike.
            for (int32_t ky = ky_lo; ky < ky_hi; ++ky) {
              dw_tap<T, TW, kWeightOffset>(x_row, w_row, 0, xo, wo, a0, a1, a2, a3);
              dw_tap<T, TW, kWeightOffset>(x_row, w_row, channels, xo, wo, a0, a1, a2, a3);
              dw_tap<T, TW, kWeightOffset>(x_row, w_row, two_channels, xo, wo, a0, a1, a2, a3);
              x_row += x_row_step;
              w_row += w_row_step;
            }
          } else {
            for (int32_t ky = ky_lo; ky < ky_hi; ++ky) {
              const T* x = x_row;
              const TW* w = w_row;
              for (int32_t t = 0; t < taps_w; ++t) {
                dw_tap<T, TW, kWeightOffset>(x, w, 0, xo, wo, a0, a1, a2, a3);
                x += x_tap_step;
                w += channels;
              }
              x_row += x_row_step;
              w_row += w_row_step;
            }
          }
          y[c] = o.template operator()<T>(a0, o.multiplier(c));
          y[c + 1] = o.template operator()<T>(a1, o.multiplier(c + 1));
          y[c + 2] = o.template operator()<T>(a2, o.multiplier(c + 2));
          y[c + 3] = o.template operator()<T>(a3, o.multiplier(c + 3));
        }
        for (int32_t c = blocks; c < channels; ++c) {
          int32_t a = o.base(c);
          const T* x_row = x_first + c;
          const TW* w_row = w_first + c;
          for (int32_t ky = ky_lo; ky < ky_hi; ++ky) {
            for (int32_t t = 0; t < taps_w; ++t) {
              a +=
                  (static_cast<int32_t>(x_row[t * x_tap_step]) - zx) * (static_cast<int32_t>(w_row[t * channels]) - zw);
            }
            x_row += x_row_step;
            w_row += w_row_step;
          }
          y[c] = o.template operator()<T>(a, o.multiplier(c));
        }
      }
    }
  }
}

// Elements of the one-pixel patch that conv_patch() keeps on the stack, as
// int16 (so 2 bytes each: 256 bytes of stack at most).
constexpr int32_t kPatchElements = 128;

// Where element e of the patch goes: each group of 4 elements is stored as
// the two 16-bit pairs that widening 4 weight bytes gives, (e0, e2) then
// (e1, e3), so that one SMLAD pairs each with its weight.
inline int32_t patch_slot(int32_t e) { return (e & ~3) | ((e & 1) << 1) | ((e >> 1) & 1); }

// General convolution with one group and a small kernel (kh * kw * in_c <=
// kPatchElements): per output pixel, the window is copied once (a byte copy,
// then widened), zero point taken off and padded taps set to 0 (exactly what
// skipping them gives), into a patch on the stack in the weights' own order
// (OHWI: ky, kx, ic); then each
// pair of output channels is one run of SMLADs over it.  Few input channels
// (a first layer on a 1-channel spectrogram, an RGB image) otherwise leave
// runs too short for 4-byte steps.
template <typename T, typename TW, bool kWeightOffset, typename TM>
inline void conv_patch(const ConvParams& p, const T* in, const TW* weights, const int32_t* bias, const TM* multipliers,
                       T* out) {
  const auto o = simd::output_of(bias, multipliers, p.per_channel, p.output_zero_point, p.output_min, p.output_max);
  const int32_t len = p.kernel_h * p.kernel_w * p.in_c;
  const int32_t chunks = len >> 2;
  const int32_t zx = p.input_zero_point, zw = p.weight_zero_point;
  const int32_t wo = simd::offset_pair(zw);
  const int32_t xo = simd::offset_pair(zx);
  alignas(4) T window[kPatchElements];
  alignas(4) int16_t patch[kPatchElements];
  for (int32_t b = 0; b < p.batch; ++b) {
    for (int32_t oy = 0; oy < p.out_h; ++oy) {
      for (int32_t ox = 0; ox < p.out_w; ++ox) {
        // The window as bytes (a padded tap holding the zero point: 0 once it is taken off).
        gather_window(p, in, b, oy, ox, static_cast<T>(zx), window);
        // Widened 4 bytes at a time with the zero point taken off, into the patch's pairs.
        for (int32_t j = 0; j < chunks; ++j) {
          const int32_t xa = simd::load4(window + 4 * j);
          const int32_t pl = simd::Widen<T>::lo(xo, xa), ph = simd::Widen<T>::hi(xo, xa);
          __builtin_memcpy(patch + 4 * j, &pl, 4);
          __builtin_memcpy(patch + 4 * j + 2, &ph, 4);
        }
        for (int32_t i = chunks * 4; i < len; ++i)
          patch[patch_slot(i)] = static_cast<int16_t>(static_cast<int32_t>(window[i]) - zx);
        T* y = out + ((b * p.out_h + oy) * p.out_w + ox) * conv_out_stride(p);
        int32_t oc = 0;
        for (; oc + 2 <= p.out_c; oc += 2) {
          const TW* w0 = weights + oc * len;
          int32_t a0 = o.base(oc), a1 = o.base(oc + 1);
          // Read as words (pairs of 16-bit elements) by memcpy, never through an int32_t pointer.
          const int16_t* pw = patch;
          for (int32_t j = 0; j < chunks; ++j) {
            int32_t pl, ph;
            __builtin_memcpy(&pl, pw, 4);
            __builtin_memcpy(&ph, pw + 2, 4);
            pw += 4;
            int32_t w0l, w0h, w1l, w1h;
            simd::widen_weights<TW, kWeightOffset>(simd::load4(w0), wo, w0l, w0h);
            simd::widen_weights<TW, kWeightOffset>(simd::load4(w0 + len), wo, w1l, w1h);
            w0 += 4;
            a0 = __smlad(pl, w0l, a0);
            a1 = __smlad(pl, w1l, a1);
            a0 = __smlad(ph, w0h, a0);
            a1 = __smlad(ph, w1h, a1);
          }
          for (int32_t i = chunks * 4; i < len; ++i) {
            const int32_t xv = patch[patch_slot(i)];
            a0 += xv * (static_cast<int32_t>(weights[oc * len + i]) - zw);
            a1 += xv * (static_cast<int32_t>(weights[(oc + 1) * len + i]) - zw);
          }
          y[oc] = o.template operator()<T>(a0, o.multiplier(oc));
          y[oc + 1] = o.template operator()<T>(a1, o.multiplier(oc + 1));
        }
        if (oc < p.out_c) {
          const TW* w0 = weights + oc * len;
          int32_t a0 = o.base(oc);
          for (int32_t j = 0; j < chunks; ++j) {
            int32_t pl, ph, w0l, w0h;
            __builtin_memcpy(&pl, patch + 4 * j, 4);
            __builtin_memcpy(&ph, patch + 4 * j + 2, 4);
            simd::widen_weights<TW, kWeightOffset>(simd::load4(w0 + 4 * j), wo, w0l, w0h);
            a0 = __smlad(pl, w0l, a0);
            a0 = __smlad(ph, w0h, a0);
          }
          for (int32_t i = chunks * 4; i < len; ++i) a0 += patch[patch_slot(i)] * (static_cast<int32_t>(w0[i]) - zw);
          y[oc] = o.template operator()<T>(a0, o.multiplier(oc));
        }
      }
    }
  }
}

template <typename T, typename TW, bool kWeightOffset, typename TM>
inline void conv_general(const ConvParams& p, const T* in, const TW* weights, const int32_t* bias,
                         const TM* multipliers, T* out) {
  if (p.groups == 1 && p.kernel_h * p.kernel_w * p.in_c <= kPatchElements) {
    conv_patch<T, TW, kWeightOffset>(p, in, weights, bias, multipliers, out);
    return;
  }
  const auto o = simd::output_of(bias, multipliers, p.per_channel, p.output_zero_point, p.output_min, p.output_max);
  const int32_t group_in_c = p.in_c / p.groups;
  const int32_t group_out_c = p.out_c / p.groups;
  const int32_t xo = simd::offset_pair(p.input_zero_point), wo = simd::offset_pair(p.weight_zero_point);
  const int32_t w_oc_step = p.kernel_h * p.kernel_w * group_in_c;
  // One group and no horizontal dilation: the taps of a kernel row inside the
  // image are one contiguous run in the input and in the weights.
  const bool row_runs = p.groups == 1 && p.dilation_w == 1;
  // Pairs of output channels never straddle two groups.
  const bool pairs = (group_out_c & 1) == 0;
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
            in + ((b * p.in_h + iy0 + ky_lo * p.dilation_h) * p.in_w + ix0 + kx_lo * p.dilation_w) * p.in_c;
        const int32_t x_row_step = p.dilation_h * p.in_w * p.in_c;
        const int32_t x_tap_step = p.dilation_w * p.in_c;
        const int32_t w_row_step = p.kernel_w * group_in_c;
        const int32_t w_first = (ky_lo * p.kernel_w + kx_lo) * group_in_c;
        const int32_t run = (kx_hi - kx_lo) * group_in_c;
        int32_t oc = 0;
        if (pairs) {
          for (; oc + 2 <= p.out_c; oc += 2) {
            const T* x_row = x_first + (oc / group_out_c) * group_in_c;
            const TW* w_row = weights + oc * w_oc_step + w_first;
            int32_t a0 = o.base(oc), a1 = o.base(oc + 1);
            for (int32_t ky = ky_lo; ky < ky_hi; ++ky) {
              if (row_runs) {
                simd::mac_1x2<T, TW, kWeightOffset>(x_row, w_row, w_oc_step, run, xo, wo, a0, a1);
              } else {
                for (int32_t kx = kx_lo; kx < kx_hi; ++kx) {
                  const int32_t t = kx - kx_lo;
                  simd::mac_1x2<T, TW, kWeightOffset>(x_row + t * x_tap_step, w_row + t * group_in_c, w_oc_step,
                                                      group_in_c, xo, wo, a0, a1);
                }
              }
              x_row += x_row_step;
              w_row += w_row_step;
            }
            y[oc] = o.template operator()<T>(a0, o.multiplier(oc));
            y[oc + 1] = o.template operator()<T>(a1, o.multiplier(oc + 1));
          }
        }
        for (; oc < p.out_c; ++oc) {
          const T* x_row = x_first + (oc / group_out_c) * group_in_c;
          const TW* w_row = weights + oc * w_oc_step + w_first;
          int32_t a = o.base(oc);
          for (int32_t ky = ky_lo; ky < ky_hi; ++ky) {
            if (row_runs) {
              a = simd::mac_1x1<T, TW, kWeightOffset>(x_row, w_row, run, xo, wo, a);
            } else {
              for (int32_t kx = kx_lo; kx < kx_hi; ++kx) {
                const int32_t t = kx - kx_lo;
                a = simd::mac_1x1<T, TW, kWeightOffset>(x_row + t * x_tap_step, w_row + t * group_in_c, group_in_c, xo,
                                                        wo, a);
              }
            }
            x_row += x_row_step;
            w_row += w_row_step;
          }
          y[oc] = o.template operator()<T>(a, o.multiplier(oc));
        }
      }
    }
  }
}

}  // namespace impl

// The DSP kernels; same contract as the portable ones (kernels.hpp).  One
// instantiation per type pair, to keep the code small: int8 weights are
// symmetric in practice (zero point 0; any other zero point takes the portable
// loops), uint8 weights always go through the variant that takes their zero
// point off.
template <typename TW>
constexpr bool kWeightOffsetOf = std::is_same_v<TW, uint8_t>;

template <typename TW>
inline bool dsp_weights(int32_t weight_zero_point) {
  return kWeightOffsetOf<TW> || weight_zero_point == 0;
}

template <typename T, typename TW, bool kBackward = false, typename TM>
inline void conv_pointwise(const ConvParams& p, const T* in, const TW* weights, const int32_t* bias,
                           const TM* multipliers, T* out) {
  if (!dsp_weights<TW>(p.weight_zero_point))
    return portable::conv_pointwise<T, TW, kBackward>(p, in, weights, bias, multipliers, out);
  const auto o = simd::output_of(bias, multipliers, p.per_channel, p.output_zero_point, p.output_min, p.output_max);
  simd::matmul<T, TW, kWeightOffsetOf<TW>, kBackward>(p.batch * p.in_h * p.in_w, p.in_c, p.out_c, in, weights,
                                                      p.input_zero_point, p.weight_zero_point, o, out,
                                                      conv_out_stride(p));
}

template <typename T, typename TW, bool kBackward = false, typename TM>
inline void conv_depthwise(const ConvParams& p, const T* in, const TW* weights, const int32_t* bias,
                           const TM* multipliers, T* out) {
  if (p.out_c != p.in_c || !dsp_weights<TW>(p.weight_zero_point)) {
    portable::conv_depthwise<T, TW, kBackward>(p, in, weights, bias, multipliers, out);
  } else {
    impl::conv_depthwise<T, TW, kWeightOffsetOf<TW>, kBackward>(p, in, weights, bias, multipliers, out);
  }
}

template <typename T, typename TW, typename TM>
inline void conv_general(const ConvParams& p, const T* in, const TW* weights, const int32_t* bias,
                         const TM* multipliers, T* out) {
  if (!dsp_weights<TW>(p.weight_zero_point)) {
    portable::conv_general(p, in, weights, bias, multipliers, out);
  } else {
    impl::conv_general<T, TW, kWeightOffsetOf<TW>>(p, in, weights, bias, multipliers, out);
  }
}

template <typename T, typename TW, bool kBackward = false, typename TM>
inline void fully_connected(const FullyConnectedParams& p, const T* in, const TW* weights, const int32_t* bias,
                            const TM* multipliers, T* out) {
  if (!dsp_weights<TW>(p.weight_zero_point))
    return portable::fully_connected<T, TW, kBackward>(p, in, weights, bias, multipliers, out);
  const auto o = simd::output_of(bias, multipliers, p.per_channel, p.output_zero_point, p.output_min, p.output_max);
  simd::matmul<T, TW, kWeightOffsetOf<TW>, kBackward>(p.rows, p.in_features, p.out_features, in, weights,
                                                      p.input_zero_point, p.weight_zero_point, o, out, p.out_features);
}

}  // namespace dsp
}  // namespace tightfit
