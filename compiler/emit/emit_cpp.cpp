#include "emit/emit_cpp.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <set>

#include <tightfit/host.hpp>
#include <tightfit/kernels.hpp>

#include "error.hpp"
#include "schedule/lifetimes.hpp"

#ifndef TIGHTFIT_VERSION
#error "TIGHTFIT_VERSION must be defined by the build"
#endif

namespace tightfit::emit {
namespace {

using ir::DType;
using ir::Graph;
using ir::Node;
using ir::OpKind;
using ir::Tensor;
using ir::TensorId;

// C++ spelling of the element type of a tensor.
const char* ctype(DType t) {
  switch (t) {
    case DType::Int8: return "std::int8_t";
    case DType::UInt8: return "std::uint8_t";
    case DType::Int32: return "std::int32_t";
    case DType::Float32: return "float";
  }
  return "?";
}

// A float as a C++ literal that reads back to the very same bits.
std::string float_literal(float f) { return fmt::format("{:a}f", f); }

std::string identifier(const std::string& text) {
  std::string id;
  for (char c : text) id += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return id;
}

template <typename T>
std::vector<T> elements_of(const Tensor& t) {
  std::vector<T> v(t.data.size() / sizeof(T));
  std::memcpy(v.data(), t.data.data(), v.size() * sizeof(T));
  return v;
}

std::int32_t i32(std::int64_t v) { return static_cast<std::int32_t>(v); }

std::int64_t attr_or(const std::vector<std::int64_t>& v, std::size_t i, std::int64_t fallback) {
  return i < v.size() ? v[i] : fallback;
}

// The geometry of a requantizing convolution: shapes, strides, dilations, pads and groups (the
// quantization fields left 0).
tightfit::ConvParams conv_geometry(const Graph& g, const Node& n) {
  const Tensor &x = g.tensors[n.inputs[0]], &w = g.tensors[n.inputs[1]], &y = g.tensors[n.outputs[0]];
  const auto& a = n.attrs;
  tightfit::ConvParams p{};
  p.batch = i32(x.shape[0]);
  p.in_h = i32(x.shape[1]), p.in_w = i32(x.shape[2]), p.in_c = i32(x.shape[3]);
  p.out_h = i32(y.shape[1]), p.out_w = i32(y.shape[2]), p.out_c = i32(y.shape[3]);
  p.kernel_h = i32(w.shape[2]), p.kernel_w = i32(w.shape[3]);
  p.stride_h = i32(attr_or(a.strides, 0, 1)), p.stride_w = i32(attr_or(a.strides, 1, 1));
  p.dilation_h = i32(attr_or(a.dilations, 0, 1)), p.dilation_w = i32(attr_or(a.dilations, 1, 1));
  p.pad_top = i32(attr_or(a.pads, 0, 0)), p.pad_left = i32(attr_or(a.pads, 1, 0));
  p.groups = i32(a.group);
  return p;
}

tightfit::MaxPoolParams max_pool_params(const Graph& g, const Node& n) {
  const Tensor &x = g.tensors[n.inputs[0]], &y = g.tensors[n.outputs[0]];
  const auto& a = n.attrs;
  return {i32(x.shape[0]), i32(x.shape[1]), i32(x.shape[2]), i32(x.shape[3]), i32(y.shape[1]), i32(y.shape[2]),
          i32(a.kernel_shape[0]), i32(a.kernel_shape[1]), i32(attr_or(a.strides, 0, 1)), i32(attr_or(a.strides, 1, 1)),
          i32(attr_or(a.dilations, 0, 1)), i32(attr_or(a.dilations, 1, 1)), i32(attr_or(a.pads, 0, 0)),
          i32(attr_or(a.pads, 1, 0))};
}

tightfit::AveragePoolParams average_pool_params(const Graph& g, const Node& n) {
  const Tensor &x = g.tensors[n.inputs[0]], &y = g.tensors[n.outputs[0]];
  const auto& a = n.attrs;
  return {i32(x.shape[0]),        i32(x.shape[1]),        i32(x.shape[2]),        i32(x.shape[3]),
          i32(y.shape[1]),        i32(y.shape[2]),        i32(a.kernel_shape[0]), i32(a.kernel_shape[1]),
          i32(attr_or(a.strides, 0, 1)), i32(attr_or(a.strides, 1, 1)), i32(attr_or(a.pads, 0, 0)),
          i32(attr_or(a.pads, 1, 0)),    i32(attr_or(a.pads, 2, 0)),    i32(attr_or(a.pads, 3, 0)),
          a.count_include_pad ? 1 : 0,   x.quant.scale[0],              x.quant.zero_point[0],
          y.quant.scale[0],              y.quant.zero_point[0]};
}

// The broadcast of a binary node, or nullopt beyond 4 dimensions.
std::optional<tightfit::BinaryShape> binary_shape_of(const Graph& g, const Node& n) {
  const Tensor &a = g.tensors[n.inputs[0]], &b = g.tensors[n.inputs[1]], &y = g.tensors[n.outputs[0]];
  const std::size_t rank = y.shape.size();
  if (rank > 4) return std::nullopt;
  auto dims = [&](const Tensor& t) {
    std::vector<std::int32_t> d(rank, 1);
    for (std::size_t i = 0; i < t.shape.size(); ++i) d[rank - t.shape.size() + i] = i32(t.shape[i]);
    return d;
  };
  const auto yd = dims(y), ad = dims(a), bd = dims(b);
  return tightfit::binary_shape(yd.data(), ad.data(), bd.data(), static_cast<int>(rank));
}

class Emitter {
 public:
  Emitter(const Graph& g, const schedule::Lifetimes& lt, const plan::Plan& plan, const std::vector<Arena>& arenas,
          const EmitOptions& options)
      : g_(g), lt_(lt), plan_(plan), arenas_(arenas), options_(options), root_(schedule::view_roots(g)) {}

  EmittedCode run() {
    for (std::size_t i = 0; i < g_.nodes.size(); ++i) emit_node(static_cast<int>(i), g_.nodes[i]);
    EmittedCode code;
    code.header = header();
    code.source = source();
    code.weights_bytes = weights_bytes_;
    code.schedule_bytes = schedule_bytes_;
    code.code_estimate_bytes = code_estimate();
    return code;
  }

 private:
  // ----- where tensors live -------------------------------------------------------------------

  std::string arena_name(int region) const { return emit::arena_name(arenas_.size(), arenas_[region].region); }

  // The C++ expression of a tensor's first element inside run().
  std::string pointer(TensorId t) const {
    const Tensor& tensor = g_.tensors[t];
    const int buffer = lt_.tensor_buffer[t];
    if (buffer >= 0) {
      const plan::Placement& at = plan_.placements[buffer];
      return fmt::format("tightfit::at<{}>({}, {})", ctype(tensor.dtype), arena_name(at.region), at.offset);
    }
    const TensorId r = root_[t];
    for (std::size_t i = 0; i < g_.inputs.size(); ++i)
      if (root_[g_.inputs[i]] == r) return fmt::format("const_cast<{}*>(input_{})", ctype(tensor.dtype), i);
    for (std::size_t i = 0; i < g_.outputs.size(); ++i)
      if (root_[g_.outputs[i]] == r) return fmt::format("output_{}", i);
    throw Error(g_.source + ": internal error: tensor '" + tensor.name + "' has no memory");
  }

