// TFLite Micro's int8 LOGISTIC, TANH and HARD_SWISH as tightfit builds them (host.hpp, 256-entry
// tables over its own fixed-point functions) against TFLite Micro's reference kernels written over
// gemmlowp's own fixed-point library (Debian's libgemmlowp-dev, the library TFLite vendors):
// every int8 input, for input scales and zero points across what int8 models hold.
#include <fixedpoint/fixedpoint.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "tightfit/host.hpp"

namespace {

// TFLite Micro's Prepare for both (logistic_common.cc, tanh.cc): the input rescaled to Q4.27.
struct Prepared {
  int32_t multiplier;
  int shift;
  int32_t radius;
};

Prepared prepare(float scale) {
  constexpr int kInputIntegerBits = 4;
  Prepared p{};
  const double real = static_cast<double>(scale) * static_cast<double>(1 << (31 - kInputIntegerBits));
  const double q = std::frexp(real, &p.shift);
  p.multiplier = static_cast<int32_t>(std::round(q * static_cast<double>(1LL << 31)));
  // CalculateInputRadius(4, shift, 31)
  const double radius = 15.0 * static_cast<double>(1LL << 27) / static_cast<double>(1LL << p.shift);
  p.radius = static_cast<int32_t>(std::floor(radius));
  return p;
}

// TFLite's MultiplyByQuantizedMultiplier, from gemmlowp's two primitives.
int32_t multiply(int32_t x, int32_t multiplier, int shift) {
  const int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
  return gemmlowp::RoundingDivideByPOT(gemmlowp::SaturatingRoundingDoublingHighMul(x * (1 << left), multiplier), right);
}

using F4 = gemmlowp::FixedPoint<int32_t, 4>;

// reference_integer_ops::Logistic and Tanh, one value: saturated past the radius, else the Q4.27
// input through `q4_to_int8`.
template <typename Fn>
int8_t reference(int8_t x, float scale, int32_t zero_point, Fn q4_to_int8) {
  const Prepared p = prepare(scale);
  const int32_t input = static_cast<int32_t>(x) - zero_point;
  if (input <= -p.radius) return -128;
  if (input >= p.radius) return 127;
  return static_cast<int8_t>(std::clamp(q4_to_int8(multiply(input, p.multiplier, p.shift)), -128, 127));
}

int8_t reference_logistic(int8_t x, float scale, int32_t zero_point) {
  return reference(x, scale, zero_point, [](int32_t q4) {
    return gemmlowp::RoundingDivideByPOT(gemmlowp::logistic(F4::FromRaw(q4)).raw(), 23) - 128;
  });
}

int8_t reference_tanh(int8_t x, float scale, int32_t zero_point) {
  return reference(x, scale, zero_point,
                   [](int32_t q4) { return gemmlowp::RoundingDivideByPOT(gemmlowp::tanh(F4::FromRaw(q4)).raw(), 24); });
}

// TFLite's QuantizeMultiplier (quantization_util.cc), then DownScaleInt32ToInt16Multiplier.
void quantize_q15(double real, int16_t* multiplier, int* exponent) {
  const double q = std::frexp(real, exponent);
  int64_t q31 = static_cast<int64_t>(std::round(q * static_cast<double>(1LL << 31)));
  if (q31 == (1LL << 31)) q31 /= 2, ++*exponent;
  if (*exponent < -31) q31 = 0, *exponent = 0;
  const auto m = static_cast<int32_t>(q31);
  *multiplier = m >= INT32_MAX - (1 << 15) ? INT16_MAX : static_cast<int16_t>((m + (1 << 15)) >> 16);
}

// TFLite's SaturatingLeftShift and SaturatingDoublingHighMul (reference/hard_swish.h).
int16_t saturating_left_shift(int16_t value, int amount) {
  const int64_t result = static_cast<int64_t>(value) * (1 << amount);
  return static_cast<int16_t>(std::clamp<int64_t>(result, INT16_MIN, INT16_MAX));
}
int16_t saturating_doubling_high_mul(int16_t a, int16_t b) {
  if (a == b && a == INT16_MIN) return INT16_MAX;
  return static_cast<int16_t>(int32_t{a} * int32_t{b} / (1 << 15));
}

// hard_swish_common.cc's Prepare and reference_ops::HardSwish, one value.
int8_t reference_hard_swish(int8_t x, float x_scale, int32_t x_zero_point, float y_scale, int32_t y_zero_point) {
  const float hires_input_scale = (1.0f / 128.0f) * x_scale;
  const float reluish_scale = 3.0f / 32768.0f;
  int16_t output_multiplier, reluish_multiplier;
  int output_exponent, reluish_exponent;
  quantize_q15(static_cast<double>(hires_input_scale / y_scale), &output_multiplier, &output_exponent);
  quantize_q15(static_cast<double>(hires_input_scale / reluish_scale), &reluish_multiplier, &reluish_exponent);
  REQUIRE(output_exponent <= 0);
  const int16_t input_value = static_cast<int16_t>(x - x_zero_point);
  const int16_t hires = static_cast<int16_t>(input_value * (1 << 7));
  const int16_t preshift = gemmlowp::SaturatingRoundingDoublingHighMul(hires, output_multiplier);
  int16_t reluish = hires;
  if (reluish_exponent > 0) reluish = saturating_left_shift(reluish, reluish_exponent - 1);
  reluish = gemmlowp::SaturatingRoundingDoublingHighMul(reluish, reluish_multiplier);
  if (reluish_exponent > 0) reluish = saturating_left_shift(reluish, 1);
  if (reluish_exponent < 0) reluish = gemmlowp::RoundingDivideByPOT(reluish, -reluish_exponent);
  reluish = static_cast<int16_t>((reluish + (1 << 15)) >> 1);
  const int16_t preshift_output = saturating_doubling_high_mul(reluish, preshift);
  int16_t output = gemmlowp::RoundingDivideByPOT(preshift_output, -output_exponent);
  output = static_cast<int16_t>(output + y_zero_point);
  return static_cast<int8_t>(std::clamp<int16_t>(output, -128, 127));
}

struct Quantization {
  float scale;
  int32_t zero_point;
};

// Powers of two (radius and rescaling at their edges), the scales int8 activations take, and
// random ones, each with zero points from one end to the other.
std::vector<Quantization> input_quantizations() {
  std::vector<Quantization> cases;
  for (int e = -28; e <= 2; ++e) cases.push_back({std::ldexp(1.0f, e), 0});
  for (float scale : {0.003921569f, 0.0078125f, 0.015686275f, 0.023529412f, 0.0627451f, 0.1f, 0.12345f, 0.5f})
    for (int32_t zero_point : {-128, -1, 0, 7, 127}) cases.push_back({scale, zero_point});
  std::mt19937 random(20261207);
  std::uniform_real_distribution<float> exponent(-12.0f, 1.0f);
  std::uniform_int_distribution<int32_t> zero_point(-128, 127);
  for (int i = 0; i < 300; ++i) cases.push_back({std::exp2(exponent(random)), zero_point(random)});
  return cases;
}

template <typename Build, typename Reference>
int32_t count_differences(Build build, Reference reference) {
  int32_t differences = 0;
  for (const Quantization& q : input_quantizations()) {
    uint8_t table[256];
    build(q.scale, q.zero_point, table);
    for (int i = 0; i < 256; ++i) {
      const int8_t x = static_cast<int8_t>(i);
      if (static_cast<int8_t>(table[i]) != reference(x, q.scale, q.zero_point)) {
        if (differences++ == 0)
          UNSCOPED_INFO("first difference: scale " << q.scale << ", zero point " << q.zero_point << ", input " << int{x}
                                                   << ": " << int{static_cast<int8_t>(table[i])} << " against "
                                                   << int{reference(x, q.scale, q.zero_point)});
      }
    }
  }
  return differences;
}

}  // namespace

