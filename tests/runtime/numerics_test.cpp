// The float primitives under the kernels: rounding and the fused multiply-add
// that stands in for the FMA instructions of ORT's AVX2 kernels on cores
// without one.
#include <catch2/catch.hpp>

#include <cfenv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>

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
    for (const int32_t acc : {16777217, 16777219, -16777217, 33554435, INT32_MAX, INT32_MIN, INT32_MIN + 1, 0, 1, -1, 3, -3}) {
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