  // ----- constant data ------------------------------------------------------------------------

  template <typename T>
  std::string array(const std::string& name, const char* type, const std::vector<T>& values) {
    std::string text = fmt::format("alignas(16) constexpr {} {}[]{} = {{", type, name, weights_attribute());
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (i % 24 == 0) text += "\n    ";
      if constexpr (std::is_same_v<T, float>) {
        text += float_literal(values[i]) + ",";
      } else {
        text += fmt::format("{},", static_cast<std::int64_t>(values[i]));
      }
    }
    text += "\n};\n";
    weights_bytes_ += values.size() * sizeof(T);
    constants_ += text;
    return name;
  }

  std::string weights_attribute() const {
    return options_.weights_section.empty() ? "" : fmt::format(" __attribute__((section(\"{}\")))", options_.weights_section);
  }

  // A constant tensor's integer elements (int8, uint8 or int32) as an array in flash.
  std::string tensor_array(const std::string& name, const Tensor& t) {
    switch (t.dtype) {
      case DType::Int8: return array(name, "std::int8_t", elements_of<std::int8_t>(t));
      case DType::UInt8: return array(name, "std::uint8_t", elements_of<std::uint8_t>(t));
      case DType::Int32: return array(name, "std::int32_t", elements_of<std::int32_t>(t));
      case DType::Float32: break;
    }
    throw Error(g_.source + ": tensor '" + t.name + "': float constants have no kernel");
  }

  // A parameter block: `fields` is the aggregate initializer's inside.
  std::string params(const std::string& type, const std::string& name, const std::string& fields, int int_fields) {
    constants_ += fmt::format("constexpr tightfit::{} {} = {{{}}};\n", type, name, fields);
    schedule_bytes_ += static_cast<std::uint64_t>(int_fields) * 4;
    return name;
  }

  void call(const Node& n, const std::string& statement) {
    body_ += fmt::format("  // {} ({})\n  {};\n", n.name, n.onnx_op, statement);
    // run_profiled(): the same calls between the step hooks (docs/codegen.md, "Per-step hooks").
    const std::size_t step = steps_.size();
    profiled_body_ += fmt::format("  // {} ({})\n  tightfit_step_begin({});\n  {};\n  tightfit_step_end({});\n", n.name,
                                  n.onnx_op, step, statement, step);
    steps_.push_back(fmt::format("{{\"{}\", \"{}\", {}}}", c_string(n.name), c_string(n.onnx_op), g_.macs(n)));
    kernels_used_.insert(ir::op_name(n.op));
    ++calls_;
  }

  // Text for a C string literal: quotes, backslashes and control characters escaped.
  static std::string c_string(const std::string& text) {
    std::string out;
    for (char c : text) {
      if (c == '"' || c == '\\') out += '\\';
      if (static_cast<unsigned char>(c) < 0x20) {
        out += fmt::format("\\{:03o}", static_cast<unsigned char>(c));
        continue;
      }
      out += c;
    }
    return out;
  }

  // ----- one node -----------------------------------------------------------------------------

  [[noreturn]] void refuse(const Node& n, const std::string& why) const {
    throw Error(g_.source + ": " + n.name + " (" + n.onnx_op + "): " + why);
  }

  const Tensor& in(const Node& n, std::size_t i) const { return g_.tensors[n.inputs[i]]; }
  const Tensor& out(const Node& n) const { return g_.tensors[n.outputs[0]]; }
  std::string t_of(const Node& n) const { return ctype(in(n, 0).dtype); }

  // Whether the plan puts the output of step `index` above the input it overlaps: then its
  // kernel runs backwards (the up distance of kernels.hpp).
  bool runs_backwards(int index) const {
    for (std::size_t k = 0; k < lt_.problem.overlaps.size(); ++k) {
      if (lt_.overlap_step[k] != index) continue;
      const plan::Overlap& o = lt_.problem.overlaps[k];
      const plan::Placement &out = plan_.placements[o.output], &in = plan_.placements[o.input];
      return out.region == in.region && out.offset > in.offset && out.offset < in.offset + lt_.problem.buffers[o.input].size;
    }
    return false;
  }

  // ", true" in a kernel's template arguments when it runs backwards.
  std::string direction() const { return backward_ ? ", true" : ""; }

  void emit_node(int index, const Node& n) {
    const std::string id = fmt::format("n{}", index);
    backward_ = runs_backwards(index);
    switch (n.op) {
      case OpKind::Conv: return conv(id, n);
      case OpKind::FullyConnected: return fully_connected(id, n);
      case OpKind::MaxPool: return max_pool(id, n);
      case OpKind::AveragePool: return average_pool(id, n);
      case OpKind::GlobalAveragePool: return global_average_pool(id, n);
      case OpKind::Add: return add(id, n);
      case OpKind::Mul: return mul(id, n);
      case OpKind::Sigmoid:
      case OpKind::Tanh:
      case OpKind::LeakyRelu:
      case OpKind::Requantize: return lookup(id, n);
      case OpKind::Softmax: return softmax(id, n);
      case OpKind::Concat: return concat(id, n);
      case OpKind::Reshape: return;  // a view: the output already shares the input's bytes
      case OpKind::Transpose: return transpose(id, n);
      case OpKind::Pad: return pad(id, n);
      case OpKind::Resize: return resize(id, n);
      case OpKind::Clamp: return clamp(id, n);
      case OpKind::DynamicQuantize: return dynamic_quantize(n);
      case OpKind::Quantize:
      case OpKind::Dequantize: refuse(n, "float tensors inside the graph have no kernel");
    }
  }

  void require_per_tensor(const Node& n, const Tensor& t) const {
    if (t.quant.per_channel() || t.quant.scale.size() != 1) refuse(n, "tensor '" + t.name + "' must be quantized per tensor");
  }

  // The weights' single zero point (ORT's QLinearConv takes one even with per-channel scales).
  std::int32_t weight_zero_point(const Node& n, const Tensor& w) const {
    for (std::int32_t z : w.quant.zero_point)
      if (z != w.quant.zero_point[0]) refuse(n, "per-channel weight zero points must all be equal");
    return w.quant.zero_point[0];
  }

  std::vector<float> multipliers(const Tensor& x, const Tensor& w, const Tensor& y) const {
    std::vector<float> m;
    for (float ws : w.quant.scale) m.push_back(tightfit::conv_multiplier(x.quant.scale[0], ws, y.quant.scale[0]));
    return m;
  }

  std::string bias_pointer(const std::string& id, const Node& n) {
    if (n.inputs.size() < 3 || n.inputs[2] == ir::kNoTensor) return "nullptr";
    return tensor_array(id + "_bias", in(n, 2));
  }

