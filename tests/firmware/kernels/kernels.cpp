// Runs the target's fast kernels (tightfit::mve on a core with Helium, tightfit::dsp on one with
// the DSP extension, tightfit::scalar on ARMv6-M and RV32IMC) and
// tightfit::portable conv / fully connected (and pool and elementwise) kernels on the same random
// cases (every activation/weight type pair, odd and multiple-of-4 channel counts, pads, strides,
// dilations, groups, depthwise, zero points at the extremes too, fused clamps, per-channel
// multipliers, ONNX Runtime's float multipliers and TFLite's fixed-point ones, bias or none,
// unaligned buffers) and compares their outputs byte for byte; then
// runs each fast kernel with its output over its input at the stated overlap distance
// (kernels.hpp), forwards and (DSP, Helium) backwards, against the same bytes. Prints "TIGHTFIT kernel_cases=N
// mismatches=M dsp_paths=1" (mve_paths=1, scalar_paths=1) and exits 0 when M is 0 (1 otherwise; 3 when the target has
// no fast paths to check).
#include <tightfit/kernels.hpp>

#include <cstdint>
#include <type_traits>

#include "tightfit_board.h"

namespace {

// The fast paths this target compiles: Helium where the core has it, else the DSP extension.
#if TIGHTFIT_HAVE_MVE_KERNELS
namespace fast = tightfit::mve;
constexpr const char* kFastPaths = "mve_paths";
#elif TIGHTFIT_HAVE_DSP_KERNELS
namespace fast = tightfit::dsp;
constexpr const char* kFastPaths = "dsp_paths";
#elif TIGHTFIT_HAVE_SCALAR_KERNELS
namespace fast = tightfit::scalar;
constexpr const char* kFastPaths = "scalar_paths";
#endif

uint32_t state = 0x12345678u;
uint32_t next() {
  state ^= state << 13;
  state ^= state >> 17;
  state ^= state << 5;
  return state;
}
int32_t uniform(int32_t lo, int32_t hi) {
  return lo + static_cast<int32_t>(next() % static_cast<uint32_t>(hi - lo + 1));
}

constexpr int32_t kBytes = 24 * 1024;
alignas(16) uint8_t input_pool[kBytes + 4];
alignas(16) uint8_t weight_pool[kBytes + 4];
alignas(16) uint8_t out_dsp[kBytes];
alignas(16) uint8_t out_portable[kBytes];
int32_t bias_pool[512];
float multiplier_pool[512];
tightfit::QuantizedMultiplier quantized_multiplier_pool[512];  // TFLite's (--numerics tflite)

// The multipliers of a case: ONNX Runtime's floats or TFLite's fixed-point ones.
template <typename TM>
const TM* multipliers() {
  if constexpr (std::is_same_v<TM, float>) {
    return multiplier_pool;
  } else {
    return quantized_multiplier_pool;
  }
}

// Overlapped runs: the output at the start, the input copied `distance` bytes above it.
alignas(16) uint8_t shared_pool[2 * kBytes + 8];

uint32_t cases = 0, mismatches = 0;
uint32_t overlap_tight_checked = 0, overlap_tight_found = 0;

void fill(uint8_t* p, int32_t n, int32_t mode) {
  for (int32_t i = 0; i < n; ++i) {
    // mode 1: only the extremes, to drive the accumulators hard
    p[i] = mode == 1 ? ((next() & 1) ? 0x80 : 0x7F) ^ ((next() & 2) ? 0xFF : 0) : static_cast<uint8_t>(next());
  }
}

void fill_quant(int32_t out_c, bool per_channel, bool with_bias, int32_t acc_scale) {
  for (int32_t c = 0; c < out_c; ++c) {
    bias_pool[c] = with_bias ? uniform(-20000, 20000) : 0;
    // multipliers that map the accumulator range onto a few hundred levels
    multiplier_pool[c] = static_cast<float>(uniform(1, 1000)) / (1000.0f * static_cast<float>(acc_scale));
    // The same range in TFLite's terms (multiplier * 2^(shift - 31), multiplier in [2^30, 2^31)),
    // and one channel in 8 with a shift left first, whose products mostly saturate (and wrap).
    const int32_t log2_scale = 31 - __builtin_clz(static_cast<uint32_t>(acc_scale));
    const int32_t shift = next() % 8 == 0 ? uniform(1, 3) : 1 - log2_scale - uniform(0, 10);
    quantized_multiplier_pool[c] = {uniform(1 << 30, INT32_MAX), shift};
    if (!per_channel) break;
  }
}

template <typename T>
void range_of(int32_t& zp, int32_t& lo, int32_t& hi) {
  const int32_t tmin = tightfit::QuantLimits<T>::kMin, tmax = tightfit::QuantLimits<T>::kMax;
  zp = uniform(tmin, tmax);
  if (next() % 5 == 0) zp = (next() & 1) ? tmin : tmax;  // the extremes: -zx of int8 -128 is 128
  lo = tmin;
  hi = tmax;
  if (next() % 3 == 0) {  // a fused Relu / Clip
    lo = zp;
    if (next() & 1) hi = uniform(zp, tmax);
  }
}

template <typename T, typename TW>
void check(const char* what, int32_t n, uint32_t seed) {
  ++cases;
  for (int32_t i = 0; i < n; ++i) {
    if (out_dsp[i] != out_portable[i]) {
      ++mismatches;
      tf_puts("TIGHTFIT mismatch=");
      tf_puts(what);
      tf_figure("case", cases);
      tf_figure("seed", seed);
      tf_figure("index", static_cast<uint32_t>(i));
      tf_figure("dsp", out_dsp[i]);
      tf_figure("portable", out_portable[i]);
      tf_putc('\n');
      return;
    }
  }
}

// Whether the DSP matrix kernel, whose own loop order sets the matrix distances, runs these
// weights (never on a core with Helium or ARMv6-M kernels: there only the stated distance is run).
template <typename TW>
bool dsp_matrix_path(int32_t weight_zero_point) {
#if TIGHTFIT_USE_DSP_KERNELS
  return tightfit::dsp::dsp_weights<TW>(weight_zero_point);
#else
  (void)weight_zero_point;
  return false;
#endif
}

// Runs `kernel(in, out)` with the output `distance` bytes below a copy of the input (`above`:
// above it), over it, and leaves the output in out_dsp. False when they would not overlap.
template <typename Kernel>
bool run_overlapped(int32_t distance, bool above, const void* in, int32_t in_bytes, int32_t out_bytes, Kernel kernel) {
  if (distance < 0 || distance >= (above ? in_bytes : out_bytes)) return false;
  uint8_t* base = shared_pool + (next() & 3);
  uint8_t* x = above ? base : base + distance;
  uint8_t* y = above ? base + distance : base;
  __builtin_memcpy(x, in, static_cast<uint32_t>(in_bytes));
  kernel(x, y);
  __builtin_memcpy(out_dsp, y, static_cast<uint32_t>(out_bytes));
  return true;
}

// The DSP kernel over its input at the stated distance (tightfit::*_distance) gives the bytes of
// the portable kernel on separate buffers; for the matrix kernel, whose loop order sets the
// distance, one byte nearer than its own order needs is also run: it should differ.
template <typename T, typename TW, typename Kernel>
void overlapped_cases(const char* what, bool above, int32_t stated, int32_t own, const void* in, int32_t in_bytes,
                      int32_t out_bytes, uint32_t seed, Kernel kernel) {
  if (stated == tightfit::kNoOverlap) return;
  if (run_overlapped(stated, above, in, in_bytes, out_bytes, kernel)) check<T, TW>(what, out_bytes, seed);
  if (own > 0 && run_overlapped(own - 1, above, in, in_bytes, out_bytes, kernel)) {
    ++overlap_tight_checked;
    for (int32_t i = 0; i < out_bytes; ++i) {
      if (out_dsp[i] != out_portable[i]) {
        ++overlap_tight_found;
        break;
      }
    }
  }
}

template <typename T, typename TW, typename TM>
void conv_case(int kind) {
  const TM* m = multipliers<TM>();
  const uint32_t seed = state;
  tightfit::ConvParams p{};
  p.batch = uniform(1, 2);
  int32_t pad_bottom = 0, pad_right = 0;
  for (;;) {
    p.in_h = uniform(1, 12), p.in_w = uniform(1, 12);
    p.kernel_h = uniform(1, 5), p.kernel_w = uniform(1, 5);
    p.stride_h = uniform(1, 3), p.stride_w = uniform(1, 3);
    p.dilation_h = next() % 4 == 0 ? 2 : 1, p.dilation_w = next() % 4 == 0 ? 2 : 1;
    p.pad_top = uniform(0, 2), p.pad_left = uniform(0, 2);
    pad_bottom = uniform(0, 2), pad_right = uniform(0, 2);
    const int32_t groups_kind = kind;
    if (groups_kind == 0) {  // pointwise
      p.kernel_h = p.kernel_w = 1;
      p.stride_h = p.stride_w = 1;
      p.pad_top = p.pad_left = pad_bottom = pad_right = 0;
      p.in_c = uniform(1, 70);
      p.out_c = uniform(1, 40);
      p.groups = 1;
    } else if (groups_kind == 1) {  // depthwise, multiplier 1 mostly
      p.in_c = uniform(2, 40);
      p.groups = p.in_c;
      p.out_c = p.in_c * (next() % 4 == 0 ? 2 : 1);
    } else if (groups_kind == 2) {  // general
      p.in_c = uniform(1, 24);
      p.out_c = uniform(1, 24);
      p.groups = 1;
    } else {  // grouped
      p.groups = uniform(2, 4);
      p.in_c = p.groups * uniform(1, 6);
      p.out_c = p.groups * uniform(1, 5);
    }
    const int32_t span_h = p.in_h + p.pad_top + pad_bottom - p.dilation_h * (p.kernel_h - 1) - 1;
    const int32_t span_w = p.in_w + p.pad_left + pad_right - p.dilation_w * (p.kernel_w - 1) - 1;
    if (span_h < 0 || span_w < 0) continue;
    p.out_h = span_h / p.stride_h + 1, p.out_w = span_w / p.stride_w + 1;
    // One case in three writes its pixels further apart, as into a channel slice of a Concat.
    p.out_stride = next() % 3 == 0 ? p.out_c + uniform(1, 9) : 0;
    const int32_t in_bytes = p.batch * p.in_h * p.in_w * p.in_c;
    const int32_t w_bytes = p.out_c * p.kernel_h * p.kernel_w * (p.in_c / p.groups);
    const int32_t out_bytes = p.batch * p.out_h * p.out_w * tightfit::conv_out_stride(p);
    if (in_bytes <= kBytes && w_bytes <= kBytes && out_bytes <= kBytes && p.out_c <= 512) break;
  }
  int32_t lo, hi;
  range_of<T>(p.input_zero_point, lo, hi);
  range_of<T>(p.output_zero_point, p.output_min, p.output_max);
  p.weight_zero_point = 0;
  if (sizeof(TW) == 1 && (tightfit::QuantLimits<TW>::kMin == 0 || next() % 4 == 0))
    p.weight_zero_point = uniform(tightfit::QuantLimits<TW>::kMin, tightfit::QuantLimits<TW>::kMax);
  p.per_channel = next() & 1;
  const int32_t mode = next() % 5 == 0 ? 1 : 0;
  const T* in = reinterpret_cast<const T*>(input_pool + (next() & 3));
  const TW* w = reinterpret_cast<const TW*>(weight_pool + (next() & 3));
  fill(input_pool, kBytes + 4, mode);
  fill(weight_pool, kBytes + 4, mode);
  const bool with_bias = next() % 4 != 0;
  fill_quant(p.out_c, p.per_channel, with_bias, 64 * p.kernel_h * p.kernel_w * (p.in_c / p.groups));
  const int32_t* bias = with_bias ? bias_pool : nullptr;
  const int32_t out_bytes = p.batch * p.out_h * p.out_w * tightfit::conv_out_stride(p);
  const bool strided = tightfit::conv_out_stride(p) != p.out_c;
  static const char* const names[] = {"pointwise", "depthwise", "general", "grouped"};
  static const char* const strided_names[] = {"pointwise strided", "depthwise strided", "general strided",
                                              "grouped strided"};
  T* yd = reinterpret_cast<T*>(out_dsp);
  T* yp = reinterpret_cast<T*>(out_portable);
  // The bytes between a strided output's pixels are not the kernel's: the same on both sides.
  for (int32_t i = 0; i < out_bytes; ++i) out_dsp[i] = out_portable[i] = static_cast<uint8_t>(i * 37 + 11);
  if (tightfit::conv_is_depthwise(p)) {
    fast::conv_depthwise(p, in, w, bias, m, yd);
    tightfit::portable::conv_depthwise(p, in, w, bias, m, yp);
  } else if (tightfit::conv_is_pointwise(p)) {
    fast::conv_pointwise(p, in, w, bias, m, yd);
    tightfit::portable::conv_pointwise(p, in, w, bias, m, yp);
  } else {
    fast::conv_general(p, in, w, bias, m, yd);
    tightfit::portable::conv_general(p, in, w, bias, m, yp);
  }
  check<T, TW>(strided ? strided_names[kind] : names[kind], out_bytes, seed);
  if (strided) {
    // The public entry point takes the fast path on this target; a slice of a Concat never
    // overlaps its input (the compiler does not pair them).
    for (int32_t i = 0; i < out_bytes; ++i) out_dsp[i] = static_cast<uint8_t>(i * 37 + 11);
    tightfit::conv(p, in, w, bias, m, yd);
    check<T, TW>("conv strided", out_bytes, seed);
    return;
  }
  const int32_t in_bytes = p.batch * p.in_h * p.in_w * p.in_c;
  const bool dsp_matrix = tightfit::conv_is_pointwise(p) && dsp_matrix_path<TW>(p.weight_zero_point);
  const int32_t rows = p.batch * p.in_h * p.in_w;
  overlapped_cases<T, TW>("overlapped conv", false, tightfit::conv_distance(p),
                          dsp_matrix ? tightfit::detail::dsp_matmul_distance(rows, p.in_c, p.out_c) : 0, in, in_bytes,
                          out_bytes, seed, [&](const uint8_t* x, uint8_t* y) {
                            tightfit::conv(p, reinterpret_cast<const T*>(x), w, bias, m, reinterpret_cast<T*>(y));
                          });
  overlapped_cases<T, TW>("overlapped conv backwards", true, tightfit::conv_up_distance(p),
                          dsp_matrix ? tightfit::detail::dsp_matmul_up_distance(rows, p.in_c, p.out_c) : 0, in,
                          in_bytes, out_bytes, seed, [&](const uint8_t* x, uint8_t* y) {
                            tightfit::conv<T, TW, true>(p, reinterpret_cast<const T*>(x), w, bias, m,
                                                        reinterpret_cast<T*>(y));
                          });
  // The public entry point takes the fast path on this target.
  for (int32_t i = 0; i < out_bytes; ++i) out_dsp[i] = static_cast<uint8_t>(~out_portable[i]);
  tightfit::conv(p, in, w, bias, m, yd);
  check<T, TW>("conv", out_bytes, seed);
}

template <typename T, typename TW, typename TM>
void fully_connected_case() {
  const TM* m = multipliers<TM>();
  const uint32_t seed = state;
  tightfit::FullyConnectedParams p{};
  p.rows = uniform(1, 5);
  p.in_features = uniform(1, 130);
  p.out_features = uniform(1, 40);
  int32_t lo, hi;
  range_of<T>(p.input_zero_point, lo, hi);
  range_of<T>(p.output_zero_point, p.output_min, p.output_max);
  p.weight_zero_point = 0;
  if (tightfit::QuantLimits<TW>::kMin == 0 || next() % 4 == 0)
    p.weight_zero_point = uniform(tightfit::QuantLimits<TW>::kMin, tightfit::QuantLimits<TW>::kMax);
  p.per_channel = next() & 1;
  const int32_t mode = next() % 5 == 0 ? 1 : 0;
  fill(input_pool, kBytes + 4, mode);
  fill(weight_pool, kBytes + 4, mode);
  const bool with_bias = next() % 4 != 0;
  fill_quant(p.out_features, p.per_channel, with_bias, 64 * p.in_features);
  const T* in = reinterpret_cast<const T*>(input_pool + (next() & 3));
  const TW* w = reinterpret_cast<const TW*>(weight_pool + (next() & 3));
  const int32_t* bias = with_bias ? bias_pool : nullptr;
  T* yd = reinterpret_cast<T*>(out_dsp);
  T* yp = reinterpret_cast<T*>(out_portable);
  fast::fully_connected(p, in, w, bias, m, yd);
  tightfit::portable::fully_connected(p, in, w, bias, m, yp);
  check<T, TW>("fully_connected", p.rows * p.out_features, seed);
  const bool dsp_matrix = dsp_matrix_path<TW>(p.weight_zero_point);
  overlapped_cases<T, TW>("overlapped fully_connected", false, tightfit::fully_connected_distance(p),
                          dsp_matrix ? tightfit::detail::dsp_matmul_distance(p.rows, p.in_features, p.out_features) : 0,
                          in, p.rows * p.in_features, p.rows * p.out_features, seed, [&](const uint8_t* x, uint8_t* y) {
                            tightfit::fully_connected(p, reinterpret_cast<const T*>(x), w, bias, m,
                                                      reinterpret_cast<T*>(y));
                          });
  overlapped_cases<T, TW>(
      "overlapped fully_connected backwards", true, tightfit::fully_connected_up_distance(p),
      dsp_matrix ? tightfit::detail::dsp_matmul_up_distance(p.rows, p.in_features, p.out_features) : 0, in,
      p.rows * p.in_features, p.rows * p.out_features, seed, [&](const uint8_t* x, uint8_t* y) {
        tightfit::fully_connected<T, TW, true>(p, reinterpret_cast<const T*>(x), w, bias, m, reinterpret_cast<T*>(y));
      });
}

// The global average pool (tightfit::global_average_pool: Helium's on a core with it, else the
// portable loop) against the portable loop: odd channel counts, images longer than the Helium
// kernel's 16-bit runs of 128 pixels, zero points at the extremes; then over its input at the
// stated distance.
template <typename T>
void global_average_pool_case() {
  const uint32_t seed = state;
  tightfit::GlobalAveragePoolParams p{};
  for (;;) {
    p.batch = uniform(1, 2);
    p.image_size = next() % 3 == 0 ? uniform(120, 400) : uniform(1, 60);
    p.channels = uniform(1, 40);
    if (p.batch * p.image_size * p.channels <= kBytes) break;
  }
  int32_t lo, hi;
  range_of<T>(p.input_zero_point, lo, hi);
  range_of<T>(p.output_zero_point, lo, hi);
  p.output_min = lo, p.output_max = hi;  // the type's range or a fused Relu/Clip
  p.multiplier = static_cast<float>(uniform(1, 3000)) / (1000.0f * static_cast<float>(p.image_size));
  fill(input_pool, kBytes + 4, next() % 5 == 0 ? 1 : 0);
  const T* in = reinterpret_cast<const T*>(input_pool + (next() & 3));
  const int32_t in_bytes = p.batch * p.image_size * p.channels, out_bytes = p.batch * p.channels;
  tightfit::global_average_pool(p, in, reinterpret_cast<T*>(out_dsp));
  tightfit::portable::global_average_pool(p, in, reinterpret_cast<T*>(out_portable));
  check<T, T>("global_average_pool", out_bytes, seed);
  overlapped_cases<T, T>("overlapped global_average_pool", false, tightfit::global_average_pool_distance(p), 0, in,
                         in_bytes, out_bytes, seed, [&](const uint8_t* x, uint8_t* y) {
                           tightfit::global_average_pool(p, reinterpret_cast<const T*>(x), reinterpret_cast<T*>(y));
                         });
}

// The pools and elementwise kernels (tightfit::max_pool, average_pool, add, mul: Helium's on a
// core with it, else the portable loops) against the portable loops: odd channel counts, pads,
// strides, dilations, fused clamps, zero points at the extremes, broadcasts along the innermost
// axis and along others; then over an input at the stated distance.
template <typename T>
void pool_case() {
  const uint32_t seed = state;
  int32_t channels, in_h, in_w;
  for (;;) {
    channels = uniform(1, 40), in_h = uniform(1, 12), in_w = uniform(1, 12);
    if (channels * in_h * in_w <= kBytes / 2) break;
  }
  const int32_t kh = uniform(1, in_h < 4 ? in_h : 4), kw = uniform(1, in_w < 4 ? in_w : 4);
  const int32_t sh = uniform(1, 3), sw = uniform(1, 3);
  const int32_t pt = uniform(0, kh - 1), pl = uniform(0, kw - 1), pb = uniform(0, kh - 1), pr = uniform(0, kw - 1);
  const int32_t out_h = (in_h + pt + pb - kh) / sh + 1, out_w = (in_w + pl + pr - kw) / sw + 1;
  fill(input_pool, kBytes + 4, next() % 5 == 0 ? 1 : 0);
  const T* in = reinterpret_cast<const T*>(input_pool + (next() & 3));
  const int32_t in_bytes = in_h * in_w * channels, out_bytes = out_h * out_w * channels;

  const tightfit::MaxPoolParams mp{1, in_h, in_w, channels, out_h, out_w, kh, kw, sh, sw, 1, 1, pt, pl};
  tightfit::max_pool(mp, in, reinterpret_cast<T*>(out_dsp));
  tightfit::portable::max_pool(mp, in, reinterpret_cast<T*>(out_portable));
  check<T, T>("max_pool", out_bytes, seed);
  overlapped_cases<T, T>("overlapped max_pool", false, tightfit::max_pool_distance(mp), 0, in, in_bytes, out_bytes,
                         seed, [&](const uint8_t* x, uint8_t* y) {
                           tightfit::max_pool(mp, reinterpret_cast<const T*>(x), reinterpret_cast<T*>(y));
                         });

  tightfit::AveragePoolParams ap{
      1,    in_h, in_w, channels, out_h, out_w, kh, kw, sh, sw, pt, pl, pb, pr, static_cast<int32_t>(next() & 1),
      0.0f, 0,    0.0f, 0,        0,     0};
  int32_t lo, hi;
  range_of<T>(ap.input_zero_point, lo, hi);
  range_of<T>(ap.output_zero_point, lo, hi);
  ap.output_min = lo, ap.output_max = hi;
  ap.input_scale = static_cast<float>(uniform(1, 1000)) / 997.0f;
  ap.output_scale = ap.input_scale * static_cast<float>(uniform(200, 3000)) / 1000.0f;
  tightfit::average_pool(ap, in, reinterpret_cast<T*>(out_dsp));
  tightfit::portable::average_pool(ap, in, reinterpret_cast<T*>(out_portable));
  check<T, T>("average_pool", out_bytes, seed);
  overlapped_cases<T, T>("overlapped average_pool", false, tightfit::average_pool_distance(ap), 0, in, in_bytes,
                         out_bytes, seed, [&](const uint8_t* x, uint8_t* y) {
                           tightfit::average_pool(ap, reinterpret_cast<const T*>(x), reinterpret_cast<T*>(y));
                         });
}

template <typename T>
void elementwise_case() {
  const uint32_t seed = state;
  // [d0, d1, d2, d3]; b is the same shape, or broadcast along the innermost axis (stride 0), or
  // along d1 (a per-channel operand of an NCHW-like shape), or a scalar.
  tightfit::BinaryShape s{};
  int32_t n = 1;
  for (int32_t k = 0; k < 4; ++k) {
    s.out_dims[k] = k < 2 ? uniform(1, 3) : uniform(1, 21);
    n *= s.out_dims[k];
  }
  int32_t stride = 1;
  for (int32_t k = 3; k >= 0; --k) s.a_strides[k] = stride, stride *= s.out_dims[k];
  const uint32_t form = next() % 4;
  stride = 1;
  for (int32_t k = 3; k >= 0; --k) {
    const bool broadcast = form == 3 || (form == 1 && k == 3) || (form == 2 && k != 1);
    s.b_strides[k] = broadcast ? 0 : stride;
    if (!broadcast) stride *= s.out_dims[k];
  }
  fill(input_pool, kBytes + 4, next() % 5 == 0 ? 1 : 0);
  fill(weight_pool, kBytes + 4, next() % 5 == 0 ? 1 : 0);
  const T* a = reinterpret_cast<const T*>(input_pool + (next() & 3));
  const T* b = reinterpret_cast<const T*>(weight_pool + (next() & 3));
  int32_t za, zb, zc, lo, hi;
  range_of<T>(za, lo, hi);
  range_of<T>(zb, lo, hi);
  range_of<T>(zc, lo, hi);

  tightfit::AddParams ap{};
  ap.shape = s;
  ap.form = (next() & 1) ? tightfit::BroadcastForm::kScalarA : tightfit::BroadcastForm::kElementwise;
  ap.a_zero_point = za, ap.b_zero_point = zb;
  ap.a_ratio = static_cast<float>(uniform(1, 2000)) / 1000.0f;
  ap.b_ratio = static_cast<float>(uniform(1, 2000)) / 1000.0f;
  ap.fixed = static_cast<float>(zc) - (ap.a_ratio * static_cast<float>(za) + ap.b_ratio * static_cast<float>(zb));
  ap.output_min = lo, ap.output_max = hi;
  tightfit::add(ap, a, b, reinterpret_cast<T*>(out_dsp));
  tightfit::portable::add(ap, a, b, reinterpret_cast<T*>(out_portable));
  check<T, T>("add", n, seed);
  overlapped_cases<T, T>("overlapped add", false, tightfit::add_distance(ap, 0), 0, a, n, n, seed,
                         [&](const uint8_t* x, uint8_t* y) {
                           tightfit::add(ap, reinterpret_cast<const T*>(x), b, reinterpret_cast<T*>(y));
                         });

  // TFLite's ADD (--numerics tflite): its multipliers as TFLite Micro derives them from scales
  // (left shift 20, the inputs' below 1/2, the output's small).
  tightfit::AddTfliteParams tp{};
  tp.shape = s;
  tp.a_offset = -za, tp.b_offset = -zb, tp.output_offset = zc;
  tp.left_shift = 20;
  tp.a_multiplier = {uniform(1 << 30, INT32_MAX), -uniform(0, 3)};
  tp.b_multiplier = {uniform(1 << 30, INT32_MAX), -uniform(0, 3)};
  tp.output_multiplier = {uniform(1 << 30, INT32_MAX), -uniform(16, 20)};
  tp.output_min = lo, tp.output_max = hi;
  tightfit::add_tflite(tp, a, b, reinterpret_cast<T*>(out_dsp));
  tightfit::portable::add_tflite(tp, a, b, reinterpret_cast<T*>(out_portable));
  check<T, T>("add_tflite", n, seed);
  overlapped_cases<T, T>("overlapped add_tflite", false, tightfit::add_tflite_distance(tp, 0), 0, a, n, n, seed,
                         [&](const uint8_t* x, uint8_t* y) {
                           tightfit::add_tflite(tp, reinterpret_cast<const T*>(x), b, reinterpret_cast<T*>(y));
                         });

  tightfit::MulParams mp{};
  mp.shape = s;
  mp.a_zero_point = za, mp.b_zero_point = zb;
  mp.ratio = static_cast<float>(uniform(1, 3000)) / 100000.0f;
  mp.output_zero_point = static_cast<float>(zc);
  mp.output_min = lo, mp.output_max = hi;
  tightfit::mul(mp, a, b, reinterpret_cast<T*>(out_dsp));
  tightfit::portable::mul(mp, a, b, reinterpret_cast<T*>(out_portable));
  check<T, T>("mul", n, seed);
  overlapped_cases<T, T>("overlapped mul", false, tightfit::mul_distance(mp, 0), 0, a, n, n, seed,
                         [&](const uint8_t* x, uint8_t* y) {
                           tightfit::mul(mp, reinterpret_cast<const T*>(x), b, reinterpret_cast<T*>(y));
                         });
}

template <typename T, typename TW>
void all_cases(int32_t rounds) {
  for (int32_t r = 0; r < rounds; ++r) {
    for (int kind = 0; kind < 4; ++kind) conv_case<T, TW, float>(kind);
    fully_connected_case<T, TW, float>();
    // TFLite's requantization (every third round): the fast kernels' integer steps.
    if (r % 3 == 0) {
      for (int kind = 0; kind < 4; ++kind) conv_case<T, TW, tightfit::QuantizedMultiplier>(kind);
      fully_connected_case<T, TW, tightfit::QuantizedMultiplier>();
    }
    if (std::is_same_v<T, TW> && r % 3 == 0) global_average_pool_case<T>();
    if (std::is_same_v<T, TW> && r % 3 == 1) pool_case<T>();
    if (std::is_same_v<T, TW> && r % 3 == 2) elementwise_case<T>();
  }
}

}  // namespace

int main() {
#if !TIGHTFIT_HAVE_DSP_KERNELS && !TIGHTFIT_HAVE_MVE_KERNELS && !TIGHTFIT_HAVE_SCALAR_KERNELS
  tf_puts("TIGHTFIT dsp_paths=0 mve_paths=0 scalar_paths=0\n");
  return 3;
#else
  all_cases<int8_t, int8_t>(150);
  all_cases<uint8_t, int8_t>(150);  // ONNX Runtime's default: uint8 activations, int8 weights
  all_cases<uint8_t, uint8_t>(100);
  // Activations and weights of different signedness the other way round (Helium flips the
  // activations into the weights' signedness, +128 here and -128 for uint8 with int8).
  all_cases<int8_t, uint8_t>(50);
  tf_puts("TIGHTFIT");
  tf_figure("kernel_cases", cases);
  tf_figure("mismatches", mismatches);
  tf_figure(kFastPaths, 1);
  // Of the DSP matrix runs one byte nearer than their loop order needs, how many came out wrong.
  tf_figure("overlap_tight_checked", overlap_tight_checked);
  tf_figure("overlap_tight_found", overlap_tight_found);
  tf_putc('\n');
  return mismatches == 0 ? 0 : 1;
#endif
}
