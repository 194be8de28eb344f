// Replays every case in tests/runtime/cases/ (made by make_kernel_cases.py from
// ONNX Runtime) through the runtime's kernels and requires ORT's output
// exactly.  Each case is converted the way the code generator converts a
// model: NCHW activations to NHWC, ONNX weight layouts packed with the host
// helpers, multipliers and tables computed by <tightfit/host.hpp>.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "tightfit/host.hpp"
#include "tightfit/kernels.hpp"

namespace {

using json = nlohmann::json;
using Dims = std::vector<int32_t>;

Dims dims_of(const json& tensor) { return tensor.at("dims").get<Dims>(); }

// Product of dims[from, to).
int32_t product(const Dims& dims, size_t from = 0, size_t to = SIZE_MAX) {
  const auto first = dims.begin() + static_cast<std::ptrdiff_t>(std::min(from, dims.size()));
  const auto last = dims.begin() + static_cast<std::ptrdiff_t>(std::min(to, dims.size()));
  return std::accumulate(first, last, int32_t{1}, std::multiplies<int32_t>());
}

template <typename T>
std::vector<T> data_of(const json& tensor) {
  std::vector<T> out;
  for (const auto& v : tensor.at("data")) out.push_back(static_cast<T>(v.get<int64_t>()));
  return out;
}

std::vector<float> floats_of(const json& tensor) {
  std::vector<float> out;
  for (const auto& v : tensor.at("data")) {
    const uint32_t bits = v.get<uint32_t>();
    float f;
    std::memcpy(&f, &bits, sizeof f);
    out.push_back(f);
  }
  return out;
}

float scalar(const json& c, const char* key) { return c.at(key).get<float>(); }
int32_t izp(const json& c, const char* key) { return c.at(key).get<int32_t>(); }

// NCHW <-> NHWC for 4-D tensors, as the code generator does at the edges.
template <typename T>
std::vector<T> to_nhwc(const std::vector<T>& x, const Dims& nchw) {
  const int32_t n = nchw[0], c = nchw[1], h = nchw[2], w = nchw[3];
  std::vector<T> y(x.size());
  for (int32_t b = 0; b < n; ++b)
    for (int32_t ch = 0; ch < c; ++ch)
      for (int32_t i = 0; i < h; ++i)
        for (int32_t j = 0; j < w; ++j) y[((b * h + i) * w + j) * c + ch] = x[((b * c + ch) * h + i) * w + j];
  return y;
}

template <typename T>
std::vector<T> to_nchw(const std::vector<T>& y, const Dims& nchw) {
  const int32_t n = nchw[0], c = nchw[1], h = nchw[2], w = nchw[3];
  std::vector<T> x(y.size());
  for (int32_t b = 0; b < n; ++b)
    for (int32_t ch = 0; ch < c; ++ch)
      for (int32_t i = 0; i < h; ++i)
        for (int32_t j = 0; j < w; ++j) x[((b * c + ch) * h + i) * w + j] = y[((b * h + i) * w + j) * c + ch];
  return x;
}

Dims nhwc_dims(const Dims& nchw) { return {nchw[0], nchw[2], nchw[3], nchw[1]}; }

Dims right_align(const Dims& dims, size_t rank) {
  Dims out(rank - dims.size(), 1);
  out.insert(out.end(), dims.begin(), dims.end());
  return out;
}

template <typename T>
std::vector<int64_t> widen(const std::vector<T>& v) {
  return std::vector<int64_t>(v.begin(), v.end());
}

template <typename T>
std::vector<int64_t> run_conv(const json& k) {
  const json& c = k.at("consts");
  const json& prm = k.at("params");
  const Dims x_dims = dims_of(k.at("inputs")[0]);
  const Dims w_dims = dims_of(c.at("w"));
  const auto w_scales = c.at("w_scale").get<std::vector<float>>();
  const bool per_channel = w_scales.size() > 1;
  tightfit::ConvParams p{};
  p.batch = x_dims[0];
  p.in_c = x_dims[1];
  p.in_h = x_dims[2];
  p.in_w = x_dims[3];
  p.out_c = w_dims[0];
  p.out_h = prm["out_hw"][0];
  p.out_w = prm["out_hw"][1];
  p.kernel_h = prm["kernel"][0];
  p.kernel_w = prm["kernel"][1];
  p.stride_h = prm["strides"][0];
  p.stride_w = prm["strides"][1];
  p.dilation_h = prm["dilations"][0];
  p.dilation_w = prm["dilations"][1];
  p.pad_top = prm["pads"][0];
  p.pad_left = prm["pads"][1];
  p.groups = prm["group"];
  p.input_zero_point = izp(c, "x_zp");
  p.weight_zero_point = izp(c, "w_zp");
  p.output_zero_point = izp(c, "y_zp");
  p.output_min = tightfit::QuantLimits<T>::kMin;
  p.output_max = tightfit::QuantLimits<T>::kMax;
  p.per_channel = per_channel ? 1 : 0;
  std::vector<float> multipliers;
  for (float ws : w_scales)
    multipliers.push_back(tightfit::conv_multiplier(scalar(c, "x_scale"), ws, scalar(c, "y_scale")));
  const auto bias = data_of<int32_t>(c.at("bias"));
  const auto x = to_nhwc(data_of<T>(k.at("inputs")[0]), x_dims);
  std::vector<T> y(static_cast<size_t>(p.batch * p.out_h * p.out_w * p.out_c));
  const int32_t* bias_ptr = bias.empty() ? nullptr : bias.data();
  if (c.at("w").at("type") == "int8") {
    const auto w = data_of<int8_t>(c.at("w"));
    std::vector<int8_t> packed(w.size());
    tightfit::pack_conv_weights(p, w.data(), packed.data());
    tightfit::conv(p, x.data(), packed.data(), bias_ptr, multipliers.data(), y.data());
  } else {
    const auto w = data_of<uint8_t>(c.at("w"));
    std::vector<uint8_t> packed(w.size());
    tightfit::pack_conv_weights(p, w.data(), packed.data());
    tightfit::conv(p, x.data(), packed.data(), bias_ptr, multipliers.data(), y.data());
  }
  return widen(to_nchw(y, {p.batch, p.out_c, p.out_h, p.out_w}));
}

template <typename T, typename TW>
std::vector<int64_t> run_matmul_typed(const json& k) {
  const json& c = k.at("consts");
  const Dims a_dims = dims_of(k.at("inputs")[0]);
  const Dims w_dims = dims_of(c.at("w"));  // [K][N]
  const auto w_scales = c.at("w_scale").get<std::vector<float>>();
  tightfit::FullyConnectedParams p{};
  p.in_features = w_dims[0];
  p.out_features = w_dims[1];
  p.rows = product(a_dims) / p.in_features;
  p.input_zero_point = izp(c, "x_zp");
  p.weight_zero_point = izp(c, "w_zp");
  p.output_zero_point = izp(c, "y_zp");
  p.output_min = tightfit::QuantLimits<T>::kMin;
  p.output_max = tightfit::QuantLimits<T>::kMax;
  p.per_channel = w_scales.size() > 1 ? 1 : 0;
  std::vector<float> multipliers;
  for (float ws : w_scales)
    multipliers.push_back(tightfit::conv_multiplier(scalar(c, "x_scale"), ws, scalar(c, "y_scale")));
  const auto w = data_of<TW>(c.at("w"));
  std::vector<TW> transposed(w.size());  // [N][K], as the code generator emits it
  for (int32_t kk = 0; kk < p.in_features; ++kk)
    for (int32_t n = 0; n < p.out_features; ++n) transposed[n * p.in_features + kk] = w[kk * p.out_features + n];
  const auto x = data_of<T>(k.at("inputs")[0]);
  std::vector<T> y(static_cast<size_t>(p.rows * p.out_features));
  tightfit::fully_connected(p, x.data(), transposed.data(), nullptr, multipliers.data(), y.data());
  return widen(y);
}

template <typename T>
std::vector<int64_t> run_matmul(const json& k) {
  if (k.at("consts").at("w").at("type") == "int8") return run_matmul_typed<T, int8_t>(k);
  return run_matmul_typed<T, uint8_t>(k);
}

template <typename T>
std::vector<int64_t> run_maxpool(const json& k) {
  const json& prm = k.at("params");
  const Dims x_dims = dims_of(k.at("inputs")[0]);
  const tightfit::MaxPoolParams p{x_dims[0],         x_dims[2],         x_dims[3],           x_dims[1],
                                  prm["out_hw"][0],  prm["out_hw"][1],  prm["kernel"][0],    prm["kernel"][1],
                                  prm["strides"][0], prm["strides"][1], prm["dilations"][0], prm["dilations"][1],
                                  prm["pads"][0],    prm["pads"][1]};
  const auto x = to_nhwc(data_of<T>(k.at("inputs")[0]), x_dims);
  std::vector<T> y(static_cast<size_t>(p.batch * p.out_h * p.out_w * p.channels));
  tightfit::max_pool(p, x.data(), y.data());
  return widen(to_nchw(y, {p.batch, p.channels, p.out_h, p.out_w}));
}

template <typename T>
std::vector<int64_t> run_avgpool(const json& k) {
  const json& prm = k.at("params");
  const json& c = k.at("consts");
  const Dims x_dims = dims_of(k.at("inputs")[0]);
  const tightfit::AveragePoolParams p{x_dims[0],
                                      x_dims[2],
                                      x_dims[3],
                                      x_dims[1],
                                      prm["out_hw"][0],
                                      prm["out_hw"][1],
                                      prm["kernel"][0],
                                      prm["kernel"][1],
                                      prm["strides"][0],
                                      prm["strides"][1],
                                      prm["pads"][0],
                                      prm["pads"][1],
                                      prm["pads"][2],
                                      prm["pads"][3],
                                      prm["count_include_pad"],
                                      scalar(c, "x_scale"),
                                      izp(c, "x_zp"),
                                      scalar(c, "y_scale"),
                                      izp(c, "y_zp"),
                                      tightfit::QuantLimits<T>::kMin,
                                      tightfit::QuantLimits<T>::kMax};
  const auto x = to_nhwc(data_of<T>(k.at("inputs")[0]), x_dims);
  std::vector<T> y(static_cast<size_t>(p.batch * p.out_h * p.out_w * p.channels));
  tightfit::average_pool(p, x.data(), y.data());
  return widen(to_nchw(y, {p.batch, p.channels, p.out_h, p.out_w}));
}

template <typename T>
std::vector<int64_t> run_gavgpool(const json& k) {
  const json& c = k.at("consts");
  const Dims x_dims = dims_of(k.at("inputs")[0]);
  const int32_t image = x_dims[2] * x_dims[3];
  const tightfit::GlobalAveragePoolParams p{
      x_dims[0],
      image,
      x_dims[1],
      izp(c, "x_zp"),
      izp(c, "y_zp"),
      tightfit::global_average_pool_multiplier(scalar(c, "x_scale"), scalar(c, "y_scale"), image),
      tightfit::QuantLimits<T>::kMin,
      tightfit::QuantLimits<T>::kMax};
  const auto x = to_nhwc(data_of<T>(k.at("inputs")[0]), x_dims);
  std::vector<T> y(static_cast<size_t>(p.batch * p.channels));
  tightfit::global_average_pool(p, x.data(), y.data());
  return widen(y);  // N,C,1,1 has the same order in both layouts
}

// Inputs of a broadcasting binary operator laid out as the code generator does:
// 4-D operands NHWC, lower ranks in ONNX order, all right-aligned to the output.
template <typename T>
struct BinaryOperands {
  tightfit::BinaryShape shape;
  tightfit::BroadcastForm form;
  std::vector<T> a, b;
  Dims out_dims;  // ONNX order
  bool nhwc;
};

template <typename T>
BinaryOperands<T> binary_operands(const json& k) {
  BinaryOperands<T> ops;
  Dims a_dims = dims_of(k.at("inputs")[0]);
  Dims b_dims = dims_of(k.at("inputs")[1]);
  std::vector<int64_t> a64(a_dims.begin(), a_dims.end()), b64(b_dims.begin(), b_dims.end());
  ops.form = tightfit::binary_broadcast_form(a64.data(), static_cast<int>(a64.size()), b64.data(),
                                             static_cast<int>(b64.size()));
  const size_t rank = std::max({a_dims.size(), b_dims.size(), size_t{1}});
  a_dims = right_align(a_dims, rank);
  b_dims = right_align(b_dims, rank);
  ops.out_dims.resize(rank);
  for (size_t d = 0; d < rank; ++d) ops.out_dims[d] = std::max(a_dims[d], b_dims[d]);
  ops.a = data_of<T>(k.at("inputs")[0]);
  ops.b = data_of<T>(k.at("inputs")[1]);
  ops.nhwc = rank == 4;
  Dims out = ops.out_dims;
  if (ops.nhwc) {
    ops.a = to_nhwc(ops.a, a_dims);
    ops.b = to_nhwc(ops.b, b_dims);
    a_dims = nhwc_dims(a_dims);
    b_dims = nhwc_dims(b_dims);
    out = nhwc_dims(out);
  }
  ops.shape = tightfit::binary_shape(out.data(), a_dims.data(), b_dims.data(), static_cast<int>(rank));
  return ops;
}

template <typename T>
std::vector<int64_t> binary_result(const BinaryOperands<T>& ops, const std::vector<T>& y) {
  return widen(ops.nhwc ? to_nchw(y, ops.out_dims) : y);
}

template <typename T>
std::vector<int64_t> run_add(const json& k) {
  const json& c = k.at("consts");
  const auto ops = binary_operands<T>(k);
  const auto r = tightfit::add_requant(scalar(c, "a_scale"), izp(c, "a_zp"), scalar(c, "b_scale"), izp(c, "b_zp"),
                                       scalar(c, "c_scale"), izp(c, "c_zp"), ops.form);
  const tightfit::AddParams p{ops.shape,
                              ops.form,
                              izp(c, "a_zp"),
                              izp(c, "b_zp"),
                              r.a_ratio,
                              r.b_ratio,
                              r.fixed,
                              tightfit::QuantLimits<T>::kMin,
                              tightfit::QuantLimits<T>::kMax};
  std::vector<T> y(static_cast<size_t>(product(ops.out_dims)));
  tightfit::add(p, ops.a.data(), ops.b.data(), y.data());
  return binary_result(ops, y);
}

template <typename T>
std::vector<int64_t> run_mul(const json& k) {
  const json& c = k.at("consts");
  const auto ops = binary_operands<T>(k);
  const tightfit::MulParams p{ops.shape,
                              izp(c, "a_zp"),
                              izp(c, "b_zp"),
                              tightfit::mul_ratio(scalar(c, "a_scale"), scalar(c, "b_scale"), scalar(c, "c_scale")),
                              static_cast<float>(izp(c, "c_zp")),
                              tightfit::QuantLimits<T>::kMin,
                              tightfit::QuantLimits<T>::kMax};
  std::vector<T> y(static_cast<size_t>(product(ops.out_dims)));
  tightfit::mul(p, ops.a.data(), ops.b.data(), y.data());
  return binary_result(ops, y);
}

template <typename T>
std::vector<int64_t> run_concat(const json& k) {
  const json& c = k.at("consts");
  const auto scales = c.at("scales").get<std::vector<float>>();
  const auto zps = c.at("zps").get<std::vector<int32_t>>();
  const float y_scale = scalar(c, "y_scale");
  const int32_t y_zp = izp(c, "y_zp");
  int32_t axis = k.at("params").at("axis");
  const size_t n = k.at("inputs").size();
  std::vector<std::vector<T>> inputs;
  std::vector<Dims> dims;
  for (const auto& in : k.at("inputs")) {
    Dims d = dims_of(in);
    auto x = data_of<T>(in);
    if (d.size() == 4) {
      x = to_nhwc(x, d);
      d = nhwc_dims(d);
    }
    inputs.push_back(x);
    dims.push_back(d);
  }
  const bool nhwc = dims[0].size() == 4;
  if (nhwc) axis = std::array<int32_t, 4>{0, 3, 1, 2}[static_cast<size_t>(axis)];  // NCHW axis -> NHWC axis
  Dims out_dims = dims[0];
  out_dims[static_cast<size_t>(axis)] = 0;
  std::vector<int32_t> inner;
  std::vector<std::array<uint8_t, 256>> tables(n);
  std::vector<const uint8_t*> table_ptrs;
  std::vector<const T*> input_ptrs;
  for (size_t i = 0; i < n; ++i) {
    out_dims[static_cast<size_t>(axis)] += dims[i][static_cast<size_t>(axis)];
    inner.push_back(product(dims[i], static_cast<size_t>(axis)));
    input_ptrs.push_back(inputs[i].data());
    if (scales[i] == y_scale && zps[i] == y_zp) {
      table_ptrs.push_back(nullptr);
    } else {
      tightfit::build_requantize_table<T>(scales[i], zps[i], y_scale, y_zp, tables[i].data());
      table_ptrs.push_back(tables[i].data());
    }
  }
  const tightfit::ConcatParams p{static_cast<int32_t>(n), product(out_dims, 0, static_cast<size_t>(axis)),
                                 std::accumulate(inner.begin(), inner.end(), 0), inner.data()};
  std::vector<T> y(static_cast<size_t>(product(out_dims)));
  tightfit::concat(p, input_ptrs.data(), table_ptrs.data(), y.data());
  if (nhwc) return widen(to_nchw(y, {out_dims[0], out_dims[3], out_dims[1], out_dims[2]}));
  return widen(y);
}

template <typename T>
std::vector<int64_t> run_softmax(const json& k) {
  const json& c = k.at("consts");
  const Dims x_dims = dims_of(k.at("inputs")[0]);
  const int32_t rank = static_cast<int32_t>(x_dims.size());
  int32_t axis = k.at("params").at("axis");
  if (axis < 0) axis += rank;
  const int32_t opset = k.at("params").at("opset");
  auto x = data_of<T>(k.at("inputs")[0]);
  bool nhwc = false;
  int32_t rows = 0, row_len = 0;
  if (opset < 13) {
    rows = product(x_dims, 0, static_cast<size_t>(axis));
    row_len = product(x_dims, static_cast<size_t>(axis));
  } else if (axis == rank - 1) {
    row_len = x_dims.back();
    rows = product(x_dims) / row_len;
  } else {
    REQUIRE((rank == 4 && axis == 1));  // channels: innermost once NHWC
    nhwc = true;
    x = to_nhwc(x, x_dims);
    row_len = x_dims[1];
    rows = product(x_dims) / row_len;
  }
  float table[256];
  tightfit::build_softmax_table(scalar(c, "x_scale"), row_len, std::is_signed<T>::value, table);
  const int32_t integer_rule = k.at("params").at("integer_rule");
  const tightfit::SoftmaxParams p{rows,
                                  row_len,
                                  izp(c, "y_zp"),
                                  tightfit::softmax_output_scale_inv(scalar(c, "y_scale")),
                                  std::is_signed<T>::value ? -128 : 0,
                                  std::is_signed<T>::value ? 127 : 255,
                                  integer_rule};
  std::vector<T> y(x.size());
  tightfit::softmax(p, table, x.data(), y.data());
  return widen(nhwc ? to_nchw(y, x_dims) : y);
}

template <typename T>
std::vector<int64_t> run_lookup(const json& k, const std::string& op) {
  const json& c = k.at("consts");
  uint8_t table[256];
  const float xs = scalar(c, "x_scale"), ys = scalar(c, "y_scale");
  const int32_t xz = izp(c, "x_zp"), yz = izp(c, "y_zp");
  if (op == "sigmoid") {
    tightfit::build_sigmoid_table<T>(xs, xz, ys, yz, table);
  } else if (op == "tanh") {
    tightfit::build_tanh_table<T>(xs, xz, ys, yz, table);
  } else if (op == "hard_sigmoid") {
    tightfit::build_hard_sigmoid_table<T>(scalar(c, "alpha"), scalar(c, "beta"), xs, xz, ys, yz, table);
  } else if (op == "hard_swish") {
    tightfit::build_hard_swish_table<T>(xs, xz, ys, yz, table);
  } else {
    tightfit::build_leaky_relu_table<T>(scalar(c, "alpha"), xs, xz, ys, yz, table);
  }
  const auto x = data_of<T>(k.at("inputs")[0]);
  std::vector<T> y(x.size());
  tightfit::lookup(table, x.data(), y.data(), static_cast<int32_t>(x.size()));
  return widen(y);
}

template <typename T>
std::vector<int64_t> run_pad(const json& k) {
  const Dims x_dims = dims_of(k.at("inputs")[0]);
  const auto pads = k.at("params").at("pads").get<std::vector<int32_t>>();  // NCHW begins, then ends
  const std::array<int, 4> to_nchw_axis = {0, 2, 3, 1};                     // NHWC dim -> NCHW dim
  tightfit::PadParams p{};
  const Dims in = nhwc_dims(x_dims);
  for (int d = 0; d < 4; ++d) {
    p.in_dims[d] = in[static_cast<size_t>(d)];
    p.pads_before[d] = pads[static_cast<size_t>(to_nchw_axis[static_cast<size_t>(d)])];
    p.pads_after[d] = pads[static_cast<size_t>(4 + to_nchw_axis[static_cast<size_t>(d)])];
  }
  p.value = k.at("params").at("value");
  Dims out(4);
  for (size_t d = 0; d < 4; ++d) out[d] = x_dims[d] + pads[d] + pads[4 + d];
  const auto x = to_nhwc(data_of<T>(k.at("inputs")[0]), x_dims);
  std::vector<T> y(static_cast<size_t>(product(out)));
  tightfit::pad(p, x.data(), y.data());
  return widen(to_nchw(y, out));
}

tightfit::ResizeCoordinateMode coordinate_mode(const std::string& s) {
  if (s == "asymmetric") return tightfit::ResizeCoordinateMode::kAsymmetric;
  if (s == "pytorch_half_pixel") return tightfit::ResizeCoordinateMode::kPytorchHalfPixel;
  if (s == "tf_half_pixel_for_nn") return tightfit::ResizeCoordinateMode::kTfHalfPixelForNn;
  if (s == "align_corners") return tightfit::ResizeCoordinateMode::kAlignCorners;
  return tightfit::ResizeCoordinateMode::kHalfPixel;
}

tightfit::ResizeNearestMode nearest_mode(const std::string& s) {
  if (s == "round_prefer_ceil") return tightfit::ResizeNearestMode::kRoundPreferCeil;
  if (s == "floor") return tightfit::ResizeNearestMode::kFloor;
  if (s == "ceil") return tightfit::ResizeNearestMode::kCeil;
  return tightfit::ResizeNearestMode::kRoundPreferFloor;
}

template <typename T>
std::vector<int64_t> run_resize(const json& k) {
  const json& prm = k.at("params");
  const Dims x_dims = dims_of(k.at("inputs")[0]);
  const Dims out = prm.at("out_dims").get<Dims>();
  const auto scales = prm.at("scales").get<std::vector<float>>();
  const auto cm = coordinate_mode(prm.at("coordinate_mode"));
  const auto nm = nearest_mode(prm.at("nearest_mode"));
  std::vector<int32_t> h_index, w_index;
  for (int32_t i = 0; i < out[2]; ++i)
    h_index.push_back(tightfit::resize_nearest_index(i, x_dims[2], out[2], scales[2], cm, nm));
  for (int32_t i = 0; i < out[3]; ++i)
    w_index.push_back(tightfit::resize_nearest_index(i, x_dims[3], out[3], scales[3], cm, nm));
  const tightfit::ResizeNearestParams p{x_dims[0], x_dims[2],      x_dims[3],      x_dims[1], out[2],
                                        out[3],    h_index.data(), w_index.data(), 0};
  const auto x = to_nhwc(data_of<T>(k.at("inputs")[0]), x_dims);
  std::vector<T> y(static_cast<size_t>(product(out)));
  tightfit::resize_nearest(p, x.data(), y.data());
  return widen(to_nchw(y, out));
}

template <typename T>
std::vector<int64_t> run_transpose(const json& k) {
  const Dims x_dims = dims_of(k.at("inputs")[0]);
  const auto perm = k.at("params").at("perm").get<std::vector<int32_t>>();
  const int32_t lead = 4 - static_cast<int32_t>(x_dims.size());
  tightfit::TransposeParams p{};
  const Dims in = right_align(x_dims, 4);
  for (int32_t d = 0; d < 4; ++d) {
    p.in_dims[d] = in[static_cast<size_t>(d)];
    p.perm[d] = d < lead ? d : perm[static_cast<size_t>(d - lead)] + lead;
  }
  const auto x = data_of<T>(k.at("inputs")[0]);
  std::vector<T> y(x.size());
  tightfit::transpose(p, x.data(), y.data());
  return widen(y);
}

template <typename T>
std::vector<int64_t> run_quantize(const json& k) {
  const json& c = k.at("consts");
  const auto x = floats_of(k.at("inputs")[0]);
  const tightfit::QuantizeParams p{static_cast<int32_t>(x.size()), scalar(c, "scale"), izp(c, "zp")};
  std::vector<T> y(x.size());
  tightfit::quantize(p, x.data(), y.data());
  return widen(y);
}

template <typename T>
std::vector<int64_t> run_dequantize(const json& k) {
  const json& c = k.at("consts");
  const auto x = data_of<T>(k.at("inputs")[0]);
  const tightfit::QuantizeParams p{static_cast<int32_t>(x.size()), scalar(c, "scale"), izp(c, "zp")};
  std::vector<float> y(x.size());
  tightfit::dequantize(p, x.data(), y.data());
  std::vector<int64_t> bits;
  for (float f : y) {
    uint32_t b;
    std::memcpy(&b, &f, sizeof b);
    bits.push_back(b);
  }
  return bits;
}

template <typename T>
std::vector<int64_t> run_case(const json& k) {
  const std::string op = k.at("op");
  if (op == "conv") return run_conv<T>(k);
  if (op == "matmul") return run_matmul<T>(k);
  if (op == "maxpool") return run_maxpool<T>(k);
  if (op == "avgpool") return run_avgpool<T>(k);
  if (op == "gavgpool") return run_gavgpool<T>(k);
  if (op == "add") return run_add<T>(k);
  if (op == "mul") return run_mul<T>(k);
  if (op == "concat") return run_concat<T>(k);
  if (op == "softmax") return run_softmax<T>(k);
  if (op == "sigmoid" || op == "tanh" || op == "leakyrelu" || op == "hard_sigmoid" || op == "hard_swish")
    return run_lookup<T>(k, op);
  if (op == "pad") return run_pad<T>(k);
  if (op == "resize") return run_resize<T>(k);
  if (op == "transpose") return run_transpose<T>(k);
  if (op == "quantize") return run_quantize<T>(k);
  if (op == "dequantize") return run_dequantize<T>(k);
  FAIL("unknown op " << op);
  return {};
}

std::vector<json> load_cases() {
  std::vector<std::filesystem::path> paths;
  for (const auto& entry : std::filesystem::directory_iterator(TIGHTFIT_KERNEL_CASES_DIR)) {
    if (entry.path().extension() == ".json") paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());
  std::vector<json> cases;
  for (const auto& path : paths) {
    std::ifstream in(path);
    cases.push_back(json::parse(in));
  }
  return cases;
}

}  // namespace

TEST_CASE("every kernel reproduces ONNX Runtime's output on its reference cases", "[runtime][ort]") {
  const auto cases = load_cases();
  REQUIRE(cases.size() >= 150);
  for (const auto& k : cases) {
    const std::string name = k.at("name");
    DYNAMIC_SECTION(name) {
      const auto actual = k.at("dtype") == "int8" ? run_case<int8_t>(k) : run_case<uint8_t>(k);
      const auto expected = k.at("output").at("data").get<std::vector<int64_t>>();
      REQUIRE(actual.size() == expected.size());
      size_t mismatches = 0;
      size_t first = 0;
      for (size_t i = 0; i < actual.size(); ++i) {
        if (actual[i] != expected[i] && mismatches++ == 0) first = i;
      }
      INFO(name << ": " << mismatches << " of " << actual.size() << " elements differ; first at " << first << ": "
                << (mismatches ? actual[first] : 0) << " vs ORT " << (mismatches ? expected[first] : 0));
      CHECK(mismatches == 0);
    }
  }
}