  void conv(const std::string& id, const Node& n) {
    if (out(n).dtype == DType::Int32) return conv_accumulate(id, n);
    const Tensor &x = in(n, 0), &w = in(n, 1), &y = out(n);
    require_per_tensor(n, x);
    require_per_tensor(n, y);
    const auto& a = n.attrs;
    tightfit::ConvParams p = conv_geometry(g_, n);
    p.input_zero_point = x.quant.zero_point[0];
    p.weight_zero_point = weight_zero_point(n, w);
    p.output_zero_point = y.quant.zero_point[0];
    p.output_min = a.act_min, p.output_max = a.act_max;
    p.per_channel = w.quant.scale.size() > 1 ? 1 : 0;

    std::string weights;
    if (w.dtype == DType::Int8) {
      std::vector<std::int8_t> packed(w.data.size());
      tightfit::pack_conv_weights(p, elements_of<std::int8_t>(w).data(), packed.data());
      weights = array(id + "_weights", "std::int8_t", packed);
    } else {
      std::vector<std::uint8_t> packed(w.data.size());
      tightfit::pack_conv_weights(p, elements_of<std::uint8_t>(w).data(), packed.data());
      weights = array(id + "_weights", "std::uint8_t", packed);
    }
    const std::string bias = bias_pointer(id, n);
    const std::string mult = array(id + "_multipliers", "float", multipliers(x, w, y));
    const std::string block = params(
        "ConvParams", id,
        fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}", p.batch, p.in_h, p.in_w, p.in_c,
                    p.out_h, p.out_w, p.out_c, p.kernel_h, p.kernel_w, p.stride_h, p.stride_w, p.dilation_h,
                    p.dilation_w, p.pad_top, p.pad_left, p.groups, p.input_zero_point, p.weight_zero_point,
                    p.output_zero_point, p.output_min, p.output_max, p.per_channel),
        22);
    call(n, fmt::format("tightfit::conv<{}, {}{}>({}, {}, {}, {}, {}, {})", t_of(n), ctype(w.dtype), direction(), block,
                        pointer(n.inputs[0]), weights, bias, mult, pointer(n.outputs[0])));
  }

  // ConvInteger: int32 accumulators, no bias, no requantization. Weights OHWI for every group
  // count (conv_accumulate's layout, independent of the requantizing kernels' packing).
  void conv_accumulate(const std::string& id, const Node& n) {
    const Tensor &x = in(n, 0), &w = in(n, 1), &y = out(n);
    require_per_tensor(n, x);
    if (n.inputs.size() > 2 && n.inputs[2] != ir::kNoTensor) refuse(n, "an int32 convolution output takes no bias");
    const auto& a = n.attrs;
    const std::int64_t group_in_c = w.shape[1], kh = w.shape[2], kw = w.shape[3], oc_count = w.shape[0];
    const std::size_t es = ir::dtype_size(w.dtype);
    std::vector<std::uint8_t> ohwi(w.data.size());
    for (std::int64_t oc = 0; oc < oc_count; ++oc)
      for (std::int64_t ic = 0; ic < group_in_c; ++ic)
        for (std::int64_t ky = 0; ky < kh; ++ky)
          for (std::int64_t kx = 0; kx < kw; ++kx) {
            const std::int64_t from = ((oc * group_in_c + ic) * kh + ky) * kw + kx;
            const std::int64_t to = ((oc * kh + ky) * kw + kx) * group_in_c + ic;
            std::memcpy(&ohwi[static_cast<std::size_t>(to) * es], &w.data[static_cast<std::size_t>(from) * es], es);
          }
    Tensor packed = w;
    packed.data = std::move(ohwi);
    const std::string weights = tensor_array(id + "_weights", packed);
    const std::string block = params(
        "ConvParams", id,
        fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}", x.shape[0], x.shape[1], x.shape[2],
                    x.shape[3], y.shape[1], y.shape[2], y.shape[3], kh, kw, attr_or(a.strides, 0, 1),
                    attr_or(a.strides, 1, 1), attr_or(a.dilations, 0, 1), attr_or(a.dilations, 1, 1),
                    attr_or(a.pads, 0, 0), attr_or(a.pads, 1, 0), a.group, x.quant.zero_point[0], weight_zero_point(n, w),
                    0, 0, 0, 0),  // no requantization: output zero point, clamp and multipliers unused
        22);
    call(n, fmt::format("tightfit::conv_accumulate<{}, {}>({}, {}, {}, {})", t_of(n), ctype(w.dtype), block,
                        pointer(n.inputs[0]), weights, pointer(n.outputs[0])));
  }

  // MatMulInteger (int32 output, any weight rank) and QLinearMatMul with a batched weight
  // [B, M, K]: matmul_accumulate / matmul_requantize.
  void matmul(const std::string& id, const Node& n) {
    const Tensor &x = in(n, 0), &w = in(n, 1), &y = out(n);
    require_per_tensor(n, x);
    const bool accumulate = y.dtype == DType::Int32;
    if (!accumulate) require_per_tensor(n, y);
    if (n.inputs.size() > 2 && n.inputs[2] != ir::kNoTensor) refuse(n, "a batched or int32 matmul takes no bias");
    const std::int64_t k = w.shape.back(), m = w.shape[w.shape.size() - 2];
    const std::int64_t batches = w.shape.size() == 3 ? w.shape[0] : 1;
    const std::int64_t rows = x.elements() / k / batches;
    const std::string weights = tensor_array(id + "_weights", w);
    const std::string block =
        params("MatMulParams", id,
               fmt::format("{},{},{},{},{},{},{},{},{},{}", batches, rows, k, m, x.quant.zero_point[0],
                           weight_zero_point(n, w), accumulate ? 0 : y.quant.zero_point[0], accumulate ? 0 : n.attrs.act_min,
                           accumulate ? 0 : n.attrs.act_max, w.quant.scale.size() > 1 ? 1 : 0),
               10);
    if (accumulate) {
      call(n, fmt::format("tightfit::matmul_accumulate<{}, {}>({}, {}, {}, {})", t_of(n), ctype(w.dtype), block,
                          pointer(n.inputs[0]), weights, pointer(n.outputs[0])));
      return;
    }
    const std::string mult = array(id + "_multipliers", "float", multipliers(x, w, y));
    call(n, fmt::format("tightfit::matmul_requantize<{}, {}>({}, {}, {}, {}, {})", t_of(n), ctype(w.dtype), block,
                        pointer(n.inputs[0]), weights, mult, pointer(n.outputs[0])));
  }

  void fully_connected(const std::string& id, const Node& n) {
    if (out(n).dtype == DType::Int32 || in(n, 1).shape.size() == 3) return matmul(id, n);
    const Tensor &x = in(n, 0), &w = in(n, 1), &y = out(n);
    require_per_tensor(n, x);
    require_per_tensor(n, y);
    const std::int64_t k = w.shape[1], m = w.shape[0];
    const std::string weights = tensor_array(id + "_weights", w);
    const std::string bias = bias_pointer(id, n);
    const std::string mult = array(id + "_multipliers", "float", multipliers(x, w, y));
    const std::string block =
        params("FullyConnectedParams", id,
               fmt::format("{},{},{},{},{},{},{},{},{}", x.elements() / k, k, m, x.quant.zero_point[0],
                           weight_zero_point(n, w), y.quant.zero_point[0], n.attrs.act_min, n.attrs.act_max,
                           w.quant.scale.size() > 1 ? 1 : 0),
               9);
    call(n, fmt::format("tightfit::fully_connected<{}, {}{}>({}, {}, {}, {}, {}, {})", t_of(n), ctype(w.dtype), direction(), block,
                        pointer(n.inputs[0]), weights, bias, mult, pointer(n.outputs[0])));
  }

  void max_pool(const std::string& id, const Node& n) {
    const Tensor &x = in(n, 0), &y = out(n);
    if (x.quant.scale != y.quant.scale || x.quant.zero_point != y.quant.zero_point)
      refuse(n, "MaxPool must keep its input's quantization");
    const tightfit::MaxPoolParams p = max_pool_params(g_, n);
    const std::string block = params(
        "MaxPoolParams", id,
        fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{}", p.batch, p.in_h, p.in_w, p.channels, p.out_h, p.out_w,
                    p.kernel_h, p.kernel_w, p.stride_h, p.stride_w, p.dilation_h, p.dilation_w, p.pad_top, p.pad_left),
        14);
    call(n, fmt::format("tightfit::max_pool<{}>({}, {}, {})", t_of(n), block, pointer(n.inputs[0]),
                        pointer(n.outputs[0])));
  }

  void average_pool(const std::string& id, const Node& n) {
    const tightfit::AveragePoolParams p = average_pool_params(g_, n);
    const std::string block = params(
        "AveragePoolParams", id,
        fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}", p.batch, p.in_h, p.in_w, p.channels,
                    p.out_h, p.out_w, p.kernel_h, p.kernel_w, p.stride_h, p.stride_w, p.pad_top, p.pad_left,
                    p.pad_bottom, p.pad_right, p.count_include_pad, float_literal(p.input_scale), p.input_zero_point,
                    float_literal(p.output_scale), p.output_zero_point),
        19);
    call(n, fmt::format("tightfit::average_pool<{}>({}, {}, {})", t_of(n), block, pointer(n.inputs[0]),
                        pointer(n.outputs[0])));
  }

  void global_average_pool(const std::string& id, const Node& n) {
    const Tensor &x = in(n, 0), &y = out(n);
    const std::int64_t image = x.shape[1] * x.shape[2];
    const float m = tightfit::global_average_pool_multiplier(x.quant.scale[0], y.quant.scale[0], i32(image));
    const std::string block =
        params("GlobalAveragePoolParams", id,
               fmt::format("{},{},{},{},{},{}", x.shape[0], image, x.shape[3], x.quant.zero_point[0],
                           y.quant.zero_point[0], float_literal(m)),
               6);
    call(n, fmt::format("tightfit::global_average_pool<{}>({}, {}, {})", t_of(n), block, pointer(n.inputs[0]),
                        pointer(n.outputs[0])));
  }

  std::string binary_shape(const Node& n) const {
    const std::optional<tightfit::BinaryShape> shape = binary_shape_of(g_, n);
    if (!shape) refuse(n, "broadcasting over more than 4 dimensions is not supported");
    const tightfit::BinaryShape& s = *shape;
    auto four = [](const std::int32_t* v) { return fmt::format("{{{},{},{},{}}}", v[0], v[1], v[2], v[3]); };
    return fmt::format("{{{},{},{}}}", four(s.out_dims), four(s.a_strides), four(s.b_strides));
  }

  std::string operand(const std::string& id, const Node& n, std::size_t i) {
    const Tensor& t = in(n, i);
    return t.is_constant ? tensor_array(fmt::format("{}_operand{}", id, i), t) : pointer(n.inputs[i]);
  }

  void add(const std::string& id, const Node& n) {
    const Tensor &a = in(n, 0), &b = in(n, 1), &y = out(n);
    for (const Tensor* t : {&a, &b, &y}) require_per_tensor(n, *t);
    // ORT picks its broadcast path from ONNX's order of the dims.
    const auto as = a.onnx_shape(), bs = b.onnx_shape();
    const tightfit::BroadcastForm form = tightfit::binary_broadcast_form(as.data(), static_cast<int>(as.size()), bs.data(),
                                                                        static_cast<int>(bs.size()));
    const tightfit::AddRequant r = tightfit::add_requant(a.quant.scale[0], a.quant.zero_point[0], b.quant.scale[0],
                                                         b.quant.zero_point[0], y.quant.scale[0], y.quant.zero_point[0], form);
    static const char* const kForms[] = {"kElementwise", "kScalarA", "kScalarB"};
    const std::string block = params(
        "AddParams", id,
        fmt::format("{},tightfit::BroadcastForm::{},{},{},{},{},{},{},{}", binary_shape(n), kForms[static_cast<int>(form)],
                    a.quant.zero_point[0], b.quant.zero_point[0], float_literal(r.a_ratio), float_literal(r.b_ratio),
                    float_literal(r.fixed), n.attrs.act_min, n.attrs.act_max),
        20);
    const std::string pa = operand(id, n, 0), pb = operand(id, n, 1);
    call(n, fmt::format("tightfit::add<{}>({}, {}, {}, {})", ctype(y.dtype), block, pa, pb, pointer(n.outputs[0])));
  }

  void mul(const std::string& id, const Node& n) {
    const Tensor &a = in(n, 0), &b = in(n, 1), &y = out(n);
    for (const Tensor* t : {&a, &b, &y}) require_per_tensor(n, *t);
    const float ratio = tightfit::mul_ratio(a.quant.scale[0], b.quant.scale[0], y.quant.scale[0]);
    const std::string block =
        params("MulParams", id,
               fmt::format("{},{},{},{},{},{},{}", binary_shape(n), a.quant.zero_point[0], b.quant.zero_point[0],
                           float_literal(ratio), float_literal(static_cast<float>(y.quant.zero_point[0])),
                           n.attrs.act_min, n.attrs.act_max),
               18);
    const std::string pa = operand(id, n, 0), pb = operand(id, n, 1);
    call(n, fmt::format("tightfit::mul<{}>({}, {}, {}, {})", ctype(y.dtype), block, pa, pb, pointer(n.outputs[0])));
  }

  // Sigmoid, Tanh, LeakyRelu and Requantize: one byte in, one byte out, through a 256-entry table.
  void lookup(const std::string& id, const Node& n) {
    if (in(n, 0).dtype == DType::Int32 && n.op == OpKind::Requantize) return requantize_accumulator(id, n);
    const Tensor &x = in(n, 0), &y = out(n);
    require_per_tensor(n, x);
    require_per_tensor(n, y);
    if (x.dtype != y.dtype) refuse(n, "input and output must have the same integer type");
    const float xs = x.quant.scale[0], ys = y.quant.scale[0];
    const std::int32_t xz = x.quant.zero_point[0], yz = y.quant.zero_point[0];
    std::uint8_t table[256];
    const bool s8 = x.dtype == DType::Int8;
    switch (n.op) {
      case OpKind::Sigmoid:
        s8 ? tightfit::build_sigmoid_table<std::int8_t>(xs, xz, ys, yz, table)
           : tightfit::build_sigmoid_table<std::uint8_t>(xs, xz, ys, yz, table);
        break;
      case OpKind::Tanh:
        s8 ? tightfit::build_tanh_table<std::int8_t>(xs, xz, ys, yz, table)
           : tightfit::build_tanh_table<std::uint8_t>(xs, xz, ys, yz, table);
        break;
      case OpKind::LeakyRelu:
        s8 ? tightfit::build_leaky_relu_table<std::int8_t>(n.attrs.alpha, xs, xz, ys, yz, table)
           : tightfit::build_leaky_relu_table<std::uint8_t>(n.attrs.alpha, xs, xz, ys, yz, table);
        break;
      default:
        s8 ? tightfit::build_requantize_table<std::int8_t>(xs, xz, ys, yz, table)
           : tightfit::build_requantize_table<std::uint8_t>(xs, xz, ys, yz, table);
        break;
    }
    // A fused clamp after the table: applied to the table's entries, where it is exact.
    for (std::uint8_t& e : table) {
      const std::int32_t v = s8 ? static_cast<std::int8_t>(e) : e;
      e = static_cast<std::uint8_t>(std::clamp(v, n.attrs.act_min, n.attrs.act_max));
    }
    const std::string t = array(id + "_table", "std::uint8_t", std::vector<std::uint8_t>(table, table + 256));
    call(n, fmt::format("tightfit::lookup<{}>({}, {}, {}, {})", t_of(n), t, pointer(n.inputs[0]),
                        pointer(n.outputs[0]), x.elements()));
  }

  // DynamicQuantizeLinear: the float input, quantized with parameters computed from it.
  void dynamic_quantize(const Node& n) {
    const Tensor& x = in(n, 0);
    if (x.dtype != DType::Float32 || n.outputs.size() != 3) refuse(n, "expects a float32 input and three outputs");
    call(n, fmt::format("tightfit::dynamic_quantize_linear({}, {}, {}, {}, {})", x.elements(), pointer(n.inputs[0]),
                        pointer(n.outputs[0]), pointer(n.outputs[1]), pointer(n.outputs[2])));
  }

  // An int32 accumulator requantized (ConvInteger -> DequantizeLinear -> QuantizeLinear).
  void requantize_accumulator(const std::string& id, const Node& n) {
    const Tensor &x = in(n, 0), &y = out(n);
    require_per_tensor(n, x);
    require_per_tensor(n, y);
    const std::string block = params(
        "AccumulatorRequantizeParams", id,
        fmt::format("{},{},{},{},{},{},{}", x.elements(), float_literal(x.quant.scale[0]), x.quant.zero_point[0],
                    float_literal(y.quant.scale[0]), y.quant.zero_point[0], n.attrs.act_min, n.attrs.act_max),
        7);
    call(n, fmt::format("tightfit::requantize_accumulator<{}>({}, {}, {})", ctype(y.dtype), block, pointer(n.inputs[0]),
                        pointer(n.outputs[0])));
  }

  void softmax(const std::string& id, const Node& n) {
    const Tensor &x = in(n, 0), &y = out(n);
    require_per_tensor(n, x);
    require_per_tensor(n, y);
    if (n.attrs.axis != static_cast<std::int64_t>(x.shape.size()) - 1)
      refuse(n, "softmax must run over the innermost axis in memory");
    const std::int64_t row = x.shape.back();
    float table[256];
    tightfit::build_softmax_table(x.quant.scale[0], i32(row), x.dtype == DType::Int8, table);
    const std::string t = array(id + "_table", "float", std::vector<float>(table, table + 256));
    const std::string block =
        params("SoftmaxParams", id,
               fmt::format("{},{},{},{}", x.elements() / row, row, y.quant.zero_point[0],
                           float_literal(tightfit::softmax_output_scale_inv(y.quant.scale[0]))),
               4);
    call(n, fmt::format("tightfit::softmax<{}>({}, {}, {}, {})", t_of(n), block, t, pointer(n.inputs[0]),
                        pointer(n.outputs[0])));
  }

  void concat(const std::string& id, const Node& n) {
    const Tensor& y = out(n);
    require_per_tensor(n, y);
    const std::size_t axis = static_cast<std::size_t>(n.attrs.axis);
    std::int64_t outer = 1, after = 1;
    for (std::size_t d = 0; d < axis; ++d) outer *= y.shape[d];
    for (std::size_t d = axis + 1; d < y.shape.size(); ++d) after *= y.shape[d];
    std::vector<std::int32_t> inner;
    std::vector<std::string> inputs, tables;
    for (std::size_t i = 0; i < n.inputs.size(); ++i) {
      const Tensor& x = in(n, i);
      require_per_tensor(n, x);
      inner.push_back(i32(x.shape[axis] * after));
      inputs.push_back(operand(id, n, i));
      if (x.quant.scale == y.quant.scale && x.quant.zero_point == y.quant.zero_point) {
        tables.push_back("nullptr");
        continue;
      }
      std::uint8_t table[256];
      x.dtype == DType::Int8
          ? tightfit::build_requantize_table<std::int8_t>(x.quant.scale[0], x.quant.zero_point[0], y.quant.scale[0],
                                                          y.quant.zero_point[0], table)
          : tightfit::build_requantize_table<std::uint8_t>(x.quant.scale[0], x.quant.zero_point[0], y.quant.scale[0],
                                                           y.quant.zero_point[0], table);
      tables.push_back(array(fmt::format("{}_table{}", id, i), "std::uint8_t", std::vector<std::uint8_t>(table, table + 256)));
    }
    const std::string inner_name = array(id + "_inner", "std::int32_t", inner);
    const std::string block =
        params("ConcatParams", id,
               fmt::format("{},{},{},{}", n.inputs.size(), outer, y.shape[axis] * after, inner_name), 4);
    constants_ += fmt::format("constexpr const std::uint8_t* {}_tables[] = {{{}}};\n", id, fmt::join(tables, ", "));
    const std::string type = ctype(y.dtype);
    call(n, fmt::format("const {0}* const {1}_inputs[] = {{{2}}};\n  tightfit::concat<{0}>({1}, {1}_inputs, {1}_tables, {3})",
                        type, id, fmt::join(inputs, ", "), pointer(n.outputs[0])));
  }

  static std::vector<std::int32_t> padded4(const std::vector<std::int64_t>& v, std::int64_t fill) {
    std::vector<std::int32_t> out(4, static_cast<std::int32_t>(fill));
    for (std::size_t i = 0; i < v.size(); ++i) out[4 - v.size() + i] = i32(v[i]);
    return out;
  }

  void transpose(const std::string& id, const Node& n) {
    const Tensor& x = in(n, 0);
    const std::size_t rank = x.shape.size();
    if (rank > 4) refuse(n, "transposes of more than 4 dimensions are not supported");
    std::vector<std::int64_t> perm(4);
    const std::size_t lead = 4 - rank;
    for (std::size_t i = 0; i < 4; ++i)
      perm[i] = i < lead ? static_cast<std::int64_t>(i) : n.attrs.perm[i - lead] + static_cast<std::int64_t>(lead);
    const auto dims = padded4(x.shape, 1);
    const std::string block = params(
        "TransposeParams", id,
        fmt::format("{{{},{},{},{}}},{{{},{},{},{}}}", dims[0], dims[1], dims[2], dims[3], perm[0], perm[1], perm[2], perm[3]),
        8);
    call(n, fmt::format("tightfit::transpose<{}>({}, {}, {})", t_of(n), block, pointer(n.inputs[0]),
                        pointer(n.outputs[0])));
  }

  void pad(const std::string& id, const Node& n) {
    const Tensor& x = in(n, 0);
    const std::size_t rank = x.shape.size();
    if (rank > 4) refuse(n, "padding more than 4 dimensions is not supported");
    const std::vector<std::int64_t> before(n.attrs.pads.begin(), n.attrs.pads.begin() + static_cast<long>(rank));
    const std::vector<std::int64_t> after(n.attrs.pads.begin() + static_cast<long>(rank), n.attrs.pads.end());
    const auto dims = padded4(x.shape, 1), b = padded4(before, 0), a = padded4(after, 0);
    const std::string block = params(
        "PadParams", id,
        fmt::format("{{{},{},{},{}}},{{{},{},{},{}}},{{{},{},{},{}}},{}", dims[0], dims[1], dims[2], dims[3], b[0], b[1],
                    b[2], b[3], a[0], a[1], a[2], a[3], x.quant.zero_point[0]),
        13);
    call(n, fmt::format("tightfit::pad<{}>({}, {}, {})", t_of(n), block, pointer(n.inputs[0]), pointer(n.outputs[0])));
  }

  void resize(const std::string& id, const Node& n) {
    const Tensor &x = in(n, 0), &y = out(n);
    if (x.layout != ir::Layout::ChannelsLast) refuse(n, "Resize is supported on 4-D images only");
    const auto& s = n.attrs.scales;  // memory order after the channels-last stage: N, H, W, C
    if (s[0] != 1.0f || s[3] != 1.0f) refuse(n, "Resize may scale only the height and width");
    auto indices = [&](std::int64_t in_len, std::int64_t out_len, float scale) {
      std::vector<std::int32_t> index;
      for (std::int64_t o = 0; o < out_len; ++o)
        index.push_back(tightfit::resize_nearest_index(i32(o), i32(in_len), i32(out_len), scale,
                                                       tightfit::ResizeCoordinateMode::kAsymmetric,
                                                       tightfit::ResizeNearestMode::kFloor));
      return index;
    };
    const std::string h = array(id + "_rows", "std::int32_t", indices(x.shape[1], y.shape[1], s[1]));
    const std::string w = array(id + "_columns", "std::int32_t", indices(x.shape[2], y.shape[2], s[2]));
    const std::string block =
        params("ResizeNearestParams", id,
               fmt::format("{},{},{},{},{},{},{},{}", x.shape[0], x.shape[1], x.shape[2], x.shape[3], y.shape[1],
                           y.shape[2], h, w),
               8);
    call(n, fmt::format("tightfit::resize_nearest<{}>({}, {}, {})", t_of(n), block, pointer(n.inputs[0]),
                        pointer(n.outputs[0])));
  }

  void clamp(const std::string& id, const Node& n) {
    const Tensor &x = in(n, 0), &y = out(n);
    if (x.quant.scale != y.quant.scale || x.quant.zero_point != y.quant.zero_point)
      refuse(n, "a standalone Relu/Clip must keep its input's quantization");
    const std::string block =
        params("ClampParams", id, fmt::format("{},{},{}", x.elements(), n.attrs.act_min, n.attrs.act_max), 3);
    call(n, fmt::format("tightfit::clamp<{}>({}, {}, {})", t_of(n), block, pointer(n.inputs[0]), pointer(n.outputs[0])));
  }

  // ----- the files ----------------------------------------------------------------------------

  std::uint64_t code_estimate() const {
    // A rough figure until a firmware build measures it: ~600 bytes of Thumb-2 per distinct
    // kernel, ~24 bytes per call site. `tightfit run --target` reports the real size.
    return kernels_used_.size() * 600 + calls_ * 24;
  }

  struct Boundary {
    std::string what;   // "input" or "output"
    std::size_t index;
    TensorId tensor;
  };

  std::vector<Boundary> boundaries() const {
    std::vector<Boundary> b;
    for (std::size_t i = 0; i < g_.inputs.size(); ++i) b.push_back({"input", i, g_.inputs[i]});
    for (std::size_t i = 0; i < g_.outputs.size(); ++i) b.push_back({"output", i, g_.outputs[i]});
    return b;
  }

  static std::string onnx_shape_text(const Tensor& t) {
    return fmt::format("[{}]", fmt::join(t.onnx_shape(), ", "));
  }

  std::string arena_parameters(bool with_defaults) const {
    std::vector<std::string> p;
    for (std::size_t r = 0; r < arenas_.size(); ++r)
      p.push_back(fmt::format("std::uint8_t* {0}{1}", arena_name(static_cast<int>(r)),
                              with_defaults && options_.io_in_arena ? fmt::format(" = {}_storage", arena_name(static_cast<int>(r))) : ""));
    return fmt::format("{}", fmt::join(p, ", "));
  }

  std::string run_parameters(bool with_defaults) const {
    std::string p = arena_parameters(with_defaults);
    if (!options_.io_in_arena) {
      for (std::size_t i = 0; i < g_.inputs.size(); ++i)
        p += fmt::format(", const {}* input_{}", ctype(g_.tensors[g_.inputs[i]].dtype), i);
      for (std::size_t i = 0; i < g_.outputs.size(); ++i)
        p += fmt::format(", {}* output_{}", ctype(g_.tensors[g_.outputs[i]].dtype), i);
    }
    return p;
  }

  std::string header() const {
    std::string h;
    h += fmt::format("// Generated by tightfit {} from {}. Do not edit.\n", TIGHTFIT_VERSION, options_.model);
    h += "//\n// Use: fill the inputs (set_input_N quantizes floats given in ONNX's order), call run(),\n"
         "// read the outputs (get_output_N dequantizes into ONNX's order). The arena is the only\n"
         "// mutable state; run() allocates nothing, copies no weights and needs no initialisation.\n";
    h += "#pragma once\n\n#include <cstddef>\n#include <cstdint>\n\n";
    h += fmt::format("namespace {} {{\n\n", options_.name);
    for (std::size_t r = 0; r < arenas_.size(); ++r) {
      const std::string a = arena_name(static_cast<int>(r));
      h += fmt::format("// RAM region '{}': the planned peak of its buffers, in bytes.\n", arenas_[r].region);
      h += fmt::format("constexpr std::size_t k{}Bytes = {};\n", arenas_.size() == 1 ? std::string("Arena") : "Arena_" + identifier(arenas_[r].region), arenas_[r].bytes);
    }
    h += "constexpr std::size_t kArenaAlignment = 16;\n\n";
    h += "// The built-in arena(s), in .bss";
    h += arenas_.size() == 1 && !arenas_[0].section.empty() ? fmt::format(" (section {})", arenas_[0].section) : "";
    h += ". A caller that brings its own memory passes it to run()\n"
         "// instead; unused, the built-in one is dropped by --gc-sections.\n";
    for (std::size_t r = 0; r < arenas_.size(); ++r)
      h += fmt::format("extern std::uint8_t {}_storage[];\n", arena_name(static_cast<int>(r)));
    h += "\n// Runs the model once on what the inputs hold; afterwards the outputs hold its results.\n";
    h += fmt::format("void run({});\n\n", run_parameters(true));
    h += "#if defined(TIGHTFIT_PROFILE_STEPS)\n"
         "// Profiling builds only: run() again with tightfit_step_begin(i) / tightfit_step_end(i) (extern \"C\",\n"
         "// the caller defines them) around kernel call i; kSteps[i] names it. Normal builds have none of this.\n"
         "struct StepInfo {\n  const char* node;\n  const char* op;\n  std::int64_t macs;\n};\n";
    h += fmt::format("constexpr std::size_t kStepCount = {};\n", steps_.size());
    h += fmt::format("constexpr StepInfo kSteps[{}] = {{\n", std::max<std::size_t>(steps_.size(), 1));
    for (const std::string& step : steps_) h += "    " + step + ",\n";
    if (steps_.empty()) h += "    {\"\", \"\", 0},\n";
    h += "};\n";
    h += fmt::format("void run_profiled({});\n#endif\n\n", run_parameters(true));

    h += "// The model's inputs and outputs: integer tensors in memory order (4-D images channels-last,\n"
         "// [N, H, W, C]); shapes below are ONNX's.\n";
    h += "struct TensorInfo {\n  const char* name;\n  bool is_signed;       // int8 (else uint8)\n"
         "  float scale;          // real = scale * (q - zero_point)\n  std::int32_t zero_point;\n"
         "  std::size_t elements;\n  bool channels_last;   // stored [N, H, W, C]; ONNX's shape is [N, C, H, W]\n"
         "  bool float_in_model; // the ONNX model takes/gives float32 here\n};\n";
    for (const Boundary& b : boundaries()) {
      const Tensor& t = g_.tensors[b.tensor];
      const std::string type = ctype(t.dtype);
      const std::string quant_text =
          t.dtype == DType::Float32 ? std::string("as in the model")
          : !t.quantized && t.dtype == DType::Int32 ? std::string("not quantized (raw accumulators)")
          : !t.quantized ? std::string("quantized at run time (the scale and zero point are outputs too)")
          : t.quant.per_channel() ? fmt::format("{} per-channel scales", t.quant.scale.size())
                                  : fmt::format("scale {}, zero point {}", t.quant.scale[0], t.quant.zero_point[0]);
      h += fmt::format("\n// {} {} '{}': {} {}, {}{}.\n", b.what, b.index, t.name, ir::dtype_name(t.dtype),
                       onnx_shape_text(t), quant_text,
                       options_.io_in_arena ? "; it lives inside the arena" : "; the caller owns its buffer");
      const std::string info = fmt::format("k{}{}", b.what == "input" ? "Input" : "Output", b.index);
      if (t.quant.per_channel()) {
        // One scale and zero point per index of ONNX axis `axis`; TensorInfo's pair is then 0.
        h += fmt::format("// Quantized per channel along ONNX axis {}: {}Scales[i], {}ZeroPoints[i] for index i of that axis.\n",
                         t.quant.axis, info, info);
        std::vector<std::string> scales;
        for (float f : t.quant.scale) scales.push_back(float_literal(f));
        h += fmt::format("constexpr float {}Scales[] = {{{}}};\n", info, fmt::join(scales, ", "));
        h += fmt::format("constexpr std::int32_t {}ZeroPoints[] = {{{}}};\n", info, fmt::join(t.quant.zero_point, ", "));
      }
      const bool single = !t.quant.per_channel() && !t.quant.scale.empty();
      h += fmt::format("constexpr TensorInfo {} = {{\"{}\", {}, {}, {}, {}, {}, {}}};\n", info, t.name,
                       t.dtype == DType::Int8 ? "true" : "false", float_literal(single ? t.quant.scale[0] : 0.0f),
                       single ? t.quant.zero_point[0] : 0, t.elements(),
                       t.layout == ir::Layout::ChannelsLast ? "true" : "false",
                       t.float_at_boundary || t.dtype == DType::Float32 ? "true" : "false");
      if (options_.io_in_arena) {
        const int buffer = lt_.tensor_buffer[b.tensor];
        const plan::Placement& at = plan_.placements[buffer];
        const std::string a = arena_name(at.region);
        h += fmt::format("inline {0}* {1}_{2}(std::uint8_t* {3} = {3}_storage) {{ return reinterpret_cast<{0}*>({3} + {4}); }}\n",
                         b.what == "input" ? type : "const " + type, b.what, b.index, a, at.offset);
      }
      const std::string holder = options_.io_in_arena ? arena_name(plan_.placements[lt_.tensor_buffer[b.tensor]].region) : "";
      if (b.what == "input")
        h += fmt::format("void set_input_{}(const float* onnx_order{});\n", b.index,
                         options_.io_in_arena ? fmt::format(", std::uint8_t* {0} = {0}_storage", holder) : fmt::format(", {}* input", type));
      else
        h += fmt::format("void get_output_{}(float* onnx_order{});\n", b.index,
                         options_.io_in_arena ? fmt::format(", const std::uint8_t* {0} = {0}_storage", holder) : fmt::format(", const {}* output", type));
    }
    h += fmt::format("\n}}  // namespace {}\n", options_.name);
    return h;
  }

  // set_input_N / get_output_N: quantize or dequantize, and move between ONNX's order and
  // channels-last, in one pass.
  std::string boundary_functions() const {
    std::string s;
    for (const Boundary& b : boundaries()) {
      const Tensor& t = g_.tensors[b.tensor];
      const std::string type = ctype(t.dtype);
      const bool input = b.what == "input";
      std::string target;
      if (options_.io_in_arena) {
        const plan::Placement& at = plan_.placements[lt_.tensor_buffer[b.tensor]];
        target = fmt::format("reinterpret_cast<{}{}*>({} + {})", input ? "" : "const ", type, arena_name(at.region),
                             at.offset);
      } else {
        target = input ? "input" : "output";
      }
      const float scale = t.quant.scale.empty() ? 1.0f : t.quant.scale[0];
      const std::int32_t zp = t.quant.zero_point.empty() ? 0 : t.quant.zero_point[0];
      // Per channel: the element at ONNX index o belongs to channel (o / inner) % channels.
      std::string scale_text = float_literal(scale), zp_text = std::to_string(zp);
      if (t.quant.per_channel()) {
        const auto shape = t.onnx_shape();
        std::int64_t inner = 1;
        for (std::size_t d = static_cast<std::size_t>(t.quant.axis) + 1; d < shape.size(); ++d) inner *= shape[d];
        const std::string info = fmt::format("k{}{}", input ? "Input" : "Output", b.index);
        const std::string channel = fmt::format("(({{o}}) / {}) % {}", inner, shape[static_cast<std::size_t>(t.quant.axis)]);
        scale_text = fmt::format("{}Scales[{}]", info, channel);
        zp_text = fmt::format("{}ZeroPoints[{}]", info, channel);
      }
      const std::string holder = options_.io_in_arena ? arena_name(plan_.placements[lt_.tensor_buffer[b.tensor]].region) : "";
      if (input)
        s += fmt::format("\nvoid set_input_{}(const float* onnx_order, {}) {{\n  {}* q = {};\n", b.index,
                         options_.io_in_arena ? "std::uint8_t* " + holder : type + "* input", type, target);
      else
        s += fmt::format("\nvoid get_output_{}(float* onnx_order, {}) {{\n  const {}* q = {};\n", b.index,
                         options_.io_in_arena ? "const std::uint8_t* " + holder : "const " + type + "* output", type, target);
      std::string element =
          input ? fmt::format("q[{{m}}] = tightfit::quantize_linear<{}>(onnx_order[{{o}}], {}, {});", type, scale_text, zp_text)
                : fmt::format("onnx_order[{{o}}] = tightfit::dequantize_linear(q[{{m}}], {}, {});", scale_text, zp_text);
      if (t.dtype == DType::Float32)  // a float input or output of the model itself (DynamicQuantizeLinear): a copy
        element = input ? "q[{m}] = onnx_order[{o}];" : "onnx_order[{o}] = q[{m}];";
      if (t.layout == ir::Layout::ChannelsLast) {
        s += fmt::format("  constexpr std::int32_t N = {}, H = {}, W = {}, C = {};\n", t.shape[0], t.shape[1], t.shape[2], t.shape[3]);
        s += "  for (std::int32_t n = 0; n < N; ++n)\n    for (std::int32_t c = 0; c < C; ++c)\n"
             "      for (std::int32_t h = 0; h < H; ++h)\n        for (std::int32_t w = 0; w < W; ++w)\n          ";
        s += fmt::format(fmt::runtime(element), fmt::arg("m", "((n * H + h) * W + w) * C + c"),
                         fmt::arg("o", "((n * C + c) * H + h) * W + w"));
        s += "\n}\n";
      } else {
        s += fmt::format("  for (std::int32_t i = 0; i < {}; ++i) ", t.elements());
        s += fmt::format(fmt::runtime(element), fmt::arg("m", "i"), fmt::arg("o", "i"));
        s += "\n}\n";
      }
    }
    return s;
  }

  // With the inputs and outputs outside the arena, an output that is a view of an input (a model
  // that is one QuantizeLinear, say) lives in the caller's output buffer: copy it there.
  std::string io_copies() const {
    if (options_.io_in_arena) return "";
    std::string s;
    for (std::size_t k = 0; k < g_.outputs.size(); ++k)
      for (std::size_t j = 0; j < g_.inputs.size(); ++j) {
        if (root_[g_.outputs[k]] != root_[g_.inputs[j]]) continue;
        s += fmt::format("  // output {} is a view of input {}: copied into the caller's buffer\n", k, j);
        s += fmt::format("  for (std::size_t i = 0; i < {}; ++i) output_{}[i] = input_{}[i];\n", g_.tensors[g_.outputs[k]].elements(), k, j);
        break;
      }
    return s;
  }

  std::string source() const {
    std::string s;
    s += fmt::format("// Generated by tightfit {} from {}. Do not edit.\n", TIGHTFIT_VERSION, options_.model);
    s += "// Weights, tables and kernel parameters are constexpr: they stay in flash and are read in place.\n";
    s += fmt::format("#include \"{}.hpp\"\n\n#include <tightfit/kernels.hpp>\n\n", options_.name);
    s += fmt::format("namespace {} {{\nnamespace {{\n\n", options_.name);
    s += constants_;
    s += "\n}  // namespace\n\n";
    for (std::size_t r = 0; r < arenas_.size(); ++r) {
      const std::string section =
          arenas_[r].section.empty() ? "" : fmt::format(" __attribute__((section(\"{}\")))", arenas_[r].section);
      s += fmt::format("alignas(kArenaAlignment) std::uint8_t {}_storage[{}]{};\n", arena_name(static_cast<int>(r)),
                       std::max<std::uint64_t>(arenas_[r].bytes, 1), section);
    }
    s += fmt::format("\nvoid run({}) {{\n", run_parameters(false));
    s += body_;
    s += io_copies();
    if (body_.empty()) s += "  // every output is a view of an input: nothing to compute\n";
    for (std::size_t r = 0; r < arenas_.size(); ++r) s += fmt::format("  (void){};\n", arena_name(static_cast<int>(r)));
    s += "}\n";
    s += "\n#if defined(TIGHTFIT_PROFILE_STEPS)\n}  // namespace " + options_.name + "\n";
    s += "extern \"C\" void tightfit_step_begin(int step);\nextern \"C\" void tightfit_step_end(int step);\n";
    s += "namespace " + options_.name + " {\n";
    s += fmt::format("\nvoid run_profiled({}) {{\n", run_parameters(false));
    s += profiled_body_;
    s += io_copies();
    for (std::size_t r = 0; r < arenas_.size(); ++r) s += fmt::format("  (void){};\n", arena_name(static_cast<int>(r)));
    s += "}\n#endif\n";
    s += boundary_functions();
    s += fmt::format("\n}}  // namespace {}\n", options_.name);
    return s;
  }

  const Graph& g_;
  const schedule::Lifetimes& lt_;
  const plan::Plan& plan_;
  const std::vector<Arena>& arenas_;
  const EmitOptions& options_;
  const std::vector<TensorId> root_;
  bool backward_ = false;  // the node being emitted runs backwards
  std::string constants_;
  std::string body_;
  std::string profiled_body_;        // body_ with the step hooks
  std::vector<std::string> steps_;   // per kernel call: {node, op, macs} for kSteps
  std::uint64_t weights_bytes_ = 0;
  std::uint64_t schedule_bytes_ = 0;
  std::set<std::string> kernels_used_;
  std::uint64_t calls_ = 0;
};

}  // namespace

