// What LSTM (ops/lstm.cpp) and GRU (ops/gru.cpp) share: ONNX's recurrent layers as ORT's
// quantizer leaves them, float, run as float32 kernels (runtime/include/tightfit/float_rnn.hpp).
//
// Supported: directions forward, reverse, bidirectional; layout 0; the default activations;
// sequence_lens absent or a constant equal to seq_length everywhere; W, R, B constants (float or
// dequantized; the weights stay in flash, read in place; B's two halves are added here, in float
// as ORT adds them); X and initial_h/initial_c a float island's value, a DequantizeLinear's, or a
// float graph input (the state a caller keeps between calls, as Silero VAD passes h and c);
// outputs Y, Y_h, Y_c float, each written only when the model reads it. Anything else: one line
// naming the attribute or input.
#pragma once

#include <string>
#include <vector>

#include "ops/emission.hpp"
#include "ops/translator.hpp"
#include "ops/operator.hpp"

namespace tightfit::ops::rnn {

using import::Shape;

struct Import : import::Translator {
  using Translator::Translator;

  // The node's input `index` as a float32 tensor; a float graph input as it is (it has no view).
  ir::TensorId float_input(const NodeProto& n, int index) {
    const import::Value& v = value(n.input(index));
    if (v.kind == import::Value::Kind::FloatInput && float_input_shape(n.input(index), v) == tensor(v.tensor).shape)
      return v.tensor;
    return float_operand(n, index);
  }

  // A constant input's elements: a float initializer's, or a dequantized constant's as ORT's
  // DequantizeLinear computes them.
  std::vector<float> constant_elements(const NodeProto& n, int index, const char* what, const Shape& shape) {
    const import::Value& v = value(n.input(index));
    std::vector<float> values;
    Shape dims;
    if (v.kind == import::Value::Kind::Constant) {
      values = import::tensor_floats(*v.constant);
      dims = import::tensor_dims(*v.constant);
    } else if (v.kind == import::Value::Kind::Dequantized && tensor(v.tensor).is_constant) {
      values = dequantized_elements(tensor(v.tensor));
      dims = tensor(v.tensor).shape;
    } else {
      throw Error(fmt::format("{} '{}' must be a constant (an initializer)", what, n.input(index)));
    }
    if (dims != shape)
      throw Error(fmt::format("{} '{}' has shape {}, not {}", what, n.input(index), import::shape_text(dims),
                              import::shape_text(shape)));
    return values;
  }

  // Translates an LSTM (gates 4) or GRU (gates 3). `fuse_bias` turns B's [directions, 2 * gates * H]
  // into the kernel's [directions, 4H].
  void translate(const NodeProto& n, ir::OpKind kind, int gates, const std::vector<std::string>& activations,
                 const std::vector<std::string>& attributes,
                 const std::function<std::vector<float>(const std::vector<float>&, std::int64_t, bool)>& fuse_bias) {
    allow_attributes_of(n, attributes);
    const std::string direction = string_attr(n, "direction", "forward");
    if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
      throw Error(fmt::format("attribute 'direction' is '{}'", direction));
    const std::int64_t directions = direction == "bidirectional" ? 2 : 1;
    if (int_attr(n, "layout", 0) != 0)
      throw Error("attribute 'layout' 1 (batch first) is not supported; only layout 0");
    if (find_attr(n, "clip")) throw Error("attribute 'clip' is not supported (only the default, no clip)");
    if (int_attr(n, "input_forget", 0) != 0) throw Error("attribute 'input_forget' 1 is not supported");
    for (const char* a : {"activation_alpha", "activation_beta"})
      if (find_attr(n, a))
        throw Error(fmt::format("attribute '{}' is not supported (only the default activations)", a));
    if (const auto* a = find_attr(n, "activations")) {
      std::vector<std::string> want;
      for (std::int64_t d = 0; d < directions; ++d) want.insert(want.end(), activations.begin(), activations.end());
      std::vector<std::string> got;
      for (const auto& s : a->strings()) {
        std::string lower = s;
        for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        got.push_back(lower);
      }
      if (got != want)
        throw Error("attribute 'activations' is not the default; only the default activations are supported");
    }

    const ir::TensorId x = float_input(n, 0);
    const Shape xs = tensor(x).shape;
    if (xs.size() != 3)
      throw Error(fmt::format("input X has shape {}, not [seq_length, batch, input_size]", import::shape_text(xs)));
    const std::int64_t hidden = int_attr(n, "hidden_size", 0);
    if (hidden < 1) throw Error("attribute 'hidden_size' is missing");
    const std::int64_t seq = xs[0], batch = xs[1], input_size = xs[2];

    const Shape ws = {directions, gates * hidden, input_size}, rs = {directions, gates * hidden, hidden};
    const ir::TensorId w = float_operand(n, 1), r = float_operand(n, 2);
    for (const auto& [t, shape, what] : {std::tuple{w, ws, "W"}, std::tuple{r, rs, "R"}}) {
      if (!tensor(t).is_constant) throw Error(fmt::format("{} must be a constant (an initializer)", what));
      if (tensor(t).shape != shape)
        throw Error(fmt::format("{} has shape {}, not {}", what, import::shape_text(tensor(t).shape),
                                import::shape_text(shape)));
    }
    const bool linear_before_reset = int_attr(n, "linear_before_reset", 0) != 0;
    ir::TensorId bias = ir::kNoTensor;
    if (has_input(n, 3)) {
      const std::vector<float> b = constant_elements(n, 3, "B", {directions, 2 * gates * hidden});
      const std::vector<float> fused = fuse_bias(b, hidden, linear_before_reset);
      bias = float_constant(n.input(3) + ":fused", {directions, 4 * hidden}, fused);
    }
    if (has_input(n, 4)) {
      const std::vector<std::int64_t> lens = constant_ints(n, 4);
      for (std::int64_t len : lens)
        if (len != seq)
          throw Error(fmt::format("input sequence_lens holds {}: only sequences of the whole length {} are supported",
                                  len, seq));
    }
    const Shape state = {directions, batch, hidden};
    std::vector<ir::TensorId> inputs = {x, w, r, bias};
    const int states = kind == ir::OpKind::LSTM ? 2 : 1;
    for (int i = 0; i < states; ++i) {
      if (!has_input(n, 5 + i)) {
        inputs.push_back(ir::kNoTensor);
        continue;
      }
      const ir::TensorId s = float_input(n, 5 + i);
      if (tensor(s).shape != state)
        throw Error(fmt::format("input '{}' has shape {}, not {}", n.input(5 + i), import::shape_text(tensor(s).shape),
                                import::shape_text(state)));
      inputs.push_back(s);
    }
    if (kind == ir::OpKind::LSTM && has_input(n, 7)) throw Error("input P (peepholes) is not supported");

    // Outputs: Y [seq, directions, batch, hidden], Y_h and Y_c [directions, batch, hidden]; one no
    // one reads is not written.
    ir::Node node;
    node.name = node_name(n);
    node.onnx_op = n.op_type() + " (float)";
    node.op = kind;
    node.inputs = inputs;
    node.attrs.reverse = direction == "reverse";
    node.attrs.linear_before_reset = linear_before_reset;
    for (int k = 0; k < 1 + states; ++k) {
      const bool used = k < n.output_size() && !n.output(k).empty() &&
                        (state_.graph_outputs_.count(n.output(k)) || state_.consumers_.count(n.output(k)));
      node.attrs.rnn_outputs.push_back(used);
      if (!used) continue;
      const ir::TensorId y = add_activation(n.output(k), ir::DType::Float32,
                                            k == 0 ? Shape{seq, directions, batch, hidden} : state, nullptr);
      set_value(n.output(k), import::Value{import::Value::Kind::Float, y, nullptr});
      node.outputs.push_back(y);
    }
    if (node.outputs.empty()) throw Error("none of its outputs is used");
    state_.out_.nodes.push_back(std::move(node));
  }

