#include "schedule/channels_last.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <string>

#include "error.hpp"
#include "ops/operator.hpp"

namespace tightfit::schedule {
namespace {

using ir::Graph;
using ir::Layout;
using ir::Node;
using ir::OpKind;
using ir::Tensor;
using ir::TensorId;

// Logical axis (N, C, H, W) -> its index in memory order (N, H, W, C), and back.
constexpr std::array<int, 4> kLogicalToMemory = {0, 3, 1, 2};
constexpr std::array<std::int64_t, 4> kToChannelsLast = {0, 2, 3, 1};   // a Transpose perm, NCHW -> NHWC
constexpr std::array<std::int64_t, 4> kToChannelsFirst = {0, 3, 1, 2};  // NHWC -> NCHW

bool is_image(const Tensor& t) { return !t.is_constant && t.shape.size() == 4 && t.dtype != ir::DType::Float32; }

// NCHW and NHWC put the elements of a [N, C, H, W] tensor in the same order exactly when one
// channel or one pixel makes the difference vanish.
bool orders_agree(const std::vector<std::int64_t>& nchw) { return nchw[1] == 1 || nchw[2] * nchw[3] == 1; }

std::string where(const Graph& g, const Node& n) { return g.source + ": " + n.name + " (" + n.onnx_op + ")"; }

// A Reshape node from `in` to `out`: a view, no bytes move (its clamp is the type's range).
Node make_view(const Graph& g, const std::string& name, const std::string& onnx_op, TensorId in, TensorId out) {
  Node n;
  n.name = name;
  n.onnx_op = onnx_op;
  n.op = OpKind::Reshape;
  n.inputs = {in};
  n.outputs = {out};
  n.attrs.act_min = static_cast<std::int32_t>(ir::dtype_range(g.tensors[in].dtype).min);
  n.attrs.act_max = static_cast<std::int32_t>(ir::dtype_range(g.tensors[in].dtype).max);
  return n;
}

// A view (a Reshape to the same shape: no bytes move) of tensor `of`, for a boundary that needs
// a tensor of its own.
TensorId add_boundary_view(Graph& g, std::vector<Node>& nodes, TensorId of, const std::string& suffix) {
  Tensor t = g.tensors[of];
  t.name += suffix;
  t.float_at_boundary = false;
  g.tensors.push_back(std::move(t));
  const TensorId view = static_cast<TensorId>(g.tensors.size() - 1);
  nodes.push_back(make_view(g, g.tensors[view].name, "Identity (boundary)", of, view));
  return view;
}

bool contains(const std::vector<TensorId>& ids, TensorId id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

// Removes the Quantize on a float graph input and the Dequantize on a float graph output: the
// integer tensor takes the float one's place at the boundary (those inside, at the ends of float
// islands, are kernels and stay). A tensor that would then be a
// float boundary on one side and an integer one on the other (a model that is only a
// QuantizeLinear or only a DequantizeLinear, or an integer output also given dequantized) gets a
// view for the second role, so that each boundary tensor says how the model passes it.
void take_float_edges_off_schedule(Graph& g) {
  std::vector<Node> kept;
  const std::vector<TensorId> model_inputs = g.inputs, model_outputs = g.outputs;
  for (Node& n : g.nodes) {
    if (n.op == OpKind::Quantize) {
      auto in = std::find(g.inputs.begin(), g.inputs.end(), n.inputs[0]);
      // A float input that float kernels read too stays float32 in the arena; its QuantizeLinear
      // is then a kernel like an island's end.
      const bool read_in_float = std::count_if(g.nodes.begin(), g.nodes.end(),
                                               [&](const Node& m) { return contains(m.inputs, n.inputs[0]); }) > 1;
      if (in == g.inputs.end() || read_in_float) {  // the end of a float island: a kernel
        kept.push_back(std::move(n));
        continue;
      }
      const TensorId q = n.outputs[0];
      TensorId boundary = q;
      if (g.tensors[n.inputs[0]].shape != g.tensors[q].shape) {
        // The QuantizeLinear read a view of the input (a Flatten before it: docs/operators.md,
        // "Float at the edges"): the caller passes the input under its own shape, and the view of
        // its integer values costs nothing.
        Tensor t = g.tensors[q];
        t.name = g.tensors[n.inputs[0]].name;
        t.shape = g.tensors[n.inputs[0]].shape;
        g.tensors.push_back(std::move(t));
        boundary = static_cast<TensorId>(g.tensors.size() - 1);
        kept.push_back(make_view(g, g.tensors[q].name + ":view", "Reshape (view of the input)", boundary, q));
      }
      *in = boundary;
      g.tensors[boundary].float_at_boundary = true;
      for (TensorId& out : g.outputs)  // the quantized input is also an integer output
        if (out == boundary) out = add_boundary_view(g, kept, boundary, ":output");
      continue;
    }
    if (n.op == OpKind::Dequantize) {
      auto out = std::find(g.outputs.begin(), g.outputs.end(), n.outputs[0]);
      const bool read =
          std::any_of(g.nodes.begin(), g.nodes.end(), [&](const Node& m) { return contains(m.inputs, n.outputs[0]); });
      if (out == g.outputs.end() || read) {  // the start of a float island: a kernel
        kept.push_back(std::move(n));
        continue;
      }
      TensorId q = n.inputs[0];
      if (contains(model_inputs, q) || contains(model_outputs, q) || g.tensors[q].float_at_boundary)
        q = add_boundary_view(g, kept, q, ":dequantized");
      *out = q;
      g.tensors[q].float_at_boundary = true;
      continue;
    }
    kept.push_back(std::move(n));
  }
  g.nodes = std::move(kept);
}

// A new activation tensor in ONNX's order, for a Transpose inserted around a Reshape.
TensorId add_logical_copy(Graph& g, TensorId of, const std::string& suffix) {
  Tensor t = g.tensors[of];
  t.name += suffix;
  t.float_at_boundary = false;
  g.tensors.push_back(std::move(t));
  return static_cast<TensorId>(g.tensors.size() - 1);
}

Node make_transpose(const Graph& g, const std::string& name, TensorId in, TensorId out,
                    const std::array<std::int64_t, 4>& perm) {
  Node t;
  t.name = name;
  t.onnx_op = "Transpose (layout)";
  t.op = OpKind::Transpose;
  t.inputs = {in};
  t.outputs = {out};
  t.attrs.perm.assign(perm.begin(), perm.end());
  t.attrs.act_min = static_cast<std::int32_t>(ir::dtype_range(g.tensors[in].dtype).min);
  t.attrs.act_max = static_cast<std::int32_t>(ir::dtype_range(g.tensors[in].dtype).max);
  return t;
}

// Permutes a constant operand of an elementwise op (broadcast against an image) to NHWC.
void constant_to_channels_last(Tensor& t) {
  const int missing_axes = static_cast<int>(4 - t.shape.size());
  std::vector<std::int64_t> nchw = t.shape;
  while (nchw.size() < 4) nchw.insert(nchw.begin(), 1);  // numpy broadcasting aligns on the right
  const std::int64_t n = nchw[0], c = nchw[1], h = nchw[2], w = nchw[3];
  const std::size_t es = ir::dtype_size(t.dtype);
  std::vector<std::uint8_t> out(t.data.size());
  for (std::int64_t in = 0; in < n; ++in)
    for (std::int64_t ic = 0; ic < c; ++ic)
      for (std::int64_t ih = 0; ih < h; ++ih)
        for (std::int64_t iw = 0; iw < w; ++iw) {
          const std::int64_t src = ((in * c + ic) * h + ih) * w + iw;
          const std::int64_t dst = ((in * h + ih) * w + iw) * c + ic;
          std::memcpy(&out[dst * es], &t.data[src * es], es);
        }
  t.data = std::move(out);
  t.shape = {n, h, w, c};
  t.layout = Layout::ChannelsLast;
  if (t.quant.per_channel()) t.quant.axis = kLogicalToMemory[t.quant.axis + missing_axes];
}

// The permutation of memory axes that a logical Transpose becomes when its operands' layouts are
// known: output memory axis i reads input memory axis p[i].
std::vector<std::int64_t> memory_perm(const std::vector<std::int64_t>& logical_perm, bool in_cl, bool out_cl) {
  const std::size_t rank = logical_perm.size();
  std::vector<std::int64_t> p(rank);
  for (std::size_t i = 0; i < rank; ++i) {
    // Memory axis i of a channels-last tensor holds logical axis (N, H, W, C)[i].
    const std::size_t out_logical = out_cl ? static_cast<std::size_t>(kToChannelsLast[i]) : i;
    const std::int64_t in_logical = logical_perm[out_logical];
    p[i] = in_cl ? kLogicalToMemory[in_logical] : in_logical;
  }
  return p;
}

// The flatten of a channels-last image [N, C, H, W] to [N, C*H*W] (or [N, C*H*W, 1, 1]) costs no
// copy when its only readers multiply it by constant weights, a FullyConnected or a 1x1 Conv: the
// weights' columns are permuted at compile time to the order the image lies in (column
// (h*W + w)*C + c takes ONNX's column c*H*W + h*W + w), and the flatten becomes a view. Returns
// the readers' nodes (as indices into g.nodes, after the Reshape's `at`), or none when a reader
// cannot absorb it.
std::vector<std::size_t> readers_absorbing_flatten(const Graph& g, std::size_t at) {
  const Node& reshape = g.nodes[at];
  const Tensor& x = g.tensors[reshape.inputs[0]];
  const TensorId out = reshape.outputs[0];
  const Tensor& y = g.tensors[out];
  const std::int64_t n = x.shape[0], k = x.shape[1] * x.shape[2] * x.shape[3];
  if (y.shape != std::vector<std::int64_t>{n, k} && y.shape != std::vector<std::int64_t>{n, k, 1, 1}) return {};
  if (contains(g.outputs, out)) return {};
  std::vector<std::size_t> readers;
  for (std::size_t i = at + 1; i < g.nodes.size(); ++i) {
    const Node& r = g.nodes[i];
    if (!contains(r.inputs, out)) continue;
    if (r.inputs[0] != out || r.inputs.size() < 2 || std::count(r.inputs.begin(), r.inputs.end(), out) != 1) return {};
    const bool pointwise_conv =
        r.op == OpKind::Conv && r.attrs.group == 1 && r.attrs.kernel_shape == std::vector<std::int64_t>{1, 1} &&
        r.attrs.strides == std::vector<std::int64_t>{1, 1} && r.attrs.pads == std::vector<std::int64_t>{0, 0, 0, 0};
    if (r.op != OpKind::FullyConnected && !pointwise_conv) return {};
    const Tensor& w = g.tensors[r.inputs[1]];
    if (!w.is_constant || w.shape.size() < 2 || w.shape[1] != k || w.elements() != w.shape[0] * k) return {};
    readers.push_back(i);
  }
  return readers;
}

// A copy of constant weights [M, K, ...] whose K columns are in the order of a channels-last
// image [N, C, H, W] flattened (K = C*H*W): see readers_absorbing_flatten.
TensorId add_columns_in_pixel_order(Graph& g, TensorId weights, const std::vector<std::int64_t>& nchw) {
  Tensor w = g.tensors[weights];
  w.name += ":columns_nhwc";
  const std::int64_t c = nchw[1], hw = nchw[2] * nchw[3], k = c * hw, rows = w.shape[0];
  const std::size_t es = ir::dtype_size(w.dtype);
  std::vector<std::uint8_t> data(w.data.size());
  for (std::int64_t m = 0; m < rows; ++m)
    for (std::int64_t ic = 0; ic < c; ++ic)
      for (std::int64_t p = 0; p < hw; ++p)
        std::memcpy(&data[(m * k + p * c + ic) * es], &w.data[(m * k + ic * hw + p) * es], es);
  w.data = std::move(data);
  g.tensors.push_back(std::move(w));
  return static_cast<TensorId>(g.tensors.size() - 1);
}

bool is_identity(const std::vector<std::int64_t>& perm) {
  for (std::size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<std::int64_t>(i)) return false;
  return true;
}

// The operands of an elementwise node whose output is channels-last: its constants laid out alike
// (they broadcast in memory order); an activation of fewer dimensions cannot be.
void broadcast_operands_channels_last(Graph& g, const Node& n, const std::vector<bool>& cl) {
  for (TensorId id : n.inputs) {
    Tensor& t = g.tensors[id];
    if (t.is_constant) {
      if (t.layout != Layout::ChannelsLast) constant_to_channels_last(t);
    } else if (!cl[id]) {
      throw Error(where(g, n) + ": broadcasting a " + std::to_string(t.shape.size()) +
                  "-D activation onto a 4-D one is not supported");
    }
  }
}

}  // namespace

void to_channels_last(Graph& g) {
  take_float_edges_off_schedule(g);

  // Decide first, on the logical shapes; rewrite shapes at the end.
  std::vector<bool> cl(g.tensors.size(), false);
  for (std::size_t i = 0; i < g.tensors.size(); ++i) cl[i] = is_image(g.tensors[i]);
  auto is_cl = [&](TensorId id) { return id != ir::kNoTensor && id < static_cast<TensorId>(cl.size()) && cl[id]; };

  std::vector<Node> nodes;
  for (Node& n : g.nodes) {
    const bool in_cl = !n.inputs.empty() && is_cl(n.inputs[0]);
    const bool out_cl = !n.outputs.empty() && is_cl(n.outputs[0]);
    switch (ops::of(n.op).layout) {
      case ops::LayoutRule::axis_attribute:
        if (out_cl) n.attrs.axis = kLogicalToMemory[n.attrs.axis];
        break;
      case ops::LayoutRule::pads_attribute:
        if (out_cl) {
          const auto& p = n.attrs.pads;  // [begin N, C, H, W, end N, C, H, W]
          n.attrs.pads = {p[0], p[2], p[3], p[1], p[4], p[6], p[7], p[5]};
        }
        break;
      case ops::LayoutRule::scales_attribute:
        if (out_cl) {
          const auto& s = n.attrs.scales;
          n.attrs.scales = {s[0], s[2], s[3], s[1]};
        }
        break;
      case ops::LayoutRule::broadcast_operands:
        if (out_cl) broadcast_operands_channels_last(g, n, cl);
        break;
      case ops::LayoutRule::permutation: {
        n.attrs.perm = memory_perm(n.attrs.perm, in_cl, out_cl);
        if (is_identity(n.attrs.perm)) n.op = OpKind::Reshape;  // nothing moves: a view
        break;
      }
      case ops::LayoutRule::view: {
        // A view to the very same shape (a boundary view) has the same layout on both sides.
        if (g.tensors[n.inputs[0]].shape == g.tensors[n.outputs[0]].shape) break;
        if (in_cl && !orders_agree(g.tensors[n.inputs[0]].shape)) {
          const auto at = static_cast<std::size_t>(&n - g.nodes.data());
          const std::vector<std::size_t> readers = readers_absorbing_flatten(g, at);
          if (!readers.empty()) {
            const std::vector<std::int64_t> nchw = g.tensors[n.inputs[0]].shape;
            for (std::size_t r : readers) {
              g.nodes[r].inputs[1] = add_columns_in_pixel_order(g, g.nodes[r].inputs[1], nchw);
              cl.push_back(false);
            }
            break;  // a view of the image's bytes as they lie
          }
        }
        // add_logical_copy grows g.tensors: no references into it are held across these calls.
        if (in_cl && !orders_agree(g.tensors[n.inputs[0]].shape)) {
          const TensorId logical = add_logical_copy(g, n.inputs[0], ":nchw");
          cl.push_back(false);
          nodes.push_back(make_transpose(g, n.name + ":to_nchw", n.inputs[0], logical, kToChannelsFirst));
          n.inputs[0] = logical;
        }
        if (out_cl && !orders_agree(g.tensors[n.outputs[0]].shape)) {
          const TensorId final_out = n.outputs[0];
          const TensorId logical = add_logical_copy(g, final_out, ":nchw");
          cl.push_back(false);
          n.outputs[0] = logical;
          nodes.push_back(n);
          nodes.push_back(make_transpose(g, n.name + ":to_nhwc", logical, final_out, kToChannelsLast));
          continue;
        }
        break;
      }
      case ops::LayoutRule::logical_order: {
        // A MatMul on a 4-D activation (openWakeWord's mel filterbank on [1, 1, frames, bins])
        // multiplies the rows of its ONNX order: it reads and writes tensors in that order, each
        // a view of the channels-last one where the two orders agree, else a layout transpose.
        auto layout_change = [&](const std::string& name, TensorId in, TensorId out, TensorId logical,
                                 const std::array<std::int64_t, 4>& perm) {
          return orders_agree(g.tensors[logical].shape) ? make_view(g, name, "Reshape (layout)", in, out)
                                                        : make_transpose(g, name, in, out, perm);
        };
        if (in_cl) {
          const TensorId logical = add_logical_copy(g, n.inputs[0], ":nchw");
          cl.push_back(false);
          nodes.push_back(layout_change(n.name + ":to_nchw", n.inputs[0], logical, logical, kToChannelsFirst));
          n.inputs[0] = logical;
        }
        if (out_cl) {
          const TensorId final_out = n.outputs[0];
          const TensorId logical = add_logical_copy(g, final_out, ":nchw");
          cl.push_back(false);
          n.outputs[0] = logical;
          nodes.push_back(n);
          nodes.push_back(layout_change(n.name + ":to_nhwc", logical, final_out, logical, kToChannelsLast));
          continue;
        }
        break;
      }
      case ops::LayoutRule::as_it_comes:
      case ops::LayoutRule::unstated:  // operators() refuses it
        break;
    }
    nodes.push_back(std::move(n));
  }
  g.nodes = std::move(nodes);

  for (std::size_t i = 0; i < g.tensors.size(); ++i) {
    if (!cl[i]) continue;
    Tensor& t = g.tensors[i];
    t.shape = {t.shape[0], t.shape[2], t.shape[3], t.shape[1]};
    t.layout = Layout::ChannelsLast;
  }
}

}  // namespace tightfit::schedule
