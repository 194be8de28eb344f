// tightfit runtime: host-side helpers that compute the constants generated
// code passes to the kernels (multipliers, lookup tables, index maps, packed
// weights), each mirroring the ONNX Runtime routine named beside it so that
// the integer kernels reproduce ORT's outputs bit for bit.
//
// For the compiler (and tests) on the host: uses <cmath> and double precision.
// Build with -ffp-contract=off like the kernels (tightfit_runtime exports it).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "tightfit/numerics.hpp"
#include "tightfit/params.hpp"

namespace tightfit {

// QLinearConv / QLinearMatMul output scale, per output channel:
// ORT computes X_scale * W_scale[i] / Y_scale, left to right, in float.
inline float conv_multiplier(float x_scale, float w_scale, float y_scale) { return x_scale * w_scale / y_scale; }

// QLinearGlobalAveragePool (MLAS CheckQLinearGlobalAveragePoolScaleAndSize):
// ScaleInput / (ScaleOutput * (float)ImageSize).
inline float global_average_pool_multiplier(float x_scale, float y_scale, int32_t image_size) {
  return x_scale / (y_scale * static_cast<float>(image_size));
}

// ---------------------------------------------------------------------------
// TFLite's parameters (--numerics tflite), computed here on the host as TensorFlow Lite computes
// them in its kernels' Prepare (tensorflow/lite/kernels/internal/quantization_util.cc, TFLite
// Micro's conv, depthwise_conv, fully_connected, add and softmax kernels): in double, from the
// float scales, with libm's frexp and round (half away from zero).

// QuantizeMultiplier: frexp's significand in [0.5, 1) rounded to Q31; a significand that rounds
// to 2^31 is halved with the exponent raised; below 2^-31 the multiplier is flushed to 0.
inline QuantizedMultiplier quantize_multiplier(double real) {
  if (real == 0.0) return {0, 0};
  int exponent = 0;
  const double significand = std::frexp(real, &exponent);
  int64_t q = static_cast<int64_t>(std::round(significand * static_cast<double>(int64_t{1} << 31)));
  if (q == (int64_t{1} << 31)) q /= 2, ++exponent;
  if (exponent < -31) q = 0, exponent = 0;
  return {static_cast<int32_t>(q), exponent};
}

// CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED, per output channel (PopulateConvolution-
// QuantizationParams, GetQuantizedConvolutionMultipler): double(x_scale) * double(w_scale) /
// double(y_scale).
inline QuantizedMultiplier tflite_conv_multiplier(float x_scale, float w_scale, float y_scale) {
  return quantize_multiplier(static_cast<double>(x_scale) * static_cast<double>(w_scale) /
                             static_cast<double>(y_scale));
}

// ADD on int8 (TFLite Micro's CalculateOpDataAdd): both inputs moved left by 20 bits, each scaled
// by its scale over twice the larger input scale, summed, then scaled to the output.
inline AddTfliteParams tflite_add_params(const BinaryShape& shape, float a_scale, int32_t a_zero_point, float b_scale,
                                         int32_t b_zero_point, float y_scale, int32_t y_zero_point, int32_t output_min,
                                         int32_t output_max) {
  constexpr int32_t kLeftShift = 20;
  const double twice_max = 2.0 * static_cast<double>(a_scale > b_scale ? a_scale : b_scale);
  AddTfliteParams p{};
  p.shape = shape;
  p.a_offset = -a_zero_point;
  p.b_offset = -b_zero_point;
  p.output_offset = y_zero_point;
  p.left_shift = kLeftShift;
  p.a_multiplier = quantize_multiplier(static_cast<double>(a_scale) / twice_max);
  p.b_multiplier = quantize_multiplier(static_cast<double>(b_scale) / twice_max);
  p.output_multiplier =
      quantize_multiplier(twice_max / (static_cast<double>(1 << kLeftShift) * static_cast<double>(y_scale)));
  p.output_min = output_min;
  p.output_max = output_max;
  return p;
}

// MUL on int8 (TFLite Micro's CalculateOpDataMul): one multiplier,
// QuantizeMultiplier(double(a_scale) * double(b_scale) / double(y_scale)).
inline MulTfliteParams tflite_mul_params(const BinaryShape& shape, float a_scale, int32_t a_zero_point, float b_scale,
                                         int32_t b_zero_point, float y_scale, int32_t y_zero_point, int32_t output_min,
                                         int32_t output_max) {
  MulTfliteParams p{};
  p.shape = shape;
  p.a_offset = -a_zero_point;
  p.b_offset = -b_zero_point;
  p.output_offset = y_zero_point;
  p.output_multiplier =
      quantize_multiplier(static_cast<double>(a_scale) * static_cast<double>(b_scale) / static_cast<double>(y_scale));
  p.output_min = output_min;
  p.output_max = output_max;
  return p;
}

// MEAN on int8 (TFLite Micro's PrepareMeanOrSum, then QuantizedMeanOrSum's readaptation):
// QuantizeMultiplier(double(x_scale) / double(y_scale)), then 1/count folded in: the multiplier
// moved left by floor(log2(count)) (at most 32, and at most 31 + its shift), divided by the count
// in integers, truncating, and the shift lowered as much.
inline QuantizedMultiplier tflite_mean_multiplier(float x_scale, float y_scale, int64_t count) {
  QuantizedMultiplier m = quantize_multiplier(static_cast<double>(x_scale) / static_cast<double>(y_scale));
  int32_t shift = 0;
  while ((count >> (shift + 1)) != 0) ++shift;
  if (shift > 32) shift = 32;
  if (shift > 31 + m.shift) shift = 31 + m.shift;
  m.multiplier = static_cast<int32_t>((static_cast<int64_t>(m.multiplier) << shift) / count);
  m.shift -= shift;
  return m;
}

// SOFTMAX on int8 with beta 1 (TFLite Micro's CalculateSoftmaxParams, PreprocessSoftmaxScaling,
// CalculateInputRadius): the input scale as a Q5.26 multiplier capped at 2^31 - 1, and the least
// difference from the row's maximum whose exponential is not 0.
inline SoftmaxTfliteParams tflite_softmax_params(int32_t rows, int32_t row_len, float x_scale) {
  constexpr int kScaledDiffIntegerBits = 5;
  const double real = std::fmin(static_cast<double>(x_scale) * static_cast<double>(1 << (31 - kScaledDiffIntegerBits)),
                                static_cast<double>((int64_t{1} << 31) - 1));
  const QuantizedMultiplier m = quantize_multiplier(real);
  const double radius = 1.0 * ((1 << kScaledDiffIntegerBits) - 1) *
                        static_cast<double>(int64_t{1} << (31 - kScaledDiffIntegerBits)) /
                        static_cast<double>(int64_t{1} << m.shift);
  return {rows, row_len, m.multiplier, m.shift, -static_cast<int32_t>(std::floor(radius))};
}

// Which MLAS QLinearAdd path ORT's broadcaster takes (see params.hpp).  Shapes
// in ONNX order, right-aligned (shorter shapes get leading 1s); rank <= 8.
inline BroadcastForm binary_broadcast_form(const int64_t* a_shape, int a_rank, const int64_t* b_shape, int b_rank) {
  const int rank = a_rank > b_rank ? a_rank : b_rank;
  for (int d = rank - 1; d >= 0; --d) {
    const int da = d - (rank - a_rank);
    const int db = d - (rank - b_rank);
    // cppcheck-suppress knownConditionTrueFalse ; cppcheck 2.10 false positive: da < 0 when a_rank < b_rank
    const int64_t a_dim = da >= 0 ? a_shape[da] : 1;
    const int64_t b_dim = db >= 0 ? b_shape[db] : 1;
    if (a_dim <= 1 && b_dim <= 1) continue;  // ORT merges dims where both are 1
    if (a_dim == 1) return BroadcastForm::kScalarA;
    if (b_dim == 1) return BroadcastForm::kScalarB;
    return BroadcastForm::kElementwise;
  }
  return BroadcastForm::kScalarA;  // both single elements: ORT's input-0-scalar path
}

// QLinearAdd constants (MlasQLinearAddKernelAvx2Helper): the ratios
// ScaleA / ScaleC and ScaleB / ScaleC, and the fixed part
// (float)ZeroPointC - (ScaleRatio_AC * ZeroPointA + ScaleRatio_BC * ZeroPointB),
// which ORT's build evaluates with one FMA: ZeroPointC - fma(ratio_1, zp_1,
// ratio_2 * zp_2), operand 1 being MLAS's first input: A, or B when ORT swaps
// the operands (form kScalarA).  `form` comes from binary_broadcast_form().
struct AddRequant {
  float a_ratio;
  float b_ratio;
  float fixed;
};
inline AddRequant add_requant(float a_scale, int32_t a_zero_point, float b_scale, int32_t b_zero_point, float c_scale,
                              int32_t c_zero_point, BroadcastForm form) {
  AddRequant r{};
  r.a_ratio = a_scale / c_scale;
  r.b_ratio = b_scale / c_scale;
  const float a_zp = static_cast<float>(a_zero_point);
  const float b_zp = static_cast<float>(b_zero_point);
  const float zero_parts = form == BroadcastForm::kScalarA ? fused_multiply_add(r.b_ratio, b_zp, r.a_ratio * a_zp)
                                                           : fused_multiply_add(r.a_ratio, a_zp, r.b_ratio * b_zp);
  r.fixed = static_cast<float>(c_zero_point) - zero_parts;
  return r;
}

// QLinearMul (MlasQLinearMulKernel): ScaleA * ScaleB / ScaleC, left to right.
inline float mul_ratio(float a_scale, float b_scale, float c_scale) { return a_scale * b_scale / c_scale; }

// The 4-D broadcast walk of add()/mul(): dims in arena order, rank <= 4, all
// three with the same rank (1 where an input broadcasts).
inline BinaryShape binary_shape(const int32_t* out_dims, const int32_t* a_dims, const int32_t* b_dims, int rank) {
  BinaryShape s{};
  const int lead = 4 - rank;
  int32_t a_stride = 1;
  int32_t b_stride = 1;
  for (int d = 3; d >= 0; --d) {
    const int src = d - lead;
    s.out_dims[d] = src >= 0 ? out_dims[src] : 1;
    const int32_t a_dim = src >= 0 ? a_dims[src] : 1;
    const int32_t b_dim = src >= 0 ? b_dims[src] : 1;
    s.a_strides[d] = a_dim == 1 ? 0 : a_stride;
    s.b_strides[d] = b_dim == 1 ? 0 : b_stride;
    a_stride *= a_dim;
    b_stride *= b_dim;
  }
  return s;
}

// ---------------------------------------------------------------------------
// MLAS's logistic and tanh, as the AVX2/FMA3 kernels of x86-64 ORT compute
// them (MlasComputeLogisticF32KernelFma3, MlasTanhKernelFma3: the Eigen
// rational approximations with fused multiply-adds).  ORT's float Sigmoid and
// Tanh operators and its QLinearSigmoid table call these.
inline float mlas_logistic(float x) {
  constexpr float kLower = -18.0f, kUpper = 18.0f;
  constexpr float kAlpha9 = 4.37031012579801e-11f, kAlpha7 = 1.15627324459942e-07f, kAlpha5 = 6.08574864600143e-05f,
                  kAlpha3 = 8.51377133304701e-03f, kAlpha1 = 2.48287947061529e-01f;
  constexpr float kBeta10 = 6.10247389755681e-13f, kBeta8 = 5.76102136993427e-09f, kBeta6 = 6.29106785017040e-06f,
                  kBeta4 = 1.70198817374094e-03f, kBeta2 = 1.16817656904453e-01f, kBeta0 = 9.93151921023180e-01f;
  x = kLower > x ? kLower : x;  // vmaxps(lower, x)
  x = kUpper < x ? kUpper : x;  // vminps(upper, x)
  const float x2 = x * x;
  float p = fused_multiply_add(x2, kAlpha9, kAlpha7);
  p = fused_multiply_add(x2, p, kAlpha5);
  p = fused_multiply_add(x2, p, kAlpha3);
  p = fused_multiply_add(x2, p, kAlpha1);
  float q = fused_multiply_add(x2, kBeta10, kBeta8);
  q = fused_multiply_add(x2, q, kBeta6);
  q = fused_multiply_add(x2, q, kBeta4);
  q = fused_multiply_add(x2, q, kBeta2);
  q = fused_multiply_add(x2, q, kBeta0);
  p = x * p;
  const float y = p / q + 0.5f;
  return 0.0f > y ? 0.0f : y;  // the FMA3 kernel clamps below only
}

inline float mlas_tanh(float x) {
  constexpr float kLower = -9.0f, kUpper = 9.0f;
  constexpr float kAlpha13 = -2.76076847742355e-16f, kAlpha11 = 2.00018790482477e-13f, kAlpha9 = -8.60467152213735e-11f,
                  kAlpha7 = 5.12229709037114e-08f, kAlpha5 = 1.48572235717979e-05f, kAlpha3 = 6.37261928875436e-04f,
                  kAlpha1 = 4.89352455891786e-03f;
  constexpr float kBeta6 = 1.19825839466702e-06f, kBeta4 = 1.18534705686654e-04f, kBeta2 = 2.26843463243900e-03f,
                  kBeta0 = 4.89352518554385e-03f;
  x = kLower > x ? kLower : x;
  x = kUpper < x ? kUpper : x;
  const float x2 = x * x;
  float p = fused_multiply_add(x2, kAlpha13, kAlpha11);
  p = fused_multiply_add(x2, p, kAlpha9);
  p = fused_multiply_add(x2, p, kAlpha7);
  p = fused_multiply_add(x2, p, kAlpha5);
  p = fused_multiply_add(x2, p, kAlpha3);
  p = fused_multiply_add(x2, p, kAlpha1);
  float q = fused_multiply_add(x2, kBeta6, kBeta4);
  q = fused_multiply_add(x2, q, kBeta2);
  q = fused_multiply_add(x2, q, kBeta0);
  p = x * p;
  return p / q;
}

// ORT's QlinearBuildLookupTable<T>: entry i (the raw byte of an input value x)
// is MlasQuantizeLinear(fn(X_scale * (x - X_zero_point)), Y_scale, Y_zero_point).
template <typename T, typename Fn>
inline void build_lookup_table(float x_scale, int32_t x_zero_point, float y_scale, int32_t y_zero_point, Fn fn,
                               uint8_t table[256]) {
  for (int i = 0; i < 256; ++i) {
    const T x = static_cast<T>(i);
    const float dequantized = x_scale * static_cast<float>(static_cast<int32_t>(x) - x_zero_point);
    table[i] = static_cast<uint8_t>(quantize_linear<T>(fn(dequantized), y_scale, y_zero_point));
  }
}

// QLinearSigmoid (and Sigmoid between DequantizeLinear and QuantizeLinear).
template <typename T>
inline void build_sigmoid_table(float x_scale, int32_t x_zp, float y_scale, int32_t y_zp, uint8_t table[256]) {
  build_lookup_table<T>(
      x_scale, x_zp, y_scale, y_zp, [](float v) { return mlas_logistic(v); }, table);
}

// Tanh between DequantizeLinear and QuantizeLinear (ORT's float Tanh is MlasComputeTanh).
template <typename T>
inline void build_tanh_table(float x_scale, int32_t x_zp, float y_scale, int32_t y_zp, uint8_t table[256]) {
  build_lookup_table<T>(
      x_scale, x_zp, y_scale, y_zp, [](float v) { return mlas_tanh(v); }, table);
}

// TFLite Micro's int8 LOGISTIC and TANH (--numerics tflite; logistic_common.cc, tanh.cc and
// reference_integer_ops): the input's difference from its zero point is rescaled to Q4.27 by
// QuantizeMultiplier(x_scale * 2^27) (TFLite Micro takes frexp's exponent as it comes: the same
// multiplier for every scale passes/numerics.cpp accepts, at least 2^-28), gemmlowp's fixed-point
// logistic or tanh gives Q0.31, and a rounding shift gives the int8 output, whose quantization
// TFLite fixes (LOGISTIC: 1/256 and -128; TANH: 1/128 and 0). A difference at or beyond the
// radius (CalculateInputRadius: the largest whose Q4.27 value stays below 15) saturates. As a
// table over the 256 int8 inputs (index: the input's byte).
template <typename Fn>
inline void build_tflite_activation_table(float x_scale, int32_t x_zero_point, Fn q4_to_int8, uint8_t table[256]) {
  const QuantizedMultiplier to_q4 = quantize_multiplier(static_cast<double>(x_scale) * static_cast<double>(1 << 27));
  const double radius_q4 = std::ldexp(15.0 * static_cast<double>(1 << 27), -to_q4.shift);
  const int32_t radius = static_cast<int32_t>(std::floor(radius_q4));
  for (int i = 0; i < 256; ++i) {
    const int32_t input = static_cast<int32_t>(static_cast<int8_t>(i)) - x_zero_point;
    const int32_t q = input <= -radius  ? -128
                      : input >= radius ? 127
                                        : q4_to_int8(multiply_by_quantized_multiplier(input, to_q4));
    table[i] = static_cast<uint8_t>(static_cast<int8_t>(q));
  }
}

inline void build_logistic_table_tflite(float x_scale, int32_t x_zero_point, uint8_t table[256]) {
  build_tflite_activation_table(
      x_scale, x_zero_point,
      [](int32_t q4) { return clamp_int(rounding_divide_by_pot(detail::logistic_q4(q4), 23) - 128, -128, 127); },
      table);
}

inline void build_tanh_table_tflite(float x_scale, int32_t x_zero_point, uint8_t table[256]) {
  build_tflite_activation_table(
      x_scale, x_zero_point,
      [](int32_t q4) { return clamp_int(rounding_divide_by_pot(detail::tanh_q4(q4), 24), -128, 127); }, table);
}

// TFLite Micro's int8 HARD_SWISH (--numerics tflite; hard_swish_common.cc's Prepare and
// reference_ops::HardSwish): 16-bit fixed point. The input minus its zero point, times 2^7, is
// scaled to the output (gemmlowp's rounding doubling high multiply by a Q15 multiplier) and, by a
// second multiplier and shift that saturate, to a "relu-ish" factor in [-1, 1] (3.0 at 32768),
// moved to [0, 1]; their product (TFLite's doubling high multiply, truncating), shifted right
// with rounding, plus the output zero point, clamped. The multipliers come from the float scales
// as TFLite computes them: QuantizeMultiplier, then rounded to 16 bits (DownScaleInt32ToInt16-
// Multiplier).
struct HardSwishTflite {
  int16_t output_multiplier;   // Q15
  int32_t output_exponent;     // <= 0 (TFLite Micro's Prepare requires it)
  int16_t reluish_multiplier;  // Q15
  int32_t reluish_exponent;
};

namespace detail {

inline int16_t downscale_to_q15(int32_t multiplier) {
  constexpr int32_t kRounding = 1 << 15;
  if (multiplier >= INT32_MAX - kRounding) return INT16_MAX;
  return static_cast<int16_t>((multiplier + kRounding) >> 16);
}

// gemmlowp's SaturatingRoundingDoublingHighMul on int16.
inline int16_t rounding_doubling_high_mul_q15(int16_t a, int16_t b) {
  if (a == b && a == INT16_MIN) return INT16_MAX;
  const int32_t product = int32_t{a} * int32_t{b};
  return static_cast<int16_t>((product + (product >= 0 ? (1 << 14) : 1 - (1 << 14))) / (1 << 15));
}

// TFLite's SaturatingDoublingHighMul on int16: as above, truncating toward zero.
inline int16_t doubling_high_mul_q15(int16_t a, int16_t b) {
  if (a == b && a == INT16_MIN) return INT16_MAX;
  return static_cast<int16_t>(int32_t{a} * int32_t{b} / (1 << 15));
}

// gemmlowp's RoundingDivideByPOT on int16: its mask is an int16 too, so for exponents of 16 and
// more it is -1 (reached only by scales far outside int8 models; kept for exactness).
inline int16_t rounding_divide_by_pot_q15(int16_t x, int32_t exponent) {
  const auto mask = static_cast<int16_t>((int64_t{1} << exponent) - 1);
  const auto remainder = static_cast<int16_t>(x & mask);
  const auto threshold = static_cast<int16_t>((mask >> 1) + (x < 0 ? 1 : 0));
  return static_cast<int16_t>((x >> exponent) + (remainder > threshold ? 1 : 0));
}

// TFLite's SaturatingLeftShift on int16.
inline int16_t saturating_left_shift_q15(int16_t x, int32_t amount) {
  const int64_t shifted = int64_t{x} * (int64_t{1} << amount);
  return static_cast<int16_t>(shifted > INT16_MAX ? INT16_MAX : shifted < INT16_MIN ? INT16_MIN : shifted);
}

}  // namespace detail

inline HardSwishTflite tflite_hard_swish_params(float x_scale, float y_scale) {
  const float hires_input_scale = (1.0f / 128.0f) * x_scale;
  const float reluish_scale = 3.0f / 32768.0f;
  const QuantizedMultiplier output = quantize_multiplier(static_cast<double>(hires_input_scale / y_scale));
  const QuantizedMultiplier reluish = quantize_multiplier(static_cast<double>(hires_input_scale / reluish_scale));
  return {detail::downscale_to_q15(output.multiplier), output.shift, detail::downscale_to_q15(reluish.multiplier),
          reluish.shift};
}

inline void build_hard_swish_table_tflite(float x_scale, int32_t x_zero_point, float y_scale, int32_t y_zero_point,
                                          uint8_t table[256]) {
  const HardSwishTflite p = tflite_hard_swish_params(x_scale, y_scale);
  for (int i = 0; i < 256; ++i) {
    const auto input = static_cast<int16_t>(static_cast<int8_t>(i) - x_zero_point);
    const auto hires = static_cast<int16_t>(input * (1 << 7));
    const int16_t on_output_scale = detail::rounding_doubling_high_mul_q15(hires, p.output_multiplier);
    int16_t reluish = hires;
    if (p.reluish_exponent > 0) reluish = detail::saturating_left_shift_q15(reluish, p.reluish_exponent - 1);
    reluish = detail::rounding_doubling_high_mul_q15(reluish, p.reluish_multiplier);
    if (p.reluish_exponent > 0) reluish = detail::saturating_left_shift_q15(reluish, 1);
    if (p.reluish_exponent < 0) reluish = detail::rounding_divide_by_pot_q15(reluish, -p.reluish_exponent);
    reluish = static_cast<int16_t>((reluish + (1 << 15)) >> 1);  // [-1, 1] -> [0, 1]
    const int16_t product = detail::doubling_high_mul_q15(reluish, on_output_scale);
    const auto y = static_cast<int16_t>(detail::rounding_divide_by_pot_q15(product, -p.output_exponent) + y_zero_point);
    table[i] = static_cast<uint8_t>(static_cast<int8_t>(clamp_int(y, -128, 127)));
  }
}

// Log between DequantizeLinear and QuantizeLinear (ORT's float Log): log(0) = -inf saturates to
// the lowest code; a negative value (NaN in ORT, which MLAS's vector QuantizeLinear clamps to the
// lowest code) does the same.
template <typename T>
inline void build_log_table(float x_scale, int32_t x_zp, float y_scale, int32_t y_zp, uint8_t table[256]) {
  build_lookup_table<T>(
      x_scale, x_zp, y_scale, y_zp, [](float v) { return v > 0.0f ? std::log(v) : -INFINITY; }, table);
}

// Exp between DequantizeLinear and QuantizeLinear (ORT's float Exp).
template <typename T>
inline void build_exp_table(float x_scale, int32_t x_zp, float y_scale, int32_t y_zp, uint8_t table[256]) {
  build_lookup_table<T>(
      x_scale, x_zp, y_scale, y_zp, [](float v) { return std::exp(v); }, table);
}

// QLinearLeakyRelu: v >= 0 ? v : alpha * v.
template <typename T>
inline void build_leaky_relu_table(float alpha, float x_scale, int32_t x_zp, float y_scale, int32_t y_zp,
                                   uint8_t table[256]) {
  build_lookup_table<T>(
      x_scale, x_zp, y_scale, y_zp, [alpha](float v) { return v >= 0.0f ? v : alpha * v; }, table);
}

// HardSigmoid between DequantizeLinear and QuantizeLinear, in float as ORT's
// kernel: max(min(alpha * v + beta, 1), 0).
inline float hard_sigmoid(float alpha, float beta, float v) {
  const float s = alpha * v + beta;
  return std::max(std::min(s, 1.0f), 0.0f);
}

template <typename T>
inline void build_hard_sigmoid_table(float alpha, float beta, float x_scale, int32_t x_zp, float y_scale, int32_t y_zp,
                                     uint8_t table[256]) {
  build_lookup_table<T>(
      x_scale, x_zp, y_scale, y_zp, [alpha, beta](float v) { return hard_sigmoid(alpha, beta, v); }, table);
}

// HardSwish between DequantizeLinear and QuantizeLinear: ONNX defines it (and
// ORT runs it) as v * HardSigmoid(v) with alpha = float(1/6), beta = 0.5.
template <typename T>
inline void build_hard_swish_table(float x_scale, int32_t x_zp, float y_scale, int32_t y_zp, uint8_t table[256]) {
  build_lookup_table<T>(
      x_scale, x_zp, y_scale, y_zp, [](float v) { return v * hard_sigmoid(1.0f / 6.0f, 0.5f, v); }, table);
}

// Requantization from (x_scale, x_zp) to (y_scale, y_zp): QLinearConcat's
// per-input table, and DequantizeLinear -> QuantizeLinear.
template <typename T>
inline void build_requantize_table(float x_scale, int32_t x_zp, float y_scale, int32_t y_zp, uint8_t table[256]) {
  build_lookup_table<T>(
      x_scale, x_zp, y_scale, y_zp, [](float v) { return v; }, table);
}

// TFLite's int8 -> int8 requantization (--numerics tflite): QUANTIZE between two int8
// quantizations (TFLite Micro's reference_ops::Requantize) and a RELU whose output is quantized
// otherwise (its ReluQuantized; the clamp at the output's zero point is the fused clamp the
// compiler applies to the table). x - zx through MultiplyByQuantizedMultiplier by
// QuantizeMultiplier(double(x_scale) / double(y_scale)), + zy, clamped.
inline void build_requantize_table_tflite(float x_scale, int32_t x_zero_point, float y_scale, int32_t y_zero_point,
                                          uint8_t table[256]) {
  const QuantizedMultiplier m = quantize_multiplier(static_cast<double>(x_scale) / static_cast<double>(y_scale));
  for (int i = 0; i < 256; ++i) {
    const int32_t y = multiply_by_quantized_multiplier(static_cast<int8_t>(i) - x_zero_point, m) + y_zero_point;
    table[i] = static_cast<uint8_t>(static_cast<int8_t>(clamp_int(y, -128, 127)));
  }
}

// QLinearSoftmax's table (QlinearBuildLookupUint32 with EXP_OUT_DTYPE float):
// exp((i - 255 + shift) * x_scale) in double, stored as float, where
// shift = max(0, log(FLT_MAX / reduce_len) - 5) / x_scale; for int8 the entry
// of i is stored at byte (i - 128).  reduce_len is the softmax row length.
// ORT's log has a float argument (FLT_MAX / reduce_len), so C++ picks the float
// overload: the logarithm is logf's, widened to double afterwards.  With the
// double log the table moves by an ulp and rows of equal maxima land 1 LSB
// the other way (tests/difftest/found/softmax-int8-*).
inline void build_softmax_table(float x_scale, int32_t reduce_len, bool is_signed, float table[256]) {
  constexpr float kFloatMax = 3.40282346638528859811704183484516925e+38f;
  double shift = static_cast<double>(std::log(kFloatMax / static_cast<float>(reduce_len)));
  shift = (shift - 5.0 > 0.0 ? shift - 5.0 : 0.0) / static_cast<double>(x_scale);
  for (int32_t i = 0; i < 256; ++i) {
    const double e = std::exp((static_cast<double>(i) - 255.0 + shift) * static_cast<double>(x_scale));
    const uint8_t index = static_cast<uint8_t>(is_signed ? i - 128 : i);
    table[index] = static_cast<float>(e);
  }
}

// QLinearSoftmax's output scale: std::floor(1.0F / Y_scale), a float.
inline float softmax_output_scale_inv(float y_scale) { return std::floor(1.0f / y_scale); }

// ---------------------------------------------------------------------------
// Resize, mode nearest (ORT upsamplebase.h GetOriginalCoordinateFromResizedCoordinate
// and GetNearestPixelFromOriginal, upsample.cc's input mappings): the source
// index of output index `out_index` along one axis.  scale is ORT's float
// scale for the axis: the `scales` input, or (float)out_len / (float)in_len
// when `sizes` is given.
enum class ResizeCoordinateMode { kHalfPixel, kAsymmetric, kPytorchHalfPixel, kTfHalfPixelForNn, kAlignCorners };
enum class ResizeNearestMode { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil };

inline int32_t resize_nearest_index(int32_t out_index, int32_t in_len, int32_t out_len, float scale,
                                    ResizeCoordinateMode coordinate_mode, ResizeNearestMode nearest_mode) {
  if (scale == 1.0f) return out_index;
  const float x = static_cast<float>(out_index);
  const float length_resized = static_cast<float>(out_len);
  const float length_original = static_cast<float>(in_len);
  float original = 0.0f;
  switch (coordinate_mode) {
    case ResizeCoordinateMode::kHalfPixel:
      original = ((x + 0.5f) / scale) - 0.5f;
      break;
    case ResizeCoordinateMode::kAsymmetric:
      original = x / scale;
      break;
    case ResizeCoordinateMode::kPytorchHalfPixel:
      original = length_resized > 1 ? (x + 0.5f) / scale - 0.5f : 0.0f;
      break;
    case ResizeCoordinateMode::kTfHalfPixelForNn:
      original = (x + 0.5f) / scale;
      break;
    case ResizeCoordinateMode::kAlignCorners:
      original = length_resized == 1 ? 0.0f : x * (length_original - 1) / (length_resized - 1);
      break;
  }
  int64_t index = 0;
  switch (nearest_mode) {
    case ResizeNearestMode::kRoundPreferFloor:
      index = original == static_cast<float>(static_cast<int64_t>(original)) + 0.5f
                  ? static_cast<int64_t>(std::floor(original))
                  : static_cast<int64_t>(std::round(original));
      break;
    case ResizeNearestMode::kRoundPreferCeil:
      index = static_cast<int64_t>(std::round(original));
      break;
    case ResizeNearestMode::kFloor:
      index = static_cast<int64_t>(std::floor(original));
      break;
    case ResizeNearestMode::kCeil:
      index = static_cast<int64_t>(std::ceil(original));
      break;
  }
  if (index >= in_len) index = in_len - 1;
  if (index < 0) index = 0;
  return static_cast<int32_t>(index);
}

// ---------------------------------------------------------------------------
// Conv weights from ONNX's OIHW order ([out_c][in_c/groups][kh][kw]) to the
// layout conv() reads for these parameters (see ConvParams).
template <typename TW>
inline void pack_conv_weights(const ConvParams& p, const TW* oihw, TW* packed) {
  const int32_t group_in_c = p.in_c / p.groups;
  for (int32_t oc = 0; oc < p.out_c; ++oc) {
    for (int32_t ic = 0; ic < group_in_c; ++ic) {
      for (int32_t ky = 0; ky < p.kernel_h; ++ky) {
        for (int32_t kx = 0; kx < p.kernel_w; ++kx) {
          const TW w = oihw[((oc * group_in_c + ic) * p.kernel_h + ky) * p.kernel_w + kx];
          const int32_t to = conv_is_depthwise(p) ? (ky * p.kernel_w + kx) * p.out_c + oc
                                                  : ((oc * p.kernel_h + ky) * p.kernel_w + kx) * group_in_c + ic;
          packed[to] = w;
        }
      }
    }
  }
}

}  // namespace tightfit
