// The overlap contract (kernels.hpp): every kernel that states a distance computes the same
// bytes with its output that many bytes below its input, overlapping it, as with separate
// buffers; and one byte less corrupts the output for some input, so the stated distance is
// tight, not generous. Random shapes and data; the portable kernels (what the host compiles).
// The DSP kernels run the same check in QEMU (tests/firmware/kernels).
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "tightfit/kernels.hpp"

namespace {

using Bytes = std::vector<uint8_t>;
// Runs a kernel reading `in` and writing `out` (both byte pointers into some buffer).
using Kernel = std::function<void(const uint8_t* in, uint8_t* out)>;

std::mt19937 rng(20261130);
int32_t uniform(int32_t lo, int32_t hi) { return std::uniform_int_distribution<int32_t>(lo, hi)(rng); }

Bytes random_bytes(size_t n) {
  Bytes b(n);
  for (auto& x : b) x = static_cast<uint8_t>(uniform(0, 255));
  return b;
}

// The output of `kernel` on `input` with the output `distance` bytes below the input (negative:
// above), in one buffer.
Bytes run_overlapped(const Kernel& kernel, const Bytes& input, size_t out_bytes, int64_t distance) {
  const int64_t out_at = distance < 0 ? -distance : 0;
  const int64_t in_at = out_at + distance;
  Bytes memory(static_cast<size_t>(std::max<int64_t>(in_at + static_cast<int64_t>(input.size()),
                                                     out_at + static_cast<int64_t>(out_bytes))) +
                   8,
               0xA5);
  std::memcpy(memory.data() + in_at, input.data(), input.size());
  kernel(memory.data() + in_at, memory.data() + out_at);
  return Bytes(memory.begin() + out_at, memory.begin() + out_at + static_cast<int64_t>(out_bytes));
}

Bytes run_apart(const Kernel& kernel, const Bytes& input, size_t out_bytes) {
  Bytes in = input, out(out_bytes, 0x5A);
  kernel(in.data(), out.data());
  return out;
}

// At `distance` (and a few bytes more) the overlapped output equals the separate one on every
// try; one granule nearer than `tight_distance` some try differs (unless `tight_distance` is
// nullopt). The output lies below the input, or `above` it for a kernel run backwards.
// Returns whether the nearer run differed; `require_tight` false leaves that to the caller (a
// max pool can only show an overwritten byte that beats its window's maximum). `granule`: the
// input's element size, so that every distance tried keeps its elements aligned (a float one
// byte off its alignment is undefined behaviour, and the planner never places one there).
bool check_distance(const std::string& what, const Kernel& kernel, size_t in_bytes, size_t out_bytes, int32_t distance,
                    std::optional<int32_t> tight_distance, bool above = false, bool require_tight = true,
                    int32_t granule = 1) {
  INFO(what << ": in " << in_bytes << " B, out " << out_bytes << " B, distance " << distance
            << (above ? " above" : ""));
  const auto run = [&](const Bytes& input, int64_t d) {
    return run_overlapped(kernel, input, out_bytes, above ? -d : d);
  };
  REQUIRE(distance >= 0);
  REQUIRE(tight_distance.value_or(distance) <= distance);
  bool corrupted = false;
  for (int attempt = 0; attempt < 40; ++attempt) {
    const Bytes input = random_bytes(in_bytes);
    const Bytes expected = run_apart(kernel, input, out_bytes);
    for (const int32_t more : {0, 1, 3}) REQUIRE(run(input, distance + more * granule) == expected);
    if (tight_distance && !corrupted && run(input, *tight_distance - granule) != expected) corrupted = true;
    if ((corrupted || !tight_distance) && attempt >= 3) break;
  }
  if (tight_distance && require_tight) CHECK(corrupted);
  return corrupted;
}

// Weights far from 0, so that every input byte a sum reads moves it (a corrupted byte times a
// zero weight would go unseen).
Bytes random_weights(size_t n) {
  Bytes b(n);
  for (auto& x : b) x = static_cast<uint8_t>(static_cast<int8_t>(uniform(16, 127) * (uniform(0, 1) ? 1 : -1)));
  return b;
}

tightfit::ConvParams random_conv(int kind) {
  tightfit::ConvParams p{};
  for (;;) {
    p.batch = uniform(1, 2);
    p.in_h = uniform(1, 7), p.in_w = uniform(1, 7);
    p.kernel_h = uniform(1, 3), p.kernel_w = uniform(1, 3);
    p.stride_h = uniform(1, 2), p.stride_w = uniform(1, 2);
    p.dilation_h = uniform(1, 2), p.dilation_w = 1;
    p.pad_top = uniform(0, 1), p.pad_left = uniform(0, 1);
    const int32_t pad_bottom = uniform(0, 1), pad_right = uniform(0, 1);
    if (kind == 0) {  // pointwise
      p.kernel_h = p.kernel_w = p.stride_h = p.stride_w = p.dilation_h = 1;
      p.pad_top = p.pad_left = 0;
      p.in_c = uniform(1, 12), p.out_c = uniform(1, 12), p.groups = 1;
    } else if (kind == 1) {  // depthwise
      p.in_c = uniform(2, 9), p.groups = p.in_c, p.out_c = p.in_c * uniform(1, 2);
    } else if (kind == 2) {  // general
      p.in_c = uniform(1, 6), p.out_c = uniform(1, 10), p.groups = 1;
    } else {  // grouped
      p.groups = uniform(2, 3), p.in_c = p.groups * uniform(1, 3), p.out_c = p.groups * uniform(1, 3);
    }
    const int32_t span_h = p.in_h + p.pad_top + pad_bottom - p.dilation_h * (p.kernel_h - 1) - 1;
    const int32_t span_w = p.in_w + p.pad_left + pad_right - (p.kernel_w - 1) - 1;
    if (kind == 0 || (span_h >= 0 && span_w >= 0)) {
      p.out_h = kind == 0 ? p.in_h : span_h / p.stride_h + 1;
      p.out_w = kind == 0 ? p.in_w : span_w / p.stride_w + 1;
      if (kind == 1 || !tightfit::conv_is_depthwise(p)) break;
    }
  }
  p.input_zero_point = uniform(-128, 127);
  p.weight_zero_point = 0;
  p.output_zero_point = uniform(-20, 20);
  p.output_min = -128, p.output_max = 127;
  p.per_channel = 0;
  return p;
}

}  // namespace

