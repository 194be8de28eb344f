// Patch-based execution (MCUNetV2, NeurIPS 2021), in horizontal bands or in a grid of tiles: a
// stage of row-local nodes (convolutions, pools, per-element tables and clamps, elementwise
// Add/Mul, channel Concat) runs band by band (tile by tile), so that only a band (a tile) of each
// activation inside the stage is live at a time instead of the whole image. Run on the scheduled,
// channels-last graph (NHWC, batch 1).
//
// A stage has one input (read by any of its nodes) and one output (its last node's); every other
// tensor it makes is read inside it alone. For a tile of the output, each node, last to first,
// needs the input rows and columns its windows read: output row o of a node with stride s, top pad
// p, kernel k and dilation d reads input rows o*s - p + i*d (i < k), so rows [a, b) read
// [max(0, a*s - p), min(H, (b-1)*s - p + (k-1)*d + 1)), and columns alike; per-element nodes and
// Concat read what they write. A tensor read by several nodes of the stage (a residual's input, a
// fire module's squeeze) is made for the parts they need together. Neighbouring tiles share halos:
// read twice (the stage's input) or computed twice (the others), which is the technique's cost,
// counted in MACs. A tile's node keeps the real padding where the tile touches the image's edge
// and has none inside it (its top and left pads are what is left of the image's above and left of
// its first input row and column). Each output value is so computed from the same inputs, weights
// and arithmetic as untiled: bit-exact.
//
// In the graph, a band of whole rows is a block of each tensor: its nodes read their rows of the
// stage's input in place (tensors lying in it, ir::Tensor::slice_of), a Concat input written in
// place stays in place in its band of the Concat, a reader of part of a band reads it in place, and
// the last node writes its rows in place into the stage's output, which a Concat along H of the
// bands' outputs, all in place, then produces with no copy. A tile narrower than the image is no
// block (the kernels read and write dense images), so it copies (a Slice) the columns it reads of
// the stage's input and any part of its own tensors that a reader needs apart, and a Concat along W
// copies a band's tiles of the output into the band's rows, in place in the output. The tiles'
// nodes replace the stage's at the position of its last node, tile after tile.
#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <set>

#include "ops/operator.hpp"
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

// The window of a node along one axis of the image: output index o reads input indices
// o*stride - pad + i*dilation, i < kernel (pad: the padding before the first index).
struct AxisWindow {
  std::int64_t kernel = 1, stride = 1, dilation = 1, pad = 0;
};

// A node's windows down the rows and across the columns.
struct NodeWindow {
  AxisWindow rows, cols;
};

// The windows through which a row-local node reads its activation inputs (all alike), or none for
// a node that cannot run in tiles: a convolution (any group count), a max pool (its windows are
// clipped to the image in either ceil mode), an average pool (not in ceil mode, whose last
// window's divisor ORT counts apart), a per-element operator of one activation input, an Add or
// Mul of two activations of the output's shape, or a Concat of images along their channels.
std::optional<NodeWindow> node_window(const ir::Graph& g, const ir::Node& n) {
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
  auto axis = [&a](std::size_t d, std::int64_t kernel) {
    return AxisWindow{kernel, at_or(a.strides, d, 1), at_or(a.dilations, d, 1), at_or(a.pads, d, 0)};
  };
  switch (ops::of(n.op).tile_window) {
    case ops::TileWindow::convolution: {
      if (activations != 1 || !first_is_activation) return std::nullopt;
      const ir::Tensor& w = g.tensors[n.inputs[1]];  // [Cout, Cin/group, kh, kw]
      return NodeWindow{axis(0, w.shape[2]), axis(1, w.shape[3])};
    }
    case ops::TileWindow::averaging_pool:
      if (a.ceil_mode) return std::nullopt;  // a window the cut shortens would change its divisor
      [[fallthrough]];
    case ops::TileWindow::pool:
      if (n.inputs.size() != 1 || activations != 1) return std::nullopt;
      return NodeWindow{axis(0, a.kernel_shape[0]), axis(1, a.kernel_shape[1])};
    case ops::TileWindow::elementwise:
      if (n.inputs.size() != 1 || activations != 1) return std::nullopt;
      return NodeWindow{};
    case ops::TileWindow::elementwise_same_shape:
      if (n.inputs.size() != 2 || activations != 2) return std::nullopt;
      for (const ir::TensorId t : n.inputs)
        if (g.tensors[t].shape != y.shape) return std::nullopt;
      return NodeWindow{};
    case ops::TileWindow::channel_concat:
      if (a.axis != 3 || activations != n.inputs.size()) return std::nullopt;
      return NodeWindow{};
    case ops::TileWindow::none:
    case ops::TileWindow::unstated:  // operators() refuses it
      return std::nullopt;
  }
  return std::nullopt;
}