std::string arena_name(std::size_t region_count, const std::string& region) {
  return region_count == 1 ? "arena" : "arena_" + identifier(region);
}

std::uint64_t scratch_bytes(const ir::Graph&, const ir::Node&) {
  return 0;  // every kernel of the runtime works in its input and output buffers alone
}

schedule::OverlapDistances overlap_distance(const ir::Graph& g, const ir::Node& n, std::size_t input) {
  const Tensor &x = g.tensors[n.inputs[input]], &y = g.tensors[n.outputs[0]];
  std::int32_t distance = tightfit::kNoOverlap, up = tightfit::kNoOverlap;
  switch (n.op) {
    case OpKind::Conv:
      if (y.dtype != DType::Int32 && input == 0) {
        const tightfit::ConvParams p = conv_geometry(g, n);
        distance = tightfit::conv_distance(p);
        up = tightfit::conv_up_distance(p);
      }
      break;
    case OpKind::FullyConnected: {
      const Tensor& w = g.tensors[n.inputs[1]];
      if (y.dtype == DType::Int32 || w.shape.size() == 3 || input != 0) break;
      const std::int64_t k = w.shape[1];
      const tightfit::FullyConnectedParams p{i32(x.elements() / k), i32(k), i32(w.shape[0]), 0, 0, 0, 0, 0, 0};
      distance = tightfit::fully_connected_distance(p);
      up = tightfit::fully_connected_up_distance(p);
      break;
    }
    case OpKind::MaxPool: distance = tightfit::max_pool_distance(max_pool_params(g, n)); break;
    case OpKind::AveragePool: distance = tightfit::average_pool_distance(average_pool_params(g, n)); break;
    case OpKind::GlobalAveragePool: distance = tightfit::global_average_pool_distance({}); break;
    case OpKind::Add:
    case OpKind::Mul: {
      const std::optional<tightfit::BinaryShape> shape = binary_shape_of(g, n);
      if (shape) distance = tightfit::detail::binary_distance(*shape, static_cast<int>(input));
      break;
    }
    case OpKind::Sigmoid:
    case OpKind::Tanh:
    case OpKind::LeakyRelu:
    case OpKind::Requantize:
      distance = x.dtype == DType::Int32 ? tightfit::requantize_accumulator_distance() : tightfit::lookup_distance();
      break;
    case OpKind::Clamp: distance = tightfit::clamp_distance(); break;
    case OpKind::Softmax: distance = tightfit::softmax_distance(); break;
    default: break;
  }
  auto bytes = [](std::int32_t d) {
    return d == tightfit::kNoOverlap ? std::nullopt : std::optional<std::uint64_t>(static_cast<std::uint64_t>(d));
  };
  return {bytes(distance), bytes(up)};
}

EmittedCode emit_cpp(const ir::Graph& graph, const schedule::Lifetimes& lifetimes, const plan::Plan& plan,
                     const std::vector<Arena>& arenas, const EmitOptions& options) {
  return Emitter(graph, lifetimes, plan, arenas, options).run();
}

}  // namespace tightfit::emit
