// tightfit runtime: the loops every reduction over ReduceMeanParams' geometry shares (ReduceMean
// on integers, under ORT's numerics and TFLite's, and on float32; ReduceMax and ReduceMin).
#pragma once

#include <cstddef>
#include <cstdint>

namespace tightfit {

namespace detail {

// The loops of every reduction over ReduceMeanParams' geometry (ReduceMeanTfliteParams' too):
// for each output element, acc = start(first reduced element), then acc = step(acc, x) for each
// reduced element x in index order, then store(output offset, acc).
template <typename P, typename T, typename Start, typename Step, typename Store>
inline void reduce_in_index_order(const P& p, const T* in, Start start, Step step, Store store) {
  for (int32_t i0 = 0; i0 < p.kept_dims[0]; ++i0) {
    for (int32_t i1 = 0; i1 < p.kept_dims[1]; ++i1) {
      for (int32_t i2 = 0; i2 < p.kept_dims[2]; ++i2) {
        for (int32_t i3 = 0; i3 < p.kept_dims[3]; ++i3) {
          const T* x = in + (i0 * p.in_strides[0] + i1 * p.in_strides[1] + i2 * p.in_strides[2] + i3 * p.in_strides[3]);
          auto acc = start(x);
          for (int32_t j0 = 0; j0 < p.reduced_dims[0]; ++j0) {
            for (int32_t j1 = 0; j1 < p.reduced_dims[1]; ++j1) {
              for (int32_t j2 = 0; j2 < p.reduced_dims[2]; ++j2) {
                const T* r = x + (j0 * p.in_strides[0] + j1 * p.in_strides[1] + j2 * p.in_strides[2]);
                for (int32_t j3 = 0; j3 < p.reduced_dims[3]; ++j3)
                  acc = step(acc, r[static_cast<std::ptrdiff_t>(j3) * p.in_strides[3]]);
              }
            }
          }
          store(i0 * p.out_strides[0] + i1 * p.out_strides[1] + i2 * p.out_strides[2] + i3 * p.out_strides[3], acc);
        }
      }
    }
  }
}

// The int32 sum of the reduced elements: start and step for reduce_in_index_order().
template <typename T>
constexpr int32_t zero_sum(const T*) {
  return 0;
}
template <typename T>
constexpr int32_t add_to_sum(int32_t sum, T x) {
  return sum + static_cast<int32_t>(x);
}

}  // namespace detail

}  // namespace tightfit
