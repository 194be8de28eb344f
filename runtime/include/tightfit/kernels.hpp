// tightfit runtime: the kernels that generated code calls.
//
// Freestanding C++17: no heap, no exceptions, no RTTI, no I/O, no libm; every
// kernel is a function template over the activation type T (int8_t or
// uint8_t; weights TW int8_t or uint8_t) that reads its parameters from a
// constexpr block (see params.hpp), its weights from flash, and its tensors
// from the arena.  No kernel needs scratch memory.
//
// Aliasing: `out` must not overlap any input, except as the overlap contract
// below allows: no pointer is __restrict, so every kernel is correct when its
// output lies over the input it consumes at that input's stated distance.
//
// The overlap contract.  Each kernel that may write over an input it consumes
// states, next to it, a function NAME_distance(params) -> int32_t: the least
// `d` >= 0 such that the kernel computes the same bytes when its output starts
// d or more bytes BELOW that input (out + d <= in, both in bytes) and the two
// regions overlap; kNoOverlap (-1) when it may not overlap at all.  It is
// derived from the kernel's loop order, as the largest, over the kernel's
// writes, of (index written - lowest input index read after that write + 1):
// below that no input byte is overwritten before its last read, and one byte
// less overwrites a byte that is read afterwards.  It holds for every variant
// that can be compiled (portable and Cortex-M DSP; a new variant must keep
// within it or raise it); the planner (docs/planner.md) places outputs by it.
// docs/runtime.md lists the distance of every kernel.
//
// Backwards: the pointwise and depthwise convolutions and fully connected also
// run their pixels (rows) in reverse order when their template argument
// kBackward is true; then NAME_up_distance(params) is the least `s` >= 0 such
// that the output may start s or more bytes ABOVE the input (in + s <= out),
// over it: the largest, over the writes, of (highest input index read after
// that write - index written + 1).  The planner alternates the two directions
// so that a chain of layers does not walk down the arena.
//
// Numerics mirror ONNX Runtime's CPU kernels (graph optimizations disabled) on
// x86-64; each kernel says which ORT routine it follows.  See docs/runtime.md.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tightfit/numerics.hpp"
#include "tightfit/params.hpp"
#include "tightfit/integer_kernels.hpp"  // ConvInteger, MatMulInteger, batched QLinearMatMul
#include "tightfit/reduce_loops.hpp"

// The convolution and fully connected kernels have fast paths: for Cortex-M cores with Helium
// (kernels_mve.hpp: MVE vectors, VMLADAV; Cortex-M55), taken when the compiler targets integer
// and float MVE (__ARM_FEATURE_MVE == 3), and for Cortex-M cores with the DSP extension
// (kernels_dsp.hpp: SXTB16/SMLAD, 4 bytes per load), taken on the others that have it
// (__ARM_FEATURE_DSP), and for cores without SIMD (kernels_scalar.hpp: ARMv6-M, Cortex-M0/M0+,
// loops kept in the low registers; RV32IMC), unless TIGHTFIT_PORTABLE_KERNELS is defined. Every path gives the same
// bits; the portable one (namespace tightfit::portable) runs everywhere else.
#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 3) == 3
#define TIGHTFIT_HAVE_MVE_KERNELS 1
#else
#define TIGHTFIT_HAVE_MVE_KERNELS 0
#endif
#if defined(__ARM_FEATURE_DSP) && defined(__ARM_FEATURE_SIMD32)
#define TIGHTFIT_HAVE_DSP_KERNELS 1
#else
#define TIGHTFIT_HAVE_DSP_KERNELS 0
#endif
#if defined(__ARM_ARCH_6M__) || defined(__riscv)
#define TIGHTFIT_HAVE_SCALAR_KERNELS 1
#else
#define TIGHTFIT_HAVE_SCALAR_KERNELS 0
#endif
#if TIGHTFIT_HAVE_SCALAR_KERNELS && !defined(TIGHTFIT_PORTABLE_KERNELS)
#define TIGHTFIT_USE_SCALAR_KERNELS 1
#else
#define TIGHTFIT_USE_SCALAR_KERNELS 0
#endif
#if TIGHTFIT_HAVE_MVE_KERNELS && !defined(TIGHTFIT_PORTABLE_KERNELS)
#define TIGHTFIT_USE_MVE_KERNELS 1
#else
#define TIGHTFIT_USE_MVE_KERNELS 0
#endif
#if TIGHTFIT_HAVE_DSP_KERNELS && !TIGHTFIT_HAVE_MVE_KERNELS && !defined(TIGHTFIT_PORTABLE_KERNELS)
#define TIGHTFIT_USE_DSP_KERNELS 1
#else
#define TIGHTFIT_USE_DSP_KERNELS 0
#endif

