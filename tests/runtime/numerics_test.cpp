// The float primitives under the kernels: rounding and the fused multiply-add
// that stands in for the FMA instructions of ORT's AVX2 kernels on cores
// without one.
#include <catch2/catch.hpp>

#include <cfenv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>

#include "tightfit/float_kernels.hpp"
#include "tightfit/host.hpp"
#include "tightfit/kernels.hpp"
#include "tightfit/numerics.hpp"

namespace {

float from_bits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

}  // namespace

TEST_CASE("round_half_even rounds like nearbyint in the default rounding mode", "[runtime][numerics]") {
  REQUIRE(std::fegetround() == FE_TONEAREST);
  for (float v : {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 126.5f, -127.5f, 8388607.5f, 1e9f, -0.49999997f}) {
    CHECK(tightfit::round_half_even(v) == std::nearbyint(v));
  }
  std::mt19937 rng(7);
  std::uniform_int_distribution<uint32_t> bits;
  for (int i = 0; i < 200000; ++i) {
    const float v = from_bits(bits(rng));
    if (!std::isfinite(v)) continue;
    REQUIRE(tightfit::round_half_even(v) == std::nearbyint(v));
  }
}

TEST_CASE("fused_multiply_add rounds once, like a hardware FMA", "[runtime][numerics]") {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> value(-300.0f, 300.0f);
  std::uniform_real_distribution<float> ratio(0.001f, 4.0f);
  for (int i = 0; i < 500000; ++i) {
    const float a = std::nearbyint(value(rng));
    const float b = ratio(rng);
    const float c = value(rng);
    REQUIRE(tightfit::fused_multiply_add(a, b, c) == std::fma(a, b, c));
  }
  // Cases where a*b + c rounded to double lands exactly halfway between two
  // floats although the exact value does not: only a single rounding gets them right.
  const float one_plus = from_bits(0x3F800001u);  // 1 + 2^-23
  const float tiny = std::ldexp(1.0f, -30);
  CHECK(tightfit::fused_multiply_add(one_plus, 1.0f + std::ldexp(1.0f, -24) * 0.0f, tiny) ==
        std::fma(one_plus, 1.0f, tiny));
  for (int e = -60; e < -20; ++e) {
    const float half_ulp = std::ldexp(1.0f, -24);
    const float c = half_ulp + std::ldexp(1.0f, e);
    CHECK(tightfit::fused_multiply_add(1.0f, 1.0f, c) == std::fma(1.0f, 1.0f, c));
    const float d = -half_ulp - std::ldexp(1.0f, e);
    CHECK(tightfit::fused_multiply_add(one_plus, one_plus, d) == std::fma(one_plus, one_plus, d));
  }
}

namespace {

// requantize_integer() against requantize_float() for one multiplier over the accumulators in
// [first, last]; returns the first accumulator where they differ, or `last + 1`.
int64_t first_requantize_difference(float multiplier, int64_t first, int64_t last, int32_t step, int32_t lo,
                                    int32_t hi) {
  for (int64_t acc = first; acc <= last; acc += step) {
    const auto a = static_cast<int32_t>(acc);
    if (tightfit::requantize_integer<int32_t>(a, multiplier, 0, lo, hi) !=
        tightfit::requantize_float<int32_t>(a, multiplier, 0, lo, hi))
      return acc;
  }
  return last + 1;
}

}  // namespace