// A multiplier that maps sums of `terms` random products onto a few hundred levels, so that a
// corrupted input byte shows in the output instead of vanishing into saturation.
float spread(int32_t terms) { return 1.0f / (100.0f * static_cast<float>(terms)); }

// Random convolutions of every path (backwards: the depthwise and pointwise ones, the paths
// that run backwards) checked at their distance, or up distance, and one byte nearer. The host
// runs the portable loops: the pointwise contract also covers the DSP order, so tightness is
// checked against the portable order's own distance.
void check_conv_distances(bool backwards) {
  for (int kind = 0; kind < (backwards ? 2 : 4); ++kind) {
    for (int n = 0; n < 60; ++n) {
      const tightfit::ConvParams p = random_conv(kind);
      const float multiplier = spread(p.kernel_h * p.kernel_w * (p.in_c / p.groups));
      const Bytes weights =
          random_weights(static_cast<size_t>(p.out_c * p.kernel_h * p.kernel_w * (p.in_c / p.groups)));
      std::vector<int32_t> bias(static_cast<size_t>(p.out_c));
      for (auto& b : bias) b = uniform(-500, 500);
      const size_t in_bytes = static_cast<size_t>(p.batch * p.in_h * p.in_w * p.in_c);
      const size_t out_bytes = static_cast<size_t>(p.batch * p.out_h * p.out_w * p.out_c);
      const Kernel kernel = [&](const uint8_t* in, uint8_t* out) {
        const auto* x = reinterpret_cast<const int8_t*>(in);
        const auto* w = reinterpret_cast<const int8_t*>(weights.data());
        auto* y = reinterpret_cast<int8_t*>(out);
        backwards ? tightfit::conv<int8_t, int8_t, true>(p, x, w, bias.data(), &multiplier, y)
                  : tightfit::conv(p, x, w, bias.data(), &multiplier, y);
      };
      const int32_t rows = p.batch * p.in_h * p.in_w;
      const int32_t distance = backwards ? tightfit::conv_up_distance(p) : tightfit::conv_distance(p);
      const int32_t portable = !tightfit::conv_is_pointwise(p) ? distance
                               : backwards ? tightfit::detail::portable_matmul_up_distance(rows, p.in_c, p.out_c)
                                           : tightfit::detail::portable_matmul_distance(rows, p.in_c, p.out_c);
      // Nothing to overlap, or nothing nearer than 0 to try.
      if (static_cast<size_t>(portable) >= (backwards ? in_bytes : out_bytes) || portable == 0) continue;
      check_distance((backwards ? "backwards conv kind " : "conv kind ") + std::to_string(kind), kernel, in_bytes,
                     out_bytes, distance, portable, backwards);
    }
  }
}

