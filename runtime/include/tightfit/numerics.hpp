// tightfit runtime: the float primitives that make the kernels bit-exact with
// ONNX Runtime.  Used by the kernels on the target and by the host helpers, so
// that both sides compute the same IEEE-754 single-precision results.
//
// Requirements on the build (the CMake target tightfit_runtime exports them):
//  * -ffp-contract=off: a contracted a*b+c (FMA) rounds once instead of twice
//    and changes results; the kernels ask for a fused multiply-add explicitly
//    where ORT uses one.
//  * no -ffast-math (it would fold (x + 2^23) - 2^23 away).
//  * float must be IEEE single precision evaluated in single precision (true
//    for x86-64 SSE, AArch64, Cortex-M FPU and soft-float; not x87).
#pragma once

#include <cstdint>

#include "tightfit/params.hpp"

namespace tightfit {

// Round to nearest integer, ties to even: what ORT's std::nearbyintf (default
// rounding mode) and _mm_cvtps_epi32 do.  Adding 2^23 to a magnitude below
// 2^23 leaves no fraction bits, so the FPU (or soft-float) rounds it ties to
// even; larger magnitudes are already integers.
inline float round_half_even(float x) {
  constexpr float kTwoPow23 = 8388608.0f;
  const float magnitude = x < 0.0f ? -x : x;
  if (!(magnitude < kTwoPow23)) return x;
  const float rounded = (magnitude + kTwoPow23) - kTwoPow23;
  return x < 0.0f ? -rounded : rounded;
}

// a * b + c with a single rounding, like the vfmadd instructions of ORT's AVX2
// kernels.  Uses the hardware instruction where the target has one (Cortex-M4F,
// M7, M33 and M55 with FPU); otherwise computes it exactly in double: the
// product of two floats fits a double exactly, and the only case in which
// rounding the double sum to float rounds twice wrongly (the sum landing
// exactly halfway between two floats while the true value is not) is detected
// with an exact two-sum and fixed by nudging the last double bit.
inline float fused_multiply_add(float a, float b, float c) {
#if defined(__FP_FAST_FMAF)
  return __builtin_fmaf(a, b, c);
#else
  const double product = static_cast<double>(a) * static_cast<double>(b);
  const double addend = static_cast<double>(c);
  const double sum = product + addend;
  const double addend_part = sum - product;
  const double error = (product - (sum - addend_part)) + (addend - addend_part);
  uint64_t bits;
  __builtin_memcpy(&bits, &sum, sizeof bits);
  // A double exactly halfway between two floats has its 29 low bits equal to
  // 1 followed by 28 zeros.
  constexpr uint64_t kLowMask = (uint64_t{1} << 29) - 1;
  constexpr uint64_t kHalfway = uint64_t{1} << 28;
  if ((bits & kLowMask) == kHalfway && error != 0.0) {
    const bool error_grows_magnitude = (error > 0.0) == (sum > 0.0);
    bits = error_grows_magnitude ? bits + 1 : bits - 1;
    double nudged;
    __builtin_memcpy(&nudged, &bits, sizeof nudged);
    return static_cast<float>(nudged);
  }
  return static_cast<float>(sum);
#endif
}

template <typename T>
struct QuantLimits;
template <>
struct QuantLimits<int8_t> {
  static constexpr int32_t kMin = -128;
  static constexpr int32_t kMax = 127;
};
template <>
struct QuantLimits<uint8_t> {
  static constexpr int32_t kMin = 0;
  static constexpr int32_t kMax = 255;
};

inline int32_t clamp_int(int32_t v, int32_t lo, int32_t hi) { return v < lo ? lo : (v > hi ? hi : v); }

// ORT's MlasRequantizeOutput (QLinearConv, QLinearMatMul, and the global
// average pool): float(acc) * multiplier, clamped to [min - zp, max - zp] in
// float, rounded half to even, plus the zero point.
template <typename T>
inline T requantize_float(int32_t acc, float multiplier, int32_t zero_point, int32_t out_min, int32_t out_max) {
  float value = static_cast<float>(acc) * multiplier;
  const float lo = static_cast<float>(out_min - zero_point);
  const float hi = static_cast<float>(out_max - zero_point);
  value = value < lo ? lo : value;
  value = value > hi ? hi : value;
  return static_cast<T>(static_cast<int32_t>(round_half_even(value)) + zero_point);
}

namespace detail {

// Bits of x above the highest set one: 32 - bit length (x != 0), without a CLZ instruction
// (ARMv6-M and RV32IMC have none; GCC would call a library routine).
inline int32_t leading_zeros(uint32_t x) {
  int32_t n = 0;
  if (x < (uint32_t{1} << 16)) n += 16, x <<= 16;
  if (x < (uint32_t{1} << 24)) n += 8, x <<= 8;
  if (x < (uint32_t{1} << 28)) n += 4, x <<= 4;
  if (x < (uint32_t{1} << 30)) n += 2, x <<= 2;
  if (x < (uint32_t{1} << 31)) n += 1;
  return n;
}

// The exact product of a and m (both below 2^24) as high * 2^24 + low, high and low below 2^24:
// four 12 x 12-bit multiplies, where a 64-bit product would be a library call on a 32-bit core.
inline void multiply_24x24(uint32_t a, uint32_t m, uint32_t& high, uint32_t& low) {
  const uint32_t a_hi = a >> 12, a_lo = a & 0xFFFu, m_hi = m >> 12, m_lo = m & 0xFFFu;
  const uint32_t middle = a_hi * m_lo + a_lo * m_hi;  // < 2^25
  low = a_lo * m_lo + ((middle & 0xFFFu) << 12);      // < 2^25
  high = a_hi * m_hi + (middle >> 12) + (low >> 24);
  low &= 0xFFFFFFu;
}

// x / 2^shift rounded to nearest, ties to even (0 < shift < 32).
inline uint32_t shift_round_half_even(uint32_t x, int32_t shift) {
  const uint32_t half = uint32_t{1} << (shift - 1);
  const uint32_t rest = x & ((half << 1) - 1);
  uint32_t q = x >> shift;
  if (rest > half || (rest == half && (q & 1))) ++q;
  return q;
}

}  // namespace detail

// The float path of requantize_integer(), for multipliers it does not take: kept out of line so
// that the integer path does not carry its register pressure.
template <typename T>
__attribute__((noinline, cold)) T requantize_float_out_of_line(int32_t acc, float multiplier, int32_t zero_point,
                                                               int32_t out_min, int32_t out_max) {
  return requantize_float<T>(acc, multiplier, zero_point, out_min, out_max);
}

// requantize_float() computed in integers only, bit for bit, for every accumulator and
// multiplier (requantize_integer() below takes the common cases faster and this one for the
// rest): the same two IEEE roundings, emulated.
//  1. float(acc) = A * 2^s: exact (s = 0) below 2^24 in magnitude, else rounded half to even to
//     24 bits.
//  2. times the multiplier M * 2^e (M its 24-bit significand): the exact product P = A * M
//     (< 2^48; four 12 x 12-bit multiplies, no 64-bit multiply) rounded half to even to 24
//     significant bits: V * 2^k.
//  3. V * 2^(k + s + e) rounded half to even to an integer, then clamped (clamping after the
//     rounding gives what clamping before it gives: rounding is monotonic and the bounds are
//     integers), plus the zero point.
// No subnormal can occur (a normal multiplier times |acc| >= 1 is at least 2^-126); a product
// beyond float's range is beyond every bound and clamps to it, as the infinity would (bounds
// within (-2^30, 2^30), which a quantized type's always are). A multiplier that is not a positive
// normal float takes the float path. numerics_test.cpp checks it against requantize_float()
// exhaustively over |acc| <= 2^21 and on random and tie cases.
template <typename T>
__attribute__((noinline)) T requantize_integer_general(int32_t acc, float multiplier, int32_t zero_point,
                                                       int32_t out_min, int32_t out_max) {
  uint32_t bits;
  __builtin_memcpy(&bits, &multiplier, sizeof bits);
  const int32_t exponent_field = static_cast<int32_t>(bits >> 23);  // the sign bit makes it > 0xFF
  if (exponent_field == 0 || exponent_field >= 0xFF)
    return requantize_float_out_of_line<T>(acc, multiplier, zero_point, out_min, out_max);
  const bool negative = acc < 0;
  uint32_t a = negative ? 0u - static_cast<uint32_t>(acc) : static_cast<uint32_t>(acc);

  // 1. float(acc) = A * 2^s, A < 2^24.
  int32_t s = 0;
  if (a >= (uint32_t{1} << 24)) {
    s = 8 - detail::leading_zeros(a);  // bit length - 24
    a = detail::shift_round_half_even(a, s);
    if (a == (uint32_t{1} << 24)) a >>= 1, ++s;
  }

  // 2. P = A * M = high * 2^24 + low (high, low < 2^24), rounded to 24 significant bits.
  uint32_t high, low;
  detail::multiply_24x24(a, (bits & 0x7FFFFFu) | 0x800000u, high, low);
  uint32_t v = low;  // P itself when it has at most 24 bits (k = 0)
  int32_t k = 0;     // bits dropped: P's bit length - 24 = high's bit length
  if (high != 0) {
    k = 32 - detail::leading_zeros(high);
    v = (high << (24 - k)) | (low >> k);
    if (k > 0) {
      const uint32_t half = uint32_t{1} << (k - 1);
      const uint32_t rest = low & ((half << 1) - 1);
      if (rest > half || (rest == half && (v & 1))) ++v;  // may reach 2^24: still exact
    }
  }

  // 3. value = V * 2^(k + s + e), e = exponent_field - 150; rounded half to even to an integer.
  const int32_t fraction_bits = 150 - exponent_field - k - s;
  int32_t q;
  if (fraction_bits <= -7) {
    q = v == 0 ? 0 : INT32_MAX;  // 0, or at least 2^30: at or beyond every bound in (-2^30, 2^30)
  } else if (fraction_bits <= 0) {
    q = static_cast<int32_t>(v << -fraction_bits);  // an integer already, below 2^31
  } else if (fraction_bits >= 32) {
    q = 0;  // below 2^-7
  } else {
    q = static_cast<int32_t>(detail::shift_round_half_even(v, fraction_bits));
  }
  if (negative) q = -q;
  const int32_t lo = out_min - zero_point, hi = out_max - zero_point;
  return static_cast<T>(clamp_int(q, lo, hi) + zero_point);
}

// requantize_float() in integers only, bit for bit, for cores without an FPU (where float
// arithmetic is a library call per operation). The common case -- |acc| < 2^24, so float(acc) is
// exact, and a multiplier below 0.5, so the value has at least 25 fraction bits -- directly:
// with P = |acc| * M exact (M the multiplier's 24-bit significand; P = high * 2^24 + low) and
// F = the fraction bits of P * 2^e, the value's integer part is I = high >> (F - 24) and its
// fraction R = P mod 2^F. The product's own rounding to 24 bits (at bit k = bit length of P - 24,
// at least 15 bits below F while the value is below 2^9: k <= F - 15 in every case that is not
// clamped anyway) moves P by at most 2^(k-1) < 2^24, so it decides nothing unless R lies within
// 2^(k-1) of the half 2^(F-1): then the float is exactly I + 1/2 and rounds to even. Every other
// case goes to requantize_integer_general(). numerics_test.cpp checks both against
// requantize_float().
template <typename T>
inline T requantize_integer(int32_t acc, float multiplier, int32_t zero_point, int32_t out_min, int32_t out_max) {
  uint32_t bits;
  __builtin_memcpy(&bits, &multiplier, sizeof bits);
  const int32_t fraction_bits = 150 - static_cast<int32_t>(bits >> 23);  // < 0 with the sign bit set
  const bool negative = acc < 0;
  const uint32_t a = negative ? 0u - static_cast<uint32_t>(acc) : static_cast<uint32_t>(acc);
  // exponent field 0 (F = 150) and negative multipliers fall outside too.
  if (a >= (uint32_t{1} << 24) || fraction_bits < 25 || fraction_bits > 149)
    return requantize_integer_general<T>(acc, multiplier, zero_point, out_min, out_max);
  int32_t q = 0;  // F >= 49: P < 2^48 <= 2^(F-1), below one half
  if (fraction_bits <= 48) {
    uint32_t high, low;
    detail::multiply_24x24(a, (bits & 0x7FFFFFu) | 0x800000u, high, low);
    const int32_t d = fraction_bits - 24;  // 1 .. 24: the fraction bits within high
    const uint32_t integer = high >> d;
    const uint32_t fraction = high & ((uint32_t{1} << d) - 1);
    const uint32_t half = uint32_t{1} << (d - 1);
    q = static_cast<int32_t>(integer);
    if (fraction > half) {
      ++q;
    } else if (fraction + 1 >= half) {  // R within 2^24 of the half: the product's rounding counts
      const uint32_t h = uint32_t{1} << (31 - detail::leading_zeros(high));  // 2^(k-1), high != 0 here
      const bool tie = fraction == half ? low <= h : low >= (uint32_t{1} << 24) - h;
      if (tie) {
        q += q & 1;
      } else if (fraction == half) {
        ++q;  // above the half by more than the product's rounding
      }
    }
  }
  if (negative) q = -q;
  return static_cast<T>(clamp_int(q, out_min - zero_point, out_max - zero_point) + zero_point);
}

// The requantization the kernels use: in integers where float arithmetic would be a library
// call (no FPU: Cortex-M0+/M3 soft float, RV32 without F), else in float.
#if (defined(__arm__) && defined(__SOFTFP__)) || (defined(__riscv) && !defined(__riscv_flen))
#define TIGHTFIT_INTEGER_REQUANTIZE 1
#else
#define TIGHTFIT_INTEGER_REQUANTIZE 0
#endif

template <typename T>
inline T requantize(int32_t acc, float multiplier, int32_t zero_point, int32_t out_min, int32_t out_max) {
#if TIGHTFIT_INTEGER_REQUANTIZE
  return requantize_integer<T>(acc, multiplier, zero_point, out_min, out_max);
#else
  return requantize_float<T>(acc, multiplier, zero_point, out_min, out_max);
#endif
}

// ---------------------------------------------------------------------------
// TFLite's fixed-point requantization (--numerics tflite, docs/numerics.md), by a
// QuantizedMultiplier (params.hpp).

// gemmlowp's SaturatingRoundingDoublingHighMul (CMSIS-NN: arm_nn_doubling_high_mult): the high
// 32 bits of 2 * a * b, rounded half up; INT32_MIN * INT32_MIN saturates to INT32_MAX.
inline int32_t saturating_rounding_doubling_high_mul(int32_t a, int32_t b) {
  if (a == b && a == INT32_MIN) return INT32_MAX;
  const int64_t product = static_cast<int64_t>(a) * static_cast<int64_t>(b);
  // gemmlowp adds 2^30 (or 1 - 2^30 for a negative product) and divides by 2^31 truncating:
  // both are floor((product + 2^30) / 2^31).
  return static_cast<int32_t>((product + (int64_t{1} << 30)) >> 31);
}

// gemmlowp's RoundingDivideByPOT (CMSIS-NN: arm_nn_divide_by_power_of_two): x / 2^exponent
// rounded half away from zero, 0 <= exponent <= 31.
inline int32_t rounding_divide_by_pot(int32_t x, int32_t exponent) {
  const int32_t mask = static_cast<int32_t>((uint32_t{1} << exponent) - 1u);
  const int32_t remainder = x & mask;
  const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

// TFLite's MultiplyByQuantizedMultiplier (double rounding, TFLITE_SINGLE_ROUNDING off, as TFLite
// Micro builds it; CMSIS-NN's arm_nn_requantize without CMSIS_NN_USE_SINGLE_ROUNDING).
inline int32_t multiply_by_quantized_multiplier(int32_t x, QuantizedMultiplier m) {
  const int32_t left = m.shift > 0 ? m.shift : 0, right = m.shift > 0 ? 0 : -m.shift;
  const int32_t shifted = static_cast<int32_t>(static_cast<uint32_t>(x) << left);
  return rounding_divide_by_pot(saturating_rounding_doubling_high_mul(shifted, m.multiplier), right);
}

// The requantization of TFLite's integer conv, depthwise conv and fully connected kernels: the
// accumulator (bias included) times the fixed-point multiplier, plus the zero point, clamped.
template <typename T>
inline T requantize(int32_t acc, const QuantizedMultiplier& m, int32_t zero_point, int32_t out_min, int32_t out_max) {
  return static_cast<T>(clamp_int(multiply_by_quantized_multiplier(acc, m) + zero_point, out_min, out_max));
}

// gemmlowp's fixed-point functions that TFLite's int8 SOFTMAX, LOGISTIC and TANH are made of.
namespace detail {

// CMSIS-NN's arm_nn_mult_by_power_of_two: x * 2^exponent, saturated.
inline int32_t saturating_multiply_by_pot(int32_t x, int32_t exponent) {
  const int32_t threshold = (int32_t{1} << (31 - exponent)) - 1;
  if (x > threshold) return INT32_MAX;
  if (x < -threshold) return INT32_MIN;
  return static_cast<int32_t>(static_cast<uint32_t>(x) << exponent);
}

// gemmlowp's exp_on_negative_values for a Q(kIntegerBits).(31 - kIntegerBits) input, Q0.31 output
// (CMSIS-NN's arm_nn_exp_on_negative_values is the Q5.26 one): exp on [-1/4, 0) by a polynomial,
// then one constant factor exp(-2^k) per set bit k of the remainder (k < kIntegerBits).
template <int32_t kIntegerBits>
inline int32_t exp_on_negative_values(int32_t value) {
  static_assert(kIntegerBits >= 1 && kIntegerBits <= 5, "softmax's Q5.26 and the activations' Q4.27");
  constexpr int32_t kFractionalBits = 31 - kIntegerBits;
  constexpr int32_t kQuarter = int32_t{1} << (kFractionalBits - 2);
  const int32_t mod_minus_quarter = (value & (kQuarter - 1)) - kQuarter;
  const int32_t remainder = mod_minus_quarter - value;
  const int32_t x = mod_minus_quarter * (int32_t{1} << kIntegerBits) + (int32_t{1} << 28);
  const int32_t x2 = saturating_rounding_doubling_high_mul(x, x);
  const int32_t x4_over_4 = rounding_divide_by_pot(saturating_rounding_doubling_high_mul(x2, x2), 2);
  const int32_t x3 = saturating_rounding_doubling_high_mul(x2, x);
  const int32_t series =
      x + rounding_divide_by_pot(saturating_rounding_doubling_high_mul(x4_over_4 + x3, 715827883) + x2, 1);
  constexpr int32_t kExpMinusEighth = 1895147668;  // exp(-1/8) in Q0.31
  int32_t result = kExpMinusEighth + saturating_rounding_doubling_high_mul(kExpMinusEighth, series);
  // exp(-1/4), exp(-1/2), exp(-1), exp(-2), exp(-4), exp(-8), exp(-16) in Q0.31: exp(-2^(k - 2)).
  constexpr int32_t kFactors[7] = {1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242};
  for (int32_t k = 0; k < 7 && k - 2 < kIntegerBits; ++k)
    if (remainder & (int32_t{1} << (kFractionalBits - 2 + k)))
      result = saturating_rounding_doubling_high_mul(result, kFactors[k]);
  return value == 0 ? INT32_MAX : result;
}

// gemmlowp's Newton-Raphson reciprocal of half_denominator = (1 + x) / 2 in Q0.31: 1 / (1 + x)
// in Q2.29, three steps from 48/17 - 32/17 d.
inline int32_t newton_raphson_reciprocal_q2(int32_t half_denominator) {
  int32_t x = 1515870810 + saturating_rounding_doubling_high_mul(half_denominator, -1010580540);
  constexpr int32_t kOne = int32_t{1} << 29;
  for (int32_t step = 0; step < 3; ++step)
    x += saturating_multiply_by_pot(
        saturating_rounding_doubling_high_mul(x, kOne - saturating_rounding_doubling_high_mul(half_denominator, x)), 2);
  return x;
}

// gemmlowp's RoundingHalfSum(x, 1) in Q0.31 (1 is INT32_MAX there): (x + 1) / 2, rounded away from zero.
inline int32_t rounding_half_sum_with_one(int32_t value) {
  const int64_t sum = static_cast<int64_t>(value) + INT32_MAX;
  return static_cast<int32_t>((sum + (sum >= 0 ? 1 : -1)) / 2);
}

// gemmlowp's one_over_one_plus_x_for_x_in_0_1 (CMSIS-NN's arm_nn_one_over_one_plus_x_for_x_in_0_1):
// three Newton-Raphson steps from 48/17 - 32/17 d, in Q2.29, result in Q0.31.
inline int32_t one_over_one_plus_x_for_x_in_0_1(int32_t value) {
  return saturating_multiply_by_pot(newton_raphson_reciprocal_q2(rounding_half_sum_with_one(value)), 1);
}

// gemmlowp's one_minus_x_over_one_plus_x_for_x_in_0_1: (1 - x) / (1 + x) in Q0.31, as 2 / (1 + x)
// - 1 from the same reciprocal.
inline int32_t one_minus_x_over_one_plus_x_for_x_in_0_1(int32_t value) {
  const int32_t reciprocal = newton_raphson_reciprocal_q2(rounding_half_sum_with_one(value));
  return saturating_multiply_by_pot(reciprocal - (int32_t{1} << 29), 2);
}

// gemmlowp's logistic of a Q4.27 value, in Q0.31: 1 / (1 + exp(-|x|)) for x > 0, one minus it
// for x < 0 (one being INT32_MAX), exactly 1/2 at 0.
inline int32_t logistic_q4(int32_t x) {
  if (x == 0) return int32_t{1} << 30;
  const int32_t positive = one_over_one_plus_x_for_x_in_0_1(exp_on_negative_values<4>(x > 0 ? -x : x));
  return x > 0 ? positive : INT32_MAX - positive;
}

// gemmlowp's tanh of a Q4.27 value, in Q0.31: (1 - exp(-2|x|)) / (1 + exp(-2|x|)), the sign of x
// put back; exp of -2|x| is exp_on_negative_values of the same raw value read as Q5.26.
inline int32_t tanh_q4(int32_t x) {
  if (x == 0) return 0;
  const int32_t magnitude = one_minus_x_over_one_plus_x_for_x_in_0_1(exp_on_negative_values<5>(x < 0 ? x : -x));
  return x < 0 ? -magnitude : magnitude;
}

}  // namespace detail

namespace detail {

// x / scale (a division, not a multiplication by the reciprocal: ORT and TFLite both divide),
// clamped to T's range less the zero point: the value both quantizations round.
template <typename T>
inline float scaled_in_range(float x, float scale, int32_t zero_point) {
  const float lo = static_cast<float>(QuantLimits<T>::kMin - zero_point);
  const float hi = static_cast<float>(QuantLimits<T>::kMax - zero_point);
  const float value = x / scale;
  return value < lo ? lo : value > hi ? hi : value;
}

}  // namespace detail

// ORT's MlasQuantizeLinear (QuantizeLinear, and the last step of every lookup table that ORT
// builds): x / scale rounded half to even, plus the zero point, saturated.
template <typename T>
inline T quantize_linear(float x, float scale, int32_t zero_point) {
  const float value = detail::scaled_in_range<T>(x, scale, zero_point);
  return static_cast<T>(static_cast<int32_t>(round_half_even(value)) + zero_point);
}

// TFLite's QUANTIZE of a float (reference_ops::AffineQuantize; --numerics tflite): x / scale in
// float, rounded half away from zero (TfLiteRound, std::round), plus the zero point, saturated.
// Ties to even, then a tie moved away from zero: value - even is exact (|value| is small and
// `even` the integer nearest it).
template <typename T>
inline T quantize_tflite(float x, float scale, int32_t zero_point) {
  const float value = detail::scaled_in_range<T>(x, scale, zero_point);
  float rounded = round_half_even(value);
  const float tie = value - rounded;
  if (tie == 0.5f && value > 0.0f) rounded += 1.0f;
  if (tie == -0.5f && value < 0.0f) rounded -= 1.0f;
  return static_cast<T>(static_cast<int32_t>(rounded) + zero_point);
}

// ORT's DequantizeLinear: (x - zero_point) as an integer, times scale.
template <typename T>
inline float dequantize_linear(T x, float scale, int32_t zero_point) {
  return static_cast<float>(static_cast<int32_t>(x) - zero_point) * scale;
}

}  // namespace tightfit