TEST_CASE("requantize_integer equals the float requantization bit for bit", "[runtime][numerics]") {
  // Bounds far apart, so that the rounding itself is compared, not the clamp.
  constexpr int32_t kWide = 1 << 24;
  SECTION("every accumulator below 2^21 in magnitude, typical and tie-making multipliers") {
    // Powers of two make exact halves (ties); the others are scales as quantizers make them.
    for (const float m : {0.5f, 0.25f, 0.0009765625f, 0.00123456f, 0.0003179f, 0.07f, 1.0f / 3.0f, 0.99999994f}) {
      INFO("multiplier " << m);
      CHECK(first_requantize_difference(m, -(1 << 21), 1 << 21, 1, -kWide, kWide) == (1 << 21) + 1);
      CHECK(first_requantize_difference(m, -(1 << 21), 1 << 21, 1, -128, 127) == (1 << 21) + 1);
    }
  }
  SECTION("random accumulators over all of int32 and random multipliers") {
    std::mt19937 random(20261130);
    std::uniform_int_distribution<int32_t> any_acc(INT32_MIN, INT32_MAX);
    std::uniform_int_distribution<int32_t> exponent(-40, 8);
    std::uniform_real_distribution<float> significand(1.0f, 2.0f);
    std::uniform_int_distribution<int32_t> bits(0, 31);
    for (int round = 0; round < 200; ++round) {
      const float m = std::ldexp(significand(random), exponent(random));
      INFO("multiplier " << m);
      for (int i = 0; i < 5000; ++i) {
        // Accumulators of every magnitude, not only the large ones a uniform draw gives.
        const int32_t acc = any_acc(random) >> bits(random);
        REQUIRE(tightfit::requantize_integer<int32_t>(acc, m, 0, -kWide, kWide) ==
                tightfit::requantize_float<int32_t>(acc, m, 0, -kWide, kWide));
        REQUIRE(tightfit::requantize_integer<int8_t>(acc, m, -3, -128, 127) ==
                tightfit::requantize_float<int8_t>(acc, m, -3, -128, 127));
        REQUIRE(tightfit::requantize_integer<uint8_t>(acc, m, 131, 131, 255) ==
                tightfit::requantize_float<uint8_t>(acc, m, 131, 131, 255));
      }
    }
  }
  SECTION("ties of the product's own rounding and of the final one, and the extremes") {
    // 2^24 + 1 and its neighbours round when converted to float; odd multiples of powers of two
    // make exact halves at the end.
    for (const int32_t acc :
         {16777217, 16777219, -16777217, 33554435, INT32_MAX, INT32_MIN, INT32_MIN + 1, 0, 1, -1, 3, -3}) {
      for (const float m : {0.5f, 1.5f, 2.0f, 0x1.000002p-1f, 0x1.fffffep-25f, 0x1p-30f, 0x1p+20f, 1e30f, 0x1p-126f}) {
        INFO("acc " << acc << " multiplier " << m);
        CHECK(tightfit::requantize_integer<int32_t>(acc, m, 0, -kWide, kWide) ==
              tightfit::requantize_float<int32_t>(acc, m, 0, -kWide, kWide));
      }
    }
  }
  SECTION("a wrong emulation is caught: truncating instead of rounding differs") {
    CHECK(tightfit::requantize_float<int32_t>(3, 0.5f, 0, -kWide, kWide) == 2);  // 1.5 -> 2 (even)
    CHECK(tightfit::requantize_float<int32_t>(5, 0.5f, 0, -kWide, kWide) == 2);  // 2.5 -> 2 (even)
    CHECK(tightfit::requantize_integer<int32_t>(3, 0.5f, 0, -kWide, kWide) == 2);
    CHECK(tightfit::requantize_integer<int32_t>(5, 0.5f, 0, -kWide, kWide) == 2);
  }
}

// The float islands' square root (float_kernels.hpp): on the host (and every core without a
// single-precision FPU, the Cortex-M0+) it is computed in integers; it must be IEEE's correctly
// rounded result, std::sqrt's, on every float: zeros, subnormals, normals, infinities, NaNs,
// negatives. Every 97th bit pattern (all exponents, many significands), the neighbours of squares
// (the rounding boundaries), and a random sample.
TEST_CASE("sqrt_float equals std::sqrt bit for bit", "[runtime][numerics][float]") {
  auto same = [](float x) {
    const float got = tightfit::sqrt_float(x), want = std::sqrt(x);
    uint32_t g, w;
    std::memcpy(&g, &got, 4);
    std::memcpy(&w, &want, 4);
    if (std::isnan(want)) return std::isnan(got);
    return g == w;
  };
  long mismatches = 0, checked = 0;
  for (uint64_t b = 0; b <= 0xffffffffull; b += 97, ++checked) mismatches += !same(from_bits(static_cast<uint32_t>(b)));
  for (uint32_t r = 1; r < (1u << 20); ++r) {  // around r^2 (exact squares and their neighbours)
    const float sq = static_cast<float>(r) * static_cast<float>(r);
    uint32_t bits;
    std::memcpy(&bits, &sq, 4);
    for (uint32_t d : {bits - 1, bits, bits + 1}) mismatches += !same(from_bits(d)), ++checked;
  }
  std::mt19937 rng(18);
  std::uniform_int_distribution<uint32_t> any;
  for (int i = 0; i < 1000000; ++i, ++checked) mismatches += !same(from_bits(any(rng)));
  INFO(checked << " values checked");
  CHECK(mismatches == 0);
  CHECK(std::signbit(tightfit::sqrt_float(-0.0f)));
  CHECK(std::isnan(tightfit::sqrt_float(-1.0f)));
  CHECK(std::isinf(tightfit::sqrt_float(std::numeric_limits<float>::infinity())));
}