// Indices [first, last) along one axis of a tensor.
struct Span {
  std::int64_t first = 0, last = 0;
  bool empty() const { return last <= first; }
  std::int64_t size() const { return last - first; }
  bool operator==(const Span& o) const { return first == o.first && last == o.last; }
};

// The rows and columns of a tensor that a tile makes or reads.
struct Box {
  Span rows, cols;
  bool empty() const { return rows.empty() || cols.empty(); }
  bool operator==(const Box& o) const { return rows == o.rows && cols == o.cols; }
};

Box hull(const Box& a, const Box& b) {
  if (a.empty()) return b;
  return {{std::min(a.rows.first, b.rows.first), std::max(a.rows.last, b.rows.last)},
          {std::min(a.cols.first, b.cols.first), std::max(a.cols.last, b.cols.last)}};
}

// The input indices that output indices `out` of a window read along one axis, and the padding
// left before and after them.
struct AxisInput {
  Span span;
  std::int64_t pad_before = 0, pad_after = 0;
};

AxisInput axis_input(const AxisWindow& w, Span out, std::int64_t extent) {
  const std::int64_t reach = (w.kernel - 1) * w.dilation + 1;
  const std::int64_t first = out.first * w.stride - w.pad;  // may lie in the padding
  const std::int64_t end = (out.last - 1) * w.stride - w.pad + reach;
  AxisInput in;
  in.span = {std::max<std::int64_t>(0, first), std::min(extent, end)};
  in.pad_before = in.span.first - first;
  in.pad_after = end - in.span.last;
  return in;
}

// What output box `out` of a node reads of an input of `in_shape` (NHWC), and the node's pads there.
struct TileInput {
  Box box;
  std::array<std::int64_t, 4> pads{};  // top, left, bottom, right
};

TileInput tile_input(const NodeWindow& w, const Box& out, const std::vector<std::int64_t>& in_shape) {
  const AxisInput rows = axis_input(w.rows, out.rows, in_shape[1]);
  const AxisInput cols = axis_input(w.cols, out.cols, in_shape[2]);
  return {{rows.span, cols.span}, {rows.pad_before, cols.pad_before, rows.pad_after, cols.pad_after}};
}

// A stage checked: its nodes (indices, schedule order) with their windows, its input and output.
struct StageShape {
  std::vector<int> nodes;
  std::vector<NodeWindow> windows;
  ir::TensorId input = ir::kNoTensor, output = ir::kNoTensor;
};

