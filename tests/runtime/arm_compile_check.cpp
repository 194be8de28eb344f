// Compile-only check: instantiates every kernel for every supported type
// combination, so that the build for a target (Cortex-M4F, M0+, host) sees
// all of the runtime's code under -Wall -Wextra -Werror -fno-exceptions -fno-rtti.
#include <tightfit/kernels.hpp>

namespace tightfit {

// NOLINTBEGIN(bugprone-macro-parentheses): T and TW are types; a parenthesized type is no template argument
#define TIGHTFIT_INSTANTIATE_ACTIVATION(T)                                                  \
  template void max_pool<T>(const MaxPoolParams&, const T*, T*);                            \
  template void average_pool<T>(const AveragePoolParams&, const T*, T*);                    \
  template void global_average_pool<T>(const GlobalAveragePoolParams&, const T*, T*);       \
  template void add<T>(const AddParams&, const T*, const T*, T*);                           \
  template void mul<T>(const MulParams&, const T*, const T*, T*);                           \
  template void sub<T>(const SubParams&, const T*, const T*, T*);                           \
  template void reduce_mean<T>(const ReduceMeanParams&, const T*, T*);                      \
  template void slice<T>(const SliceParams&, const T*, T*);                                 \
  template void channel_shuffle<T>(const ChannelShuffleParams&, const T*, T*);              \
  template void lookup<T>(const uint8_t*, const T*, T*, int32_t);                           \
  template void concat<T>(const ConcatParams&, const T* const*, const uint8_t* const*, T*); \
  template void softmax<T>(const SoftmaxParams&, const float*, const T*, T*);               \
  template void pad<T>(const PadParams&, const T*, T*);                                     \
  template void transpose<T>(const TransposeParams&, const T*, T*);                         \
  template void resize_nearest<T>(const ResizeNearestParams&, const T*, T*);                \
  template void quantize<T>(const QuantizeParams&, const float*, T*);                       \
  template void dequantize<T>(const QuantizeParams&, const T*, float*);                     \
  template void clamp<T>(const ClampParams&, const T*, T*);                                 \
  template void add_tflite<T>(const AddTfliteParams&, const T*, const T*, T*);              \
  template void mul_tflite<T>(const MulTfliteParams&, const T*, const T*, T*);              \
  template void average_pool_tflite<T>(const AveragePoolParams&, const T*, T*);             \
  template void requantize_accumulator<T>(const AccumulatorRequantizeParams&, const int32_t*, T*);

#define TIGHTFIT_INSTANTIATE_WEIGHTED(T, TW)                                                                           \
  template void conv<T, TW>(const ConvParams&, const T*, const TW*, const int32_t*, const float*, T*);                 \
  template void conv<T, TW>(const ConvParams&, const T*, const TW*, const int32_t*, const QuantizedMultiplier*, T*);   \
  template void fully_connected<T, TW>(const FullyConnectedParams&, const T*, const TW*, const int32_t*,               \
                                       const QuantizedMultiplier*, T*);                                                \
  template void conv_transpose<T, TW>(const ConvParams&, const T*, const TW*, const int32_t*, const float*, T*);       \
  template void fully_connected<T, TW>(const FullyConnectedParams&, const T*, const TW*, const int32_t*, const float*, \
                                       T*);                                                                            \
  template void conv_accumulate<T, TW>(const ConvParams&, const T*, const TW*, int32_t*);                              \
  template void matmul_accumulate<T, TW>(const MatMulParams&, const T*, const TW*, int32_t*);                          \
  template void matmul_requantize<T, TW>(const MatMulParams&, const T*, const TW*, const float*, T*);

// NOLINTEND(bugprone-macro-parentheses)

TIGHTFIT_INSTANTIATE_ACTIVATION(int8_t)
TIGHTFIT_INSTANTIATE_ACTIVATION(uint8_t)
TIGHTFIT_INSTANTIATE_WEIGHTED(int8_t, int8_t)
TIGHTFIT_INSTANTIATE_WEIGHTED(uint8_t, int8_t)
TIGHTFIT_INSTANTIATE_WEIGHTED(uint8_t, uint8_t)

// The float islands' kernels are plain functions: one call of each (VSQRT on a core with an FPU,
// soft float and the integer square root on the Cortex-M0+).
void float_island_kernels(const BinaryShape& s, const ReduceMeanParams& p, const float* a, const float* b, float* out);
void float_island_kernels(const BinaryShape& s, const ReduceMeanParams& p, const float* a, const float* b, float* out) {
  add_float(s, a, b, out);
  sub_float(s, a, b, out);
  mul_float(s, a, b, out);
  div_float(s, a, b, out);
  pow_float(s.out_dims[3], 2, a, out);
  sqrt_float(s.out_dims[3], a, out);
  reduce_mean_float(p, a, out);
  reduce_mean_float_rows(s.out_dims[2], s.out_dims[3], a, out);
}

}  // namespace tightfit