TEST_CASE("convolutions compute the same bytes over their input at their distance, not one byte nearer") {
  check_conv_distances(false);
}

TEST_CASE(
    "run backwards, convolutions compute the same bytes above their input at their up distance, not one byte nearer") {
  check_conv_distances(true);
}

TEST_CASE("fully connected computes the same bytes over its input at its distance, not one byte nearer") {
  for (int n = 0; n < 60; ++n) {
    const tightfit::FullyConnectedParams p{
        uniform(1, 6), uniform(1, 12), uniform(1, 12), uniform(-128, 127), 0, 3, -128, 127, 0};
    const float multiplier = spread(p.in_features);
    const Bytes weights = random_weights(static_cast<size_t>(p.in_features * p.out_features));
    const size_t in_bytes = static_cast<size_t>(p.rows * p.in_features);
    const size_t out_bytes = static_cast<size_t>(p.rows * p.out_features);
    const Kernel kernel = [&](const uint8_t* in, uint8_t* out) {
      tightfit::fully_connected(p, reinterpret_cast<const int8_t*>(in), reinterpret_cast<const int8_t*>(weights.data()),
                                nullptr, &multiplier, reinterpret_cast<int8_t*>(out));
    };
    const int32_t portable = tightfit::detail::portable_matmul_distance(p.rows, p.in_features, p.out_features);
    if (static_cast<size_t>(portable) >= out_bytes || portable == 0) continue;
    check_distance("fully connected", kernel, in_bytes, out_bytes, tightfit::fully_connected_distance(p), portable);
    const Kernel backwards = [&](const uint8_t* in, uint8_t* out) {
      tightfit::fully_connected<int8_t, int8_t, true>(p, reinterpret_cast<const int8_t*>(in),
                                                      reinterpret_cast<const int8_t*>(weights.data()), nullptr,
                                                      &multiplier, reinterpret_cast<int8_t*>(out));
    };
    const int32_t up = tightfit::detail::portable_matmul_up_distance(p.rows, p.in_features, p.out_features);
    if (static_cast<size_t>(up) >= in_bytes || up == 0) continue;
    check_distance("backwards fully connected", backwards, in_bytes, out_bytes,
                   tightfit::fully_connected_up_distance(p), up, true);
  }
}

