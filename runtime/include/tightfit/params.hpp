// tightfit runtime: the parameter blocks of every kernel.
//
// The code generator computes every field on the host and emits each block as
// a `static constexpr` object, so the blocks live in flash next to the weights.
// Every block is an aggregate of int32_t / float fields (and pointers to other
// constexpr arrays), initialised positionally in the order declared here.
//
// Each block's fields are written once, as a field list TIGHTFIT_<BLOCK>(X) calling X(type, name)
// per field in declaration order: the struct is declared from it, and so is the code generator's
// record of the block's initializer (compiler/ops/params_block.hpp), which writes the fields in
// the list's order, so the two cannot disagree on it. TIGHTFIT_PARAMS_BLOCKS names every list.
//
// Conventions shared by all kernels (see docs/runtime.md for the full story):
//  * Activations are channels-last: a 4-D ONNX tensor N,C,H,W is stored
//    N,H,W,C in the arena; the code generator converts at the model's edges.
//    Tensors of rank < 4 keep ONNX order (they have no channel axis to move).
//  * T is the activation type, int8_t or uint8_t; every tensor of one kernel
//    call has the same T (as in ORT's QLinear* operators).
//  * Zero points are stored widened to int32_t; output_min/output_max are the
//    clamp bounds in the quantized output domain: the type's full range
//    (-128..127 or 0..255) unless the code generator fused a Relu/Clip, in which
//    case they are the fused bounds (exact: the clamp is applied to integers).
#pragma once

#include <cstdint>

