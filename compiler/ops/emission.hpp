// The emitter's toolkit: what the emission of an operator (compiler/ops/<name>.cpp) works with.
// emit_cpp.cpp (the Emitter) walks the scheduled nodes and hands each to the emit rule of its
// operator (ops/operator.hpp), which writes the node's constants (weights, tables, a parameter
// block) and its kernel call through an Emission. Every Emission of one run shares one
// EmissionState.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <tightfit/host.hpp>

#include "ops/params_block.hpp"
#include "error.hpp"
#include "ops/operator.hpp"
#include "plan/planner.hpp"
#include "util/model_text.hpp"

namespace tightfit::emit {

using ir::DType;
using ir::Graph;
using ir::Node;
using ir::OpKind;
using ir::Tensor;
using ir::TensorId;

// One mutable array of the generated code: a planned region.
struct Arena {
  std::string region;   // the region's name
  std::uint64_t bytes;  // its planned peak
  std::string section;  // linker section, or empty for plain .bss
};

struct EmitOptions {
  std::string name;             // namespace and file stem
  std::string model;            // the source model, for the header comment
  std::string weights_section;  // empty: .rodata
  bool io_in_arena = true;
};

// The C++ name of a region's arena in the generated code ("<name>_storage" is its built-in array):
// "arena" when there is one region, else "arena_<region>".
std::string arena_name(std::size_t region_count, const std::string& region);

// C++ spelling of the element type of a tensor.
inline const char* ctype(DType t) {
  switch (t) {
    case DType::Int8:
      return "std::int8_t";
    case DType::UInt8:
      return "std::uint8_t";
    case DType::Int32:
      return "std::int32_t";
    case DType::Float32:
      return "float";
    case DType::Bool:
      return "bool";
  }
  return "?";
}

template <typename T>
inline std::vector<T> elements_of(const Tensor& t) {
  std::vector<T> v(t.data.size() / sizeof(T));
  std::memcpy(v.data(), t.data.data(), v.size() * sizeof(T));
  return v;
}

inline std::int32_t i32(std::int64_t v) { return static_cast<std::int32_t>(v); }

inline std::int64_t attr_or(const std::vector<std::int64_t>& v, std::size_t i, std::int64_t fallback) {
  return i < v.size() ? v[i] : fallback;
}

// Elements from one pixel of NHWC tensor `y` to the next as its producer writes it: its channel
// count, or the Concat output's when it is written in place (Tensor::slice_of).
inline std::int32_t pixel_stride_of(const Tensor& y) {
  return i32(y.slice_of != ir::kNoTensor ? y.slice_pixel_stride : y.shape.back());
}

// The geometry of a requantizing convolution: shapes, strides, dilations, pads and groups (the
// quantization fields left 0).
inline tightfit::ConvParams conv_geometry(const Graph& g, const Node& n) {
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
  p.out_stride = pixel_stride_of(y);
  return p;
}

// The fields every pool's block begins with (TIGHTFIT_POOL_WINDOW_PARAMS of params.hpp).
template <typename PoolParams>
void fill_pool_window(PoolParams& p, const Graph& g, const Node& n) {
  const Tensor &x = g.tensors[n.inputs[0]], &y = g.tensors[n.outputs[0]];
  const auto& a = n.attrs;
  p.batch = i32(x.shape[0]);
  p.in_h = i32(x.shape[1]), p.in_w = i32(x.shape[2]), p.channels = i32(x.shape[3]);
  p.out_h = i32(y.shape[1]), p.out_w = i32(y.shape[2]);
  p.kernel_h = i32(a.kernel_shape[0]), p.kernel_w = i32(a.kernel_shape[1]);
  p.stride_h = i32(attr_or(a.strides, 0, 1)), p.stride_w = i32(attr_or(a.strides, 1, 1));
}

inline tightfit::MaxPoolParams max_pool_params(const Graph& g, const Node& n) {
  const auto& a = n.attrs;
  tightfit::MaxPoolParams p{};
  fill_pool_window(p, g, n);
  p.dilation_h = i32(attr_or(a.dilations, 0, 1)), p.dilation_w = i32(attr_or(a.dilations, 1, 1));
  p.pad_top = i32(attr_or(a.pads, 0, 0)), p.pad_left = i32(attr_or(a.pads, 1, 0));
  return p;
}

inline tightfit::AveragePoolParams average_pool_params(const Graph& g, const Node& n) {
  const Tensor &x = g.tensors[n.inputs[0]], &y = g.tensors[n.outputs[0]];
  const auto& a = n.attrs;
  tightfit::AveragePoolParams p{};
  fill_pool_window(p, g, n);
  p.pad_top = i32(attr_or(a.pads, 0, 0)), p.pad_left = i32(attr_or(a.pads, 1, 0));
  p.pad_bottom = i32(attr_or(a.pads, 2, 0)), p.pad_right = i32(attr_or(a.pads, 3, 0));
  p.count_include_pad = a.count_include_pad ? 1 : 0;
  p.input_scale = x.quant.scale[0], p.input_zero_point = x.quant.zero_point[0];
  p.output_scale = y.quant.scale[0], p.output_zero_point = y.quant.zero_point[0];
  p.output_min = a.act_min, p.output_max = a.act_max;
  return p;
}

// The ONNX axis that memory axis `m` of a tensor holds (N, H, W, C of a channels-last tensor are
// ONNX axes 0, 2, 3, 1), and the memory axis of ONNX axis `a`.
inline std::size_t onnx_axis(const Tensor& t, std::size_t m) {
  constexpr std::size_t kChannelsLastToOnnx[] = {0, 2, 3, 1};
  return t.layout == ir::Layout::ChannelsLast ? kChannelsLastToOnnx[m] : m;
}
inline std::size_t memory_axis(const Tensor& t, std::size_t a) {
  constexpr std::size_t kOnnxToChannelsLast[] = {0, 3, 1, 2};
  return t.layout == ir::Layout::ChannelsLast ? kOnnxToChannelsLast[a] : a;
}

// Row-major element strides of a shape (in memory order).
inline std::vector<std::int64_t> strides_of(const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> s(shape.size(), 1);
  for (std::size_t d = shape.size(); d-- > 1;) s[d - 1] = s[d] * shape[d];
  return s;
}

// The broadcast of a binary node, or nullopt beyond 4 dimensions.
inline std::optional<tightfit::BinaryShape> binary_shape_of(const Graph& g, const Node& n) {
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

// The state of one emission, shared by every Emission working on it.
struct EmissionState {
  EmissionState(const Graph& g, const std::vector<int>& tensor_buffer, const std::vector<int>& node_scratch,
                const plan::Plan& plan, const std::vector<Arena>& arenas, const EmitOptions& options,
                std::vector<TensorId> root)
      : g_(g),
        tensor_buffer_(tensor_buffer),
        node_scratch_(node_scratch),
        plan_(plan),
        arenas_(arenas),
        options_(options),
        root_(std::move(root)) {}

  const Graph& g_;
  const std::vector<int>& tensor_buffer_;  // schedule::Lifetimes': each tensor's buffer, or -1
  const std::vector<int>& node_scratch_;   // and each node's scratch buffer, or -1
  const plan::Plan& plan_;
  const std::vector<Arena>& arenas_;
  const EmitOptions& options_;
  const std::vector<TensorId> root_;
  std::string constants_;
  std::string body_;
  std::string profiled_body_;       // body_ with the step hooks
  std::vector<std::string> steps_;  // per kernel call: {node, op, macs} for kSteps
  std::uint64_t weights_bytes_ = 0;
  std::uint64_t schedule_bytes_ = 0;
  std::set<std::string> kernels_used_;
  std::uint64_t calls_ = 0;
  bool backward_ = false;                      // the node being emitted runs backwards (its output above its input)
  std::map<std::string, std::string> arrays_;  // type and elements of each constant array -> its name
};

class Emission {
 public:
  explicit Emission(EmissionState& s) : state_(s) {}

  // ", true" in a kernel's template arguments when the node runs backwards: the plan put its
  // output above the input it overlaps (the up distance of kernels.hpp).
  std::string direction() const { return state_.backward_ ? ", true" : ""; }

  // ----- where tensors live -------------------------------------------------------------------

  std::string arena_name(int region) const {
    return emit::arena_name(state_.arenas_.size(), state_.arenas_[region].region);
  }

  // The C++ expression of a tensor's first element inside run().
  // A tensor lying in another (Tensor::slice_of: a Concat input written in place, a band of a
  // tiled stage's input or output, a Concat input in place in its band) starts inside it.
  std::string pointer(TensorId t) const {
    const Tensor& tensor = state_.g_.tensors[t];
    std::int64_t slice = 0;  // elements; a tensor may lie in one that lies in another
    for (const Tensor* in = &tensor; in->slice_of != ir::kNoTensor; in = &state_.g_.tensors[in->slice_of])
      slice += in->slice_offset;
    const int buffer = state_.tensor_buffer_[t];
    if (buffer >= 0) {
      const plan::Placement& at = state_.plan_.placements[buffer];
      return fmt::format("tightfit::at<{}>({}, {})", ctype(tensor.dtype), arena_name(at.region),
                         at.offset + static_cast<std::uint64_t>(slice) * ir::dtype_size(tensor.dtype));
    }
    const std::string past = slice ? fmt::format(" + {}", slice) : "";
    const TensorId r = state_.root_[t];
    for (std::size_t i = 0; i < state_.g_.inputs.size(); ++i)
      if (state_.root_[state_.g_.inputs[i]] == r)
        return fmt::format("const_cast<{}*>(input_{}){}", ctype(tensor.dtype), i, past);
    for (std::size_t i = 0; i < state_.g_.outputs.size(); ++i)
      if (state_.root_[state_.g_.outputs[i]] == r) return fmt::format("output_{}{}", i, past);
    throw Error(state_.g_.source + ": internal error: tensor '" + tensor.name + "' has no memory");
  }

  // The scratch buffer the plan gave node `n` (its operator's ScratchRule), as a pointer to
  // `type`, whose elements are `element_bytes` long.
  std::string scratch_pointer(const Node& n, const char* type, std::uint64_t element_bytes) const {
    const int buffer = state_.node_scratch_.at(static_cast<std::size_t>(&n - state_.g_.nodes.data()));
    if (buffer < 0) refuse(n, "internal error: the kernel needs scratch memory but none was planned");
    const plan::Placement& at = state_.plan_.placements[buffer];
    if (at.offset % element_bytes != 0)
      refuse(n, fmt::format("its scratch buffer lies at offset {}, not a multiple of {} (raise --alignment)", at.offset,
                            element_bytes));
    return fmt::format("tightfit::at<{}>({}, {})", type, arena_name(at.region), at.offset);
  }

  // ----- constant data ------------------------------------------------------------------------

  // A constant array in flash, named `name`; an array of the same type and elements written before
  // is used again instead (the bands of a tiled stage share their node's weights).
  template <typename T>
  std::string array(const std::string& name, const char* type, const std::vector<T>& values) {
    std::string elements;
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (i % 24 == 0) elements += "\n    ";
      if constexpr (std::is_same_v<T, float>) {
        elements += float_literal(values[i]) + ",";
      } else if constexpr (std::is_same_v<T, tightfit::QuantizedMultiplier>) {
        elements += fmt::format("{{{},{}}},", values[i].multiplier, values[i].shift);
      } else {
        elements += fmt::format("{},", static_cast<std::int64_t>(values[i]));
      }
    }
    const auto [written, fresh] = state_.arrays_.try_emplace(std::string(type) + elements, name);
    if (!fresh) return written->second;
    state_.weights_bytes_ += values.size() * sizeof(T);
    state_.constants_ +=
        fmt::format("alignas(16) constexpr {} {}[]{} = {{{}\n}};\n", type, name, weights_attribute(), elements);
    return name;
  }

  std::string weights_attribute() const {
    return state_.options_.weights_section.empty()
               ? ""
               : fmt::format(" __attribute__((section(\"{}\")))", state_.options_.weights_section);
  }

  // A constant tensor's integer elements (int8, uint8 or int32) as an array in flash.
  std::string tensor_array(const std::string& name, const Tensor& t) {
    switch (t.dtype) {
      case DType::Int8:
        return array(name, "std::int8_t", elements_of<std::int8_t>(t));
      case DType::UInt8:
        return array(name, "std::uint8_t", elements_of<std::uint8_t>(t));
      case DType::Int32:
        return array(name, "std::int32_t", elements_of<std::int32_t>(t));
      case DType::Float32:
        return array(name, "float", elements_of<float>(t));
      case DType::Bool:
        return array(name, "std::uint8_t", elements_of<std::uint8_t>(t));
    }
    throw Error(state_.g_.source + ": tensor '" + t.name + "': unknown dtype");
  }

  // The constexpr parameter block `name` of type P from its fields' text (params_block.hpp), or
  // from its value (a block with a pointer field needs the text: the pointer names an array).
  template <typename P>
  std::string params(const std::string& name, const ParamsText<P>& fields) {
    state_.constants_ +=
        fmt::format("constexpr tightfit::{} {} = {{{}}};\n", ParamsText<P>::kType, name, fields.initializer());
    state_.schedule_bytes_ += ParamsText<P>::kTargetBytes;
    return name;
  }
  template <typename P>
  std::string params(const std::string& name, const P& block) {
    return params(name, ParamsText<P>::of(block));
  }

  void call(const Node& n, const std::string& statement) {
    const std::string comment = model_text::cpp_comment(n.name) + " (" + model_text::cpp_comment(n.onnx_op) + ")";
    state_.body_ += fmt::format("  // {}\n  {};\n", comment, statement);
    // run_profiled(): the same calls between the step hooks (docs/codegen.md, "Per-step hooks").
    const std::size_t step = state_.steps_.size();
    state_.profiled_body_ += fmt::format("  // {}\n  tightfit_step_begin({});\n  {};\n  tightfit_step_end({});\n",
                                         comment, step, statement, step);
    state_.steps_.push_back(fmt::format("{{\"{}\", \"{}\", {}}}", model_text::cpp_string(n.name),
                                        model_text::cpp_string(n.onnx_op), ops::macs(state_.g_, n)));
    state_.kernels_used_.insert(ir::op_name(n.op));
    ++state_.calls_;
  }

  // ----- one node -----------------------------------------------------------------------------

  [[noreturn]] void refuse(const Node& n, const std::string& why) const {
    throw Error(state_.g_.source + ": " + n.name + " (" + n.onnx_op + "): " + why);
  }

  const Tensor& in(const Node& n, std::size_t i) const { return state_.g_.tensors[n.inputs[i]]; }
  const Tensor& out(const Node& n) const { return state_.g_.tensors[n.outputs[0]]; }
  std::string t_of(const Node& n) const { return ctype(in(n, 0).dtype); }

  void require_per_tensor(const Node& n, const Tensor& t) const {
    if (t.quant.per_channel() || t.quant.scale.size() != 1)
      refuse(n, "tensor '" + t.name + "' must be quantized per tensor");
  }

  // Kernels over one activation type T: every input (constants too) of the output's type.
  void require_one_type(const Node& n) const {
    for (std::size_t i = 0; i < n.inputs.size(); ++i)
      if (in(n, i).dtype != out(n).dtype)
        refuse(n, fmt::format("input '{}' is {} but the output is {}: one integer type is supported", in(n, i).name,
                              ir::dtype_name(in(n, i).dtype), ir::dtype_name(out(n).dtype)));
  }

  // The weights' single zero point (ORT's QLinearConv takes one even with per-channel scales).
  std::int32_t weight_zero_point(const Node& n, const Tensor& w) const {
    for (std::int32_t z : w.quant.zero_point)
      if (z != w.quant.zero_point[0]) refuse(n, "per-channel weight zero points must all be equal");
    return w.quant.zero_point[0];
  }

  // A requantizing convolution's parameters (Conv, ConvTranspose): conv_geometry() and the
  // quantization of its input, weights and output, with the fused clamp.
  tightfit::ConvParams conv_params(const Node& n) const {
    const Tensor &x = in(n, 0), &w = in(n, 1), &y = out(n);
    require_per_tensor(n, x);
    require_per_tensor(n, y);
    tightfit::ConvParams p = conv_geometry(state_.g_, n);
    p.input_zero_point = x.quant.zero_point[0];
    p.weight_zero_point = weight_zero_point(n, w);
    p.output_zero_point = y.quant.zero_point[0];
    p.output_min = n.attrs.act_min, p.output_max = n.attrs.act_max;
    p.per_channel = w.quant.scale.size() > 1 ? 1 : 0;
    return p;
  }

  std::vector<float> multipliers(const Tensor& x, const Tensor& w, const Tensor& y) const {
    std::vector<float> m;
    for (float ws : w.quant.scale) m.push_back(tightfit::conv_multiplier(x.quant.scale[0], ws, y.quant.scale[0]));
    return m;
  }

  bool tflite() const { return state_.g_.numerics == ir::Numerics::Tflite; }

  // The requantization multipliers of a convolution or fully connected node (one, or one per
  // output channel) as an array in flash: ORT's float ones, or TFLite's fixed-point ones.
  std::string multiplier_array(const std::string& id, const Tensor& x, const Tensor& w, const Tensor& y) {
    if (!tflite()) return array(id + "_multipliers", "float", multipliers(x, w, y));
    std::vector<tightfit::QuantizedMultiplier> m;
    for (float ws : w.quant.scale)
      m.push_back(tightfit::tflite_conv_multiplier(x.quant.scale[0], ws, y.quant.scale[0]));
    return array(id + "_multipliers", "tightfit::QuantizedMultiplier", m);
  }

  std::string bias_pointer(const std::string& id, const Node& n) {
    if (n.inputs.size() < 3 || n.inputs[2] == ir::kNoTensor) return "nullptr";
    return tensor_array(id + "_bias", in(n, 2));
  }

  tightfit::BinaryShape binary_shape(const Node& n) const {
    const std::optional<tightfit::BinaryShape> shape = binary_shape_of(state_.g_, n);
    if (!shape) refuse(n, "broadcasting over more than 4 dimensions is not supported");
    return *shape;
  }

  // A float island's node: every tensor float32, in ONNX's order (float tensors are never made
  // channels-last; an integer input of a Dequantize may be, and is refused unless the orders agree).
  void require_float(const Node& n, const std::vector<std::size_t>& float_inputs) const {
    std::vector<const Tensor*> all = {&out(n)};
    for (std::size_t i : float_inputs) all.push_back(&in(n, i));
    for (const Tensor* t : all)
      if (t->dtype != DType::Float32 || t->layout != ir::Layout::Logical)
        refuse(n, "tensor '" + t->name + "' must be a float32 tensor in ONNX's order");
  }

  // A float island's elementwise operator: tightfit::`kernel` (add_float, ...) over the broadcast.
  void float_binary(const std::string& id, const Node& n, const char* kernel) {
    require_float(n, {0, 1});
    const std::string block = params(id, binary_shape(n));
    const std::string pa = operand(id, n, 0), pb = operand(id, n, 1);
    call(n, fmt::format("tightfit::{}({}, {}, {}, {})", kernel, block, pa, pb, pointer(n.outputs[0])));
  }

  std::string operand(const std::string& id, const Node& n, std::size_t i) {
    const Tensor& t = in(n, i);
    return t.is_constant ? tensor_array(fmt::format("{}_operand{}", id, i), t) : pointer(n.inputs[i]);
  }

  static std::vector<std::int32_t> padded4(const std::vector<std::int64_t>& v, std::int64_t fill) {
    std::vector<std::int32_t> out(4, static_cast<std::int32_t>(fill));
    for (std::size_t i = 0; i < v.size(); ++i) out[4 - v.size() + i] = i32(v[i]);
    return out;
  }

  // One byte in, one byte out, through a 256-entry table (Sigmoid, Tanh, LeakyRelu, Requantize):
  // `build` fills the table for the input's and output's quantization (int8 when `is_signed`).
  using TableBuilder = std::function<void(bool is_signed, float x_scale, std::int32_t x_zero_point, float y_scale,
                                          std::int32_t y_zero_point, std::uint8_t table[256])>;
  void lookup(const std::string& id, const Node& n, const TableBuilder& build) {
    const Tensor &x = in(n, 0), &y = out(n);
    require_per_tensor(n, x);
    require_per_tensor(n, y);
    if (x.dtype != y.dtype) refuse(n, "input and output must have the same integer type");
    const float xs = x.quant.scale[0], ys = y.quant.scale[0];
    const std::int32_t xz = x.quant.zero_point[0], yz = y.quant.zero_point[0];
    std::uint8_t table[256];
    const bool s8 = x.dtype == DType::Int8;
    build(s8, xs, xz, ys, yz, table);
    // A fused clamp after the table: applied to the table's entries, where it is exact.
    for (std::uint8_t& e : table) {
      const std::int32_t v = s8 ? static_cast<std::int8_t>(e) : e;
      e = static_cast<std::uint8_t>(std::clamp(v, n.attrs.act_min, n.attrs.act_max));
    }
    const std::string t = array(id + "_table", "std::uint8_t", std::vector<std::uint8_t>(table, table + 256));
    call(n, fmt::format("tightfit::lookup<{}>({}, {}, {}, {})", t_of(n), t, pointer(n.inputs[0]), pointer(n.outputs[0]),
                        x.elements()));
  }

 protected:
  // The state of the emission, shared by every Emission working on it.
  EmissionState& state_;
};

}  // namespace tightfit::emit