TEST_CASE("TFLite's int8 LOGISTIC table equals TFLite Micro's kernel over gemmlowp on every input",
          "[runtime][numerics][tflite]") {
  CHECK(count_differences(tightfit::build_logistic_table_tflite, reference_logistic) == 0);
}

TEST_CASE("TFLite's int8 TANH table equals TFLite Micro's kernel over gemmlowp on every input",
          "[runtime][numerics][tflite]") {
  CHECK(count_differences(tightfit::build_tanh_table_tflite, reference_tanh) == 0);
}

TEST_CASE("TFLite's LOGISTIC and TANH: 0 at the zero point, saturated past the radius, odd about it",
          "[runtime][numerics][tflite]") {
  uint8_t logistic[256], tanh[256];
  tightfit::build_logistic_table_tflite(0.1f, 3, logistic);
  tightfit::build_tanh_table_tflite(0.1f, 3, tanh);
  CHECK(static_cast<int8_t>(logistic[3]) == 0);  // 1/2 in scale 1/256, zero point -128
  CHECK(static_cast<int8_t>(tanh[3]) == 0);
  CHECK(static_cast<int8_t>(logistic[127]) == 127);                                         // 12.4: 1 - 4e-6, saturated
  CHECK(static_cast<int8_t>(logistic[0x80]) == -128);                                       // -13.1
  CHECK(static_cast<int8_t>(tanh[3 + 20]) == -static_cast<int8_t>(tanh[uint8_t(3 - 20)]));  // tanh(+-2)
  CHECK(static_cast<int8_t>(tanh[3 + 20]) == 123);     // tanh(2) = 0.964 * 128 = 123.4
  CHECK(static_cast<int8_t>(logistic[3 + 10]) == 59);  // 0.731 * 256 - 128 = 59.2
}