namespace tightfit {

// Typed view of an arena offset, for generated code:
//   tightfit::conv(p, tightfit::at<int8_t>(arena, 0), w, b, m, tightfit::at<int8_t>(arena, 4096));
// The planner places every buffer on a multiple of its element's size (int32_t and float on 4
// bytes) in an arena aligned to kArenaAlignment, so the cast through void* is sound (a direct
// cast from uint8_t* warns under -Wcast-align on the cores with strict alignment).
template <typename T>
inline T* at(uint8_t* arena, uint32_t offset) {
  return static_cast<T*>(static_cast<void*>(arena + offset));
}

// An overlap distance meaning: the output may not overlap that input.
constexpr int32_t kNoOverlap = -1;

namespace detail {

template <typename T, typename TW>
inline int32_t dot(const T* x, const TW* w, int32_t n, int32_t x_zero_point, int32_t w_zero_point) {
  int32_t acc = 0;
  for (int32_t i = 0; i < n; ++i) {
    acc += (static_cast<int32_t>(x[i]) - x_zero_point) * (static_cast<int32_t>(w[i]) - w_zero_point);
  }
  return acc;
}

// TM: float (ONNX Runtime's requantization) or QuantizedMultiplier (TFLite's, --numerics tflite).
template <typename T, typename TM>
inline T conv_output(const ConvParams& p, int32_t acc, int32_t oc, const int32_t* bias, const TM* multipliers) {
  if (bias != nullptr) acc += bias[oc];
  return requantize<T>(acc, multipliers[p.per_channel ? oc : 0], p.output_zero_point, p.output_min, p.output_max);
}

// The overlap distances' arithmetic (see "The overlap contract" above).

// A window kernel's geometry: output pixels in raster order (batch, row, column), each computed
// from the input pixels of its window that lie inside the image.
struct WindowGeometry {
  int32_t batch, in_h, in_w, in_c, out_h, out_w, out_c;
  int32_t kernel_h, kernel_w, stride_h, stride_w, dilation_h, dilation_w, pad_top, pad_left;
};

// The first in-image tap of a window axis starting at `start`, or -1 when none is inside.
constexpr int32_t first_tap_inside(int32_t start, int32_t dilation, int32_t kernel, int32_t extent) {
  const int32_t lo = start >= 0 ? 0 : (-start + dilation - 1) / dilation;
  const int32_t tap = start + lo * dilation;
  return lo < kernel && tap < extent ? tap : -1;
}

// The distance of a window kernel that writes each output pixel's out_c bytes in turn. For its
// last byte the lowest input read afterwards is the lowest first tap of the later pixels; within
// a pixel, `within` is the most that (index written - lowest index still read by this pixel + 1)
// exceeds q * out_c - base, base being the pixel's first tap (kNoOverlap: the pixel reads all
// before it writes). Walks the pixels backwards keeping the lowest first tap of those after.
constexpr int64_t kNone = INT64_MAX;
constexpr int32_t raster_distance(const WindowGeometry& g, int32_t within) {
  int64_t distance = 0, later = kNone;
  for (int32_t b = g.batch - 1; b >= 0; --b) {
    for (int32_t oy = g.out_h - 1; oy >= 0; --oy) {
      const int32_t iy = first_tap_inside(oy * g.stride_h - g.pad_top, g.dilation_h, g.kernel_h, g.in_h);
      for (int32_t ox = g.out_w - 1; ox >= 0; --ox) {
        const int32_t ix = first_tap_inside(ox * g.stride_w - g.pad_left, g.dilation_w, g.kernel_w, g.in_w);
        const int64_t q = (static_cast<int64_t>(b) * g.out_h + oy) * g.out_w + ox;
        if (later != kNone && (q + 1) * g.out_c - later > distance) distance = (q + 1) * g.out_c - later;
        if (iy < 0 || ix < 0) continue;
        const int64_t base = ((static_cast<int64_t>(b) * g.in_h + iy) * g.in_w + ix) * g.in_c;
        if (within != kNoOverlap && q * g.out_c - base + within > distance) distance = q * g.out_c - base + within;
        if (base < later) later = base;
      }
    }
  }
  return static_cast<int32_t>(distance);
}

constexpr WindowGeometry conv_window(const ConvParams& p) {
  return {p.batch,    p.in_h,     p.in_w,     p.in_c,       p.out_h,      p.out_w,   p.out_c,   p.kernel_h,
          p.kernel_w, p.stride_h, p.stride_w, p.dilation_h, p.dilation_w, p.pad_top, p.pad_left};
}

// The portable matrix kernels (pointwise conv, fully connected): row by row, each output
// channel from the whole row, written in turn: out_c - 1 bytes, plus the growth of the rows
// when the output's rows are longer.
constexpr int32_t portable_matmul_distance(int32_t rows, int32_t k, int32_t n) {
  const int64_t growth = static_cast<int64_t>(rows - 1) * (n - k);
  return static_cast<int32_t>(n - 1 + (growth > 0 ? growth : 0));
}

// The Cortex-M DSP matrix kernel (kernels_dsp.hpp, simd::matmul): rows in pairs, 2 channels at
// a time over both rows, an odd channel row by row, an odd last row alone.
constexpr int32_t dsp_matmul_distance(int32_t rows, int32_t k, int32_t n) {
  int64_t distance = 0;
  auto note = [&distance](int64_t written, int64_t lowest_read_after) {
    if (written - lowest_read_after + 1 > distance) distance = written - lowest_read_after + 1;
  };
  // The last channel pair before the end of a row's channels, or -1: its writes precede reads.
  const int32_t last_open_pair = n % 2 == 0 ? n - 4 : n - 3;
  int32_t r = 0;
  for (; r + 2 <= rows; r += 2) {
    const int64_t x = static_cast<int64_t>(r) * k, y = static_cast<int64_t>(r) * n;
    const bool more_rows = r + 2 < rows;
    if (last_open_pair >= 0) note(y + n + last_open_pair + 1, x);
    if (n % 2 == 0) {
      if (more_rows) note(y + 2 * int64_t{n} - 1, x + 2 * int64_t{k});
    } else {
      note(y + n - 1, x + k);
      if (more_rows) note(y + 2 * int64_t{n} - 1, x + 2 * int64_t{k});
    }
  }
  if (r < rows && last_open_pair >= 0)
    note(static_cast<int64_t>(r) * n + last_open_pair + 1, static_cast<int64_t>(r) * k);
  return static_cast<int32_t>(distance);
}

// Add / Mul over an operand read once per output element, at the output's own index: 0; a
// broadcast operand is read again later: no overlap.
constexpr int32_t binary_distance(const BinaryShape& s, int operand) {
  const int32_t* strides = operand == 0 ? s.a_strides : s.b_strides;
  int32_t dense = 1;
  for (int d = 3; d >= 0; --d) {
    if (s.out_dims[d] > 1 && strides[d] != dense) return kNoOverlap;
    dense *= s.out_dims[d];
  }
  return 0;
}

// The last in-image tap of a window axis starting at `start`, or -1 when none is inside.
constexpr int32_t last_tap_inside(int32_t start, int32_t dilation, int32_t kernel, int32_t extent) {
  if (first_tap_inside(start, dilation, kernel, extent) < 0) return -1;
  const int32_t hi = (extent - 1 - start) / dilation;
  return start + (hi < kernel - 1 ? hi : kernel - 1) * dilation;
}

// The up distance (see the contract) of a window kernel run backwards whose pixel reads every
// input channel of its window and writes its channels in turn: for a pixel's first byte the
// highest input read after it is the window's last tap, channel in_c - 1 (when out_c >= 2),
// and for every byte the highest read of the pixels before it.
constexpr int32_t raster_up_distance(const WindowGeometry& g) {
  int64_t distance = 0, earlier = -1;  // earlier: highest input index read by the pixels before
  for (int32_t b = 0; b < g.batch; ++b) {
    for (int32_t oy = 0; oy < g.out_h; ++oy) {
      const int32_t iy = last_tap_inside(oy * g.stride_h - g.pad_top, g.dilation_h, g.kernel_h, g.in_h);
      for (int32_t ox = 0; ox < g.out_w; ++ox) {
        const int32_t ix = last_tap_inside(ox * g.stride_w - g.pad_left, g.dilation_w, g.kernel_w, g.in_w);
        const int64_t first_written = ((static_cast<int64_t>(b) * g.out_h + oy) * g.out_w + ox) * g.out_c;
        if (earlier >= 0 && earlier - first_written + 1 > distance) distance = earlier - first_written + 1;
        if (iy < 0 || ix < 0) continue;
        const int64_t top = ((static_cast<int64_t>(b) * g.in_h + iy) * g.in_w + ix) * g.in_c + g.in_c - 1;
        if (g.out_c >= 2 && top - first_written + 1 > distance) distance = top - first_written + 1;
        if (top > earlier) earlier = top;
      }
    }
  }
  return static_cast<int32_t>(distance);
}

// Up distances of the matrix kernels run backwards (rows from the last; channels as forwards).
constexpr int32_t portable_matmul_up_distance(int32_t rows, int32_t k, int32_t n) {
  int64_t distance = 0;
  for (int32_t r = rows - 1; r >= 0; --r) {
    const int64_t x = static_cast<int64_t>(r) * k, y = static_cast<int64_t>(r) * n;
    if (n >= 2 && x + k - 1 - y + 1 > distance) distance = x + k - 1 - y + 1;             // channel 0, row still read
    if (r > 0 && x - 1 - (y + n - 1) + 1 > distance) distance = x - 1 - (y + n - 1) + 1;  // last channel
  }
  return static_cast<int32_t>(distance);
}

constexpr int32_t dsp_matmul_up_distance(int32_t rows, int32_t k, int32_t n) {
  int64_t distance = 0;
  auto note = [&distance](int64_t written, int64_t highest_read_after) {
    if (highest_read_after - written + 1 > distance) distance = highest_read_after - written + 1;
  };
  const bool open_pairs = n % 2 == 0 ? n >= 4 : n >= 3;  // pairs of channels before the last write
  for (int32_t r = rows - 2; r >= 0; r -= 2) {
    const int64_t x = static_cast<int64_t>(r) * k, y = static_cast<int64_t>(r) * n;
    const int64_t pair_top = x + 2 * int64_t{k} - 1, below = x - 1;  // below: the rows still to do, if r > 0
    if (open_pairs) note(y, pair_top);
    if (n % 2 == 0) {
      if (r > 0) note(y + n - 2, below);
    } else {
      note(y + n - 1, pair_top);
      if (r > 0) note(y + 2 * int64_t{n} - 1, below);
    }
  }
  if (rows % 2 == 1 && open_pairs) note(0, k - 1);
  return static_cast<int32_t>(distance);
}

}  // namespace detail

// The portable kernels: plain C++ loops, one MAC at a time.
namespace portable {

// Pointwise convolution: every output pixel is a matrix-vector product of the
// same pixel's channels with the OHWI (here [out_c][in_c]) weights.
template <typename T, typename TW, bool kBackward = false, typename TM = float>
inline void conv_pointwise(const ConvParams& p, const T* in, const TW* weights, const int32_t* bias,
                           const TM* multipliers, T* out) {
  const int32_t pixels = p.batch * p.in_h * p.in_w;
  for (int32_t i = 0; i < pixels; ++i) {
    const int32_t px = kBackward ? pixels - 1 - i : i;
    const T* x = in + px * p.in_c;
    T* y = out + px * conv_out_stride(p);
    for (int32_t oc = 0; oc < p.out_c; ++oc) {
      const int32_t acc = detail::dot(x, weights + oc * p.in_c, p.in_c, p.input_zero_point, p.weight_zero_point);
      y[oc] = detail::conv_output<T>(p, acc, oc, bias, multipliers);
    }
  }
}

// Depthwise convolution (groups == in_c): output channel oc reads input channel
// oc / multiplier; weights [kh][kw][out_c].  Taps that fall in the padding
// contribute nothing (ORT pads with the input zero point).
template <typename T, typename TW, bool kBackward = false, typename TM = float>
inline void conv_depthwise(const ConvParams& p, const T* in, const TW* weights, const int32_t* bias,
                           const TM* multipliers, T* out) {
  const int32_t depth_multiplier = p.out_c / p.in_c;
  for (int32_t bi = 0; bi < p.batch; ++bi) {
    const int32_t b = kBackward ? p.batch - 1 - bi : bi;
    for (int32_t oyi = 0; oyi < p.out_h; ++oyi) {
      const int32_t oy = kBackward ? p.out_h - 1 - oyi : oyi;
      for (int32_t oxi = 0; oxi < p.out_w; ++oxi) {
        const int32_t ox = kBackward ? p.out_w - 1 - oxi : oxi;
        T* y = out + ((b * p.out_h + oy) * p.out_w + ox) * conv_out_stride(p);
        for (int32_t oc = 0; oc < p.out_c; ++oc) {
          const int32_t ic = oc / depth_multiplier;
          int32_t acc = 0;
          for (int32_t ky = 0; ky < p.kernel_h; ++ky) {
            const int32_t iy = oy * p.stride_h - p.pad_top + ky * p.dilation_h;
            if (iy < 0 || iy >= p.in_h) continue;
            for (int32_t kx = 0; kx < p.kernel_w; ++kx) {
              const int32_t ix = ox * p.stride_w - p.pad_left + kx * p.dilation_w;
              if (ix < 0 || ix >= p.in_w) continue;
              const int32_t xv = static_cast<int32_t>(in[((b * p.in_h + iy) * p.in_w + ix) * p.in_c + ic]);
              const int32_t wv = static_cast<int32_t>(weights[(ky * p.kernel_w + kx) * p.out_c + oc]);
              acc += (xv - p.input_zero_point) * (wv - p.weight_zero_point);
            }
          }
          y[oc] = detail::conv_output<T>(p, acc, oc, bias, multipliers);
        }
      }
    }
  }
}

// General (and grouped) convolution, weights OHWI [out_c][kh][kw][in_c/groups].
template <typename T, typename TW, typename TM = float>
inline void conv_general(const ConvParams& p, const T* in, const TW* weights, const int32_t* bias,
                         const TM* multipliers, T* out) {
  const int32_t group_in_c = p.in_c / p.groups;
  const int32_t group_out_c = p.out_c / p.groups;
  for (int32_t b = 0; b < p.batch; ++b) {
    for (int32_t oy = 0; oy < p.out_h; ++oy) {
      for (int32_t ox = 0; ox < p.out_w; ++ox) {
        T* y = out + ((b * p.out_h + oy) * p.out_w + ox) * conv_out_stride(p);
        for (int32_t oc = 0; oc < p.out_c; ++oc) {
          const int32_t channel_offset = (oc / group_out_c) * group_in_c;
          const TW* w_oc = weights + oc * p.kernel_h * p.kernel_w * group_in_c;
          int32_t acc = 0;
          for (int32_t ky = 0; ky < p.kernel_h; ++ky) {
            const int32_t iy = oy * p.stride_h - p.pad_top + ky * p.dilation_h;
            if (iy < 0 || iy >= p.in_h) continue;
            for (int32_t kx = 0; kx < p.kernel_w; ++kx) {
              const int32_t ix = ox * p.stride_w - p.pad_left + kx * p.dilation_w;
              if (ix < 0 || ix >= p.in_w) continue;
              const T* x = in + ((b * p.in_h + iy) * p.in_w + ix) * p.in_c + channel_offset;
              const TW* w = w_oc + (ky * p.kernel_w + kx) * group_in_c;
              acc += detail::dot(x, w, group_in_c, p.input_zero_point, p.weight_zero_point);
            }
          }
          y[oc] = detail::conv_output<T>(p, acc, oc, bias, multipliers);
        }
      }
    }
  }
}

// ONNX QLinearMatMul / Gemm with constant weights (ORT: MlasGemm + MlasRequantizeOutput).
template <typename T, typename TW, bool kBackward = false, typename TM = float>
inline void fully_connected(const FullyConnectedParams& p, const T* in, const TW* weights, const int32_t* bias,
                            const TM* multipliers, T* out) {
  for (int32_t i = 0; i < p.rows; ++i) {
    const int32_t r = kBackward ? p.rows - 1 - i : i;
    const T* x = in + r * p.in_features;
    T* y = out + r * p.out_features;
    for (int32_t o = 0; o < p.out_features; ++o) {
      int32_t acc = detail::dot(x, weights + o * p.in_features, p.in_features, p.input_zero_point, p.weight_zero_point);
      if (bias != nullptr) acc += bias[o];
      y[o] = requantize<T>(acc, multipliers[p.per_channel ? o : 0], p.output_zero_point, p.output_min, p.output_max);
    }
  }
}

}  // namespace portable
}  // namespace tightfit