// The float islands' ReduceMean over other than trailing axes adds in index order, then divides
// by the count: on [1e8, 1, -1e8, 1] that gives ((1e8 + 1) - 1e8) + 1 = 1 (1e8 + 1 rounds to 1e8),
// a mean of 0.25; pairs first ((1e8 - 1e8) + (1 + 1)) would give 0.5. Two rows of [2, 4], axis 1.
TEST_CASE("reduce_mean_float adds in index order, then divides by the count", "[runtime][float]") {
  const float x[8] = {1e8f, 1.0f, -1e8f, 1.0f, 1.0f, 2.0f, 3.0f, 4.0f};
  const tightfit::ReduceMeanParams p = {
      {1, 1, 2, 1}, {1, 1, 1, 4}, {0, 0, 4, 1}, {0, 0, 1, 0}, 4, 0.0f, 0, 0.0f, 0, 0, 0};
  float y[2] = {};
  tightfit::reduce_mean_float(p, x, y);
  CHECK(y[0] == 0.25f);
  CHECK(y[1] == 2.5f);
}

TEST_CASE("pow_float multiplies: x * x and x * x * x, rounded after each product", "[runtime][float]") {
  const float x[3] = {3.0f, -1.5f, 16777217.0f};
  float y[3] = {};
  tightfit::pow_float(3, 2, x, y);
  CHECK(y[0] == 9.0f);
  CHECK(y[1] == 2.25f);
  CHECK(y[2] == 16777216.0f * 16777216.0f);  // 16777217 is not a float: it reads as 2^24
  const float z[1] = {1.1f};
  tightfit::pow_float(1, 3, z, y);
  CHECK(y[0] == (1.1f * 1.1f) * 1.1f);
}

// Over trailing axes ORT sums as Eigen's SSE sum() does (models/layernorm_head.py's model and ORT on
// rows of 3 to 100 elements at every misalignment agree with this order bit for bit): from the
// first 16-byte boundary two 4-float accumulators, added, reduced (p0 + p2) + (p1 + p3), then the
// elements before the boundary and the tail. Row 0 (aligned, 8 elements of 9):
// [1e8, 1, 1, 1] + [-1e8, 1, 1, 1] = [0, 2, 2, 2] -> 6, plus the tail 1 -> 7 (index order: 4).
// Row 1 starts 1 element past a boundary (9 & 3): elements 0..2 wait, then [x3..x6], (x3 + x5) +
// (x4 + x6), then x0, x1, x2, then x7, x8.
TEST_CASE("reduce_mean_float_rows sums each row in ORT's (Eigen's) order, then divides by the count",
          "[runtime][float]") {
  const float x[18] = {1e8f, 1, 1, 1, -1e8f, 1, 1, 1, 1, 1, 1, 1, 1e8f, 1, -1e8f, 1, 1, 1};
  float y[2] = {};
  tightfit::reduce_mean_float_rows(2, 9, x, y);
  CHECK(y[0] == 7.0f / 9.0f);
  CHECK(y[1] == 7.0f / 9.0f);  // (1e8 - 1e8) + (1 + 1) = 2, + 3 + 2 (index order: 1e8 swallows 4 ones: 3)
  const float short_row[3] = {1e8f, 1, -1e8f};  // under 4 past the boundary: index order, 0
  tightfit::reduce_mean_float_rows(1, 3, short_row, y);
  CHECK(y[0] == 0.0f);
}

// TFLite's fixed-point steps (--numerics tflite): values worked out by hand from gemmlowp's and
// TFLite's definitions; the models of ../shared/tflm-models pin them as a whole (tests/tflm).
TEST_CASE("quantize_multiplier is TFLite's QuantizeMultiplier", "[runtime][numerics][tflite]") {
  auto same = [](tightfit::QuantizedMultiplier m, int32_t multiplier, int32_t shift) {
    return m.multiplier == multiplier && m.shift == shift;
  };
  CHECK(same(tightfit::quantize_multiplier(0.5), 1 << 30, 0));
  CHECK(same(tightfit::quantize_multiplier(1.0), 1 << 30, 1));
  CHECK(same(tightfit::quantize_multiplier(0.75), 1610612736, 0));
  CHECK(same(tightfit::quantize_multiplier(0.003), 1649267442, -8));  // 0.768 * 2^31 = 1649267441.66: rounded up
  CHECK(same(tightfit::quantize_multiplier(1.0 - std::ldexp(1.0, -33)), 1 << 30, 1));  // rounds to 2^31: halved
  CHECK(same(tightfit::quantize_multiplier(std::ldexp(1.0, -40)), 0, 0));              // below 2^-31: flushed
  CHECK(same(tightfit::quantize_multiplier(0.0), 0, 0));
}

