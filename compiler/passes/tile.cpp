// Patch-based execution (MCUNetV2, NeurIPS 2021), in horizontal bands: a stage of row-local nodes
// (convolutions, pools, per-element tables and clamps, elementwise Add/Mul, channel Concat) runs
// band by band, so that only one band of each activation inside the stage is live at a time
// instead of the whole image. Run on the scheduled, channels-last graph (NHWC, batch 1).
//
// A stage has one input (read by any of its nodes) and one output (its last node's); every other
// tensor it makes is read inside it alone. For a band [a, b) of the output's rows, each node, last
// to first, needs the input rows its windows read: output row o of a node with stride s, top pad
// p, kernel k and dilation d reads input rows o*s - p + i*d (i < k), so rows [a, b) read
// [max(0, a*s - p), min(H, (b-1)*s - p + (k-1)*d + 1)); per-element nodes and Concat read the rows
// they write. A tensor read by several nodes of the stage (a residual's input, a fire module's
// squeeze) is made for the rows they need together, each reading its own rows of it in place.
// Neighbouring bands share halo rows: read twice (the stage's input) or computed twice (the
// others), which is the technique's cost, counted in MACs. A band's node keeps the real padding
// where the band touches the image's edge and has none inside it: its top pad is what is left of p
// above its first input row (the kernels read the bottom pad from the output's size). Each output
// row is so computed from the same input rows, weights and arithmetic as untiled: bit-exact.
//
// In the graph, the nodes of each band read their rows of the stage's input in place (tensors
// lying in it, ir::Tensor::slice_of), a Concat input written in place stays in place in its band
// of the Concat, and the last node writes its rows in place into the stage's output, which a
// Concat along H of the bands' outputs, all in place, then produces with no copy. The bands' nodes
// replace the stage's at the position of its last node, band after band.
#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "passes/passes.hpp"
#include "passes/uses.hpp"