#if TIGHTFIT_HAVE_DSP_KERNELS
#include "tightfit/kernels_dsp.hpp"
#endif
#if TIGHTFIT_HAVE_MVE_KERNELS
#include "tightfit/kernels_mve.hpp"
#endif
#if TIGHTFIT_HAVE_SCALAR_KERNELS
#include "tightfit/kernels_scalar.hpp"
#endif

namespace tightfit {

#if TIGHTFIT_USE_MVE_KERNELS
namespace selected_kernels = mve;
#elif TIGHTFIT_USE_DSP_KERNELS
namespace selected_kernels = dsp;
#elif TIGHTFIT_USE_SCALAR_KERNELS
namespace selected_kernels = scalar;
#else
namespace selected_kernels = portable;
#endif

// The scalar (ARMv6-M, RV32IMC) pointwise and fully connected kernels run forwards only, in the portable kernels'
// raster order (their comments say how they read and write): a call that runs backwards takes
// the portable loops. Every other fast kernel (scalar depthwise; Helium pointwise, depthwise and
// fully connected) runs both ways, in the portable or the DSP kernels' orders.
#if TIGHTFIT_USE_SCALAR_KERNELS
#define TIGHTFIT_FAST_KERNELS_FORWARD_ONLY 1
#else
#define TIGHTFIT_FAST_KERNELS_FORWARD_ONLY 0
#endif

// Pointwise convolution (1x1, unit strides, no pads, one group): every output
// pixel is a matrix-vector product with the [out_c][in_c] weights.  kBackward:
// the pixels from the last (the output may then lie above the input).
template <typename T, typename TW, bool kBackward = false, typename TM>
inline void conv_pointwise(const ConvParams& p, const T* in, const TW* weights, const int32_t* bias,
                           const TM* multipliers, T* out) {
#if TIGHTFIT_FAST_KERNELS_FORWARD_ONLY
  if constexpr (kBackward) {
    portable::conv_pointwise<T, TW, true>(p, in, weights, bias, multipliers, out);
  } else {
    selected_kernels::conv_pointwise<T, TW>(p, in, weights, bias, multipliers, out);
  }
#else
  selected_kernels::conv_pointwise<T, TW, kBackward>(p, in, weights, bias, multipliers, out);
#endif
}

// Output over the input: the larger of the portable and DSP loop orders.
constexpr int32_t conv_pointwise_distance(const ConvParams& p) {
  const int32_t rows = p.batch * p.in_h * p.in_w;
  const int32_t portable = detail::portable_matmul_distance(rows, p.in_c, p.out_c);
  const int32_t dsp = detail::dsp_matmul_distance(rows, p.in_c, p.out_c);
  return portable > dsp ? portable : dsp;
}

// Output above the input, run backwards: the larger of the two loop orders.
constexpr int32_t conv_pointwise_up_distance(const ConvParams& p) {
  const int32_t rows = p.batch * p.in_h * p.in_w;
  const int32_t portable = detail::portable_matmul_up_distance(rows, p.in_c, p.out_c);
  const int32_t dsp = detail::dsp_matmul_up_distance(rows, p.in_c, p.out_c);
  return portable > dsp ? portable : dsp;
}

// Depthwise convolution (groups == in_c), weights [kh][kw][out_c].  kBackward:
// the pixels from the last.
template <typename T, typename TW, bool kBackward = false, typename TM>
inline void conv_depthwise(const ConvParams& p, const T* in, const TW* weights, const int32_t* bias,
                           const TM* multipliers, T* out) {
  selected_kernels::conv_depthwise<T, TW, kBackward>(p, in, weights, bias, multipliers, out);
}

// Output over the input: pixel by pixel; output channel oc reads input channel oc / multiplier
// of the window (portable), 4 channels at a time then one by one (DSP, multiplier 1: the same).
constexpr int32_t conv_depthwise_distance(const ConvParams& p) {
  const int32_t multiplier = p.out_c / p.in_c;
  const int32_t within = p.out_c >= 2 ? (p.out_c - 1) - (p.out_c - 1) / multiplier : kNoOverlap;
  return detail::raster_distance(detail::conv_window(p), within);
}

// Output above the input, run backwards (the same for the DSP path's blocks of 4 channels).
constexpr int32_t conv_depthwise_up_distance(const ConvParams& p) {
  return detail::raster_up_distance(detail::conv_window(p));
}

// General (and grouped) convolution, weights OHWI [out_c][kh][kw][in_c/groups].
template <typename T, typename TW, typename TM>
inline void conv_general(const ConvParams& p, const T* in, const TW* weights, const int32_t* bias,
                         const TM* multipliers, T* out) {
  selected_kernels::conv_general(p, in, weights, bias, multipliers, out);
}

// Output over the input: pixel by pixel, output channel oc from its group's input channels of
// the window (portable; the DSP kernels copy the window first, or go by pairs of channels:
// never more).
constexpr int32_t conv_general_distance(const ConvParams& p) {
  const int32_t group_in_c = p.in_c / p.groups, group_out_c = p.out_c / p.groups;
  int32_t within = kNoOverlap;
  for (int32_t next = 1; next < p.out_c; ++next) {  // the channel after a write: its group's first input
    const int32_t exceed = next - (next / group_out_c) * group_in_c;
    within = exceed > within ? exceed : within;
  }
  return detail::raster_distance(detail::conv_window(p), within);
}

// ONNX QLinearConv (ORT: QLinearConv + MlasRequantizeOutput), NHWC, choosing
// the depthwise, pointwise or general path from the parameters.  kBackward runs the pixels from
// the last (the general path runs forwards in either case: conv_up_distance() says it may not
// overlap that way). The multipliers are ONNX Runtime's
// (float) or TFLite's (QuantizedMultiplier, --numerics tflite): every path takes both.
template <typename T, typename TW, bool kBackward = false, typename TM>
inline void conv(const ConvParams& p, const T* in, const TW* weights, const int32_t* bias, const TM* multipliers,
                 T* out) {
  if (conv_is_depthwise(p)) {
    conv_depthwise<T, TW, kBackward>(p, in, weights, bias, multipliers, out);
  } else if (conv_is_pointwise(p)) {
    conv_pointwise<T, TW, kBackward>(p, in, weights, bias, multipliers, out);
  } else {
    conv_general(p, in, weights, bias, multipliers, out);
  }
}

// ONNX QLinearMatMul / Gemm with constant weights (ORT: MlasGemm + MlasRequantizeOutput).
// kBackward: the rows from the last.
template <typename T, typename TW, bool kBackward = false, typename TM>
inline void fully_connected(const FullyConnectedParams& p, const T* in, const TW* weights, const int32_t* bias,
                            const TM* multipliers, T* out) {
#if TIGHTFIT_FAST_KERNELS_FORWARD_ONLY
  if constexpr (kBackward) {
    portable::fully_connected<T, TW, true>(p, in, weights, bias, multipliers, out);
  } else {
    selected_kernels::fully_connected<T, TW>(p, in, weights, bias, multipliers, out);
  }
#else
  selected_kernels::fully_connected<T, TW, kBackward>(p, in, weights, bias, multipliers, out);
#endif
}

// Output over the input: as the pointwise convolution, rows for pixels.
constexpr int32_t fully_connected_distance(const FullyConnectedParams& p) {
  const int32_t portable = detail::portable_matmul_distance(p.rows, p.in_features, p.out_features);
  const int32_t dsp = detail::dsp_matmul_distance(p.rows, p.in_features, p.out_features);
  return portable > dsp ? portable : dsp;
}

// Output above the input, run backwards: as the pointwise convolution.
constexpr int32_t fully_connected_up_distance(const FullyConnectedParams& p) {
  const int32_t portable = detail::portable_matmul_up_distance(p.rows, p.in_features, p.out_features);
  const int32_t dsp = detail::dsp_matmul_up_distance(p.rows, p.in_features, p.out_features);
  return portable > dsp ? portable : dsp;
}

// conv<T, TW, true>()'s output above its input; the general path runs forwards only.
constexpr int32_t conv_up_distance(const ConvParams& p) {
  return conv_is_depthwise(p)   ? conv_depthwise_up_distance(p)
         : conv_is_pointwise(p) ? conv_pointwise_up_distance(p)
                                : kNoOverlap;
}

// conv()'s output over its input: the distance of the path it takes.
constexpr int32_t conv_distance(const ConvParams& p) {
  return conv_is_depthwise(p)   ? conv_depthwise_distance(p)
         : conv_is_pointwise(p) ? conv_pointwise_distance(p)
                                : conv_general_distance(p);
}

namespace detail {

// The input index a transposed-convolution tap reads along one axis: output index `o` takes tap
// k from input (o + pad - k * dilation) / stride when that is a whole number inside [0, extent),
// else -1 (the tap lies between input pixels, or outside the image).
inline int32_t transposed_tap(int32_t o, int32_t pad, int32_t k, int32_t dilation, int32_t stride, int32_t extent) {
  const int32_t t = o + pad - k * dilation;
  if (t < 0 || t % stride != 0) return -1;
  const int32_t i = t / stride;
  return i < extent ? i : -1;
}

}  // namespace detail

// ONNX ConvTranspose between DequantizeLinear and QuantizeLinear (ORT has no QLinear kernel on
// the CPU: it computes in float, MlasGemm then col2im): the exact int32 sum of (x - zx) * (w - zw)
// over the taps that reach each output pixel, plus the bias, requantized as conv() does. Output
// pixels in raster order; each reads every input pixel its window covers, so the output may
// not overlap the input (no distance is stated).
template <typename T, typename TW>
inline void conv_transpose(const ConvParams& p, const T* in, const TW* weights, const int32_t* bias,
                           const float* multipliers, T* out) {
  const int32_t stride = conv_out_stride(p);
  for (int32_t b = 0; b < p.batch; ++b) {
    for (int32_t oy = 0; oy < p.out_h; ++oy) {
      for (int32_t ox = 0; ox < p.out_w; ++ox) {
        T* y = out + ((b * p.out_h + oy) * p.out_w + ox) * stride;
        for (int32_t oc = 0; oc < p.out_c; ++oc) {
          const TW* w_oc = weights + oc * p.kernel_h * p.kernel_w * p.in_c;
          int32_t acc = 0;
          for (int32_t ky = 0; ky < p.kernel_h; ++ky) {
            const int32_t iy = detail::transposed_tap(oy, p.pad_top, ky, p.dilation_h, p.stride_h, p.in_h);
            if (iy < 0) continue;
            for (int32_t kx = 0; kx < p.kernel_w; ++kx) {
              const int32_t ix = detail::transposed_tap(ox, p.pad_left, kx, p.dilation_w, p.stride_w, p.in_w);
              if (ix < 0) continue;
              const T* x = in + ((b * p.in_h + iy) * p.in_w + ix) * p.in_c;
              acc += detail::dot(x, w_oc + (ky * p.kernel_w + kx) * p.in_c, p.in_c, p.input_zero_point,
                                 p.weight_zero_point);
            }
          }
          y[oc] = detail::conv_output<T>(p, acc, oc, bias, multipliers);
        }
      }
    }
  }
}

namespace portable {

// ONNX MaxPool on int8/uint8 (exact; padded taps are skipped).
template <typename T>
inline void max_pool(const MaxPoolParams& p, const T* in, T* out) {
  for (int32_t b = 0; b < p.batch; ++b) {
    for (int32_t oy = 0; oy < p.out_h; ++oy) {
      for (int32_t ox = 0; ox < p.out_w; ++ox) {
        T* y = out + ((b * p.out_h + oy) * p.out_w + ox) * p.channels;
        for (int32_t c = 0; c < p.channels; ++c) {
          int32_t best = QuantLimits<T>::kMin;
          for (int32_t ky = 0; ky < p.kernel_h; ++ky) {
            const int32_t iy = oy * p.stride_h - p.pad_top + ky * p.dilation_h;
            if (iy < 0 || iy >= p.in_h) continue;
            for (int32_t kx = 0; kx < p.kernel_w; ++kx) {
              const int32_t ix = ox * p.stride_w - p.pad_left + kx * p.dilation_w;
              if (ix < 0 || ix >= p.in_w) continue;
              const int32_t v = static_cast<int32_t>(in[((b * p.in_h + iy) * p.in_w + ix) * p.channels + c]);
              best = v > best ? v : best;
            }
          }
          y[c] = static_cast<T>(best);
        }
      }
    }
  }
}

}  // namespace portable

// The max pool: Helium's (16 channels a vector) on a core with it, else the portable loop.
template <typename T>
inline void max_pool(const MaxPoolParams& p, const T* in, T* out) {
#if TIGHTFIT_USE_MVE_KERNELS
  mve::max_pool(p, in, out);
#else
  portable::max_pool(p, in, out);
#endif
}

// Output over the input: pixel by pixel, channel c from channel c of the window.
constexpr int32_t max_pool_distance(const MaxPoolParams& p) {
  return detail::raster_distance(
      {p.batch, p.in_h, p.in_w, p.channels, p.out_h, p.out_w, p.channels, p.kernel_h, p.kernel_w, p.stride_h,
       p.stride_w, p.dilation_h, p.dilation_w, p.pad_top, p.pad_left},
      p.channels >= 2 ? 0 : kNoOverlap);
}

namespace portable {

// com.microsoft QLinearGlobalAveragePool (ORT: MlasQLinearGlobalAveragePoolNhwc):
// integer sum minus zero point * image size, then requantized.
template <typename T>
inline void global_average_pool(const GlobalAveragePoolParams& p, const T* in, T* out) {
  const int32_t bias = -p.input_zero_point * p.image_size;
  for (int32_t b = 0; b < p.batch; ++b) {
    const T* x = in + b * p.image_size * p.channels;
    T* y = out + b * p.channels;
    for (int32_t c = 0; c < p.channels; ++c) {
      int32_t acc = bias;
      for (int32_t i = 0; i < p.image_size; ++i) acc += static_cast<int32_t>(x[i * p.channels + c]);
      y[c] = requantize<T>(acc, p.multiplier, p.output_zero_point, p.output_min, p.output_max);
    }
  }
}

}  // namespace portable

// The global average pool: Helium's (8 channels a vector) on a core with it, else the portable loop.
template <typename T>
inline void global_average_pool(const GlobalAveragePoolParams& p, const T* in, T* out) {
#if TIGHTFIT_USE_MVE_KERNELS
  mve::global_average_pool(p, in, out);
#else
  portable::global_average_pool(p, in, out);
#endif
}

// Output over the input: 0. Channel c of an image is written after its last read, and the
// channels after it start above it.
constexpr int32_t global_average_pool_distance(const GlobalAveragePoolParams&) { return 0; }

// A window over the whole unpadded image: ORT's integer global pool computes it.
inline bool average_pool_is_whole_image(const AveragePoolParams& p) {
  return p.kernel_h == p.in_h && p.kernel_w == p.in_w && p.pad_top == 0 && p.pad_left == 0 && p.pad_bottom == 0 &&
         p.pad_right == 0;
}

namespace portable {

// com.microsoft QLinearAveragePool (ORT: qlinear_pool.cc): each tap dequantized
// to float, summed row by row in float, divided by the count, quantized with
// nearbyint(y / y_scale + y_zero_point).  The whole-image case goes to the
// integer global pool, as in ORT.
template <typename T>
inline void average_pool(const AveragePoolParams& p, const T* in, T* out) {
  if (average_pool_is_whole_image(p)) {
    const int32_t image_size = p.in_h * p.in_w;
    const GlobalAveragePoolParams global = {
        p.batch,
        image_size,
        p.channels,
        p.input_zero_point,
        p.output_zero_point,
        p.input_scale / (p.output_scale * static_cast<float>(image_size)),
        p.output_min,
        p.output_max,
    };
    tightfit::global_average_pool(global, in, out);  // the Helium loop on a core with it
    return;
  }
  const float output_zero_point = static_cast<float>(p.output_zero_point);
  for (int32_t b = 0; b < p.batch; ++b) {
    for (int32_t oy = 0; oy < p.out_h; ++oy) {
      for (int32_t ox = 0; ox < p.out_w; ++ox) {
        const PoolWindow w = average_pool_window_of(p, oy, ox);
        T* y = out + ((b * p.out_h + oy) * p.out_w + ox) * p.channels;
        for (int32_t c = 0; c < p.channels; ++c) {
          float sum = 0.0f;
          for (int32_t iy = w.y_start; iy < w.y_end; ++iy) {
            for (int32_t ix = w.x_start; ix < w.x_end; ++ix) {
              const T v = in[((b * p.in_h + iy) * p.in_w + ix) * p.channels + c];
              sum += p.input_scale * static_cast<float>(static_cast<int32_t>(v) - p.input_zero_point);
            }
          }
          sum /= static_cast<float>(w.count);
          const float q = round_half_even(sum / p.output_scale + output_zero_point);
          y[c] = static_cast<T>(clamp_int(static_cast<int32_t>(q), p.output_min, p.output_max));
        }
      }
    }
  }
}

}  // namespace portable

// The average pool: the whole image as the global pool (which has its own Helium loop), other
// windows Helium's (4 channels a vector) on a core with it, else the portable loop.
template <typename T>
inline void average_pool(const AveragePoolParams& p, const T* in, T* out) {
#if TIGHTFIT_USE_MVE_KERNELS
  if (!average_pool_is_whole_image(p)) {
    mve::average_pool_window(p, in, out);
    return;
  }
#endif
  portable::average_pool(p, in, out);
}

// Output over the input: the whole-image case as the global pool, else as max_pool().
constexpr int32_t average_pool_distance(const AveragePoolParams& p) {
  const bool whole_image = p.kernel_h == p.in_h && p.kernel_w == p.in_w && p.pad_top == 0 && p.pad_left == 0 &&
                           p.pad_bottom == 0 && p.pad_right == 0;
  if (whole_image) return 0;
  return detail::raster_distance({p.batch, p.in_h, p.in_w, p.channels, p.out_h, p.out_w, p.channels, p.kernel_h,
                                  p.kernel_w, p.stride_h, p.stride_w, 1, 1, p.pad_top, p.pad_left},
                                 p.channels >= 2 ? 0 : kNoOverlap);
}

namespace detail {

// Calls fn(out_index, a_index, b_index) over a BinaryShape's 4-D index space.
template <typename Fn>
inline void for_each_broadcast(const BinaryShape& s, Fn fn) {
  int32_t o = 0;
  for (int32_t i0 = 0; i0 < s.out_dims[0]; ++i0) {
    for (int32_t i1 = 0; i1 < s.out_dims[1]; ++i1) {
      for (int32_t i2 = 0; i2 < s.out_dims[2]; ++i2) {
        const int32_t a_base = i0 * s.a_strides[0] + i1 * s.a_strides[1] + i2 * s.a_strides[2];
        const int32_t b_base = i0 * s.b_strides[0] + i1 * s.b_strides[1] + i2 * s.b_strides[2];
        for (int32_t i3 = 0; i3 < s.out_dims[3]; ++i3, ++o) {
          fn(o, a_base + i3 * s.a_strides[3], b_base + i3 * s.b_strides[3]);
        }
      }
    }
  }
}

template <typename T>
inline T saturate_round(float value, int32_t out_min, int32_t out_max) {
  const float lo = static_cast<float>(out_min);
  const float hi = static_cast<float>(out_max);
  value = value < lo ? lo : value;
  value = value > hi ? hi : value;
  return static_cast<T>(static_cast<int32_t>(round_half_even(value)));
}

}  // namespace detail

namespace portable {

// com.microsoft QLinearAdd (ORT: MlasQLinearAddKernelAvx2Helper).  The zero
// points live in `fixed`; each element is two fused multiply-adds of the raw
// input values, rounded half to even and saturated.  MLAS folds its second
// operand into the fixed part first and its first operand last; when ORT's
// broadcaster hands MLAS input A as the per-span scalar it swaps the operands,
// so A is folded first (ORT's build contracts the scalar's multiply-add into an
// FMA too, which is why the scalar forms are the same two FMAs).
template <typename T>
inline void add(const AddParams& p, const T* a, const T* b, T* out) {
  if (p.form == BroadcastForm::kScalarA) {
    detail::for_each_broadcast(p.shape, [&](int32_t o, int32_t ia, int32_t ib) {
      const float partial = fused_multiply_add(static_cast<float>(a[ia]), p.a_ratio, p.fixed);
      const float value = fused_multiply_add(static_cast<float>(b[ib]), p.b_ratio, partial);
      out[o] = detail::saturate_round<T>(value, p.output_min, p.output_max);
    });
  } else {
    detail::for_each_broadcast(p.shape, [&](int32_t o, int32_t ia, int32_t ib) {
      const float partial = fused_multiply_add(static_cast<float>(b[ib]), p.b_ratio, p.fixed);
      const float value = fused_multiply_add(static_cast<float>(a[ia]), p.a_ratio, partial);
      out[o] = detail::saturate_round<T>(value, p.output_min, p.output_max);
    });
  }
}

}  // namespace portable

// QLinearAdd: Helium's (4 elements a vector) where the innermost axis is contiguous or
// broadcast, else the portable loop.
template <typename T>
inline void add(const AddParams& p, const T* a, const T* b, T* out) {
#if TIGHTFIT_USE_MVE_KERNELS
  if (mve::binary_vectorizable(p.shape)) {
    mve::add(p, a, b, out);
    return;
  }
#endif
  portable::add(p, a, b, out);
}

// Output over operand 0 (a) or 1 (b): 0 when that operand has the output's shape, else none.
constexpr int32_t add_distance(const AddParams& p, int operand) { return detail::binary_distance(p.shape, operand); }

namespace portable {

// com.microsoft QLinearMul (ORT: MlasQLinearMulKernel, SSE2): the integer
// product of the centred inputs, times the ratio, plus the output zero point,
// rounded half to even and saturated.
template <typename T>
inline void mul(const MulParams& p, const T* a, const T* b, T* out) {
  detail::for_each_broadcast(p.shape, [&](int32_t o, int32_t ia, int32_t ib) {
    const int32_t product =
        (static_cast<int32_t>(a[ia]) - p.a_zero_point) * (static_cast<int32_t>(b[ib]) - p.b_zero_point);
    const float value = static_cast<float>(product) * p.ratio + p.output_zero_point;
    out[o] = detail::saturate_round<T>(value, p.output_min, p.output_max);
  });
}

}  // namespace portable

// QLinearMul: as add().
template <typename T>
inline void mul(const MulParams& p, const T* a, const T* b, T* out) {
#if TIGHTFIT_USE_MVE_KERNELS
  if (mve::binary_vectorizable(p.shape)) {
    mve::mul(p, a, b, out);
    return;
  }
#endif
  portable::mul(p, a, b, out);
}

// Output over operand 0 (a) or 1 (b): as add_distance().
constexpr int32_t mul_distance(const MulParams& p, int operand) { return detail::binary_distance(p.shape, operand); }

// Sub between DequantizeLinear and QuantizeLinear, as ORT computes it in float
// (no QLinear form exists): each operand dequantized ((q - zero point) *
// scale), the difference, then QuantizeLinear (divide, round half to even,
// saturate), then the fused clamp.
template <typename T>
inline void sub(const SubParams& p, const T* a, const T* b, T* out) {
  detail::for_each_broadcast(p.shape, [&](int32_t o, int32_t ia, int32_t ib) {
    const float difference =
        dequantize_linear(a[ia], p.a_scale, p.a_zero_point) - dequantize_linear(b[ib], p.b_scale, p.b_zero_point);
    const T q = quantize_linear<T>(difference, p.output_scale, p.output_zero_point);
    out[o] = static_cast<T>(clamp_int(static_cast<int32_t>(q), p.output_min, p.output_max));
  });
}

// Output over operand 0 (a) or 1 (b): as add_distance().
constexpr int32_t sub_distance(const SubParams& p, int operand) { return detail::binary_distance(p.shape, operand); }

// A 256-entry table indexed by the input's byte: QLinearSigmoid,
// QLinearLeakyRelu, Tanh between Dequantize/QuantizeLinear, and requantization
// (ORT: QLinearLookupTableTransform).  Tables come from host.hpp.
template <typename T>
inline void lookup(const uint8_t* table, const T* in, T* out, int32_t count) {
  for (int32_t i = 0; i < count; ++i) {
    out[i] = static_cast<T>(table[static_cast<uint8_t>(in[i])]);
  }
}

// Output over the input: 0 (element i is read, then written at i).
constexpr int32_t lookup_distance() { return 0; }

// com.microsoft QLinearConcat.  inputs[i] == nullptr: input i is already in
// place (its producer wrote it into the output: a zero-copy Concat).
template <typename T>
inline void concat(const ConcatParams& p, const T* const* inputs, const uint8_t* const* tables, T* out) {
  for (int32_t o = 0; o < p.outer; ++o) {
    T* y = out + o * p.output_inner;
    for (int32_t i = 0; i < p.num_inputs; ++i) {
      const int32_t inner = p.input_inner[i];
      if (inputs[i] == nullptr) {
        y += inner;
        continue;
      }
      const T* x = inputs[i] + o * inner;
      if (tables[i] == nullptr) {
        for (int32_t k = 0; k < inner; ++k) y[k] = x[k];
      } else {
        lookup(tables[i], x, y, inner);
      }
      y += inner;
    }
  }
}

// Output over input `input`.  Rows o go in order and, within a row, the
// inputs in order, each copied byte by byte (read, then written).  While
// output row o is written, input `input` still holds unread its rows o and
// up (row o from the next byte on during its own turn, none of it after its
// turn), so the writes that come nearest to an unread byte are those of the
// last row, up to that input's turn: (outer - 1) * (output_inner -
// inner[input]) + the bytes of the inputs before it in a row.  The copies of
// the inputs after it in row outer - 2 reach (outer - 1) * (output_inner -
// inner[input]), no further.
constexpr int32_t concat_distance(const ConcatParams& p, int32_t input) {
  int32_t before = 0;
  for (int32_t i = 0; i < input; ++i) before += p.input_inner[i];
  return (p.outer - 1) * (p.output_inner - p.input_inner[input]) + before;
}

// QLinearSoftmax converts its rounded quotient to an integer with a plain C++
// cast, which is undefined for a value out of range (e * floor(1 / y_scale)
// overflows to inf on a row whose maximum dominates and y_scale < 1/148). ORT's
// x86-64 build is the reference, so out-of-range values convert as x86 does:
// int8 casts to int32 (cvttss2si: NaN and out of range give INT32_MIN), uint8
// casts to uint32 through a 64-bit cvttss2si (the low 32 bits of the int64
// result; NaN and beyond 2^63 give 0).  An ARM core saturates instead, so the
// kernel cannot leave the cast to the compiler.
inline int32_t x86_float_to_int32(float v) {
  if (!(v >= -2147483648.0f && v < 2147483648.0f)) return static_cast<int32_t>(0x80000000u);
  return static_cast<int32_t>(v);
}
inline uint32_t x86_float_to_uint32(float v) {
  if (v >= 0.0f && v < 4294967296.0f) return static_cast<uint32_t>(v);
  if (!(v >= -9223372036854775808.0f && v < 9223372036854775808.0f)) return 0;
  return static_cast<uint32_t>(static_cast<uint64_t>(static_cast<int64_t>(v)));
}

// com.microsoft QLinearSoftmax (ORT: QlinearSoftmaxCPU with its float table):
// the table holds exp((i - 255 + shift) * x_scale); each row is shifted so its
// maximum meets the table's top, the float sum is taken in order, and every
// output is nearbyint(e * floor(1 / y_scale) / sum) + zero point.
// QLinearSoftmax's integer rule (p.integer_rule, as onnxruntime 1.31 runs it:
// qlinear_softmax.cc, QlinearSoftmaxCPU): the quotient goes to an integer by
// x86's cast (int32 for int8, uint32 for uint8; inf gives INT32_MIN or 0), the
// zero point is added in 32 bits (wrapping), then int8 saturates to [-128, 127]
// and uint8 is capped at 255.  ORT 1.23 capped int8 at 255 too, so a winner's
// 128 wrapped to -128 (docs/numerics.md).  The QDQ form saturates in float to
// [output_min, output_max] as its QuantizeLinear does.
template <typename T>
inline void softmax(const SoftmaxParams& p, const float* table, const T* in, T* out) {
  constexpr bool kSigned = QuantLimits<T>::kMin < 0;
  for (int32_t r = 0; r < p.rows; ++r) {
    const T* x = in + r * p.row_len;
    T* y = out + r * p.row_len;
    int32_t x_max = x[0];
    for (int32_t i = 1; i < p.row_len; ++i) x_max = x[i] > x_max ? static_cast<int32_t>(x[i]) : x_max;
    // Index of element v: v + 255 - max (uint8) or uint8(v + 127 - max) (int8).
    const int32_t shift = kSigned ? 127 - x_max : 255 - x_max;
    float sum = 0.0f;
    for (int32_t i = 0; i < p.row_len; ++i) sum += table[static_cast<uint8_t>(x[i] + shift)];
    if (sum == 0.0f) return;  // ORT stops here too
    for (int32_t i = 0; i < p.row_len; ++i) {
      const float e = table[static_cast<uint8_t>(x[i] + shift)];
      const float v = round_half_even((e * p.output_scale_inv) / sum);
      if (p.integer_rule) {
        const uint32_t raw = kSigned ? static_cast<uint32_t>(x86_float_to_int32(v)) : x86_float_to_uint32(v);
        const uint32_t sum_zp = raw + static_cast<uint32_t>(p.output_zero_point);
        if (kSigned) {
          const int32_t q = static_cast<int32_t>(sum_zp);
          // cppcheck-suppress knownConditionTrueFalse ; cppcheck 2.10 false positive: q is negative for sum_zp >= 2^31
          y[i] = static_cast<T>(q > 127 ? 127 : q < -128 ? -128 : q);
        } else {
          y[i] = static_cast<T>(sum_zp > 255u ? 255u : sum_zp);
        }
      } else {
        // v >= 0, possibly inf: clamp in float before converting.
        const float hi = static_cast<float>(p.output_max - p.output_zero_point);
        const int32_t q = (v < hi ? static_cast<int32_t>(v) : p.output_max - p.output_zero_point) + p.output_zero_point;
        y[i] = static_cast<T>(q < p.output_min ? p.output_min : q);
      }
    }
  }
}

// Output over the input: 0 (each row is read whole before its element i is written, and
// element i is read before it is written; later rows lie above).
constexpr int32_t softmax_distance() { return 0; }

// ONNX Pad, mode constant, 4-D.
template <typename T>
inline void pad(const PadParams& p, const T* in, T* out) {
  int32_t out_dims[4];
  for (int32_t d = 0; d < 4; ++d) out_dims[d] = p.pads_before[d] + p.in_dims[d] + p.pads_after[d];
  const T value = static_cast<T>(p.value);
  int32_t o = 0;
  for (int32_t i0 = 0; i0 < out_dims[0]; ++i0) {
    const int32_t s0 = i0 - p.pads_before[0];
    for (int32_t i1 = 0; i1 < out_dims[1]; ++i1) {
      const int32_t s1 = i1 - p.pads_before[1];
      for (int32_t i2 = 0; i2 < out_dims[2]; ++i2) {
        const int32_t s2 = i2 - p.pads_before[2];
        const bool row_inside =
            s0 >= 0 && s0 < p.in_dims[0] && s1 >= 0 && s1 < p.in_dims[1] && s2 >= 0 && s2 < p.in_dims[2];
        const T* row = in + ((s0 * p.in_dims[1] + s1) * p.in_dims[2] + s2) * p.in_dims[3];
        for (int32_t i3 = 0; i3 < out_dims[3]; ++i3, ++o) {
          const int32_t s3 = i3 - p.pads_before[3];
          out[o] = row_inside && s3 >= 0 && s3 < p.in_dims[3] ? row[s3] : value;
        }
      }
    }
  }
}

// ONNX Transpose, up to 4-D.
template <typename T>
inline void transpose(const TransposeParams& p, const T* in, T* out) {
  int32_t in_strides[4];
  in_strides[3] = 1;
  for (int32_t d = 2; d >= 0; --d) in_strides[d] = in_strides[d + 1] * p.in_dims[d + 1];
  int32_t out_dims[4];
  int32_t strides[4];  // input stride of each output dim
  for (int32_t d = 0; d < 4; ++d) {
    out_dims[d] = p.in_dims[p.perm[d]];
    strides[d] = in_strides[p.perm[d]];
  }
  int32_t o = 0;
  for (int32_t i0 = 0; i0 < out_dims[0]; ++i0) {
    for (int32_t i1 = 0; i1 < out_dims[1]; ++i1) {
      for (int32_t i2 = 0; i2 < out_dims[2]; ++i2) {
        const T* base = in + i0 * strides[0] + i1 * strides[1] + i2 * strides[2];
        for (int32_t i3 = 0; i3 < out_dims[3]; ++i3, ++o) out[o] = base[static_cast<std::ptrdiff_t>(i3) * strides[3]];
      }
    }
  }
}

// Slice and Split: a strided copy (see SliceParams).  The innermost dim is
// contiguous in both tensors when it is the input's innermost.
template <typename T>
inline void slice(const SliceParams& p, const T* in, T* out) {
  int32_t o = 0;
  for (int32_t i0 = 0; i0 < p.out_dims[0]; ++i0) {
    for (int32_t i1 = 0; i1 < p.out_dims[1]; ++i1) {
      for (int32_t i2 = 0; i2 < p.out_dims[2]; ++i2) {
        const T* row = in + p.offset + i0 * p.in_strides[0] + i1 * p.in_strides[1] + i2 * p.in_strides[2];
        for (int32_t i3 = 0; i3 < p.out_dims[3]; ++i3, ++o)
          out[o] = row[static_cast<std::ptrdiff_t>(i3) * p.in_strides[3]];
      }
    }
  }
}

// Channel shuffle (see ChannelShuffleParams): one block at a time, written in output order.
// Each output block reads its whole input block, so the output may not overlap the input.
template <typename T>
inline void channel_shuffle(const ChannelShuffleParams& p, const T* in, T* out) {
  const int32_t block = p.groups * p.group_size * p.inner;
  for (int32_t o = 0; o < p.outer; ++o) {
    const T* x = in + o * block;
    T* y = out + o * block;
    for (int32_t j = 0; j < p.group_size; ++j) {
      for (int32_t i = 0; i < p.groups; ++i) {
        const T* src = x + (i * p.group_size + j) * p.inner;
        for (int32_t k = 0; k < p.inner; ++k) *y++ = src[k];
      }
    }
  }
}

// Output over the input: 0. Output element o reads input element offset + sum(in_strides[d] *
// i_d) >= o (the box's strides are no larger than the input's), and those reads increase with
// o: writing element o can only overwrite input bytes already read.
constexpr int32_t slice_distance() { return 0; }

// ReduceMean between DequantizeLinear and QuantizeLinear (ORT has no QLinear
// form and computes it in float: the dequantized values summed, divided by
// the count, quantized).  The sum of (q - zero point) is exact in int32; times
// the scale it is ORT's float sum whenever that sum is exact (it rounds only
// past 24 significant bits), then the same division by the count and the same
// QuantizeLinear.  The spatial mean of a 4-D tensor from ONNX is not computed
// here: the ONNX importer makes it a GlobalAveragePool (ORT's integer kernel).
template <typename T>
inline void reduce_mean(const ReduceMeanParams& p, const T* in, T* out) {
  const int32_t bias = -p.input_zero_point * p.count;
  const float count = static_cast<float>(p.count);
  detail::reduce_in_index_order(p, in, detail::zero_sum<T>, detail::add_to_sum<T>, [&](int32_t o, int32_t sum) {
    const float mean = (static_cast<float>(sum + bias) * p.input_scale) / count;
    const T q = quantize_linear<T>(mean, p.output_scale, p.output_zero_point);
    out[o] = static_cast<T>(clamp_int(static_cast<int32_t>(q), p.output_min, p.output_max));
  });
}

// ONNX Resize, mode nearest, NHWC, with host-computed source indices.
template <typename T>
inline void resize_nearest(const ResizeNearestParams& p, const T* in, T* out) {
  for (int32_t b = 0; b < p.batch; ++b) {
    for (int32_t oy = 0; oy < p.out_h; ++oy) {
      const T* row = in + (b * p.in_h + p.h_index[oy]) * p.in_w * p.channels;
      for (int32_t ox = 0; ox < p.out_w; ++ox) {
        const T* x = row + p.w_index[ox] * p.channels;
        T* y = out + ((b * p.out_h + oy) * p.out_w + ox) * pixel_stride(p.out_stride, p.channels);
        for (int32_t c = 0; c < p.channels; ++c) y[c] = x[c];
      }
    }
  }
}

// ONNX QuantizeLinear, per tensor (ORT: MlasQuantizeLinear).
template <typename T>
inline void quantize(const QuantizeParams& p, const float* in, T* out) {
  for (int32_t i = 0; i < p.count; ++i) out[i] = quantize_linear<T>(in[i], p.scale, p.zero_point);
}

// ONNX DequantizeLinear, per tensor.
template <typename T>
inline void dequantize(const QuantizeParams& p, const T* in, float* out) {
  for (int32_t i = 0; i < p.count; ++i) out[i] = dequantize_linear(in[i], p.scale, p.zero_point);
}

// Clamp in the quantized domain (quantized Relu / Clip with the output's
// scale and zero point equal to the input's).
template <typename T>
inline void clamp(const ClampParams& p, const T* in, T* out) {
  for (int32_t i = 0; i < p.count; ++i) {
    out[i] = static_cast<T>(clamp_int(static_cast<int32_t>(in[i]), p.min, p.max));
  }
}

// Output over the input: 0 (element i is read, then written at i).
constexpr int32_t clamp_distance() { return 0; }

}  // namespace tightfit

#include "tightfit/tflite_kernels.hpp"  // --numerics tflite: ADD, AVERAGE_POOL_2D, SOFTMAX as TFLite computes them
#include "tightfit/float_kernels.hpp"  // float islands: float32 Add, Sub, Mul, Div, Pow, Sqrt, ReduceMean, Exp, Log, Erf, Softmax
