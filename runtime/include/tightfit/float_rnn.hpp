// tightfit runtime: ONNX LSTM and GRU on float32, as ONNX Runtime's CPU kernels compute them
// (deep_cpu_lstm.cc with uni_directional_lstm.cc, deep_cpu_gru.cc; rnn_helpers.cc), default
// activations, no sequence_lens (every sequence is seq_length long), layout 0.
//
// Each gate's pre-activation is ORT's: the input's dot product with its row of W (MLAS's SGEMM
// adds the products in index order into one accumulator), the recurrent one with its row of R
// added to it (SGEMM with beta 1: the new sum plus what is there), then the bias Wb + Rb (added
// once, ahead: the compiler passes it fused), clamped to +-FLT_MAX as ORT's default clip does.
// Then ORT's activations in its order (float_activations.hpp). MLAS fuses multiply-adds on x86-64
// with FMA3, which these do not (each product rounds), so the results differ from ORT's in the
// last bits; docs/numerics.md states the bound the tests pin.
//
// The weights are read in place (flash); the states and one batch row's gates live in a scratch
// buffer the compiler plans (lstm_scratch_floats, gru_scratch_floats).
#pragma once

#include <cstddef>
#include <cstdint>

#include "tightfit/float_activations.hpp"
#include "tightfit/params.hpp"