  // Like allow_attributes, from a list.
  static void allow_attributes_of(const NodeProto& n, const std::vector<std::string>& known) {
    for (const auto& a : n.attribute())
      if (std::find(known.begin(), known.end(), a.name()) == known.end())
        throw Error(fmt::format("unsupported attribute '{}'", a.name()));
  }
};

// The kernel's RnnParams and its operands, for a call `kernel(params, x, w, r, bias, states...,
// outputs..., scratch)`.
struct Emit : emit::Emission {
  using Emission::Emission;

  void call_kernel(const std::string& id, const ir::Node& n, const char* kernel, int states) {
    require_float(n, {0});
    const ir::Tensor &x = in(n, 0), &w = in(n, 1), &r = in(n, 2);
    const std::int64_t directions = w.shape[0], hidden = r.shape[2];
    tightfit::RnnParams p{};
    p.seq_length = emit::i32(x.shape[0]), p.batch = emit::i32(x.shape[1]), p.input_size = emit::i32(x.shape[2]);
    p.hidden_size = emit::i32(hidden), p.directions = emit::i32(directions);
    p.reverse = n.attrs.reverse ? 1 : 0, p.linear_before_reset = n.attrs.linear_before_reset ? 1 : 0;
    const std::string block = params(id, p);
    std::string args = fmt::format("{}, {}, {}, {}", block, pointer(n.inputs[0]), tensor_array(id + "_w", w),
                                   tensor_array(id + "_r", r));
    args += ", " + (n.inputs[3] != ir::kNoTensor ? tensor_array(id + "_bias", in(n, 3)) : std::string("nullptr"));
    for (int i = 0; i < states; ++i) {
      const ir::TensorId s = n.inputs[4 + static_cast<std::size_t>(i)];
      args += ", " + (s == ir::kNoTensor ? std::string("nullptr") : operand(id, n, 4 + static_cast<std::size_t>(i)));
    }
    std::size_t next = 0;
    for (bool used : n.attrs.rnn_outputs) args += ", " + (used ? pointer(n.outputs[next++]) : std::string("nullptr"));
    for (ir::TensorId y : n.outputs)
      if (state_.g_.tensors[y].dtype != ir::DType::Float32) refuse(n, "its outputs must be float32");
    call(n, fmt::format("tightfit::{}({}, {})", kernel, args, scratch_pointer(n, "float", 4)));
  }
};

// The kernel's scratch in bytes: `per_batch` states plus `rows` gate rows of hidden_size floats.
inline std::uint64_t scratch_bytes(const ir::Graph& g, const ir::Node& n, std::int64_t states, std::int64_t rows) {
  const std::int64_t batch = g.tensors[n.inputs[0]].shape[1], hidden = g.tensors[n.inputs[2]].shape[2];
  return static_cast<std::uint64_t>((states * batch + rows) * hidden * 4);
}

// Every step multiplies x by W and h by R, in each direction: X is [seq_length, batch, input].
inline std::int64_t macs(const ir::Graph& g, const ir::Node& n) {
  const ir::Tensor& x = g.tensors[n.inputs[0]];
  return x.shape[0] * x.shape[1] * (g.tensors[n.inputs[1]].elements() + g.tensors[n.inputs[2]].elements());
}

}  // namespace tightfit::ops::rnn
