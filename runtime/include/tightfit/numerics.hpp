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
inline T requantize(int32_t acc, float multiplier, int32_t zero_point, int32_t out_min, int32_t out_max) {
  float value = static_cast<float>(acc) * multiplier;
  const float lo = static_cast<float>(out_min - zero_point);
  const float hi = static_cast<float>(out_max - zero_point);
  value = value < lo ? lo : value;
  value = value > hi ? hi : value;
  return static_cast<T>(static_cast<int32_t>(round_half_even(value)) + zero_point);
}

// ORT's MlasQuantizeLinear (QuantizeLinear, and the last step of every lookup
// table that ORT builds): x / scale (a division, not a multiplication by the
// reciprocal), rounded half to even, plus the zero point, saturated.
template <typename T>
inline T quantize_linear(float x, float scale, int32_t zero_point) {
  const float lo = static_cast<float>(QuantLimits<T>::kMin - zero_point);
  const float hi = static_cast<float>(QuantLimits<T>::kMax - zero_point);
  float value = x / scale;
  value = value < lo ? lo : value;
  value = value > hi ? hi : value;
  return static_cast<T>(static_cast<int32_t>(round_half_even(value)) + zero_point);
}

// ORT's DequantizeLinear: (x - zero_point) as an integer, times scale.
template <typename T>
inline float dequantize_linear(T x, float scale, int32_t zero_point) {
  return static_cast<float>(static_cast<int32_t>(x) - zero_point) * scale;
}

}  // namespace tightfit