// HARD_SWISH's output quantization is free: pairs of scales from the same draws (the output's at
// least 1/100 of the input's, and TFLite Micro's limit of 1/128 and more), each with zero points.
TEST_CASE("TFLite's int8 HARD_SWISH table equals TFLite Micro's kernel over gemmlowp on every input",
          "[runtime][numerics][tflite]") {
  const std::vector<Quantization> inputs = input_quantizations();
  std::mt19937 random(20261208);
  std::uniform_real_distribution<float> ratio(-6.6f, 3.0f);  // log2(output scale / input scale)
  std::uniform_int_distribution<int32_t> zero_point(-128, 127);
  int32_t cases = 0, differences = 0;
  for (const Quantization& x : inputs) {
    for (int k = 0; k < 3; ++k) {
      const float y_scale = x.scale * std::exp2(ratio(random));
      const int32_t y_zero_point = k == 0 ? -128 : zero_point(random);
      if (tightfit::tflite_hard_swish_params(x.scale, y_scale).output_exponent > 0) continue;
      ++cases;
      uint8_t table[256];
      tightfit::build_hard_swish_table_tflite(x.scale, x.zero_point, y_scale, y_zero_point, table);
      for (int i = 0; i < 256; ++i) {
        const int8_t expected =
            reference_hard_swish(static_cast<int8_t>(i), x.scale, x.zero_point, y_scale, y_zero_point);
        if (static_cast<int8_t>(table[i]) != expected && differences++ == 0)
          UNSCOPED_INFO("first difference: scales " << x.scale << " -> " << y_scale << ", zero points " << x.zero_point
                                                    << " -> " << y_zero_point << ", input " << i << ": "
                                                    << int{static_cast<int8_t>(table[i])} << " against "
                                                    << int{expected});
      }
    }
  }
  CHECK(cases > 1000);
  CHECK(differences == 0);
}

TEST_CASE("TFLite's HARD_SWISH: 0 below -3, x above 3, x(x+3)/6 between", "[runtime][numerics][tflite]") {
  uint8_t table[256];
  tightfit::build_hard_swish_table_tflite(0.05f, 0, 0.05f, 0, table);  // inputs -6.4 .. 6.35 by 0.05
  CHECK(static_cast<int8_t>(table[uint8_t(-100)]) == 0);               // -5: 0
  CHECK(static_cast<int8_t>(table[0]) == 0);                           // 0: 0
  CHECK(static_cast<int8_t>(table[100]) == 100);                       // 5: 5
  CHECK(static_cast<int8_t>(table[20]) == 13);                         // 1: 1 * 4 / 6 = 0.667 = 13.3 * 0.05
  CHECK(static_cast<int8_t>(table[uint8_t(-20)]) == -7);               // -1: -1 * 2 / 6 = -0.333 = -6.7 * 0.05
  CHECK(tightfit::tflite_hard_swish_params(1.0f, 1.0f / 128).output_exponent > 0);  // refused by Prepare
}