TEST_CASE("the fixed-point multiply and shift round as gemmlowp's", "[runtime][numerics][tflite]") {
  using tightfit::rounding_divide_by_pot;
  using tightfit::saturating_rounding_doubling_high_mul;
  CHECK(saturating_rounding_doubling_high_mul(INT32_MIN, INT32_MIN) == INT32_MAX);
  CHECK(saturating_rounding_doubling_high_mul(1 << 30, 1 << 30) == 1 << 29);
  CHECK(saturating_rounding_doubling_high_mul(3, 1 << 30) == 2);    // 1.5: half up
  CHECK(saturating_rounding_doubling_high_mul(-3, 1 << 30) == -1);  // -1.5: half up too
  CHECK(saturating_rounding_doubling_high_mul(-5, 1 << 30) == -2);  // -2.5
  CHECK(rounding_divide_by_pot(5, 1) == 3);                         // 2.5: away from zero
  CHECK(rounding_divide_by_pot(-5, 1) == -3);                       // -2.5: away from zero
  CHECK(rounding_divide_by_pot(-3, 1) == -2);
  CHECK(rounding_divide_by_pot(7, 2) == 2);
  CHECK(rounding_divide_by_pot(-6, 2) == -2);
  CHECK(rounding_divide_by_pot(-5, 2) == -1);
  CHECK(rounding_divide_by_pot(123, 0) == 123);
  CHECK(tightfit::multiply_by_quantized_multiplier(100, {1 << 30, 1}) == 100);
  CHECK(tightfit::multiply_by_quantized_multiplier(-100, {1 << 30, -1}) == -25);
  CHECK(tightfit::multiply_by_quantized_multiplier(3, {1 << 30, -1}) == 1);  // 0.75, rounded twice: 2, then 1
}

// TFLite's int8 MUL: the product of the offset inputs through MultiplyByQuantizedMultiplier. With a
// multiplier of exactly 1/2 (shift 0) the rounding is SaturatingRoundingDoublingHighMul's, half
// up: 1.5 -> 2 but -1.5 -> -1 (a float multiply rounding half to even gives 2 and -2).
TEST_CASE("TFLite's MUL rounds the product as MultiplyByQuantizedMultiplier", "[runtime][numerics][tflite]") {
  tightfit::BinaryShape shape{};
  for (int32_t k = 0; k < 4; ++k) shape.out_dims[k] = k == 3 ? 4 : 1;
  shape.a_strides[3] = shape.b_strides[3] = 1;
  const tightfit::MulTfliteParams half = tightfit::tflite_mul_params(shape, 1.0f, 1, 1.0f, 0, 2.0f, 5, -128, 127);
  CHECK(half.output_multiplier.multiplier == (1 << 30));
  CHECK(half.output_multiplier.shift == 0);
  const int8_t a[4] = {4, -2, 101, -127}, b[4] = {1, 1, 100, 100};  // a - 1: 3, -3, 100, -128
  int8_t y[4] = {};
  tightfit::mul_tflite(half, a, b, y);
  CHECK(y[0] == 2 + 5);
  CHECK(y[1] == -1 + 5);
  CHECK(y[2] == 127);   // 5000 + 5: clamped
  CHECK(y[3] == -128);  // -6400 + 5: clamped
  const tightfit::MulTfliteParams third = tightfit::tflite_mul_params(shape, 1.0f, 0, 1.0f, 0, 3.0f, 0, -128, 127);
  const int8_t c[4] = {5, -5, 7, -7}, d[4] = {1, 1, 3, 3};
  tightfit::mul_tflite(third, c, d, y);
  CHECK(y[0] == 2);   // 1.67
  CHECK(y[1] == -2);  // -1.67
  CHECK(y[2] == 7);   // 21 / 3
  CHECK(y[3] == -7);
}

