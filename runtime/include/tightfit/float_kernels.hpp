// tightfit runtime: the float32 kernels of float islands (docs/operators.md, "Float islands").
//
// ONNX Runtime's quantizer leaves an operator with no quantized form (Pow, Sqrt, Div by an
// activation, a ReduceMean whose result goes on in float...) in float between DequantizeLinear and
// QuantizeLinear; tightfit runs such an island as these kernels on float32 buffers of the arena
// (quantize() and dequantize() in kernels.hpp cross into and out of it). On a core with a
// single-precision FPU the compiler uses it; on one without (the Cortex-M0+) the arithmetic is
// the compiler's soft float, and sqrt_float() is computed in integers. Every operation is one IEEE
// single-precision operation rounded to nearest, as ORT's float kernels compute them one by one
// (no fused multiply-add: the runtime is built with -ffp-contract=off); ReduceMean adds in ORT's
// order (Eigen's packet order over trailing axes, index order otherwise). docs/numerics.md states
// the bound this gives against ORT.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tightfit/float_activations.hpp"  // Sigmoid, Tanh: MLAS's rational approximations
#include "tightfit/float_rnn.hpp"          // LSTM, GRU
#include "tightfit/float_math.hpp"         // Exp, Log, Erf, Softmax: ORT's (MLAS's, Eigen's) approximations
#include "tightfit/reduce_loops.hpp"       // ReduceMean, ReduceMax, ReduceMin
#include "tightfit/params.hpp"

