// tightfit runtime: exp, log and erf of a float32, without libm, as ONNX Runtime's CPU kernels compute
// them (docs/numerics.md, "Float math"). Each function is the scalar form of the vector code ORT runs:
//   exp_f32      MLAS's MlasComputeExpVector (ORT's float Exp kernel calls MlasComputeExp)
//   softmax_exp  MLAS's MlasComputeSumExpVector (the exp of MlasComputeSoftmax, after x - max)
//   log_f32      Eigen 3.4's plog_float (ORT's float Log kernel is Eigen's array().log())
//   erf_f32      MLAS's MlasErfKernel (ORT's float Erf kernel calls MlasComputeErf)
// Every step is one IEEE single-precision operation rounded to nearest, written out in the order the
// vector code takes, and the runtime is built with -ffp-contract=off: the same bits on every core,
// with an FPU or in soft float (Cortex-M0+, RV32IMC). Where ORT's x86 build fuses a multiply-add
// (MLAS's AVX2 kernels) or calls libm (Eigen's scalar tail) the results can differ by the bound that
// docs/numerics.md states and tests/codegen pins.
#pragma once

#include <cstdint>

namespace tightfit {
namespace float_math {

inline std::uint32_t bits(float x) {
  std::uint32_t u;
  __builtin_memcpy(&u, &x, sizeof u);
  return u;
}

inline float from_bits(std::uint32_t u) {
  float x;
  __builtin_memcpy(&x, &u, sizeof x);
  return x;
}

// MLAS's constants (MlasExpConstants): the rounding bias 1.5 * 2^23 makes x * log2(e) + bias carry
// round(x * log2(e)) in its low bits; ln 2 is split in two so that m * ln 2 is subtracted exactly.
constexpr float kExpRoundingBias = 12582912.0f;
constexpr float kLog2Reciprocal = 1.44269504088896341f;
constexpr float kLog2High = -6.93145752e-1f;
constexpr float kLog2Low = -1.42860677e-6f;
constexpr float kExpPoly0 = 0x1.694000p-10f, kExpPoly1 = 0x1.125edcp-7f, kExpPoly2 = 0x1.555b5ap-5f,
                kExpPoly3 = 0x1.555450p-3f, kExpPoly4 = 0x1.fffff6p-2f;

// m (an integer held in the low bits of the biased float) shifted into a float's exponent field.
inline std::int32_t exponent_field(float biased) { return static_cast<std::int32_t>(bits(biased) << 23); }

}  // namespace float_math

// exp(x) as MlasComputeExpVector: clamp to [-103.972084, 88.7762627], x = m ln 2 + r, exp(r) by a
// degree-6 polynomial, then 2^m in two factors (one normal, one that carries the rest) so that
// results down to the subnormals are reached. NaN: MLAS's clamp (SSE's MINPS/MAXPS) returns the
// bound, here 88.77 first: exp(NaN) gives exp's largest result, as on x86.
inline float exp_f32(float x) {
  using namespace float_math;
  x = x < 88.7762626647950f ? x : 88.7762626647950f;
  x = x > -103.9720840454f ? x : -103.9720840454f;
  const float biased = x * kLog2Reciprocal + kExpRoundingBias;
  const float m = biased - kExpRoundingBias;
  x = m * kLog2High + x;
  x = m * kLog2Low + x;
  // 2^m = 2^(m - n) * 2^n with n = m clamped to [-126, 127]: both are normal floats.
  constexpr std::int32_t kMinimumExponent = -126 * (1 << 23), kMaximumExponent = 127 * (1 << 23);
  std::int32_t overflow = exponent_field(biased);
  std::int32_t normal = overflow < kMaximumExponent ? overflow : kMaximumExponent;
  normal = normal > kMinimumExponent ? normal : kMinimumExponent;
  overflow = overflow - normal + kMaximumExponent;
  normal = normal + kMaximumExponent;
  const float two_overflow = from_bits(static_cast<std::uint32_t>(overflow));
  float p = kExpPoly0;
  p = p * x + kExpPoly1;
  p = p * x + kExpPoly2;
  p = p * x + kExpPoly3;
  p = p * x + kExpPoly4;
  p = p * x + 1.0f;
  // The polynomial's last term (1) is merged into the multiply-add by 2^(m - n), as MLAS does.
  x = x * two_overflow;
  p = p * x + two_overflow;
  return p * from_bits(static_cast<std::uint32_t>(normal));
}

// exp(x + negative_maximum) as MlasComputeSumExpVector, the exp of MLAS's Softmax: the argument is
// at most 0, so only the lower clamp (-88.3762627) and one scale factor 2^m are needed, and the
// polynomial ends in two multiply-adds with 1 (MLAS's form: p * r + 1, then * r + 1).
inline float softmax_exp(float x, float negative_maximum) {
  using namespace float_math;
  x = x + negative_maximum;
  x = -88.3762626647949f > x ? -88.3762626647949f : x;  // MAXPS(bound, x): a NaN x gives x
  const float biased = x * kLog2Reciprocal + kExpRoundingBias;
  const float m = biased - kExpRoundingBias;
  x = m * kLog2High + x;
  x = m * kLog2Low + x;
  const std::int32_t normal = exponent_field(biased) + 127 * (1 << 23);
  float p = kExpPoly0;
  p = p * x + kExpPoly1;
  p = p * x + kExpPoly2;
  p = p * x + kExpPoly3;
  p = p * x + kExpPoly4;
  p = p * x + 1.0f;
  p = p * x + 1.0f;
  return p * from_bits(static_cast<std::uint32_t>(normal));
}

// log(x) as Eigen 3.4's plog_float (Cephes' logf): x = 2^e * f with f in [sqrt(1/2), sqrt(2)),
// log(f) = z - z^2/2 + z^3 P(z) with z = f - 1 (P of degree 8, in three parts as Eigen evaluates
// it), plus e ln 2. Inputs below the smallest normal float are first raised to it (as Eigen does:
// log of a subnormal is log(2^-126)); log(0) = -inf, log(+inf) = +inf, a negative input or NaN
// gives the all-ones NaN Eigen's mask produces (0xffffffff).
inline float log_f32(float x) {
  using namespace float_math;
  const std::uint32_t u = bits(x);
  if ((u & 0x7fffffffu) == 0) return from_bits(0xff800000u);  // +-0: -inf (before the NaN test: -0 is not < 0)
  if (!(x >= 0.0f)) return from_bits(0xffffffffu);            // negative or NaN
  if (u == 0x7f800000u) return x;                             // +inf
  // frexp: f in [0.5, 1), e the exponent that goes with it; a subnormal is first scaled by 2^25.
  const bool subnormal = u < 0x00800000u;
  const std::uint32_t n = subnormal ? bits(x * 33554432.0f) : u;
  float e = static_cast<float>(static_cast<std::int32_t>(n >> 23) - (subnormal ? 151 : 126));
  float f = from_bits((n & 0x807fffffu) | 0x3f000000u);
  // Shift [0.5, 1) to [sqrt(1/2), sqrt(2)) and by -1: f < sqrt(1/2) becomes 2f - 1 with e - 1.
  const bool small = f < 0.707106781186547524f;
  const float tmp = small ? f : 0.0f;
  f = f - 1.0f;
  e = e - (small ? 1.0f : 0.0f);
  f = f + tmp;
  const float f2 = f * f;
  const float f3 = f2 * f;
  float y = 7.0376836292E-2f * f + -1.1514610310E-1f;
  float y1 = -1.2420140846E-1f * f + 1.4249322787E-1f;
  float y2 = 2.0000714765E-1f * f + -2.4999993993E-1f;
  y = y * f + 1.1676998740E-1f;
  y1 = y1 * f + -1.6668057665E-1f;
  y2 = y2 * f + 3.3333331174E-1f;
  y = y * f3 + y1;
  y = y * f3 + y2;
  y = y * f3;
  y = -0.5f * f2 + y;
  f = f + y;
  return e * 0.693147182f + f;  // static_cast<float>(EIGEN_LN2)
}

// erf(x) as MlasErfKernel: for |x| <= 0.921875, x + x P(x^2) (P of degree 5); above, 1 - exp(-Q(|x|))
// with |x| clamped to 3.725 (Q of degree 7, its exp by MLAS's own degree-6 polynomial and 2^m),
// the sign of x given back. Odd: erf(-x) = -erf(x), erf(+-0) = +-0.
inline float erf_f32(float x) {
  using namespace float_math;
  const std::uint32_t sign = bits(x) & 0x80000000u;
  float a = from_bits(bits(x) & 0x7fffffffu);
  if (!(a > 0.921875f)) {  // also a NaN: it goes through the polynomial and stays NaN
    const float s = a * a;
    float r = -5.99104969e-4f;
    r = r * s + 4.99339588e-3f;
    r = r * s + -2.67667342e-2f;
    r = r * s + 1.12818025e-1f;
    r = r * s + -3.76124859e-1f;
    r = r * s + 1.28379151e-1f;
    r = r * a + a;
    return from_bits(bits(r) | sign);
  }
  a = a < 3.725f ? a : 3.725f;
  float q = 1.72948930e-5f;
  q = q * a + -3.83208680e-4f;
  q = q * a + 3.88393435e-3f;
  q = q * a + -2.42545605e-2f;
  q = q * a + 1.06777847e-1f;
  q = q * a + 6.34846687e-1f;
  q = q * a + 1.28717512e-1f;
  q = q * a + a;
  // exp(-q): -q lies in [-15.8, -1.6] here, far inside MLAS's clamp at -88.38 (none is needed);
  // m = round(-q log2 e).
  const float t = -q;
  const float m = (t * kLog2Reciprocal + kExpRoundingBias) - kExpRoundingBias;
  float f = m * kLog2High + t;
  f = m * kLog2Low + f;
  float y = 1.38319808e-3f;
  y = y * f + 8.37550033e-3f;
  y = y * f + 4.16689515e-2f;
  y = y * f + 1.66664466e-1f;
  y = y * f + 4.99999851e-1f;
  y = y * f + 1.0f;
  y = y * f + 1.0f;
  // 2^m with m in [-23, -2]: a normal power of two, so the product is y * 2^m rounded once.
  y = y * from_bits(static_cast<std::uint32_t>(static_cast<std::int32_t>(m) + 127) << 23);
  return from_bits(bits(1.0f - y) | sign);
}

}  // namespace tightfit