namespace tightfit::passes {

namespace {

std::int64_t at_or(const std::vector<std::int64_t>& v, std::size_t i, std::int64_t fallback) {
  return i < v.size() ? v[i] : fallback;
}

bool is_image(const ir::Tensor& t) {
  return !t.is_constant && t.layout == ir::Layout::ChannelsLast && t.shape.size() == 4 && t.shape[0] == 1 &&
         (t.dtype == ir::DType::Int8 || t.dtype == ir::DType::UInt8);
}

// The vertical window of a node: output row o reads input rows o*stride - pad + i*dilation, i < kernel.
struct RowWindow {
  std::int64_t kernel = 1, stride = 1, dilation = 1, pad_top = 0;
};

// The window through which a row-local node reads its activation inputs (all alike), or none for
// a node that cannot run in bands: a convolution (any group count), a max pool (its windows are
// clipped to the image in either ceil mode), an average pool (not in ceil mode, whose last
// window's divisor ORT counts apart), a per-element operator of one activation input, an Add or
// Mul of two activations of the output's shape, or a Concat of images along their channels.
std::optional<RowWindow> row_window(const ir::Graph& g, const ir::Node& n) {
  if (n.outputs.size() != 1 || n.inputs.empty() || !is_image(g.tensors[n.outputs[0]])) return std::nullopt;
  const ir::Tensor& y = g.tensors[n.outputs[0]];
  std::size_t activations = 0;
  for (const ir::TensorId t : n.inputs) {
    if (t == ir::kNoTensor || g.tensors[t].is_constant) continue;
    if (!is_image(g.tensors[t])) return std::nullopt;
    ++activations;
  }
  const bool first_is_activation = n.inputs[0] != ir::kNoTensor && !g.tensors[n.inputs[0]].is_constant;
  const ir::Attrs& a = n.attrs;
  switch (n.op) {
    case ir::OpKind::Conv:
      if (activations != 1 || !first_is_activation) return std::nullopt;
      return RowWindow{g.tensors[n.inputs[1]].shape[2], at_or(a.strides, 0, 1), at_or(a.dilations, 0, 1),
                       at_or(a.pads, 0, 0)};
    case ir::OpKind::AveragePool:
      if (a.ceil_mode) return std::nullopt;
      [[fallthrough]];
    case ir::OpKind::MaxPool:
      if (n.inputs.size() != 1 || activations != 1) return std::nullopt;
      return RowWindow{a.kernel_shape[0], at_or(a.strides, 0, 1), at_or(a.dilations, 0, 1), at_or(a.pads, 0, 0)};
    case ir::OpKind::LeakyRelu:
    case ir::OpKind::Sigmoid:
    case ir::OpKind::Tanh:
    case ir::OpKind::HardSigmoid:
    case ir::OpKind::HardSwish:
    case ir::OpKind::Clamp:
    case ir::OpKind::Requantize:
      if (n.inputs.size() != 1 || activations != 1) return std::nullopt;
      return RowWindow{};
    case ir::OpKind::Add:
    case ir::OpKind::Mul:
      if (n.inputs.size() != 2 || activations != 2) return std::nullopt;
      for (const ir::TensorId t : n.inputs)
        if (g.tensors[t].shape != y.shape) return std::nullopt;
      return RowWindow{};
    case ir::OpKind::Concat:
      if (a.axis != 3 || activations != n.inputs.size()) return std::nullopt;
      return RowWindow{};
    default:
      return std::nullopt;
  }
}

// Rows [first, last) of a tensor.
struct Rows {
  std::int64_t first = 0, last = 0;
  bool empty() const { return last <= first; }
};

Rows hull(Rows a, Rows b) {
  if (a.empty()) return b;
  return {std::min(a.first, b.first), std::max(a.last, b.last)};
}

// The input rows that output rows `out` of a node read, and the node's pads in the band.
struct BandInput {
  Rows rows;
  std::int64_t pad_top = 0, pad_bottom = 0;
};

BandInput band_input(const RowWindow& w, Rows out, std::int64_t in_height) {
  const std::int64_t reach = (w.kernel - 1) * w.dilation + 1;
  const std::int64_t first = out.first * w.stride - w.pad_top;  // may lie in the top padding
  const std::int64_t end = (out.last - 1) * w.stride - w.pad_top + reach;
  BandInput in;
  in.rows = {std::max<std::int64_t>(0, first), std::min(in_height, end)};
  in.pad_top = in.rows.first - first;
  in.pad_bottom = end - in.rows.last;
  return in;
}

// A stage checked: its nodes (indices, schedule order) with their windows, its input and output.
struct StageShape {
  std::vector<int> nodes;
  std::vector<RowWindow> windows;
  ir::TensorId input = ir::kNoTensor, output = ir::kNoTensor;
};

// Whether `nodes` (indices in schedule order) form a stage (the top of this file says what that is).
std::optional<StageShape> stage_shape(const ir::Graph& g, const TensorUses& uses, const std::vector<int>& nodes) {
  if (nodes.size() < 2) return std::nullopt;
  StageShape s;
  s.nodes = nodes;
  std::set<ir::TensorId> made;  // by the stage
  for (const int v : nodes) {
    const std::optional<RowWindow> w = row_window(g, g.nodes[v]);
    if (!w) return std::nullopt;
    s.windows.push_back(*w);
    for (const ir::TensorId t : g.nodes[v].inputs) {
      if (t == ir::kNoTensor || g.tensors[t].is_constant || made.count(t)) continue;
      if (s.input != ir::kNoTensor && s.input != t) return std::nullopt;  // a second input from outside
      s.input = t;
    }
    made.insert(g.nodes[v].outputs[0]);
  }
  s.output = g.nodes[nodes.back()].outputs[0];
  if (s.input == ir::kNoTensor || g.tensors[s.output].slice_of != ir::kNoTensor) return std::nullopt;
  const ir::Tensor& x = g.tensors[s.input];
  if (x.slice_of != ir::kNoTensor && x.slice_pixel_stride != x.shape[3]) return std::nullopt;  // its rows are no block
  // Every other tensor it makes is read inside it alone, and lies, if in another, in one it makes.
  std::vector<int> readers_inside(g.tensors.size(), 0);
  for (const int v : nodes)
    for (const ir::TensorId t : g.nodes[v].inputs)
      if (t != ir::kNoTensor) ++readers_inside[t];
  for (const ir::TensorId t : made) {
    if (t == s.output) continue;
    if (readers_inside[t] == 0 || readers_inside[t] != uses.readers[t]) return std::nullopt;
    if (g.tensors[t].slice_of != ir::kNoTensor && !made.count(g.tensors[t].slice_of)) return std::nullopt;
  }
  return s;
}

}  // namespace

std::optional<Stage> stage_of_steps(const ir::Graph& g, int first, int last) {
  std::vector<int> nodes;
  for (int v = first; v <= last; ++v) nodes.push_back(v);
  if (first < 0 || last >= static_cast<int>(g.nodes.size()) || !stage_shape(g, tensor_uses(g), nodes)) return std::nullopt;
  Stage stage;
  for (const int v : nodes) stage.nodes.push_back(g.nodes[v].name);
  return stage;
}

std::optional<TiledStage> tile_stage(ir::Graph& g, const Stage& stage) {
  std::map<std::string, int> index;
  for (std::size_t v = 0; v < g.nodes.size(); ++v) index[g.nodes[v].name] = static_cast<int>(v);
  std::vector<int> nodes;
  for (const std::string& name : stage.nodes) {
    const auto it = index.find(name);
    if (it == index.end() || (!nodes.empty() && it->second <= nodes.back())) return std::nullopt;
    nodes.push_back(it->second);
  }
  const std::optional<StageShape> shape = stage_shape(g, tensor_uses(g), nodes);
  if (!shape || stage.tiles < 2) return std::nullopt;
  const std::size_t k = nodes.size();
  const ir::TensorId output = shape->output;
  const std::int64_t height = g.tensors[output].shape[1];
  if (stage.tiles > height) return std::nullopt;

  // Per band: the rows of each tensor the stage makes or reads, and what each node reads of them.
  struct Band {
    std::map<ir::TensorId, Rows> rows;
    std::vector<std::vector<BandInput>> inputs;  // per node, per input slot
  };
  std::vector<Band> bands(static_cast<std::size_t>(stage.tiles));
  for (int b = 0; b < stage.tiles; ++b) {
    Band& band = bands[static_cast<std::size_t>(b)];
    band.rows[output] = {height * b / stage.tiles, height * (b + 1) / stage.tiles};
    band.inputs.resize(k);
    for (std::size_t j = k; j-- > 0;) {
      const ir::Node& n = g.nodes[nodes[j]];
      const Rows out = band.rows[n.outputs[0]];
      if (out.empty()) return std::nullopt;  // nothing of it is needed in this band
      band.inputs[j].resize(n.inputs.size());
      for (std::size_t i = 0; i < n.inputs.size(); ++i) {
        const ir::TensorId t = n.inputs[i];
        if (t == ir::kNoTensor || g.tensors[t].is_constant) continue;
        BandInput& in = band.inputs[j][i];
        in = band_input(shape->windows[j], out, g.tensors[t].shape[1]);
        if (in.rows.empty()) return std::nullopt;
        band.rows[t] = hull(band.rows[t], in.rows);
      }
    }
    // A tensor written in place into a Concat of the stage has exactly the Concat's rows; one read
    // in part lies in a buffer of its own (its readers read their rows of it in place).
    for (std::size_t j = 0; j < k; ++j)
      for (std::size_t i = 0; i < g.nodes[nodes[j]].inputs.size(); ++i) {
        const ir::TensorId t = g.nodes[nodes[j]].inputs[i];
        if (t == ir::kNoTensor || g.tensors[t].is_constant || t == shape->input) continue;
        const Rows& read = band.inputs[j][i].rows;
        const bool part = read.first != band.rows[t].first || read.last != band.rows[t].last;
        if (g.tensors[t].slice_of != ir::kNoTensor && part) return std::nullopt;
      }
  }

  // The stage's input rows are read in place from the tensor that holds its bytes.
  const ir::Tensor x = g.tensors[shape->input];  // a copy: adding tensors moves them
  ir::TensorId holder = shape->input;
  std::int64_t holder_offset = 0;
  if (x.slice_of != ir::kNoTensor) {
    holder = x.slice_of;
    holder_offset = x.slice_offset;
  }

  TiledStage result;
  result.stage = stage;
  result.input = x.name;
  result.output = g.tensors[output].name;
  for (const int v : nodes) result.macs += g.macs(g.nodes[v]);

  auto add_tensor = [&g](ir::Tensor t) {
    g.tensors.push_back(std::move(t));
    return static_cast<ir::TensorId>(g.tensors.size() - 1);
  };
  auto rows_name = [](const std::string& name, Rows r) {
    return fmt::format("{} [rows {}-{}]", name, r.first, r.last - 1);
  };
  // Rows `r` of tensor `of` (of the stage), lying in tensor `in` from element `offset` on.
  auto view = [&](const ir::Tensor& of, ir::TensorId in, std::int64_t offset, Rows r) {
    ir::Tensor t = of;
    t.name = rows_name(of.name, r);
    t.shape[1] = r.last - r.first;
    t.slice_of = in;
    t.slice_offset = offset;
    t.slice_pixel_stride = of.shape[3];
    return add_tensor(std::move(t));
  };

  std::vector<ir::Node> band_nodes;
  ir::Node concat;
  concat.name = g.nodes[nodes.back()].name + " [bands]";
  concat.onnx_op = "row bands of a tiled stage";
  concat.op = ir::OpKind::Concat;
  concat.attrs.axis = 1;
  concat.outputs = {output};
  for (int b = 0; b < stage.tiles; ++b) {
    const Band& band = bands[static_cast<std::size_t>(b)];
    const std::string band_name = fmt::format("band {}/{}", b + 1, stage.tiles);
    // The band of every tensor the stage makes, then where those written in place lie: the
    // stage's output, or their Concat's band.
    std::map<ir::TensorId, ir::TensorId> made;
    for (const int v : nodes) {
      const ir::TensorId y_id = g.nodes[v].outputs[0];
      ir::Tensor y = g.tensors[y_id];
      const Rows rows = band.rows.at(y_id);
      y.name = rows_name(y.name, rows);
      y.shape[1] = rows.last - rows.first;
      if (y_id == output) {
        y.slice_of = output;
        y.slice_offset = rows.first * y.shape[2] * y.shape[3];
        y.slice_pixel_stride = y.shape[3];
      }
      made[y_id] = add_tensor(std::move(y));
    }
    // (In the band of the stage's output, it lies in a tensor that lies in another: the emitter
    // adds up the offsets.)
    for (const auto& [original, part] : made)
      if (original != output && g.tensors[original].slice_of != ir::kNoTensor)
        g.tensors[part].slice_of = made.at(g.tensors[original].slice_of);
    for (std::size_t j = 0; j < k; ++j) {
      ir::Node n = g.nodes[nodes[j]];
      for (std::size_t i = 0; i < n.inputs.size(); ++i) {
        const ir::TensorId t = n.inputs[i];
        if (t == ir::kNoTensor || g.tensors[t].is_constant) continue;
        const Rows read = band.inputs[j][i].rows;
        if (t == shape->input) {
          n.inputs[i] = view(x, holder, holder_offset + read.first * x.shape[2] * x.shape[3], read);
          continue;
        }
        const Rows whole = band.rows.at(t);
        const ir::Tensor of = g.tensors[t];
        n.inputs[i] = read.first == whole.first && read.last == whole.last
                          ? made.at(t)
                          : view(of, made.at(t), (read.first - whole.first) * of.shape[2] * of.shape[3], read);
      }
      n.outputs[0] = made.at(n.outputs[0]);
      n.name = fmt::format("{} [{}]", n.name, band_name);
      const RowWindow& w = shape->windows[j];
      if (w.kernel > 1 || w.pad_top > 0) {
        n.attrs.pads.resize(4, 0);
        n.attrs.pads[0] = band.inputs[j][0].pad_top;
        n.attrs.pads[2] = band.inputs[j][0].pad_bottom;
      }
      result.tiled_macs += g.macs(n);
      band_nodes.push_back(std::move(n));
    }
    concat.inputs.push_back(made.at(output));
  }

  // The bands run where the stage's last node ran; every other node keeps its place.
  std::vector<ir::Node> scheduled;
  for (std::size_t v = 0; v < g.nodes.size(); ++v) {
    if (std::find(nodes.begin(), nodes.end(), static_cast<int>(v)) == nodes.end()) {
      scheduled.push_back(std::move(g.nodes[v]));
      continue;
    }
    if (static_cast<int>(v) != nodes.back()) continue;
    for (ir::Node& n : band_nodes) scheduled.push_back(std::move(n));
    scheduled.push_back(concat);
  }
  g.nodes = std::move(scheduled);
  return result;
}

}  // namespace tightfit::passes
