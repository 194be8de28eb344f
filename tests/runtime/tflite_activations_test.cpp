// TFLite Micro's int8 LOGISTIC and TANH as tightfit builds them (host.hpp, 256-entry tables over
// numerics.hpp's fixed-point functions) against TFLite Micro's reference kernels written over
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
  CHECK(static_cast<int8_t>(logistic[127]) == 127);              // 12.4: 1 - 4e-6, saturated
  CHECK(static_cast<int8_t>(logistic[0x80]) == -128);            // -13.1
  CHECK(static_cast<int8_t>(tanh[3 + 20]) == -static_cast<int8_t>(tanh[uint8_t(3 - 20)]));  // tanh(+-2)
  CHECK(static_cast<int8_t>(tanh[3 + 20]) == 123);               // tanh(2) = 0.964 * 128 = 123.4
  CHECK(static_cast<int8_t>(logistic[3 + 10]) == 59);            // 0.731 * 256 - 128 = 59.2
}