namespace tightfit {

// A field list's X for the struct declaration: one member per field.
#define TIGHTFIT_DECLARE_FIELD(type, name) type name;

// The type of a field of four int32 values (a field list names a member's type in one token).
using Int32x4 = int32_t[4];

// TFLite's fixed-point multiplier (--numerics tflite): real = multiplier * 2^(shift - 31), from
// quantize_multiplier() in host.hpp (TFLite's QuantizeMultiplier). The convolution and fully
// connected kernels take an array of them in place of the float multipliers.
#define TIGHTFIT_QUANTIZED_MULTIPLIER(X)             \
  X(int32_t, multiplier) /* in [2^30, 2^31), or 0 */ \
  X(int32_t, shift)      /* > 0: shift left before the multiply; <= 0: divide by 2^-shift after it */
struct QuantizedMultiplier {
  TIGHTFIT_QUANTIZED_MULTIPLIER(TIGHTFIT_DECLARE_FIELD)
};

// ---------------------------------------------------------------------------
// Convolution (ONNX QLinearConv, 2-D; a 1-D conv is H = 1).
//
// Weight layouts (the host helper pack_conv_weights() in <tightfit/host.hpp>
// produces them from ONNX's OIHW order):
//  * depthwise, i.e. groups == in_c && groups > 1 (out_c = groups * multiplier):
//    [kernel_h][kernel_w][out_c]  ("HWO": inner loop runs over channels, as the
//    NHWC input does);
//  * everything else (general, grouped, pointwise 1x1):
//    [out_c][kernel_h][kernel_w][in_c / groups]  ("OHWI").
// bias: int32 per output channel (ONNX's B input, added to the accumulator
// before scaling, as ORT does) or nullptr for none.
// multipliers: float, per output channel when per_channel != 0, else one
// value; each is conv_multiplier(x_scale, w_scale[oc], y_scale) from host.hpp.
//
// The transposed convolution (conv_transpose(), ONNX ConvTranspose between
// DequantizeLinear and QuantizeLinear, one group) reads the same block: every
// input pixel spreads over a kernel_h x kernel_w window of the output, stride
// apart, so output row oy takes tap ky from input row (oy + pad_top - ky *
// dilation_h) / stride_h when that is whole and inside the image (the same
// across); output_padding only lengthens out_h/out_w.  Weights
// [out_c][kernel_h][kernel_w][in_c] (from ONNX's [in_c][out_c][kh][kw]).
//
// out_stride: elements from one output pixel to the next, conv_out_stride(): out_c (written 0,
// the value of a block that leaves it out), or more when the output is the channel slice of a
// Concat's output written in place (docs/rewrites.md), whose pixels also hold the other inputs'
// channels. Every variant of conv() honours it.
#define TIGHTFIT_CONV_PARAMS(X)                                                          \
  X(int32_t, batch)                                                                      \
  X(int32_t, in_h)                                                                       \
  X(int32_t, in_w)                                                                       \
  X(int32_t, in_c)                                                                       \
  X(int32_t, out_h)                                                                      \
  X(int32_t, out_w)                                                                      \
  X(int32_t, out_c)                                                                      \
  X(int32_t, kernel_h)                                                                   \
  X(int32_t, kernel_w)                                                                   \
  X(int32_t, stride_h)                                                                   \
  X(int32_t, stride_w)                                                                   \
  X(int32_t, dilation_h)                                                                 \
  X(int32_t, dilation_w)                                                                 \
  X(int32_t, pad_top)                                                                    \
  X(int32_t, pad_left) /* the bottom/right pads follow from out_h/out_w */               \
  X(int32_t, groups)                                                                     \
  X(int32_t, input_zero_point)                                                           \
  X(int32_t, weight_zero_point) /* ORT requires one value even for per-channel scales */ \
  X(int32_t, output_zero_point)                                                          \
  X(int32_t, output_min)                                                                 \
  X(int32_t, output_max)                                                                 \
  X(int32_t, per_channel) /* 1: multipliers[out_c]; 0: multipliers[0] for all */         \
  X(int32_t, out_stride)  /* conv_out_stride(), see above */
struct ConvParams {
  TIGHTFIT_CONV_PARAMS(TIGHTFIT_DECLARE_FIELD)
};

// Elements from one output pixel to the next of a kernel with `channels` outputs per pixel and
// the field `out_stride` (0: channels; more: a channel slice of a Concat's output).
constexpr int32_t pixel_stride(int32_t out_stride, int32_t channels) { return out_stride > 0 ? out_stride : channels; }

constexpr int32_t conv_out_stride(const ConvParams& p) { return pixel_stride(p.out_stride, p.out_c); }

// True when conv() reads its weights in the depthwise layout [kh][kw][out_c].
constexpr bool conv_is_depthwise(const ConvParams& p) { return p.groups > 1 && p.groups == p.in_c; }

// True when conv() takes the pointwise path (1x1, unit strides, no pads, one group).
constexpr bool conv_is_pointwise(const ConvParams& p) {
  return p.kernel_h == 1 && p.kernel_w == 1 && p.stride_h == 1 && p.stride_w == 1 && p.pad_top == 0 &&
         p.pad_left == 0 && p.groups == 1 && p.out_h == p.in_h && p.out_w == p.in_w;
}

// The taps [lo, hi) of one kernel axis that land inside [0, extent), for an output whose first
// tap is at `start` (the fast kernels find them once per output pixel). No division: ARMv6-M
// has no divide instruction.
inline void conv_tap_range(int32_t start, int32_t dilation, int32_t kernel, int32_t extent, int32_t& lo, int32_t& hi) {
  lo = 0;
  while (lo < kernel && start + lo * dilation < 0) ++lo;
  hi = kernel;
  while (hi > lo && start + (hi - 1) * dilation >= extent) --hi;
}

// The receptive field of output pixel (b, oy, ox) of a conv with one group, into `window` in the
// weights' order (ky, kx, ic): the taps inside the image found once, each kernel row's run of them
// one byte copy (with dilation_w 1), every other tap `padding` (the input zero point, so that it
// adds nothing). Reads only that pixel's taps.
template <typename T>
inline void gather_window(const ConvParams& p, const T* in, int32_t b, int32_t oy, int32_t ox, T padding, T* window) {
  const int32_t row_len = p.kernel_w * p.in_c;
  const int32_t iy0 = oy * p.stride_h - p.pad_top, ix0 = ox * p.stride_w - p.pad_left;
  int32_t kx_lo, kx_hi;
  conv_tap_range(ix0, p.dilation_w, p.kernel_w, p.in_w, kx_lo, kx_hi);
  T* row = window;
  for (int32_t ky = 0; ky < p.kernel_h; ++ky, row += row_len) {
    const int32_t iy = iy0 + ky * p.dilation_h;
    const bool row_inside = iy >= 0 && iy < p.in_h;
    const int32_t lo = row_inside ? kx_lo * p.in_c : row_len, hi = row_inside ? kx_hi * p.in_c : row_len;
    for (int32_t i = 0; i < lo; ++i) row[i] = padding;
    if (lo < hi) {
      const T* x = in + ((b * p.in_h + iy) * p.in_w + ix0 + kx_lo * p.dilation_w) * p.in_c;
      if (p.dilation_w == 1) {
        __builtin_memcpy(row + lo, x, static_cast<uint32_t>(hi - lo));
      } else {
        for (int32_t kx = kx_lo; kx < kx_hi; ++kx, x += p.dilation_w * p.in_c)
          __builtin_memcpy(row + kx * p.in_c, x, static_cast<uint32_t>(p.in_c));
      }
    }
    for (int32_t i = hi; i < row_len; ++i) row[i] = padding;
  }
}

// ---------------------------------------------------------------------------
// Fully connected / matrix multiply with constant weights (ONNX QLinearMatMul,
// and QGemm-like A * W^T + bias): out[r][o] = requant(sum_k (x[r][k]-zx) *
// (w[o][k]-zw) + bias[o]).  Weight layout: [out_features][in_features] (ONNX's
// MatMul B is [K][N]: the code generator transposes it).  bias may be nullptr.
// multipliers as for ConvParams (per output feature when per_channel != 0).
#define TIGHTFIT_FULLY_CONNECTED_PARAMS(X)                \
  X(int32_t, rows) /* product of all leading dims of A */ \
  X(int32_t, in_features)                                 \
  X(int32_t, out_features)                                \
  X(int32_t, input_zero_point)                            \
  X(int32_t, weight_zero_point)                           \
  X(int32_t, output_zero_point)                           \
  X(int32_t, output_min)                                  \
  X(int32_t, output_max)                                  \
  X(int32_t, per_channel)
struct FullyConnectedParams {
  TIGHTFIT_FULLY_CONNECTED_PARAMS(TIGHTFIT_DECLARE_FIELD)
};

// ---------------------------------------------------------------------------
// An image in and one out with as many channels (pools, resize): their first fields.
#define TIGHTFIT_IMAGE_IN_OUT_PARAMS(X) \
  X(int32_t, batch)                     \
  X(int32_t, in_h)                      \
  X(int32_t, in_w)                      \
  X(int32_t, channels)                  \
  X(int32_t, out_h)                     \
  X(int32_t, out_w)

// A requantization through float (ORT's way for its float-computing QLinear kernels): the input's
// scale and zero point, the output's, and the clamp (a fused Relu/Clip's; the type's range
// without one).
#define TIGHTFIT_FLOAT_REQUANTIZE_PARAMS(X) \
  X(float, input_scale)                     \
  X(int32_t, input_zero_point)              \
  X(float, output_scale)                    \
  X(int32_t, output_zero_point)             \
  X(int32_t, output_min)                    \
  X(int32_t, output_max)

// The window of a pool: the first fields of max and average pooling alike.
#define TIGHTFIT_POOL_WINDOW_PARAMS(X) \
  TIGHTFIT_IMAGE_IN_OUT_PARAMS(X)      \
  X(int32_t, kernel_h)                 \
  X(int32_t, kernel_w)                 \
  X(int32_t, stride_h)                 \
  X(int32_t, stride_w)

// Max pooling (ONNX MaxPool on int8/uint8): exact, pads never win.
#define TIGHTFIT_MAX_POOL_PARAMS(X) \
  TIGHTFIT_POOL_WINDOW_PARAMS(X)    \
  X(int32_t, dilation_h)            \
  X(int32_t, dilation_w)            \
  X(int32_t, pad_top)               \
  X(int32_t, pad_left)
struct MaxPoolParams {
  TIGHTFIT_MAX_POOL_PARAMS(TIGHTFIT_DECLARE_FIELD)
};

// Average pooling (com.microsoft QLinearAveragePool): ORT dequantizes to float,
// sums in float, divides by the window count and quantizes; when the kernel
// covers the whole image with no pads ORT switches to its integer global
// average pool, and so does this kernel (same results as ORT either way).
#define TIGHTFIT_AVERAGE_POOL_PARAMS(X) \
  TIGHTFIT_POOL_WINDOW_PARAMS(X)        \
  X(int32_t, pad_top)                   \
  X(int32_t, pad_left)                  \
  X(int32_t, pad_bottom)                \
  X(int32_t, pad_right)                 \
  X(int32_t, count_include_pad)         \
  TIGHTFIT_FLOAT_REQUANTIZE_PARAMS(X)
struct AveragePoolParams {
  TIGHTFIT_AVERAGE_POOL_PARAMS(TIGHTFIT_DECLARE_FIELD)
};

// The input rows [y_start, y_end) and columns [x_start, x_end) an average pool's output pixel
// (oy, ox) reads (its window clipped to the image), and the count it divides by.
struct PoolWindow {
  int32_t y_start, y_end, x_start, x_end, count;
};
inline PoolWindow average_pool_window_of(const AveragePoolParams& p, int32_t oy, int32_t ox) {
  const int32_t y0 = oy * p.stride_h - p.pad_top, x0 = ox * p.stride_w - p.pad_left;
  PoolWindow w{y0 > 0 ? y0 : 0, y0 + p.kernel_h < p.in_h ? y0 + p.kernel_h : p.in_h, x0 > 0 ? x0 : 0,
               x0 + p.kernel_w < p.in_w ? x0 + p.kernel_w : p.in_w, 0};
  w.count = p.count_include_pad ? p.kernel_h * p.kernel_w : (w.y_end - w.y_start) * (w.x_end - w.x_start);
  return w;
}

// Global average pooling (com.microsoft QLinearGlobalAveragePool, and
// ReduceMean over H,W): integer sum, then requantize like a conv output.
// multiplier = global_average_pool_multiplier(x_scale, y_scale, image_size).
#define TIGHTFIT_GLOBAL_AVERAGE_POOL_PARAMS(X) \
  X(int32_t, batch)                            \
  X(int32_t, image_size) /* H * W */           \
  X(int32_t, channels)                         \
  X(int32_t, input_zero_point)                 \
  X(int32_t, output_zero_point)                \
  X(float, multiplier)                         \
  X(int32_t, output_min)                       \
  X(int32_t, output_max) /* a fused Relu/Clip's clamp; the type's range without one */
struct GlobalAveragePoolParams {
  TIGHTFIT_GLOBAL_AVERAGE_POOL_PARAMS(TIGHTFIT_DECLARE_FIELD)
};

// ---------------------------------------------------------------------------
// Element-wise binary operators with ONNX broadcasting.  The kernel walks a
// 4-D output index space (out_dims, outermost first; pad with leading 1s) and
// reads A and B through per-dimension element strides, 0 where broadcast.
//
// ORT's QLinearAdd splits the broadcast into spans and calls MLAS with the
// operands in an order that changes the float rounding: `form` tells the
// kernel which order ORT used for this node: kScalarA when A is constant along
// ORT's innermost span (ONNX layout: A's extent is 1 in the last output dim
// that is not 1, e.g. A of shape [1,C,1,1] added to [1,C,H,W]); otherwise
// kScalarB or kElementwise, which compute alike.  Use binary_broadcast_form()
// in host.hpp to decide.
enum class BroadcastForm : int32_t { kElementwise = 0, kScalarA = 1, kScalarB = 2 };

#define TIGHTFIT_BINARY_SHAPE(X) \
  X(Int32x4, out_dims)           \
  X(Int32x4, a_strides)          \
  X(Int32x4, b_strides)
struct BinaryShape {
  TIGHTFIT_BINARY_SHAPE(TIGHTFIT_DECLARE_FIELD)
};

// QLinearAdd: fields from add_requant() in host.hpp.
#define TIGHTFIT_ADD_PARAMS(X)                                                                                \
  X(BinaryShape, shape)                                                                                       \
  X(BroadcastForm, form)                                                                                      \
  X(int32_t, a_zero_point) /* informational: the zero points are folded into `fixed` */                       \
  X(int32_t, b_zero_point)                                                                                    \
  X(float, a_ratio) /* a_scale / c_scale */                                                                   \
  X(float, b_ratio) /* b_scale / c_scale */                                                                   \
  X(float, fixed)   /* c_zero_point - (a_ratio * a_zero_point + b_ratio * b_zero_point), see add_requant() */ \
  X(int32_t, output_min)                                                                                      \
  X(int32_t, output_max)
struct AddParams {
  TIGHTFIT_ADD_PARAMS(TIGHTFIT_DECLARE_FIELD)
};

// QLinearMul: out = sat(round((a - za) * (b - zb) * ratio + zc)).
#define TIGHTFIT_MUL_PARAMS(X)                                                    \
  X(BinaryShape, shape)                                                           \
  X(int32_t, a_zero_point)                                                        \
  X(int32_t, b_zero_point)                                                        \
  X(float, ratio)             /* a_scale * b_scale / c_scale, from mul_ratio() */ \
  X(float, output_zero_point) /* as float: ORT adds it before rounding */         \
  X(int32_t, output_min)                                                          \
  X(int32_t, output_max)
struct MulParams {
  TIGHTFIT_MUL_PARAMS(TIGHTFIT_DECLARE_FIELD)
};

// ADD as TFLite computes it on int8 (--numerics tflite; fields from tflite_add_params() in
// host.hpp): each input plus its offset (minus its zero point), moved left by left_shift, scaled
// by its multiplier; the sum scaled by output_multiplier, plus output_offset, clamped.
#define TIGHTFIT_ADD_TFLITE_PARAMS(X)       \
  X(BinaryShape, shape)                     \
  X(int32_t, a_offset)                      \
  X(int32_t, b_offset)                      \
  X(int32_t, output_offset)                 \
  X(int32_t, left_shift)                    \
  X(QuantizedMultiplier, a_multiplier)      \
  X(QuantizedMultiplier, b_multiplier)      \
  X(QuantizedMultiplier, output_multiplier) \
  X(int32_t, output_min)                    \
  X(int32_t, output_max)
struct AddTfliteParams {
  TIGHTFIT_ADD_TFLITE_PARAMS(TIGHTFIT_DECLARE_FIELD)
};

// TFLite's int8 MUL (--numerics tflite; host.hpp, tflite_mul_params): the product of the inputs
// plus their offsets, times the output's fixed-point multiplier, plus the output offset, clamped.
#define TIGHTFIT_MUL_TFLITE_PARAMS(X)       \
  X(BinaryShape, shape)                     \
  X(int32_t, a_offset)                      \
  X(int32_t, b_offset)                      \
  X(int32_t, output_offset)                 \
  X(QuantizedMultiplier, output_multiplier) \
  X(int32_t, output_min)                    \
  X(int32_t, output_max)
struct MulTfliteParams {
  TIGHTFIT_MUL_TFLITE_PARAMS(TIGHTFIT_DECLARE_FIELD)
};

// Sub between DequantizeLinear and QuantizeLinear (ORT has no QLinear form, so
// ORT computes it in float): each operand dequantized, subtracted, quantized.
#define TIGHTFIT_SUB_PARAMS(X)  \
  X(BinaryShape, shape)         \
  X(float, a_scale)             \
  X(int32_t, a_zero_point)      \
  X(float, b_scale)             \
  X(int32_t, b_zero_point)      \
  X(float, output_scale)        \
  X(int32_t, output_zero_point) \
  X(int32_t, output_min)        \
  X(int32_t, output_max)
struct SubParams {
  TIGHTFIT_SUB_PARAMS(TIGHTFIT_DECLARE_FIELD)
};

// A reduction (ReduceMean's, MEAN's) over any axes of a tensor of up to 4 dims (pad with leading
// 1s), in the arena's order. Output element (i0..i3) over kept_dims is the mean of the input over
// reduced_dims around it: input element sum(in_strides[d] * (i_d + j_d)), output element
// sum(out_strides[d] * i_d). A dim is kept (reduced_dims[d] == 1) or reduced (kept_dims[d] == 1);
// out_strides place the kept dims in the output's order.
#define TIGHTFIT_REDUCE_GEOMETRY_PARAMS(X) \
  X(Int32x4, kept_dims)                    \
  X(Int32x4, reduced_dims)                 \
  X(Int32x4, in_strides)                   \
  X(Int32x4, out_strides)                  \
  X(int32_t, count) /* product of reduced_dims */

// ReduceMean between DequantizeLinear and QuantizeLinear: the mean in float, requantized.
#define TIGHTFIT_REDUCE_MEAN_PARAMS(X) \
  TIGHTFIT_REDUCE_GEOMETRY_PARAMS(X)   \
  TIGHTFIT_FLOAT_REQUANTIZE_PARAMS(X)
struct ReduceMeanParams {
  TIGHTFIT_REDUCE_MEAN_PARAMS(TIGHTFIT_DECLARE_FIELD)
};

// MEAN as TFLite Micro computes it on int8 (--numerics tflite; its QuantizedMeanOrSum), with
// ReduceMeanParams' geometry: the sum of (q - input zero point) over the reduced elements, times
// a fixed-point multiplier that holds 1/count (tflite_mean_multiplier() in host.hpp), plus the
// output zero point, clamped.
#define TIGHTFIT_REDUCE_MEAN_TFLITE_PARAMS(X) \
  TIGHTFIT_REDUCE_GEOMETRY_PARAMS(X)          \
  X(int32_t, input_zero_point)                \
  X(QuantizedMultiplier, multiplier)          \
  X(int32_t, output_zero_point)               \
  X(int32_t, output_min)                      \
  X(int32_t, output_max)
struct ReduceMeanTfliteParams {
  TIGHTFIT_REDUCE_MEAN_TFLITE_PARAMS(TIGHTFIT_DECLARE_FIELD)
};

// Channel shuffle (ShuffleNet's Reshape [N, C, H, W] -> [N, groups, C/groups, H, W], Transpose
// [0, 2, 1, 3, 4], Reshape back): in each of `outer` blocks of groups * group_size channels,
// channel i * group_size + j goes to j * groups + i, each channel a run of `inner` elements
// (channels-last: outer = N * H * W pixels, inner = 1).  Bytes are copied.
#define TIGHTFIT_CHANNEL_SHUFFLE_PARAMS(X) \
  X(int32_t, outer)                        \
  X(int32_t, groups)                       \
  X(int32_t, group_size)                   \
  X(int32_t, inner)
struct ChannelShuffleParams {
  TIGHTFIT_CHANNEL_SHUFFLE_PARAMS(TIGHTFIT_DECLARE_FIELD)
};

// Slice (and each output of Split), steps of 1: output element (i0..i3) over
// out_dims, in the arena's order, is input element offset + sum(in_strides[d]
// * i_d).  The same quantization in and out: bytes are copied.
#define TIGHTFIT_SLICE_PARAMS(X) \
  X(Int32x4, out_dims)           \
  X(Int32x4, in_strides)         \
  X(int32_t, offset)
struct SliceParams {
  TIGHTFIT_SLICE_PARAMS(TIGHTFIT_DECLARE_FIELD)
};

// ---------------------------------------------------------------------------
// Concat (com.microsoft QLinearConcat, any axis).  With the axis fixed, a
// tensor is [outer][inner_i] where inner_i = axis extent * product of the dims
// after the axis (in the arena layout).  tables[i] == nullptr copies input i;
// otherwise tables[i] is its 256-byte requantization table from
// build_requantize_table() (ORT copies when scale and zero point equal the
// output's, and uses such a table otherwise).
#define TIGHTFIT_CONCAT_PARAMS(X)                                       \
  X(int32_t, num_inputs)                                                \
  X(int32_t, outer)                                                     \
  X(int32_t, output_inner)       /* sum of the inputs' inner extents */ \
  X(const int32_t*, input_inner) /* [num_inputs] */
struct ConcatParams {
  TIGHTFIT_CONCAT_PARAMS(TIGHTFIT_DECLARE_FIELD)
};

// ---------------------------------------------------------------------------
// Softmax (com.microsoft QLinearSoftmax) over rows of row_len contiguous
// elements: the code generator makes the reduced axis (axes, for opset < 13)
// innermost.  table: 256 floats from build_softmax_table(); output_scale_inv
// is softmax_output_scale_inv(y_scale) (ORT: floor(1 / y_scale)).
// integer_rule = 1: QLinearSoftmax's own rule (x86's float-to-integer cast,
// the zero point added in 32 bits, int8 saturated, uint8 capped at 255);
// integer_rule = 0: the QDQ form, whose QuantizeLinear saturates, clamped in
// float to [output_min, output_max].
#define TIGHTFIT_SOFTMAX_PARAMS(X) \
  X(int32_t, rows)                 \
  X(int32_t, row_len)              \
  X(int32_t, output_zero_point)    \
  X(float, output_scale_inv)       \
  X(int32_t, output_min)           \
  X(int32_t, output_max)           \
  X(int32_t, integer_rule)
struct SoftmaxParams {
  TIGHTFIT_SOFTMAX_PARAMS(TIGHTFIT_DECLARE_FIELD)
};

// SOFTMAX as TFLite Micro + CMSIS-NN computes it on int8 (arm_softmax_s8; --numerics tflite;
// from tflite_softmax_params() in host.hpp). The output is int8 at scale 1/256, zero point -128.
#define TIGHTFIT_SOFTMAX_TFLITE_PARAMS(X)                                                                   \
  X(int32_t, rows)                                                                                          \
  X(int32_t, row_len)                                                                                       \
  X(int32_t, input_multiplier) /* the input scale in Q5.26 as TFLite's PreprocessSoftmaxScaling gives it */ \
  X(int32_t, input_left_shift)                                                                              \
  X(int32_t, diff_min) /* differences from the row's maximum below it give 0 (-128 out) */
struct SoftmaxTfliteParams {
  TIGHTFIT_SOFTMAX_TFLITE_PARAMS(TIGHTFIT_DECLARE_FIELD)
};

// ---------------------------------------------------------------------------
// Pad, constant mode, on a 4-D tensor (arena layout).
#define TIGHTFIT_PAD_PARAMS(X) \
  X(Int32x4, in_dims)          \
  X(Int32x4, pads_before)      \
  X(Int32x4, pads_after)       \
  X(int32_t, value) /* the quantized constant (usually the zero point) */
struct PadParams {
  TIGHTFIT_PAD_PARAMS(TIGHTFIT_DECLARE_FIELD)
};

// Transpose of a tensor of up to 4 dims (pad with leading 1s): output dim i is
// input dim perm[i].
#define TIGHTFIT_TRANSPOSE_PARAMS(X) \
  X(Int32x4, in_dims)                \
  X(Int32x4, perm)
struct TransposeParams {
  TIGHTFIT_TRANSPOSE_PARAMS(TIGHTFIT_DECLARE_FIELD)
};

// Resize, mode nearest, on NHWC.  h_index[out_h] / w_index[out_w] name the
// source row / column of each output row / column; the host computes them
// with resize_nearest_index() exactly as ORT does.
#define TIGHTFIT_RESIZE_NEAREST_PARAMS(X) \
  TIGHTFIT_IMAGE_IN_OUT_PARAMS(X)         \
  X(const int32_t*, h_index)              \
  X(const int32_t*, w_index)              \
  X(int32_t, out_stride) /* elements from one output pixel to the next: pixel_stride(out_stride, channels) */
struct ResizeNearestParams {
  TIGHTFIT_RESIZE_NEAREST_PARAMS(TIGHTFIT_DECLARE_FIELD)
};

// ---------------------------------------------------------------------------
// QuantizeLinear (float -> T) and DequantizeLinear (T -> float), per tensor.
#define TIGHTFIT_QUANTIZE_PARAMS(X) \
  X(int32_t, count)                 \
  X(float, scale)                   \
  X(int32_t, zero_point)
struct QuantizeParams {
  TIGHTFIT_QUANTIZE_PARAMS(TIGHTFIT_DECLARE_FIELD)
};

// Clamp in the quantized domain (a standalone quantized Relu / Clip).
#define TIGHTFIT_CLAMP_PARAMS(X) \
  X(int32_t, count)              \
  X(int32_t, min)                \
  X(int32_t, max)
struct ClampParams {
  TIGHTFIT_CLAMP_PARAMS(TIGHTFIT_DECLARE_FIELD)
};

// ONNX LSTM and GRU on float32, layout 0: X [seq_length, batch, input_size], Y [seq_length,
// directions, batch, hidden_size], Y_h and Y_c [directions, batch, hidden_size]. `reverse`: the
// one direction runs backwards in time (ONNX's direction "reverse"; with directions 2 the second
// always does).
#define TIGHTFIT_RNN_PARAMS(X)        \
  X(int32_t, seq_length)              \
  X(int32_t, batch)                   \
  X(int32_t, input_size)              \
  X(int32_t, hidden_size)             \
  X(int32_t, directions) /* 1 or 2 */ \
  X(int32_t, reverse)                 \
  X(int32_t, linear_before_reset) /* GRU */
struct RnnParams {
  TIGHTFIT_RNN_PARAMS(TIGHTFIT_DECLARE_FIELD)
};

// Every struct of this header made from a field list (the nested QuantizedMultiplier and BinaryShape
// too), as X(struct, its field list).
#define TIGHTFIT_PARAMS_BLOCKS(X)                                 \
  X(QuantizedMultiplier, TIGHTFIT_QUANTIZED_MULTIPLIER)           \
  X(ConvParams, TIGHTFIT_CONV_PARAMS)                             \
  X(FullyConnectedParams, TIGHTFIT_FULLY_CONNECTED_PARAMS)        \
  X(MaxPoolParams, TIGHTFIT_MAX_POOL_PARAMS)                      \
  X(AveragePoolParams, TIGHTFIT_AVERAGE_POOL_PARAMS)              \
  X(GlobalAveragePoolParams, TIGHTFIT_GLOBAL_AVERAGE_POOL_PARAMS) \
  X(BinaryShape, TIGHTFIT_BINARY_SHAPE)                           \
  X(AddParams, TIGHTFIT_ADD_PARAMS)                               \
  X(MulParams, TIGHTFIT_MUL_PARAMS)                               \
  X(AddTfliteParams, TIGHTFIT_ADD_TFLITE_PARAMS)                  \
  X(MulTfliteParams, TIGHTFIT_MUL_TFLITE_PARAMS)                  \
  X(SubParams, TIGHTFIT_SUB_PARAMS)                               \
  X(ReduceMeanParams, TIGHTFIT_REDUCE_MEAN_PARAMS)                \
  X(ReduceMeanTfliteParams, TIGHTFIT_REDUCE_MEAN_TFLITE_PARAMS)   \
  X(ChannelShuffleParams, TIGHTFIT_CHANNEL_SHUFFLE_PARAMS)        \
  X(SliceParams, TIGHTFIT_SLICE_PARAMS)                           \
  X(ConcatParams, TIGHTFIT_CONCAT_PARAMS)                         \
  X(SoftmaxParams, TIGHTFIT_SOFTMAX_PARAMS)                       \
  X(SoftmaxTfliteParams, TIGHTFIT_SOFTMAX_TFLITE_PARAMS)          \
  X(PadParams, TIGHTFIT_PAD_PARAMS)                               \
  X(TransposeParams, TIGHTFIT_TRANSPOSE_PARAMS)                   \
  X(ResizeNearestParams, TIGHTFIT_RESIZE_NEAREST_PARAMS)          \
  X(QuantizeParams, TIGHTFIT_QUANTIZE_PARAMS)                     \
  X(ClampParams, TIGHTFIT_CLAMP_PARAMS)                           \
  X(RnnParams, TIGHTFIT_RNN_PARAMS)

}  // namespace tightfit