namespace tightfit {
namespace detail {

// sum_k a[k] * w[k], k = 0 .. n-1 in order (one MLAS SGEMM accumulator).
inline float dot_float(const float* a, const float* w, int32_t n) {
  float acc = 0.0f;
  for (int32_t k = 0; k < n; ++k) acc += a[k] * w[k];
  return acc;
}

// ORT's clip_add_bias / clip_ignore_bias at the default clip (FLT_MAX): only an infinity changes.
inline float rnn_clip(float x) {
  const float b = 3.40282347e38f;
  x = x < b ? x : b;
  return -b < x ? x : -b;
}

inline void copy_float(const float* from, float* to, int32_t n) {
  for (int32_t i = 0; i < n; ++i) to[i] = from[i];
}

}  // namespace detail

// Floats of scratch lstm_float needs: the hidden and cell states of every batch row, and one
// row's four gates.
inline int32_t lstm_scratch_floats(const RnnParams& p) { return (2 * p.batch + 4) * p.hidden_size; }

// ONNX LSTM: gates i, o, f, c (W [directions, 4H, input], R [directions, 4H, H]); `bias`
// [directions, 4H] is Wb + Rb per gate, or nullptr. h0, c0 [directions, batch, H] or nullptr
// (zeros); y, y_h, y_c each nullptr when the model does not use it.
inline void lstm_float(const RnnParams& p, const float* x, const float* w, const float* r, const float* bias,
                       const float* h0, const float* c0, float* y, float* y_h, float* y_c, float* scratch) {
  const int32_t H = p.hidden_size, I = p.input_size, B = p.batch;
  float* h = scratch;
  float* c = h + static_cast<std::ptrdiff_t>(B) * H;
  float* gates = c + static_cast<std::ptrdiff_t>(B) * H;
  for (int32_t d = 0; d < p.directions; ++d) {
    const bool backward = d == 1 || p.reverse != 0;
    const float* wd = w + static_cast<std::ptrdiff_t>(d) * 4 * H * I;
    const float* rd = r + static_cast<std::ptrdiff_t>(d) * 4 * H * H;
    const float* bd = bias != nullptr ? bias + static_cast<std::ptrdiff_t>(d) * 4 * H : nullptr;
    for (int32_t i = 0; i < B * H; ++i) {
      h[i] = h0 != nullptr ? h0[d * B * H + i] : 0.0f;
      c[i] = c0 != nullptr ? c0[d * B * H + i] : 0.0f;
    }
    for (int32_t s = 0; s < p.seq_length; ++s) {
      const int32_t t = backward ? p.seq_length - 1 - s : s;
      for (int32_t b = 0; b < B; ++b) {
        const float* xt = x + static_cast<std::ptrdiff_t>(t * B + b) * I;
        float* hb = h + static_cast<std::ptrdiff_t>(b) * H;
        float* cb = c + static_cast<std::ptrdiff_t>(b) * H;
        for (int32_t j = 0; j < 4 * H; ++j) {
          const float input = detail::dot_float(xt, wd + static_cast<std::ptrdiff_t>(j) * I, I);
          float v = detail::dot_float(hb, rd + static_cast<std::ptrdiff_t>(j) * H, H) + input;
          if (bd != nullptr) v = v + bd[j];
          gates[j] = detail::rnn_clip(v);
        }
        const float* gi = gates;
        const float* go = gi + H;
        const float* gf = go + H;
        const float* gc = gf + H;
        for (int32_t j = 0; j < H; ++j) {
          // ORT: i = f(i), f = f(f), c~ = g(c), C = C * f + i * c~, o = f(o), H = h(C) * o.
          const float i_gate = logistic_float(gi[j]), f_gate = logistic_float(gf[j]);
          const float candidate = tanh_float(gc[j]);
          cb[j] = cb[j] * f_gate + i_gate * candidate;
          hb[j] = tanh_float(cb[j]) * logistic_float(go[j]);
        }
        if (y != nullptr) {
          const int32_t row = (t * p.directions + d) * B + b;  // Y is [seq, directions, batch, H]
          detail::copy_float(hb, y + static_cast<std::ptrdiff_t>(row) * H, H);
        }
      }
    }
    if (y_h != nullptr) detail::copy_float(h, y_h + static_cast<std::ptrdiff_t>(d) * B * H, B * H);
    if (y_c != nullptr) detail::copy_float(c, y_c + static_cast<std::ptrdiff_t>(d) * B * H, B * H);
  }
}

// Floats of scratch gru_float needs: the hidden state of every batch row, and one row's three
// gates and its reset hidden state.
inline int32_t gru_scratch_floats(const RnnParams& p) { return (p.batch + 4) * p.hidden_size; }

// ONNX GRU: gates z, r, h (W [directions, 3H, input], R [directions, 3H, H]); `bias`
// [directions, 4H]: Wbz + Rbz, Wbr + Rbr, then Wbh + Rbh and zeros (linear_before_reset 0) or
// Wbh and Rbh (1); or nullptr. h0 [directions, batch, H] or nullptr (zeros).
//
// ORT's order: z and r's pre-activations (x.W + h.R + bias); r through rnn_helpers' sigmoid
// 0.5 * (1 + tanh(x / 2)) times h (linear_before_reset 0) or times h.Rh + Rbh (1) as
// (v * 0.5) * (1 + tanh); then h~'s pre-activation x.Wh + (r (.) h).Rh (0) or + r (.) (h.Rh + Rbh)
// (1), plus its bias; z = MLAS's logistic; H = (1 - z) * tanh(h~) + z * H, tanh clamped at 10.
inline void gru_float(const RnnParams& p, const float* x, const float* w, const float* r, const float* bias,
                      const float* h0, float* y, float* y_h, float* scratch) {
  const int32_t H = p.hidden_size, I = p.input_size, B = p.batch;
  float* h = scratch;
  float* zr = h + static_cast<std::ptrdiff_t>(B) * H;   // z's and r's pre-activations, then r's product
  float* hh = zr + static_cast<std::ptrdiff_t>(2) * H;  // h~'s pre-activation
  float* reset = hh + H;                                // r (.) h, or r (.) (h.Rh + Rbh)
  for (int32_t d = 0; d < p.directions; ++d) {
    const bool backward = d == 1 || p.reverse != 0;
    const float* wd = w + static_cast<std::ptrdiff_t>(d) * 3 * H * I;
    const float* rd = r + static_cast<std::ptrdiff_t>(d) * 3 * H * H;
    const float* bd = bias != nullptr ? bias + static_cast<std::ptrdiff_t>(d) * 4 * H : nullptr;
    for (int32_t i = 0; i < B * H; ++i) h[i] = h0 != nullptr ? h0[d * B * H + i] : 0.0f;
    for (int32_t s = 0; s < p.seq_length; ++s) {
      const int32_t t = backward ? p.seq_length - 1 - s : s;
      for (int32_t b = 0; b < B; ++b) {
        const float* xt = x + static_cast<std::ptrdiff_t>(t * B + b) * I;
        float* hb = h + static_cast<std::ptrdiff_t>(b) * H;
        for (int32_t j = 0; j < 2 * H; ++j) {
          const float input = detail::dot_float(xt, wd + static_cast<std::ptrdiff_t>(j) * I, I);
          float v = detail::dot_float(hb, rd + static_cast<std::ptrdiff_t>(j) * H, H) + input;
          if (bd != nullptr) v = v + bd[j];
          zr[j] = detail::rnn_clip(v);
        }
        const float* rh = rd + static_cast<std::ptrdiff_t>(2) * H * H;
        for (int32_t j = 0; j < H; ++j) {
          float factor = hb[j];
          if (p.linear_before_reset != 0) {
            factor = detail::dot_float(hb, rh + static_cast<std::ptrdiff_t>(j) * H, H);
            if (bd != nullptr) factor = factor + bd[3 * H + j];
          }
          reset[j] = factor * 0.5f * gru_half_sigmoid_sum(zr[H + j]);
        }
        for (int32_t j = 0; j < H; ++j) {
          const float input = detail::dot_float(xt, wd + static_cast<std::ptrdiff_t>(2 * H + j) * I, I);
          const float* rh_row = rh + static_cast<std::ptrdiff_t>(j) * H;
          float v = p.linear_before_reset != 0 ? input + reset[j] : detail::dot_float(reset, rh_row, H) + input;
          if (bd != nullptr) v = v + bd[2 * H + j];
          hh[j] = detail::rnn_clip(v);
        }
        for (int32_t j = 0; j < H; ++j) {
          const float z = logistic_float(zr[j]);
          hb[j] = (1.0f - z) * gru_tanh_float(hh[j]) + z * hb[j];
        }
        if (y != nullptr) {
          const int32_t row = (t * p.directions + d) * B + b;  // Y is [seq, directions, batch, H]
          detail::copy_float(hb, y + static_cast<std::ptrdiff_t>(row) * H, H);
        }
      }
    }
    if (y_h != nullptr) detail::copy_float(h, y_h + static_cast<std::ptrdiff_t>(d) * B * H, B * H);
  }
}

}  // namespace tightfit
