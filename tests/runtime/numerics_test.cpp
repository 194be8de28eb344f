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