TEST_CASE("pools compute the same bytes over their input at their distance, not one byte nearer") {
  int max_pools = 0, max_pools_corrupted = 0;
  for (int n = 0; n < 80; ++n) {
    const tightfit::ConvParams g = random_conv(2);  // a window geometry
    const int32_t channels = uniform(1, 6);
    const size_t in_bytes = static_cast<size_t>(g.batch * g.in_h * g.in_w * channels);
    const size_t out_bytes = static_cast<size_t>(g.batch * g.out_h * g.out_w * channels);
    if (n % 2 == 0) {
      const tightfit::MaxPoolParams p{g.batch,      g.in_h,       g.in_w,     channels,   g.out_h,
                                      g.out_w,      g.kernel_h,   g.kernel_w, g.stride_h, g.stride_w,
                                      g.dilation_h, g.dilation_w, g.pad_top,  g.pad_left};
      const int32_t distance = tightfit::max_pool_distance(p);
      if (static_cast<size_t>(distance) >= out_bytes || distance == 0) continue;
      ++max_pools;
      max_pools_corrupted += check_distance(
          "max pool",
          [&](const uint8_t* in, uint8_t* out) {
            tightfit::max_pool(p, reinterpret_cast<const int8_t*>(in), reinterpret_cast<int8_t*>(out));
          },
          in_bytes, out_bytes, distance, distance, false, false);
    } else {
      if (g.dilation_h != 1) continue;
      const int32_t pad_bottom = std::max(0, (g.out_h - 1) * g.stride_h + g.kernel_h - g.in_h - g.pad_top);
      const int32_t pad_right = std::max(0, (g.out_w - 1) * g.stride_w + g.kernel_w - g.in_w - g.pad_left);
      const tightfit::AveragePoolParams p{g.batch,    g.in_h,     g.in_w,     channels,   g.out_h,   g.out_w,
                                          g.kernel_h, g.kernel_w, g.stride_h, g.stride_w, g.pad_top, g.pad_left,
                                          pad_bottom, pad_right,  0,          0.05f,      3,         0.04f,
                                          -2,         -128,       127};
      const int32_t distance = tightfit::average_pool_distance(p);
      if (static_cast<size_t>(distance) >= out_bytes || distance == 0) continue;
      check_distance(
          "average pool",
          [&](const uint8_t* in, uint8_t* out) {
            tightfit::average_pool(p, reinterpret_cast<const int8_t*>(in), reinterpret_cast<int8_t*>(out));
          },
          in_bytes, out_bytes, distance, distance);
    }
  }
  // Most max pools show the byte one nearer overwrites; some cannot (the value written is no
  // more than the maximum of the window that reads it).
  CHECK(max_pools_corrupted * 2 > max_pools);
}

TEST_CASE("element-wise kernels compute in place, and corrupt their output one byte above their input") {
  const int32_t count = 37;
  uint8_t table[256];
  for (int i = 0; i < 256; ++i) table[i] = static_cast<uint8_t>(uniform(0, 255));
  check_distance(
      "lookup",
      [&](const uint8_t* in, uint8_t* out) {
        tightfit::lookup(table, reinterpret_cast<const int8_t*>(in), reinterpret_cast<int8_t*>(out), count);
      },
      count, count, tightfit::lookup_distance(), tightfit::lookup_distance());
  const tightfit::ClampParams clamp{count, -100, 90};
  check_distance(
      "clamp",
      [&](const uint8_t* in, uint8_t* out) {
        tightfit::clamp(clamp, reinterpret_cast<const int8_t*>(in), reinterpret_cast<int8_t*>(out));
      },
      count, count, tightfit::clamp_distance(), tightfit::clamp_distance());
  const tightfit::SoftmaxParams softmax{3, 11, -128, 256.0f, -128, 127, 1};
  float exp_table[256];
  for (int i = 0; i < 256; ++i) exp_table[i] = static_cast<float>(i + 1) / 256.0f;
  check_distance(
      "softmax",
      [&](const uint8_t* in, uint8_t* out) {
        tightfit::softmax(softmax, exp_table, reinterpret_cast<const int8_t*>(in), reinterpret_cast<int8_t*>(out));
      },
      33, 33, tightfit::softmax_distance(), tightfit::softmax_distance());
  const tightfit::GlobalAveragePoolParams gap{2, 9, 5, 3, -4, 0.1f, -128, 127};
  check_distance(
      "global average pool",
      [&](const uint8_t* in, uint8_t* out) {
        tightfit::global_average_pool(gap, reinterpret_cast<const int8_t*>(in), reinterpret_cast<int8_t*>(out));
      },
      2 * 9 * 5, 2 * 5, tightfit::global_average_pool_distance(gap), tightfit::global_average_pool_distance(gap));
  // Columns 0..2 of a [3, 5] input (one more byte nearer, output element 1 lands on input 1,
  // not yet read).
  const tightfit::SliceParams slice{{1, 1, 3, 3}, {0, 0, 5, 1}, 0};
  check_distance(
      "slice",
      [&](const uint8_t* in, uint8_t* out) {
        tightfit::slice(slice, reinterpret_cast<const int8_t*>(in), reinterpret_cast<int8_t*>(out));
      },
      15, 9, tightfit::slice_distance(), tightfit::slice_distance());
  // The int32 input is read 4 bytes at a time, so the true limit lies 3 bytes above the input;
  // the contract stops at 0 (the output starts at or below its input): safe, not tight.
  const tightfit::AccumulatorRequantizeParams rq{count, 1e-7f, 0, 0.5f, 1, -128, 127};
  check_distance(
      "requantize accumulator",
      [&](const uint8_t* in, uint8_t* out) {
        tightfit::requantize_accumulator(rq, reinterpret_cast<const int32_t*>(in), reinterpret_cast<int8_t*>(out));
      },
      4 * count, count, tightfit::requantize_accumulator_distance(), std::nullopt, false, true, 4);
}

