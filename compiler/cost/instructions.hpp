// What a kernel call costs on a core, in instructions, as measured: bench/kernel_costs.py runs
// models of models/ on each board in QEMU (`tightfit run --target BOARD --profile`, exact
// instruction counts per call) and fits, per kernel, instructions = call + mac * MACs +
// input_byte * bytes read + output_byte * bytes written + pixel * output pixels + window_read *
// a pool's window reads, into kernel_costs.json beside this file.
// The tiling choice ranks plans of equal MACs by this estimate (docs/tiling.md, "How the cap
// chooses"); a core with no measured table gives no estimate.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ir/ir.hpp"

namespace tightfit::cost {

// The kernel a node's call runs, as the table names it: the path a Conv takes
// ("conv_pointwise", "conv_depthwise", "conv_general", "conv_accumulate"), else the operator's name
// ("Add", "Concat", ...). Empty for a view, which has no call.
std::string kernel_of(const ir::Graph& graph, const ir::Node& node);

// What a call works on: its multiply-accumulates, the bytes of its activation inputs (constants
// left out) and of its outputs, its output's pixels (elements over the last dimension: a
// convolution's windows, each with its own setup), and a pool's window reads (output elements
// times the window's taps: what MACs are to a convolution).
struct Work {
  std::int64_t macs = 0, input_bytes = 0, output_bytes = 0, output_pixels = 0, window_reads = 0;
};
Work work_of(const ir::Graph& graph, const ir::Node& node);

// The instructions `graph` takes on `core` ("cortex-m4", ...) by the measured table, or none
// when that core was not measured.
std::optional<std::int64_t> estimated_instructions(const std::string& core, const ir::Graph& graph);

// Whether `core`'s kernel costs were measured.
bool measured(const std::string& core);

// The core the estimate uses when the command names none (no --target, or 'none'): the core of
// `tightfit compile`'s default board, so that a plan does not depend on the tools installed.
inline constexpr const char* kDefaultCore = "cortex-m4";

}  // namespace tightfit::cost
