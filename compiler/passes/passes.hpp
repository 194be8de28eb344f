// Passes over the integer IR. Each takes a Graph and either rewrites it or checks it.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "ir/ir.hpp"

namespace tightfit::passes {

// Under TFLite numerics (Graph::numerics), refuses the first node whose TFLite arithmetic the
// kernels do not reproduce, naming it and why (numerics.cpp); nothing under ORT's.
void check_numerics(const ir::Graph& graph);

// Turns Reshape [N, K] -> [N, K, 1, 1], pointwise Conv, Reshape -> [N, M] (the QOperator way of
// writing a Gemm) into one FullyConnected with the weight viewed as [M, K]. Exact.
void conv1x1_to_fully_connected(ir::Graph& graph);

// Turns Reshape [N, C, H, W] -> [N, g, C/g, H, W], Transpose [0, 2, 1, 3, 4], Reshape back to
// [N, C, H, W] (ShuffleNet's channel shuffle, each intermediate read by the next alone) into one
// ChannelShuffle of g groups. Exact (it moves bytes).
void fuse_channel_shuffles(ir::Graph& graph);

// A Pad folded into the padding of the node that reads it (fold_pads()).
struct PadFold {
  std::string pad;                     // the Pad node, gone
  std::string into;                    // the node whose pads grew
  std::string into_op;                 // its operator (ir::op_name)
  std::string tensor;                  // the padded tensor, gone with its buffer
  std::uint64_t bytes = 0;             // that tensor's size
  std::array<std::int64_t, 4> pads{};  // the folded pads: top, left, bottom, right
};

// Folds every constant-mode Pad over H and W (4-D, logical NCHW, pads >= 0) whose only reader
// reads it as its data input into that reader's pads, when that is exact (fold_pad.cpp says
// when): a Conv always; an AveragePool, a MaxPool under conditions. Run before the channels-last
// stage. Returns the folds made, in node order.
std::vector<PadFold> fold_pads(ir::Graph& graph);

// A Concat input its producer writes in place (zero_copy_concats()).
struct InPlaceInput {
  std::string concat;       // the Concat node
  std::string producer;     // the node that writes the input into the Concat's output
  std::string producer_op;  // its operator (ir::op_name)
  std::string tensor;       // the input, with no buffer of its own any more
  std::uint64_t bytes = 0;  // its size
  ir::TensorId input = ir::kNoTensor, output = ir::kNoTensor;  // the input and the Concat's output
  std::int64_t offset = 0;                                     // where it starts in the output, in elements
  std::int64_t pixel_stride = 0;                               // elements from one of its pixels to the next
  bool contiguous = false;                                     // its part of the output is one block
};

// Every Concat input that the Concat only copies and that its producer can write in place
// (zero_copy_concat.cpp says when), in node order. Run after the channels-last stage.
std::vector<InPlaceInput> zero_copy_candidates(const ir::Graph& graph);

// Marks one of them in the graph (Tensor::slice_of): its producer writes it into the Concat's
// output, which then copies only its other inputs.
void write_in_place(ir::Graph& graph, const InPlaceInput& input);

// Patch-based execution (tile.cpp): a stage of row-local nodes run in horizontal bands, or in a
// grid of tiles, so that only a tile of each activation inside the stage is live at a time.
struct Stage {
  std::vector<std::string> nodes;  // the stage's nodes in schedule order; the last writes its output
  int tiles = 2;                   // bands of the output's rows
  int columns = 1;                 // tiles across each band
  // Bands of whole rows of every tensor (columns is 1): read and written in place. Else a grid of
  // tiles, each tensor cut to the columns its tile needs, even with one column or one tile (a
  // 1x1 output in one tile is what a 1-pixel tile of a larger grid was: sizes must not jump).
  bool whole_rows = true;

  // The same stage and grid (one place that knows the fields).
  auto fields() const { return std::tie(nodes, tiles, columns, whole_rows); }
  bool operator==(const Stage& other) const { return fields() == other.fields(); }
  bool operator<(const Stage& other) const { return fields() < other.fields(); }
};

// A stage as tile_stage() ran it.
struct TiledStage {
  Stage stage;
  std::string input, output;              // the stage's input and output tensors
  std::int64_t macs = 0, tiled_macs = 0;  // the stage's MACs, and the tiles' (halos computed again)
  // Bytes the tiles copy: a tile narrower than the image copies the columns it reads, and a band's
  // tiles of the output are copied into its rows (whole-row bands copy nothing).
  std::int64_t copied_bytes = 0;
};

// The nodes of steps first..last (schedule order) as a stage, when they are one: each a Conv, a
// pool, a per-element table or clamp, an Add or Mul of two activations of its output's shape, or
// a channel Concat, on NHWC batch-1 int8/uint8 images; one tensor from outside read (by any of
// them); every tensor they make but the last node's read by them alone.
std::optional<Stage> stage_of_steps(const ir::Graph& graph, int first, int last);

// Rewrites `graph` so that `stage` runs in bands or tiles (tile.cpp says how; bit-exact); nullopt,
// and the graph untouched, when its nodes are no stage or it has more bands than output rows or
// more columns than output columns.
std::optional<TiledStage> tile_stage(ir::Graph& graph, const Stage& stage);

// Removes the tensors that no node and no graph input or output refers to (the importer creates
// constants before it knows whether a fold consumes them), renumbering the rest in order.
void prune_unused_tensors(ir::Graph& graph);

// Checks what ir.hpp promises to later stages: ids in range, every tensor produced before it is
// read and produced once (or lying in one that was, or holding one written in place), a slice's
// chain of holders ending and its pixels inside its holder, static positive shapes, integer
// activations quantized per-tensor with zero points in their dtype's range, constants holding
// exactly their bytes, act_min <= act_max inside the output dtype. Throws
// tightfit::Error("<source>: IR check: <what>") on the first violation: a failure is a bug in the
// stage that produced the graph.
void verify(const ir::Graph& graph);

// verify() on the output of pass `pass`, named in the error (LLVM's verify-each): the driver and
// the importer call it after every pass that rewrites the graph, in every build.
void verify_after(const char* pass, const ir::Graph& graph);

}  // namespace tightfit::passes