TEST_CASE("add and mul write over an operand of the output's shape, never over a broadcast one") {
  // [2,3,4] + [2,3,4] elementwise, and + [1,3,1] broadcast as b.
  const tightfit::BinaryShape same{{1, 2, 3, 4}, {0, 12, 4, 1}, {0, 12, 4, 1}};
  const tightfit::BinaryShape broadcast{{1, 2, 3, 4}, {0, 12, 4, 1}, {0, 0, 1, 0}};
  CHECK(tightfit::detail::binary_distance(broadcast, 1) == tightfit::kNoOverlap);
  CHECK(tightfit::detail::binary_distance(broadcast, 0) == 0);
  const Bytes other = random_bytes(24);
  for (int operand = 0; operand < 2; ++operand) {
    const tightfit::AddParams add{same, tightfit::BroadcastForm::kElementwise, 0, 0, 0.7f, 0.4f, 1.5f, -128, 127};
    check_distance(
        "add",
        [&](const uint8_t* in, uint8_t* out) {
          const auto* x = reinterpret_cast<const int8_t*>(in);
          const auto* y = reinterpret_cast<const int8_t*>(other.data());
          tightfit::add(add, operand == 0 ? x : y, operand == 0 ? y : x, reinterpret_cast<int8_t*>(out));
        },
        24, 24, tightfit::add_distance(add, operand), 0);
    const tightfit::MulParams mul{same, 3, -2, 0.01f, 1.0f, -128, 127};
    check_distance(
        "mul",
        [&](const uint8_t* in, uint8_t* out) {
          const auto* x = reinterpret_cast<const int8_t*>(in);
          const auto* y = reinterpret_cast<const int8_t*>(other.data());
          tightfit::mul(mul, operand == 0 ? x : y, operand == 0 ? y : x, reinterpret_cast<int8_t*>(out));
        },
        24, 24, tightfit::mul_distance(mul, operand), 0);
  }
}

TEST_CASE("the pointwise distance covers the DSP loop order as well as the portable one") {
  // 125 pixels of 64 channels to 64 (DS-CNN): the portable loops need 63 bytes, the DSP ones,
  // which write a pair of rows while the first row's input is still read, 126.
  CHECK(tightfit::detail::portable_matmul_distance(125, 64, 64) == 63);
  CHECK(tightfit::detail::dsp_matmul_distance(125, 64, 64) == 126);
  const tightfit::ConvParams p{1, 25, 5, 64, 25, 5, 64, 1, 1, 1, 1, 1, 1, 0, 0, 1, 0, 0, 0, -128, 127, 0, 0};
  CHECK(tightfit::conv_pointwise_distance(p) == 126);
  // Backwards (output above): a row of the input and, for the DSP order, the pair's second row.
  CHECK(tightfit::detail::portable_matmul_up_distance(125, 64, 64) == 64);
  CHECK(tightfit::detail::dsp_matmul_up_distance(125, 64, 64) == 128);
  CHECK(tightfit::conv_pointwise_up_distance(p) == 128);
}