TEST_CASE("TFLite's MEAN folds 1/count into its multiplier, truncating, as QuantizedMeanOrSum",
          "[runtime][numerics][tflite]") {
  const tightfit::QuantizedMultiplier third = tightfit::tflite_mean_multiplier(1.0f, 1.0f, 3);
  CHECK(third.multiplier == 715827882);  // 2^31 / 3 = 715827882.67, truncated
  CHECK(third.shift == 0);
  const tightfit::QuantizedMultiplier quarter = tightfit::tflite_mean_multiplier(0.5f, 0.25f, 4);
  CHECK(quarter.multiplier == (1 << 30));  // (0.5 / 0.25) / 4 = 2^30 * 2^(0 - 31)
  CHECK(quarter.shift == 0);
  // The shift is capped at 31 plus the multiplier's, so that the result's stays at least -31.
  const tightfit::QuantizedMultiplier tiny = tightfit::tflite_mean_multiplier(0x1p-30f, 1.0f, 16);
  CHECK(tiny.multiplier == (1 << 28));
  CHECK(tiny.shift == -31);
}

TEST_CASE("TFLite's MEAN rounds a negative half up, where AVERAGE_POOL_2D rounds it away from zero",
          "[runtime][numerics][tflite]") {
  // Means of two elements along the innermost axis: {-1, 0}, {1, 0}, {-3, 0}, {5, 4}.
  tightfit::ReduceMeanTfliteParams p{{1, 1, 4, 1}, {1, 1, 1, 2}, {0, 0, 2, 1}, {0, 0, 1, 0}, 2, 0, {}, 0, -128, 127};
  p.multiplier = tightfit::tflite_mean_multiplier(0.1f, 0.1f, 2);
  const int8_t x[8] = {-1, 0, 1, 0, -3, 0, 5, 4};
  int8_t y[4] = {};
  tightfit::reduce_mean_tflite(p, x, y);
  CHECK(y[0] == 0);   // -0.5: SaturatingRoundingDoublingHighMul rounds half up
  CHECK(y[1] == 1);   // 0.5
  CHECK(y[2] == -1);  // -1.5
  CHECK(y[3] == 5);   // 4.5
  tightfit::AveragePoolParams pool{};
  pool.batch = 1, pool.in_h = 1, pool.in_w = 2, pool.channels = 1, pool.out_h = 1, pool.out_w = 1;
  pool.kernel_h = 1, pool.kernel_w = 2, pool.stride_h = 1, pool.stride_w = 1, pool.output_min = -128,
  pool.output_max = 127;
  int8_t pooled = 0;
  tightfit::average_pool_tflite(pool, x, &pooled);
  CHECK(pooled == -1);  // the same -0.5, away from zero
  // With the input's zero point and another output quantization: (x - 10) * 0.1 / 0.05 + 3.
  p.input_zero_point = 10, p.output_zero_point = 3;
  p.multiplier = tightfit::tflite_mean_multiplier(0.1f, 0.05f, 2);
  const int8_t z[8] = {10, 11, 20, 30, 0, 1, -118, -118};
  tightfit::reduce_mean_tflite(p, z, y);
  CHECK(y[0] == 4);     // mean 0.5 -> 1 + 3
  CHECK(y[1] == 33);    // mean 15 -> 30 + 3
  CHECK(y[2] == -16);   // mean -9.5 -> -19 + 3
  CHECK(y[3] == -128);  // mean -128 -> -256 + 3: clamped
}

TEST_CASE("TFLite's QUANTIZE rounds a tie away from zero, QuantizeLinear to even", "[runtime][numerics][tflite]") {
  CHECK(tightfit::quantize_tflite<std::int8_t>(0.25f, 0.5f, 0) == 1);  // 0.5
  CHECK(tightfit::quantize_linear<std::int8_t>(0.25f, 0.5f, 0) == 0);
  CHECK(tightfit::quantize_tflite<std::int8_t>(-0.25f, 0.5f, 0) == -1);
  CHECK(tightfit::quantize_linear<std::int8_t>(-0.25f, 0.5f, 0) == 0);
  CHECK(tightfit::quantize_tflite<std::int8_t>(1.25f, 0.5f, 3) == 3 + 3);  // 2.5
  CHECK(tightfit::quantize_linear<std::int8_t>(1.25f, 0.5f, 3) == 2 + 3);
  CHECK(tightfit::quantize_tflite<std::int8_t>(-0.75f, 0.5f, 0) == -2);     // -1.5: both
  CHECK(tightfit::quantize_tflite<std::int8_t>(0.2499999f, 0.5f, 0) == 0);  // just below the tie
  CHECK(tightfit::quantize_tflite<std::int8_t>(100.0f, 0.5f, -3) == 127);   // saturated
  CHECK(tightfit::quantize_tflite<std::uint8_t>(-100.0f, 0.5f, 10) == 0);
}