namespace tightfit {

// The correctly rounded square root (IEEE 754 squareRoot, as std::sqrt): the FPU's VSQRT where
// the core has one, else in integers: the significand's integer square root, one bit more than
// float keeps, rounded to nearest (a square root is never exactly halfway). sqrt(-0) = -0, a
// negative or NaN input gives NaN, +inf gives +inf.
inline float sqrt_float(float x) {
#if defined(__ARM_FP) && (__ARM_FP & 4)
  float r;
  __asm__("vsqrt.f32 %0, %1" : "=t"(r) : "t"(x));
  return r;
#else
  uint32_t u;
  __builtin_memcpy(&u, &x, sizeof u);
  if ((u & 0x7fffffffu) == 0) return x;  // +0, -0
  if (u & 0x80000000u) {                 // negative or a NaN with the sign bit
    const uint32_t nan = 0x7fc00000u;
    float r;
    __builtin_memcpy(&r, &nan, sizeof r);
    return (u & 0x7fffffffu) > 0x7f800000u ? x : r;
  }
  if (u >= 0x7f800000u) return x;  // +inf, NaN
  int32_t e = static_cast<int32_t>(u >> 23);
  uint32_t m = u & 0x7fffffu;
  if (e == 0) {  // subnormal: normalize
    e = 1;
    while (!(m & 0x800000u)) {
      m <<= 1;
      --e;
    }
  } else {
    m |= 0x800000u;
  }
  // x = m * 2^(e - 150) = (m / 2^23) * 2^q with q = e - 127; make q even.
  int32_t q = e - 127;
  if (q & 1) {
    m <<= 1;
    q -= 1;
  }
  // sqrt(x) = sqrt(m * 2^23) * 2^-23 * 2^(q/2), sqrt(m * 2^23) in [2^23, 2^24).
  uint64_t op = static_cast<uint64_t>(m) << 23, root = 0, one = 1ull << 46;
  while (one > op) one >>= 2;
  while (one) {
    if (op >= root + one) {
      op -= root + one;
      root = (root >> 1) + one;
    } else {
      root >>= 1;
    }
    one >>= 2;
  }
  if (op > root) ++root;  // op = M - root^2; above root: M > (root + 1/2)^2
  // root in [2^23, 2^24]: its leading bit adds the exponent's last 1 (2^24 carries into it).
  const uint32_t bits = (static_cast<uint32_t>(q / 2 + 126) << 23) + static_cast<uint32_t>(root);
  float r;
  __builtin_memcpy(&r, &bits, sizeof r);
  return r;
#endif
}

namespace detail {

// fn(a, b) over a BinaryShape's index space, output elements in order.
template <typename Out, typename Fn>
inline void float_binary(const BinaryShape& s, const float* a, const float* b, Out* out, Fn fn) {
  int32_t o = 0;
  for (int32_t i0 = 0; i0 < s.out_dims[0]; ++i0)
    for (int32_t i1 = 0; i1 < s.out_dims[1]; ++i1)
      for (int32_t i2 = 0; i2 < s.out_dims[2]; ++i2) {
        const int32_t a_base = i0 * s.a_strides[0] + i1 * s.a_strides[1] + i2 * s.a_strides[2];
        const int32_t b_base = i0 * s.b_strides[0] + i1 * s.b_strides[1] + i2 * s.b_strides[2];
        for (int32_t i3 = 0; i3 < s.out_dims[3]; ++i3, ++o)
          out[o] = fn(a[a_base + i3 * s.a_strides[3]], b[b_base + i3 * s.b_strides[3]]);
      }
}

}  // namespace detail

// ONNX Add, Sub, Mul, Div on float32 with numpy broadcasting (ORT: one IEEE operation each).
inline void add_float(const BinaryShape& s, const float* a, const float* b, float* out) {
  detail::float_binary(s, a, b, out, [](float x, float y) { return x + y; });
}
inline void sub_float(const BinaryShape& s, const float* a, const float* b, float* out) {
  detail::float_binary(s, a, b, out, [](float x, float y) { return x - y; });
}
inline void mul_float(const BinaryShape& s, const float* a, const float* b, float* out) {
  detail::float_binary(s, a, b, out, [](float x, float y) { return x * y; });
}
inline void div_float(const BinaryShape& s, const float* a, const float* b, float* out) {
  detail::float_binary(s, a, b, out, [](float x, float y) { return x / y; });
}

// ONNX Greater, GreaterOrEqual, Less, LessOrEqual, Equal on float32 with numpy broadcasting, into
// bools: one IEEE comparison each, false when either operand is NaN (as ORT's, and -0 == +0).
inline void greater_float(const BinaryShape& s, const float* a, const float* b, bool* out) {
  detail::float_binary(s, a, b, out, [](float x, float y) { return x > y; });
}
inline void greater_or_equal_float(const BinaryShape& s, const float* a, const float* b, bool* out) {
  detail::float_binary(s, a, b, out, [](float x, float y) { return x >= y; });
}
inline void less_float(const BinaryShape& s, const float* a, const float* b, bool* out) {
  detail::float_binary(s, a, b, out, [](float x, float y) { return x < y; });
}
inline void less_or_equal_float(const BinaryShape& s, const float* a, const float* b, bool* out) {
  detail::float_binary(s, a, b, out, [](float x, float y) { return x <= y; });
}
inline void equal_float(const BinaryShape& s, const float* a, const float* b, bool* out) {
  detail::float_binary(s, a, b, out, [](float x, float y) { return x == y; });
}

// An If's branch result into the If's output: `bytes` bytes, forwards.
inline void copy_bytes(int32_t bytes, const void* from, void* to) {
  const unsigned char* f = static_cast<const unsigned char*>(from);
  unsigned char* t = static_cast<unsigned char*>(to);
  for (int32_t i = 0; i < bytes; ++i) t[i] = f[i];
}

// ONNX Pow by a constant whole exponent of 2 or 3 (the exponents ORT computes by multiplying:
// x * x and x * x * x, left to right).
inline void pow_float(int32_t count, int32_t exponent, const float* in, float* out) {
  if (exponent == 2) {
    for (int32_t i = 0; i < count; ++i) out[i] = in[i] * in[i];
  } else {
    for (int32_t i = 0; i < count; ++i) out[i] = in[i] * in[i] * in[i];
  }
}

// ONNX Sqrt on float32.
inline void sqrt_float(int32_t count, const float* in, float* out) {
  for (int32_t i = 0; i < count; ++i) out[i] = sqrt_float(in[i]);
}

namespace detail {

// The sum of x[0..size) in the order of Eigen's vectorized sum() with 4-float packets (SSE), which
// ORT's ReduceSum/ReduceMean take over contiguous elements (ReduceAggregatorSum::aggall): elements
// before the first 16-byte boundary are left for the end; from it, two packet accumulators take 8
// elements a step, are added, then one more packet if 4 remain; the packet is reduced as
// (p0 + p2) + (p1 + p3); then the elements before the boundary, then the tail, one by one. Fewer
// than 4 elements past the boundary: in index order. `misalignment`: x's element offset from a
// 16-byte boundary in ORT's buffer (ORT allocates tensors 64-byte aligned).
inline float eigen_sum(const float* x, int32_t size, int32_t misalignment) {
  int32_t start = (4 - misalignment) & 3;
  if (start > size) start = size;
  const int32_t aligned_size2 = (size - start) / 8 * 8, aligned_size = (size - start) / 4 * 4;
  const int32_t end2 = start + aligned_size2, end = start + aligned_size;
  if (aligned_size == 0) {
    float sum = x[0];
    for (int32_t i = 1; i < size; ++i) sum += x[i];
    return sum;
  }
  float p0[4];
  for (int k = 0; k < 4; ++k) p0[k] = x[start + k];
  if (aligned_size > 4) {
    float p1[4];
    for (int k = 0; k < 4; ++k) p1[k] = x[start + 4 + k];
    for (int32_t i = start + 8; i < end2; i += 8)
      for (int k = 0; k < 4; ++k) {
        p0[k] += x[i + k];
        p1[k] += x[i + 4 + k];
      }
    for (int k = 0; k < 4; ++k) p0[k] += p1[k];
    if (end > end2)
      for (int k = 0; k < 4; ++k) p0[k] += x[end2 + k];
  }
  float sum = (p0[0] + p0[2]) + (p0[1] + p0[3]);
  for (int32_t i = 0; i < start; ++i) sum += x[i];
  for (int32_t i = end; i < size; ++i) sum += x[i];
  return sum;
}

}  // namespace detail

// ONNX ReduceMean on float32 over trailing axes (ORT's FastReduceKR): `rows` rows of `count`
// contiguous elements, each summed as ORT's Eigen sum does (detail::eigen_sum), divided by the count.
inline void reduce_mean_float_rows(int32_t rows, int32_t count, const float* in, float* out) {
  const float n = static_cast<float>(count);
  for (int32_t r = 0; r < rows; ++r)
    out[r] = detail::eigen_sum(in + static_cast<std::ptrdiff_t>(r) * count, count, (r * count) & 3) / n;
}

// ONNX ReduceMean on float32 over any other axes (the fields of ReduceMeanParams past `count`
// unused): the reduced elements added in index order (ORT's FastReduceRK: the first, then each
// next), the sum divided by the count.
inline void reduce_mean_float(const ReduceMeanParams& p, const float* in, float* out) {
  const float count = static_cast<float>(p.count);
  // -0 + x is x exactly: the same as starting from the first element.
  detail::reduce_in_index_order(
      p, in, [](const float*) { return -0.0f; }, [](float sum, float x) { return sum + x; },
      [&](int32_t o, float sum) { out[o] = sum / count; });
}

// ONNX ReduceMax (max true) or ReduceMin on float32 (ReduceMeanParams' layout, the fields past
// `count` unused): the reduced elements compared in index order from the first, exact.
inline void reduce_extreme_float(const ReduceMeanParams& p, const float* in, float* out, bool max) {
  detail::reduce_in_index_order(
      p, in, [](const float* first) { return *first; },
      [max](float best, float v) { return max ? (v > best ? v : best) : (v < best ? v : best); },
      [&](int32_t o, float best) { out[o] = best; });
}

// ONNX Clip on float32 with bounds read at run time (one element each; nullptr: none), as ORT:
// std::min(std::max(x, lo), hi), so a NaN x stays NaN.
inline void clip_float(int32_t count, const float* in, const float* lo, const float* hi, float* out) {
  for (int32_t i = 0; i < count; ++i) {
    float v = in[i];
    if (lo != nullptr) v = v < *lo ? *lo : v;
    if (hi != nullptr) v = *hi < v ? *hi : v;
    out[i] = v;
  }
}

// A float Gemm/MatMul with constant weights: out[r][j] = sum over k of in[r][k] * w[j][k] (w rows
// [m, k] in flash), summed from 0 in index order, then bias[j] added when there is one. ORT's
// Gemm (gemm.cc) copies the bias into the output first, then MLAS SGEMM adds each block of K's
// products to it, fused (FMA) on x86, so the two differ by a few ulp of the sum's terms; the same
// bits here on every core (-ffp-contract=off).
inline void fully_connected_float(int32_t rows, int32_t k, int32_t m, const float* in, const float* w,
                                  const float* bias, float* out) {
  for (int32_t r = 0; r < rows; ++r)
    for (int32_t j = 0; j < m; ++j) {
      float acc = 0.0f;
      for (int32_t i = 0; i < k; ++i) acc += in[r * k + i] * w[j * k + i];
      out[r * m + j] = bias != nullptr ? acc + bias[j] : acc;
    }
}

// ONNX Exp, Log and Erf on float32, element by element (float_math.hpp: MLAS's exp and erf,
// Eigen's log, as ORT's CPU kernels).
inline void exp_float(int32_t count, const float* in, float* out) {
  for (int32_t i = 0; i < count; ++i) out[i] = exp_f32(in[i]);
}

inline void log_float(int32_t count, const float* in, float* out) {
  for (int32_t i = 0; i < count; ++i) out[i] = log_f32(in[i]);
}

inline void erf_float(int32_t count, const float* in, float* out) {
  for (int32_t i = 0; i < count; ++i) out[i] = erf_f32(in[i]);
}

// ONNX Softmax on float32 over rows of `size` contiguous elements, as MlasComputeSoftmax: the row's
// maximum, exp(x - maximum) (softmax_exp) into the output while summing them in index order, then
// each times 1 / sum. In place works (out == in): each element is read before it is written.
inline void softmax_float(int32_t rows, int32_t size, const float* in, float* out) {
  for (int32_t r = 0; r < rows; ++r, in += size, out += size) {
    float maximum = -3.40282347e+38f;  // std::numeric_limits<float>::lowest()
    for (int32_t i = 0; i < size; ++i) maximum = maximum < in[i] ? in[i] : maximum;
    const float negative_maximum = -maximum;
    float sum = 0.0f;
    for (int32_t i = 0; i < size; ++i) {
      out[i] = softmax_exp(in[i], negative_maximum);
      sum += out[i];
    }
    const float scale = 1.0f / sum;
    for (int32_t i = 0; i < size; ++i) out[i] = scale * out[i];
  }
}

}  // namespace tightfit