TEST_CASE(
    "the float islands' element-wise kernels compute in place, and corrupt their output one element above their "
    "input") {
  const int32_t count = 24;
  const tightfit::BinaryShape same{{1, 2, 3, 4}, {0, 12, 4, 1}, {0, 12, 4, 1}};
  const Bytes other = random_bytes(4 * count);
  const auto* y = reinterpret_cast<const float*>(other.data());
  using Binary = void (*)(const tightfit::BinaryShape&, const float*, const float*, float*);
  const std::pair<const char*, Binary> binaries[] = {{"add_float", tightfit::add_float},
                                                     {"sub_float", tightfit::sub_float},
                                                     {"mul_float", tightfit::mul_float},
                                                     {"div_float", tightfit::div_float}};
  for (const auto& [name, kernel] : binaries)
    for (int operand = 0; operand < 2; ++operand)
      check_distance(
          name,
          [&, kernel = kernel](const uint8_t* in, uint8_t* out) {
            const auto* x = reinterpret_cast<const float*>(in);
            kernel(same, operand == 0 ? x : y, operand == 0 ? y : x, reinterpret_cast<float*>(out));
          },
          4 * count, 4 * count, tightfit::detail::binary_distance(same, operand), 0, false, true, 4);
  check_distance(
      "pow_float",
      [&](const uint8_t* in, uint8_t* out) {
        tightfit::pow_float(count, 2, reinterpret_cast<const float*>(in), reinterpret_cast<float*>(out));
      },
      4 * count, 4 * count, 0, 0, false, true, 4);
  check_distance(
      "sqrt_float",
      [&](const uint8_t* in, uint8_t* out) {
        tightfit::sqrt_float(count, reinterpret_cast<const float*>(in), reinterpret_cast<float*>(out));
      },
      4 * count, 4 * count, 0, 0, false, true, 4);
}

TEST_CASE("concat copies an input it overlaps at that input's distance, and corrupts it one byte nearer") {
  uint8_t table[256];
  for (int i = 0; i < 256; ++i) table[i] = static_cast<uint8_t>(uniform(0, 255));
  int checked = 0;
  for (int n = 0; n < 80; ++n) {
    const int32_t count = uniform(2, 4), outer = uniform(1, 6), overlapped = uniform(0, count - 1);
    const bool requantize = uniform(0, 1) == 1;
    std::vector<int32_t> inner(static_cast<size_t>(count));
    int32_t output_inner = 0;
    for (auto& e : inner) output_inner += (e = uniform(1, 8));
    std::vector<Bytes> others;
    for (const int32_t e : inner) others.push_back(random_bytes(static_cast<size_t>(outer * e)));
    const tightfit::ConcatParams p{count, outer, output_inner, inner.data()};
    const int32_t distance = tightfit::concat_distance(p, overlapped);
    const size_t in_bytes = static_cast<size_t>(outer * inner[static_cast<size_t>(overlapped)]);
    const size_t out_bytes = static_cast<size_t>(outer * output_inner);
    if (static_cast<size_t>(distance) >= out_bytes) continue;  // they cannot share a byte
    ++checked;
    check_distance(
        "concat of " + std::to_string(count) + " inputs over input " + std::to_string(overlapped),
        [&](const uint8_t* in, uint8_t* out) {
          std::vector<const int8_t*> inputs;
          std::vector<const uint8_t*> tables;
          for (int32_t i = 0; i < count; ++i) {
            inputs.push_back(
                reinterpret_cast<const int8_t*>(i == overlapped ? in : others[static_cast<size_t>(i)].data()));
            tables.push_back(requantize ? table : nullptr);
          }
          tightfit::concat(p, inputs.data(), tables.data(), reinterpret_cast<int8_t*>(out));
        },
        in_bytes, out_bytes, distance, distance > 0 ? std::optional<int32_t>(distance) : std::nullopt);
  }
  CHECK(checked > 20);
}
