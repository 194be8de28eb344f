// tightfit runtime: the kernels whose rules are TensorFlow Lite's own (--numerics tflite,
// docs/numerics.md), bit for bit with TFLite Micro @ 90b983c2 and CMSIS-NN @ 4ab83cc3.
//
// The convolutions and fully connected layers need no kernel of their own: conv() and
// fully_connected() take an array of QuantizedMultiplier and requantize with
// multiply_by_quantized_multiplier() (numerics.hpp). Here are the operators whose arithmetic
// differs beyond the requantization: ADD (inputs moved left by 20 bits, scaled one by one),
// AVERAGE_POOL_2D (an integer mean rounded half away from zero), MEAN (1/count in the multiplier)
// and SOFTMAX (CMSIS-NN's arm_softmax_s8: gemmlowp's fixed-point exp and reciprocal). Integer
// arithmetic only: the same bits on every core. Included by kernels.hpp. LOGISTIC, TANH,
// HARD_SWISH and int8 QUANTIZE are tables built on the host (host.hpp) for the lookup kernel.
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

// MUL on int8 (TFLite Micro's reference MulElementwise and BroadcastMul4DSlow / CMSIS-NN's
// arm_elementwise_mul_s8): the product of the inputs plus their offsets, times the output
// multiplier (MultiplyByQuantizedMultiplier), plus the output offset, clamped.
template <typename T>
inline void mul_tflite(const MulTfliteParams& p, const T* a, const T* b, T* out) {
  detail::for_each_broadcast(p.shape, [&](int32_t o, int32_t ia, int32_t ib) {
    const int32_t product = (p.a_offset + a[ia]) * (p.b_offset + b[ib]);
    const int32_t y = multiply_by_quantized_multiplier(product, p.output_multiplier) + p.output_offset;
    out[o] = static_cast<T>(clamp_int(y, p.output_min, p.output_max));
  });
}

// Output over operand 0 (a) or 1 (b): as mul().
constexpr int32_t mul_tflite_distance(const MulTfliteParams& p, int operand) {
  return detail::binary_distance(p.shape, operand);
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
            for (int32_t ix = w.x_start; ix < w.x_end; ++ix)
              sum += in[((b * p.in_h + iy) * p.in_w + ix) * p.channels + c];
          const int32_t mean = sum > 0 ? (sum + count / 2) / count : (sum - count / 2) / count;
          y[c] = static_cast<T>(clamp_int(mean, p.output_min, p.output_max));
        }
      }
    }
  }
}

// MEAN on int8 (TFLite Micro's reference QuantizedMeanOrSum, which it runs for every int8 MEAN):
// per output element the sum of the reduced values minus count times the input zero point, times
// the multiplier (MultiplyByQuantizedMultiplier), plus the output zero point, clamped. Not
// AVERAGE_POOL_2D's rounding: the two differ by 1 where the mean is near half an integer. Loops as
// reduce_mean().
template <typename T>
inline void reduce_mean_tflite(const ReduceMeanTfliteParams& p, const T* in, T* out) {
  const int32_t bias = -p.input_zero_point * p.count;
  detail::reduce_in_index_order(p, in, detail::zero_sum<T>, detail::add_to_sum<T>, [&](int32_t o, int32_t sum) {
    const int32_t y = multiply_by_quantized_multiplier(sum + bias, p.multiplier) + p.output_zero_point;
    out[o] = static_cast<T>(clamp_int(y, p.output_min, p.output_max));
  });
}

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
            detail::exp_on_negative_values<5>(saturating_rounding_doubling_high_mul(diff * mask, p.input_multiplier)),
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
            detail::exp_on_negative_values<5>(saturating_rounding_doubling_high_mul(diff * mask, p.input_multiplier));
        q = clamp_int(
            rounding_divide_by_pot(saturating_rounding_doubling_high_mul(shifted_scale, e), bits_over_unit) - 128, -128,
            127);
      }
      y[i] = static_cast<int8_t>(q);
    }
  }
}

// Output over the input: 0, as softmax().
constexpr int32_t softmax_tflite_distance() { return 0; }

}  // namespace tightfit