// Whether `nodes` (indices in schedule order) form a stage (the top of this file says what that is).
std::optional<StageShape> stage_shape(const ir::Graph& g, const TensorUses& uses, const std::vector<int>& nodes) {
  if (nodes.size() < 2) return std::nullopt;
  StageShape s;
  s.nodes = nodes;
  std::set<ir::TensorId> made;  // by the stage
  for (const int v : nodes) {
    const std::optional<NodeWindow> w = node_window(g, g.nodes[v]);
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

// Per tile (band by band, column by column): the box of each tensor the stage makes or reads, and
// what each node reads of them.
struct Tile {
  std::map<ir::TensorId, Box> boxes;
  std::vector<std::vector<TileInput>> inputs;  // per node, per input slot
};

// The tiles of `stage` (its `nodes`, of `shape`); none when a tile needs nothing of a node, or would
// read in part a tensor written in place into a Concat of the stage.
std::optional<std::vector<Tile>> stage_tiles(const ir::Graph& g, const Stage& stage, const std::vector<int>& nodes,
                                             const StageShape& shape) {
  const ir::TensorId output = shape.output;
  const std::int64_t height = g.tensors[output].shape[1], width = g.tensors[output].shape[2];
  const std::size_t k = nodes.size();
  std::vector<Tile> tiles;
  for (int b = 0; b < stage.tiles; ++b)
    for (int c = 0; c < stage.columns; ++c) {
      Tile tile;
      tile.boxes[output] = {{height * b / stage.tiles, height * (b + 1) / stage.tiles},
                            {width * c / stage.columns, width * (c + 1) / stage.columns}};
      tile.inputs.resize(k);
      for (std::size_t j = k; j-- > 0;) {
        const ir::Node& n = g.nodes[nodes[j]];
        const Box out = tile.boxes[n.outputs[0]];
        if (out.empty()) return std::nullopt;  // nothing of it is needed in this tile
        tile.inputs[j].resize(n.inputs.size());
        for (std::size_t i = 0; i < n.inputs.size(); ++i) {
          const ir::TensorId t = n.inputs[i];
          if (t == ir::kNoTensor || g.tensors[t].is_constant) continue;
          TileInput& in = tile.inputs[j][i];
          in = tile_input(shape.windows[j], out, g.tensors[t].shape);
          if (stage.whole_rows) in.box.cols = {0, g.tensors[t].shape[2]};  // a band is whole rows of every tensor
          if (in.box.empty()) return std::nullopt;
          tile.boxes[t] = hull(tile.boxes[t], in.box);
        }
      }
      // A tensor written in place into a Concat of the stage has exactly the Concat's box; one read
      // in part lies in a buffer of its own (its readers read their part of it).
      for (std::size_t j = 0; j < k; ++j)
        for (std::size_t i = 0; i < g.nodes[nodes[j]].inputs.size(); ++i) {
          const ir::TensorId t = g.nodes[nodes[j]].inputs[i];
          if (t == ir::kNoTensor || g.tensors[t].is_constant || t == shape.input) continue;
          if (g.tensors[t].slice_of != ir::kNoTensor && !(tile.inputs[j][i].box == tile.boxes[t])) return std::nullopt;
        }
      tiles.push_back(std::move(tile));
    }
  return tiles;
}

// Writes a stage's tiles into the graph: the tensors of each tile, the nodes that make them, the
// copies a tile narrower than the image needs, and the Concat of the bands.
class StageTiler {
 public:
  StageTiler(ir::Graph& g, const Stage& stage, const std::vector<int>& nodes, const StageShape& shape)
      : g_(g),
        stage_(stage),
        nodes_(nodes),
        shape_(shape),
        whole_rows_(stage.whole_rows),
        output_(shape.output),
        width_(g.tensors[shape.output].shape[2]),
        channels_(g.tensors[shape.output].shape[3]),
        x_(g.tensors[shape.input]),
        x_whole_{{0, x_.shape[1]}, {0, x_.shape[2]}} {
    // The stage's input is read in place from the tensor that holds its bytes, whole rows at a time.
    if (x_.slice_of != ir::kNoTensor) {
      holder_ = x_.slice_of;
      holder_offset_ = x_.slice_offset;
    }
    result_.stage = stage;
    result_.input = x_.name;
    result_.output = g.tensors[output_].name;
    for (const int v : nodes) result_.macs += ops::macs(g, g.nodes[v]);
    concat_.name = g.nodes[nodes.back()].name + " [bands]";
    concat_.onnx_op = "row bands of a tiled stage";
    concat_.op = ir::OpKind::Concat;
    concat_.attrs.axis = 1;
    concat_.outputs = {output_};
    clamp_nothing(concat_, output_);
  }

  void add_tile(const Tile& tile, std::size_t tile_index) {
    const int b = static_cast<int>(tile_index) / stage_.columns, c = static_cast<int>(tile_index) % stage_.columns;
    const std::string tile_name =
        whole_rows_ ? fmt::format("band {}/{}", b + 1, stage_.tiles)
                    : fmt::format("band {}/{}, column {}/{}", b + 1, stage_.tiles, c + 1, stage_.columns);
    const std::map<ir::TensorId, ir::TensorId> made = make_tensors(tile);
    // The stage's input: whole rows are read in place; a tile narrower than the image copies its
    // columns once, and its nodes read their parts of that copy.
    const Box& x_box = tile.boxes.at(shape_.input);
    std::optional<ir::TensorId> x_copy;
    auto read_input = [&](const Box& read) {
      if (read.cols == x_whole_.cols)
        return rows_in(x_, read, holder_, holder_offset_ + read.rows.first * x_.shape[2] * x_.shape[3]);
      if (x_box.cols == x_whole_.cols) return copied(x_, shape_.input, x_whole_, read, tile_name);
      if (!x_copy) x_copy = copied(x_, shape_.input, x_whole_, x_box, tile_name);
      return read_part(shape_.input, *x_copy, x_box, read, tile_name);
    };
    for (std::size_t j = 0; j < nodes_.size(); ++j) {
      ir::Node n = g_.nodes[nodes_[j]];
      for (std::size_t i = 0; i < n.inputs.size(); ++i) {
        const ir::TensorId t = n.inputs[i];
        if (t == ir::kNoTensor || g_.tensors[t].is_constant) continue;
        const Box& read = tile.inputs[j][i].box;
        n.inputs[i] =
            t == shape_.input ? read_input(read) : read_part(t, made.at(t), tile.boxes.at(t), read, tile_name);
      }
      n.outputs[0] = made.at(n.outputs[0]);
      n.name = fmt::format("{} [{}]", n.name, tile_name);
      set_tile_pads(n, shape_.windows[j], tile.inputs[j][0].pads);
      result_.tiled_macs += ops::macs(g_, n);
      tiled_nodes_.push_back(std::move(n));
    }
    if (whole_rows_) {
      concat_.inputs.push_back(made.at(output_));
      return;
    }
    band_columns_.push_back(made.at(output_));
    if (c + 1 == stage_.columns) add_band_columns(tile.boxes.at(output_).rows, b);
  }

  // The tiles run where the stage's last node ran; every other node keeps its place.
  TiledStage finish() {
    std::vector<ir::Node> scheduled;
    for (std::size_t v = 0; v < g_.nodes.size(); ++v) {
      if (std::find(nodes_.begin(), nodes_.end(), static_cast<int>(v)) == nodes_.end()) {
        scheduled.push_back(std::move(g_.nodes[v]));
        continue;
      }
      if (static_cast<int>(v) != nodes_.back()) continue;
      for (ir::Node& n : tiled_nodes_) scheduled.push_back(std::move(n));
      scheduled.push_back(concat_);
    }
    g_.nodes = std::move(scheduled);
    return result_;
  }

 private:
  // The tile of every tensor the stage makes, then where those written in place lie: the stage's
  // output (whole rows), or their Concat's tile.
  std::map<ir::TensorId, ir::TensorId> make_tensors(const Tile& tile) {
    std::map<ir::TensorId, ir::TensorId> made;
    for (const int v : nodes_) {
      const ir::TensorId y_id = g_.nodes[v].outputs[0];
      const Box& box = tile.boxes.at(y_id);
      ir::Tensor y = part(g_.tensors[y_id], box);
      if (y_id == output_ && whole_rows_) {
        y.slice_of = output_;
        y.slice_offset = box.rows.first * width_ * channels_;
        y.slice_pixel_stride = channels_;
      }
      made[y_id] = add_tensor(std::move(y));
    }
    // (In the band of the stage's output, it lies in a tensor that lies in another: the emitter
    // adds up the offsets.)
    for (const auto& [original, tiled] : made)
      if (original != output_ && g_.tensors[original].slice_of != ir::kNoTensor)
        g_.tensors[tiled].slice_of = made.at(g_.tensors[original].slice_of);
    return made;
  }

  // A tile's node keeps the image's padding where the tile touches its edge, none inside.
  void set_tile_pads(ir::Node& n, const NodeWindow& w, const std::array<std::int64_t, 4>& pads) const {
    if (w.rows.kernel > 1 || w.rows.pad > 0) {
      n.attrs.pads.resize(4, 0);
      n.attrs.pads[0] = pads[0];
      n.attrs.pads[2] = pads[2];
    }
    if (!whole_rows_ && (w.cols.kernel > 1 || w.cols.pad > 0)) {
      n.attrs.pads.resize(4, 0);
      n.attrs.pads[1] = pads[1];
      n.attrs.pads[3] = pads[3];
    }
  }

  // A band's tiles of the output are copied side by side into its rows, in place in the output.
  void add_band_columns(const Span& rows, int b) {
    const Box band{rows, {0, width_}};
    const ir::TensorId band_rows = rows_in(g_.tensors[output_], band, output_, band.rows.first * width_ * channels_);
    ir::Node columns;
    columns.name = fmt::format("{} [band {}/{}, columns]", g_.nodes[nodes_.back()].name, b + 1, stage_.tiles);
    columns.onnx_op = "columns of a band of a tiled stage";
    columns.op = ir::OpKind::Concat;
    columns.attrs.axis = 2;
    columns.inputs = band_columns_;
    columns.outputs = {band_rows};
    clamp_nothing(columns, band_rows);
    result_.copied_bytes += g_.tensors[band_rows].bytes();
    tiled_nodes_.push_back(std::move(columns));
    concat_.inputs.push_back(band_rows);
    band_columns_.clear();
  }

  // The Slices and Concats the tiling adds move bytes: their activation range is all of the dtype.
  void clamp_nothing(ir::Node& n, ir::TensorId out) const {
    n.attrs.act_min = static_cast<std::int32_t>(ir::dtype_range(g_.tensors[out].dtype).min);
    n.attrs.act_max = static_cast<std::int32_t>(ir::dtype_range(g_.tensors[out].dtype).max);
  }

  ir::TensorId add_tensor(ir::Tensor t) {
    g_.tensors.push_back(std::move(t));
    return static_cast<ir::TensorId>(g_.tensors.size() - 1);
  }

  // Box `b` of tensor `of` (of the stage), named for it.
  ir::Tensor part(const ir::Tensor& of, const Box& b) const {
    ir::Tensor t = of;
    t.name = whole_rows_ ? fmt::format("{} [rows {}-{}]", of.name, b.rows.first, b.rows.last - 1)
                         : fmt::format("{} [rows {}-{}, cols {}-{}]", of.name, b.rows.first, b.rows.last - 1,
                                       b.cols.first, b.cols.last - 1);
    t.shape[1] = b.rows.size();
    t.shape[2] = b.cols.size();
    return t;
  }

  // Box `b` of tensor `of`, whole rows of tensor `in` from element `offset` on: lying in it in place.
  ir::TensorId rows_in(const ir::Tensor& of, const Box& b, ir::TensorId in, std::int64_t offset) {
    ir::Tensor t = part(of, b);
    t.slice_of = in;
    t.slice_offset = offset;
    t.slice_pixel_stride = of.shape[3];
    return add_tensor(std::move(t));
  }

  // Box `b` of tensor `of`, copied (a Slice) from `source`, which holds box `held` of it: a part
  // narrower than the rows it lies in is no view the kernels can read.
  ir::TensorId copied(const ir::Tensor& of, ir::TensorId source, const Box& held, const Box& b,
                      const std::string& tile_name) {
    ir::Tensor t = part(of, b);
    t.slice_of = ir::kNoTensor;
    t.slice_offset = t.slice_pixel_stride = 0;
    result_.copied_bytes += t.bytes();
    const ir::TensorId id = add_tensor(std::move(t));
    ir::Node n;
    n.name = fmt::format("copy of {} [{}]", g_.tensors[id].name, tile_name);
    n.onnx_op = "columns of a tile's input";
    n.op = ir::OpKind::Slice;
    n.attrs.starts = {0, 0, b.rows.first - held.rows.first, b.cols.first - held.cols.first};  // ONNX order
    n.inputs = {source};
    n.outputs = {id};
    clamp_nothing(n, id);
    tiled_nodes_.push_back(std::move(n));
    return id;
  }

  // What a node reads: box `read` of tensor `of`, which `source` holds as box `held`.
  ir::TensorId read_part(ir::TensorId of, ir::TensorId source, const Box& held, const Box& read,
                         const std::string& tile_name) {
    if (read == held) return source;
    const ir::Tensor t = g_.tensors[of];
    if (read.cols == held.cols)
      return rows_in(t, read, source, (read.rows.first - held.rows.first) * held.cols.size() * t.shape[3]);
    return copied(t, source, held, read, tile_name);
  }

  ir::Graph& g_;
  const Stage& stage_;
  const std::vector<int>& nodes_;
  const StageShape& shape_;
  const bool whole_rows_;
  const ir::TensorId output_;
  const std::int64_t width_, channels_;
  const ir::Tensor x_;  // the stage's input, a copy: adding tensors moves them
  const Box x_whole_;
  ir::TensorId holder_ = shape_.input;  // the tensor that holds the input's bytes
  std::int64_t holder_offset_ = 0;
  TiledStage result_;
  ir::Node concat_;  // of the bands, along H
  std::vector<ir::Node> tiled_nodes_;
  std::vector<ir::TensorId> band_columns_;  // the current band's tiles of the output
};

}  // namespace

std::optional<Stage> stage_of_steps(const ir::Graph& g, int first, int last) {
  std::vector<int> nodes;
  for (int v = first; v <= last; ++v) nodes.push_back(v);
  if (first < 0 || last >= static_cast<int>(g.nodes.size()) || !stage_shape(g, tensor_uses(g), nodes))
    return std::nullopt;
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
  if (!shape || stage.tiles < 1 || stage.columns < 1 || (stage.whole_rows && stage.columns != 1)) return std::nullopt;
  const std::vector<std::int64_t>& out = g.tensors[shape->output].shape;
  if (stage.tiles > out[1] || stage.columns > out[2]) return std::nullopt;
  const std::optional<std::vector<Tile>> tiles = stage_tiles(g, stage, nodes, *shape);
  if (!tiles) return std::nullopt;
  StageTiler tiler(g, stage, nodes, *shape);
  for (std::size_t t = 0; t < tiles->size(); ++t) tiler.add_tile((*tiles)[t], t);
  return tiler.finish();
}

}  // namespace tightfit::passes
