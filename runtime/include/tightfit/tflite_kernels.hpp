// tightfit runtime: the kernels whose rules are TensorFlow Lite's own (--numerics tflite,
// docs/numerics.md), bit for bit with TFLite Micro @ 90b983c2 and CMSIS-NN @ 4ab83cc3.
//
// The convolutions and fully connected layers need no kernel of their own: conv() and
// fully_connected() take an array of QuantizedMultiplier and requantize with
// multiply_by_quantized_multiplier() (numerics.hpp). Here are the operators whose arithmetic
// differs beyond the requantization: ADD (inputs moved left by 20 bits, scaled one by one),
// AVERAGE_POOL_2D (an integer mean rounded half away from zero) and SOFTMAX (CMSIS-NN's
// arm_softmax_s8: gemmlowp's fixed-point exp and reciprocal). Integer arithmetic only: the same
// bits on every core. Included by kernels.hpp.
#pragma once

#include <cstdint>

#include "tightfit/numerics.hpp"
#include "tightfit/params.hpp"

namespace tightfit {

namespace portable {

// ADD on int8 (TFLite Micro's reference AddElementwise / CMSIS-NN's arm_elementwise_add_s8):
// each input plus its offset, times 2^left_shift, times its multiplier; the sum times the output
// multiplier, plus the output offset, clamped.
template <typename T>
inline void add_tflite(const AddTfliteParams& p, const T* a, const T* b, T* out) {
  const int32_t scale = int32_t{1} << p.left_shift;
  detail::for_each_broadcast(p.shape, [&](int32_t o, int32_t ia, int32_t ib) {
    const int32_t sa = multiply_by_quantized_multiplier((p.a_offset + a[ia]) * scale, p.a_multiplier);
    const int32_t sb = multiply_by_quantized_multiplier((p.b_offset + b[ib]) * scale, p.b_multiplier);
    const int32_t y = multiply_by_quantized_multiplier(sa + sb, p.output_multiplier) + p.output_offset;
    out[o] = static_cast<T>(clamp_int(y, p.output_min, p.output_max));
  });
}

}  // namespace portable

// TFLite's ADD: Helium's (4 elements a vector) where the innermost axis is contiguous or
// broadcast, else the portable loop.
template <typename T>
inline void add_tflite(const AddTfliteParams& p, const T* a, const T* b, T* out) {
#if TIGHTFIT_USE_MVE_KERNELS
  if (mve::binary_vectorizable(p.shape)) {
    mve::add_tflite(p, a, b, out);
    return;
  }
#endif
  portable::add_tflite(p, a, b, out);
}

// Output over operand 0 (a) or 1 (b): as add().
constexpr int32_t add_tflite_distance(const AddTfliteParams& p, int operand) {
  return detail::binary_distance(p.shape, operand);
}

// AVERAGE_POOL_2D on int8 (TFLite Micro's reference AveragePool / CMSIS-NN's arm_avgpool_s8):
// the sum of the raw values of the taps inside the image, divided by their count rounded half
// away from zero, clamped. Input and output share one quantization (TFLite requires it; the
// compiler checks it); padding never counts. Loops as portable::average_pool(), so its distance.
template <typename T>
inline void average_pool_tflite(const AveragePoolParams& p, const T* in, T* out) {
  for (int32_t b = 0; b < p.batch; ++b) {
    for (int32_t oy = 0; oy < p.out_h; ++oy) {
      for (int32_t ox = 0; ox < p.out_w; ++ox) {
        const PoolWindow w = average_pool_window_of(p, oy, ox);
        const int32_t count = (w.y_end - w.y_start) * (w.x_end - w.x_start);
        T* y = out + ((b * p.out_h + oy) * p.out_w + ox) * p.channels;
        for (int32_t c = 0; c < p.channels; ++c) {
          int32_t sum = 0;
          for (int32_t iy = w.y_start; iy < w.y_end; ++iy)
            for (int32_t ix = w.x_start; ix < w.x_end; ++ix) sum += in[((b * p.in_h + iy) * p.in_w + ix) * p.channels + c];
          const int32_t mean = sum > 0 ? (sum + count / 2) / count : (sum - count / 2) / count;
          y[c] = static_cast<T>(clamp_int(mean, p.output_min, p.output_max));
        }
      }
    }
  }
}

namespace detail {

// CMSIS-NN's arm_nn_mult_by_power_of_two: x * 2^exponent, saturated.
inline int32_t saturating_multiply_by_pot(int32_t x, int32_t exponent) {
  const int32_t threshold = (int32_t{1} << (31 - exponent)) - 1;
  if (x > threshold) return INT32_MAX;
  if (x < -threshold) return INT32_MIN;
  return static_cast<int32_t>(static_cast<uint32_t>(x) << exponent);
}

// gemmlowp's exp_on_negative_values for Q5.26 input, Q0.31 output (CMSIS-NN's
// arm_nn_exp_on_negative_values): exp on [-1/4, 0) by a polynomial, then one constant factor
// exp(-2^k) per set bit k of the remainder.
inline int32_t exp_on_negative_values(int32_t value) {
  constexpr int32_t kQuarter = int32_t{1} << 24;
  const int32_t mod_minus_quarter = (value & (kQuarter - 1)) - kQuarter;
  const int32_t remainder = mod_minus_quarter - value;
  const int32_t x = mod_minus_quarter * 32 + (int32_t{1} << 28);
  const int32_t x2 = saturating_rounding_doubling_high_mul(x, x);
  const int32_t x4_over_4 = rounding_divide_by_pot(saturating_rounding_doubling_high_mul(x2, x2), 2);
  const int32_t x3 = saturating_rounding_doubling_high_mul(x2, x);
  const int32_t series =
      x + rounding_divide_by_pot(saturating_rounding_doubling_high_mul(x4_over_4 + x3, 715827883) + x2, 1);
  constexpr int32_t kExpMinusEighth = 1895147668;  // exp(-1/8) in Q0.31
  int32_t result = kExpMinusEighth + saturating_rounding_doubling_high_mul(kExpMinusEighth, series);
  // exp(-1/4), exp(-1/2), exp(-1), exp(-2), exp(-4), exp(-8), exp(-16) in Q0.31.
  constexpr int32_t kFactors[7] = {1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242};
  for (int32_t k = 0; k < 7; ++k)
    if (remainder & (int32_t{1} << (24 + k))) result = saturating_rounding_doubling_high_mul(result, kFactors[k]);
  return value == 0 ? INT32_MAX : result;
}

// gemmlowp's one_over_one_plus_x_for_x_in_0_1 (CMSIS-NN's arm_nn_one_over_one_plus_x_for_x_in_0_1):
// three Newton-Raphson steps from 48/17 - 32/17 d, in Q2.29, result in Q0.31.
inline int32_t one_over_one_plus_x_for_x_in_0_1(int32_t value) {
  const int64_t sum = static_cast<int64_t>(value) + INT32_MAX;
  const int32_t half_denominator = static_cast<int32_t>((sum + (sum >= 0 ? 1 : -1)) / 2);
  int32_t x = 1515870810 + saturating_rounding_doubling_high_mul(half_denominator, -1010580540);
  constexpr int32_t kOne = int32_t{1} << 29;
  for (int32_t step = 0; step < 3; ++step)
    x += saturating_multiply_by_pot(
        saturating_rounding_doubling_high_mul(x, kOne - saturating_rounding_doubling_high_mul(half_denominator, x)), 2);
  return saturating_multiply_by_pot(x, 1);
}

}  // namespace detail

// SOFTMAX on int8 as TFLite Micro + CMSIS-NN runs it (arm_softmax_s8; TFLite's reference kernel
// gives the same bytes on its models): per row, each difference from the maximum at or above
// diff_min goes through exp in Q5.26 -> Q0.31; the sum of the exps over 2^12; the reciprocal of
// the sum normalised; each output exp * reciprocal / 2^bits_over_unit - 128, clamped; below
// diff_min, -128.
inline void softmax_tflite(const SoftmaxTfliteParams& p, const int8_t* in, int8_t* out) {
  constexpr int32_t kAccumulatorBits = 12;
  const int32_t mask = int32_t{1} << p.input_left_shift;
  const int8_t* x = in;
  int8_t* y = out;
  for (int32_t r = 0; r < p.rows; ++r, x += p.row_len, y += p.row_len) {
    int32_t x_max = x[0];
    for (int32_t i = 1; i < p.row_len; ++i) x_max = x[i] > x_max ? x[i] : x_max;
    int32_t sum = 0;
    for (int32_t i = 0; i < p.row_len; ++i) {
      const int32_t diff = x[i] - x_max;
      if (diff >= p.diff_min)
        sum += rounding_divide_by_pot(
            detail::exp_on_negative_values(saturating_rounding_doubling_high_mul(diff * mask, p.input_multiplier)),
            kAccumulatorBits);
    }
    // sum >= exp(0) >> 12 > 0: the maximum's own term.
    const int32_t headroom = detail::leading_zeros(static_cast<uint32_t>(sum));
    const int32_t shifted_scale = detail::one_over_one_plus_x_for_x_in_0_1(
        static_cast<int32_t>((static_cast<uint32_t>(sum) << headroom) - 0x80000000u));
    const int32_t bits_over_unit = kAccumulatorBits - headroom + 23;
    for (int32_t i = 0; i < p.row_len; ++i) {
      const int32_t diff = x[i] - x_max;
      int32_t q = -128;
      if (diff >= p.diff_min) {
        const int32_t e =
            detail::exp_on_negative_values(saturating_rounding_doubling_high_mul(diff * mask, p.input_multiplier));
        q = clamp_int(rounding_divide_by_pot(saturating_rounding_doubling_high_mul(shifted_scale, e), bits_over_unit) - 128,
                      -128, 127);
      }
      y[i] = static_cast<int8_t>(q);
    }
  }
}

// Output over the input: 0, as softmax().
constexpr int32_t softmax_tflite_distance() { return 0; }

}  // namespace tightfit
