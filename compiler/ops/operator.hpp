// One operator of tightfit's IR as one unit: the ONNX operators it is imported from and the kernel
// call it is emitted as. ops.def lists the operators; each is defined in compiler/ops/<name>.cpp
// (its kernels are in runtime/). The import and emission stages iterate over this table: the
// importer finds the rule of an ONNX node with import_rule(), the emitter the rule of an IR node
// with of().
#pragma once

#include <string>
#include <vector>

#include "ir/ir.hpp"
#include "plan/planner.hpp"

namespace onnx {
class NodeProto;
}
namespace tightfit::import {
struct ImportState;
class Translator;
}  // namespace tightfit::import
namespace tightfit::emit {
struct EmissionState;
class Emission;
}  // namespace tightfit::emit

namespace tightfit::ops {

using emit::Emission;
using emit::EmissionState;
using import::ImportState;
using import::Translator;
using onnx::NodeProto;

// An ONNX operator, by domain ("" for ONNX's own, or "com.microsoft") and type, and how a node of
// it becomes IR tensors and nodes (through an import::Translator on the import's state).
struct ImportRule {
  const char* domain;
  const char* op_type;
  void (*translate)(ImportState& state, const NodeProto& node);
};

// Writes the constants and the kernel call of one node (through an emit::Emission on the
// emission's state); `id` names its constants.
using EmitRule = void (*)(EmissionState& state, const std::string& id, const ir::Node& node);

// How far below input `input` of a node its output may start and still overlap it, and how far
// above it when the kernel runs backwards: the distances the kernel its emission calls states
// beside itself (runtime/include/tightfit/kernels.hpp, `*_distance`). The emitted call runs
// backwards exactly when the plan puts the output above that input.
using OverlapRule = plan::OverlapDistances (*)(const ir::Graph& graph, const ir::Node& node, std::size_t input);

// Bytes of scratch memory the kernel of `node` needs during its step (a buffer the planner places;
// Emission::scratch_pointer gives it to the call).
using ScratchRule = std::uint64_t (*)(const ir::Graph& graph, const ir::Node& node);

// How the channels-last rewrite (schedule/channels_last.cpp) treats a node whose tensors it turns
// from [N, C, H, W] to [N, H, W, C] in memory.
enum class LayoutRule {
  unstated,
  as_it_comes,         // its kernel takes NHWC as it is (convolutions, pools, elementwise)
  axis_attribute,      // attrs.axis, a logical axis, becomes the memory axis (Concat, Softmax)
  pads_attribute,      // attrs.pads, [begin N C H W, end N C H W], reordered to the memory's axes
  scales_attribute,    // attrs.scales, [N C H W], reordered to the memory's axes
  broadcast_operands,  // constant operands made channels-last too; a lower-rank activation refused
  permutation,         // attrs.perm composed with the layouts; the identity becomes a view
  view,                // a Reshape: free where the orders agree, else copies to and from ONNX order
  logical_order,       // reads and writes ONNX order: layout transposes around it (FullyConnected)
};

// Which rows and columns of its input a node's output rows and columns need, for running a chain
// of nodes in bands or tiles (passes/tile.cpp).
enum class TileWindow {
  unstated,
  none,                    // cannot be tiled: a stage ends before it
  convolution,             // the weights' kh x kw window with attrs' strides, dilations and pads
  pool,                    // attrs.kernel_shape with attrs' strides and pads
  averaging_pool,          // as pool, refusing ceil_mode
  elementwise,             // one activation input, each output element from the one below it
  elementwise_same_shape,  // two activation inputs of the output's shape
  channel_concat,          // activations joined along the channels (memory axis 3)
};

// Which pads of a Pad node before it a node can take as its own (passes/fold_pad.cpp).
enum class PadFold {
  unstated,
  none,
  convolution,   // always: the kernel pads with the zero point the Pad wrote
  max_pool,      // where a padded value can never be a window's maximum
  average_pool,  // counting the pads (count_include_pad), as the Pad's values were counted
};

// Whether every value the kernel writes lies in [attrs.act_min, attrs.act_max]: a MaxPool after it
// may then pad with any value at or below act_min (passes/fold_pad.cpp).
enum class OutputRange { unstated, unbounded, clamped_to_act_range };

// Whether the kernel can write its output as a channel slice of a wider channels-last tensor (a
// pixel stride above its channels), so a Concat reading it copies nothing
// (passes/zero_copy_concat.cpp). Any writer can fill a contiguous slice.
enum class StridedOutput { unstated, contiguous_only, channel_slice };

// The runtime kernel the integer form of an operator shares with other operators: each rule the
// kernel implies (its overlap distance, its tile window, its clamp, its measured cost) is then
// stated alike in all of them, which the test over operators() checks.
enum class SharedKernel {
  unstated,
  own,               // a kernel of its own (or one whose rules the operators need not share)
  lookup_table,      // tightfit::lookup, one byte in, one out through a 256-entry table
  broadcast_binary,  // the elementwise binary kernels with broadcasting (add, mul, sub)
};

// Multiply-accumulates of a node's kernel (no_macs for those that do none); called only for a
// node with an output and at least two inputs.
using MacsRule = std::int64_t (*)(const ir::Graph& graph, const ir::Node& node);

// What a node's call reads and writes, for its cost estimate (cost::work_of): its whole inputs and
// outputs; a copy's (Concat's) inputs not written in place, as much again written; or a pooling
// window's reads besides.
enum class CostWork { unstated, whole_tensors, copies_inputs, pooling_window };

// The name of the kernel a node's call runs, its key in the measured costs
// (compiler/cost/kernel_costs.json); "" when it makes no call.
using CostKeyRule = std::string (*)(const ir::Graph& graph, const ir::Node& node);

// Under TFLite numerics (passes::check_numerics, docs/numerics.md): why the kernel cannot compute
// the node as TFLite Micro does, or "" when it can. tflite_exact for operators that round nothing
// or round as TFLite does whatever their quantization; no_tflite_form for those without TFLite
// arithmetic yet.
using TfliteGap = std::string (*)(const ir::Graph& graph, const ir::Node& node);
std::string tflite_exact(const ir::Graph& graph, const ir::Node& node);
std::string no_tflite_form(const ir::Graph& graph, const ir::Node& node);

// Every rule of an operator, each a named field. An operator's file sets every one (to its "does
// not apply" value where it does not apply); operators() refuses a table with a rule unstated.
struct Operator {
  ir::OpKind kind;
  std::vector<ImportRule> imports;
  EmitRule emit = nullptr;        // nullptr for a view (Reshape): it moves no bytes and has no code
  OverlapRule overlap = nullptr;  // nullptr: its output never overlaps an input
  ScratchRule scratch = nullptr;  // nullptr: the kernel works in its input and output buffers alone
  SharedKernel shared_kernel = SharedKernel::unstated;
  LayoutRule layout = LayoutRule::unstated;
  TileWindow tile_window = TileWindow::unstated;
  PadFold pad_fold = PadFold::unstated;
  OutputRange output_range = OutputRange::unstated;
  StridedOutput strided_output = StridedOutput::unstated;
  MacsRule macs = nullptr;
  CostKeyRule cost_key = nullptr;
  CostWork cost_work = CostWork::unstated;
  TfliteGap tflite_gap = nullptr;
};

// The first rule `op` leaves unstated ("layout", "tile window", ...), or nullptr.
const char* unstated_rule(const Operator& op);

// Every operator, in ops.def's order (the order of ir::OpKind).
const std::vector<const Operator*>& operators();

// The operator of an IR node.
const Operator& of(ir::OpKind kind);

// The overlap distances of input `input` of `node` (its operator's OverlapRule; none without one).
plan::OverlapDistances overlap_distance(const ir::Graph& graph, const ir::Node& node, std::size_t input);

// A kernel's distances (tightfit::kNoOverlap: not that way) as OverlapDistances.
plan::OverlapDistances overlap_distances(std::int32_t below, std::int32_t above);

// The overlap rules several operators share: elementwise with broadcasting (Add, Mul, Sub), and a
// 256-entry table or the requantization of an int32 accumulator (Sigmoid, Tanh, LeakyRelu, Div,
// Requantize), or the float form of Sigmoid and Tanh.
plan::OverlapDistances binary_overlap(const ir::Graph& graph, const ir::Node& node, std::size_t input);
plan::OverlapDistances lookup_overlap(const ir::Graph& graph, const ir::Node& node, std::size_t input);

// The rules several operators share: no MACs; the cost key of the operator's own name; no call
// (a view).
std::int64_t no_macs(const ir::Graph& graph, const ir::Node& node);
std::string named_for_operator(const ir::Graph& graph, const ir::Node& node);
std::string no_call(const ir::Graph& graph, const ir::Node& node);

// The cost key of an operator run as a lookup table with no measurement of its own: the lookup
// kernel's, measured in Sigmoid's calls (an 8-bit node); its own name for a float node.
std::string lookup_table_cost(const ir::Graph& graph, const ir::Node& node);

// Multiply-accumulates of a node: its operator's MacsRule, 0 for a node with no output or fewer
// than two inputs.
std::int64_t macs(const ir::Graph& graph, const ir::Node& node);

// Multiply-accumulates of every node of `graph`.
std::int64_t model_macs(const ir::Graph& graph);

// The rule importing ONNX operator `op_type` of `domain` ("ai.onnx" is ""), or nullptr.
const ImportRule* import_rule(const std::string& domain, const std::string& op_type);

}  // namespace tightfit::ops
