// tightfit runtime: the float32 logistic and hyperbolic tangent of float islands and recurrent
// layers, as ONNX Runtime computes them: no exp, no libm.
//
// ORT's Sigmoid and Tanh (and LSTM's gates) call MLAS's MlasComputeLogistic and MlasComputeTanh:
// Eigen's rational approximations, x clamped to a range, then p(x) / q(x) with p odd and q even
// in x, evaluated by Horner's rule. ORT's GRU evaluates the same tanh polynomial inline
// (rnn_helpers.cc, deepcpu::gru_*_gate_*) with its own clamps, and its sigmoid as
// 0.5 * (1 + tanh(x / 2)). Each step here is one IEEE single-precision operation (the runtime is
// built with -ffp-contract=off), so every core gives the same bits; on x86-64 with FMA3, MLAS's
// kernels fuse the Horner steps, so ORT's results differ from these by a few units in the last
// place (docs/numerics.md states the bound the tests pin).
#pragma once

#include <cstdint>

namespace tightfit {
namespace detail {

// Eigen's tanh numerator p(x) = x * (a1 + a3 x^2 + ... + a13 x^12) and denominator
// q(x) = b0 + b2 x^2 + ... + b6 x^6 (MLAS tanh.cpp and rnn_helpers.cc share them).
inline float tanh_rational(float x) {
  const float x2 = x * x;
  float p = x2 * -2.76076847742355e-16f + 2.00018790482477e-13f;
  p = p * x2 + -8.60467152213735e-11f;
  p = p * x2 + 5.12229709037114e-08f;
  p = p * x2 + 1.48572235717979e-05f;
  p = p * x2 + 6.37261928875436e-04f;
  p = p * x2 + 4.89352455891786e-03f;
  p = p * x;
  float q = x2 * 1.19825839466702e-06f + 1.18534705686654e-04f;
  q = q * x2 + 2.26843463243900e-03f;
  q = q * x2 + 4.89352518554385e-03f;
  return p / q;
}

// x clamped to [-bound, bound] in MLAS's two steps, so that a NaN passes through unchanged.
inline float clamp_symmetric(float x, float bound) {
  const float low = x < -bound ? -bound : x;
  return low > bound ? bound : low;
}

}  // namespace detail

// MlasComputeLogistic for one element: x clamped to [-18, 18], p(x) / q(x) + 1/2 (Eigen's
// logistic coefficients), clamped to [0, 1].
inline float logistic_float(float x) {
  const float v = detail::clamp_symmetric(x, 18.0f);
  const float v2 = v * v;
  float p = v2 * 4.37031012579801e-11f + 1.15627324459942e-07f;
  p = p * v2 + 6.08574864600143e-05f;
  p = p * v2 + 8.51377133304701e-03f;
  p = p * v2 + 2.48287947061529e-01f;
  p = p * v;
  float q = v2 * 6.10247389755681e-13f + 5.76102136993427e-09f;
  q = q * v2 + 6.29106785017040e-06f;
  q = q * v2 + 1.70198817374094e-03f;
  q = q * v2 + 1.16817656904453e-01f;
  q = q * v2 + 9.93151921023180e-01f;
  const float y = p / q + 0.5f;
  return y < 0.0f ? 0.0f : (y > 1.0f ? 1.0f : y);
}

// MlasComputeTanh for one element: x clamped to [-9, 9], p(x) / q(x).
inline float tanh_float(float x) { return detail::tanh_rational(detail::clamp_symmetric(x, 9.0f)); }

// ORT GRU's inline tanh (rnn_helpers.cc, deepcpu::gru_output_gate_tanh): x clamped to
// [-10, 10], p(x) / q(x).
inline float gru_tanh_float(float x) { return detail::tanh_rational(detail::clamp_symmetric(x, 10.0f)); }

// ORT GRU's inline sigmoid (deepcpu::gru_reset_gate_sigmoid) without its last factor: x clamped
// to [-20, 20], 1 + tanh(x / 2) by the same rational function; ORT multiplies its operand by 0.5
// and then by this (gru_float does too).
inline float gru_half_sigmoid_sum(float x) {
  return 1.0f + detail::tanh_rational(0.5f * detail::clamp_symmetric(x, 20.0f));
}

// ONNX Sigmoid and Tanh on float32 (ORT's activations.cc: MlasComputeLogistic, MlasComputeTanh).
inline void sigmoid_float(int32_t count, const float* in, float* out) {
  for (int32_t i = 0; i < count; ++i) out[i] = logistic_float(in[i]);
}
inline void tanh_float(int32_t count, const float* in, float* out) {
  for (int32_t i = 0; i < count; ++i) out[i] = tanh_float(in[i]);
}

}  // namespace tightfit
