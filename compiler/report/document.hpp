// The report document as the views read it: typed fields instead of JSON lookups, read once
// from a report that check_report() accepted.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tightfit::report {

struct Region {
  std::string name;
  std::optional<std::uint64_t> capacity;  // none: the region has no size limit
  std::uint64_t peak = 0;
  std::uint64_t lower_bound = 0;
  std::string status;
};

struct Step {
  std::uint64_t step = 0;
  std::string node, op, onnx_op;
  std::vector<std::uint64_t> output_shape;
  std::uint64_t macs = 0, live_bytes = 0, scratch_bytes = 0;
  std::vector<std::string> live_tensors;
  bool in_float = false;          // a float island's step: a float32 kernel, or the Quantize/Dequantize at its ends
  std::uint64_t float_bytes = 0;  // bytes of float32 buffers live during the step
};

struct Buffer {
  std::string tensor;
  std::uint64_t size = 0;
  std::optional<std::uint64_t> offset;  // none: not placed (an infeasible plan)
  std::string region;
  std::uint64_t first_step = 0, last_step = 0;  // inclusive
  std::string kind;                             // input, output, activation or scratch
  std::optional<std::string> producer, op;      // none for graph inputs
};

// An output allowed to lie over the input its kernel consumes (docs/planner.md, "Overlap").
struct Overlap {
  std::uint64_t step = 0;
  std::string node, op, output, input;  // output and input: tensor names, as in `buffers`
  std::string direction;           // "below": the output starts below the input; "above": the kernel runs backwards
  std::uint64_t distance = 0;      // the output starts at least this far below (above) the input
  std::uint64_t shared_bytes = 0;  // what the plan lays over the input: 0 when it did not use it
};

// A rewrite of the graph that removed a buffer (docs/report.md, "Rewrites").
struct Rewrite {
  std::string technique;       // "fold_pad", "zero_copy_concat" or "tiling"
  std::string node, into, op;  // the node rewritten, the node that took its work, that node's operator
  std::string tensor;          // the tensor that has no buffer of its own any more
  std::uint64_t saved_bytes = 0;
  std::string detail;
};

// One row of the RAM against cost table.
struct CostLevel {
  std::string technique;  // "none", "free", "tiling" or "byte_aligned"
  std::uint64_t arena_bytes = 0;
  std::int64_t extra_macs = 0;  // below 0 when the bands skip rows no later node reads
  double extra_macs_percent = 0;
  std::optional<std::int64_t> instructions;  // estimated (Document::instruction_core); none: not measured
  std::vector<std::string> nodes;            // the tiled stage, first to last (tiling; byte_aligned when tiled)
  std::uint64_t bands = 0;
  std::uint64_t columns = 1;  // tiles across each band
  bool whole_rows = true;     // bands of whole rows, else a grid of tiles
  bool chosen = false;
};

// How the int8 buffers are aligned (the report's "alignment").
struct Alignment {
  std::uint64_t bytes = 4;
  std::string source;  // "default", "flag" (--alignment) or "cap" (byte-aligned for the cap)
  std::optional<std::uint64_t> aligned_arena_bytes, aligned_least_bytes;  // "cap": the 4-byte aligned plans'
};

// A plan weighed in the report's "slow_regions" (docs/planner.md, "Slow regions").
struct SlowRegionPlan {
  std::vector<std::uint64_t> region_bytes;  // per region, in the regions' order
  std::int64_t macs = 0, instructions = 0, slow_cycles = 0;
};
struct SlowRegions {
  std::optional<SlowRegionPlan> with_slow, free_only;  // none: that plan does not fit
  std::string kept;                                    // "with_slow" or "free_only"
};

struct Failure {
  std::uint64_t cap_bytes = 0, minimum_bytes = 0, peak_step = 0;
  std::vector<std::string> tensors;
};

// How the nodes' order was chosen (the report's "order").
struct Order {
  std::string search;  // exact, beam or off
  bool reordered = false;
  std::uint64_t moved_nodes = 0, states = 0, search_gap_bytes = 0, candidates = 0;
  std::uint64_t file_order_bound_bytes = 0, bound_bytes = 0, file_order_arena_bytes = 0;
};

// What `tightfit run --target` measured on a board; none where the firmware printed no figure.
struct Measured {
  std::string board, core, method;
  std::optional<std::uint64_t> instructions;
  std::optional<std::uint64_t> flash_bytes, text_bytes, rodata_bytes, weights_bytes, inputs_bytes;
  std::optional<std::uint64_t> arena_bytes, planned_arena_bytes, data_bytes, bss_bytes, stack_bytes, stack_peak_bytes;
  std::optional<std::uint64_t> linked_ram_bytes;  // stack reserved + .data + .bss + arena, as linked
  // One per step from a profiled run (none for a step without a kernel call), else empty.
  std::vector<std::optional<std::uint64_t>> step_instructions;

  std::optional<std::uint64_t> code_and_constants_bytes() const;  // flash - weights - built-in inputs
  std::optional<std::uint64_t> ram_in_use_bytes() const;          // arena + .data + .bss + peak stack
  bool arena_as_planned() const;                                  // arena == planned, both known
};

// flash.linked: the generated code linked alone for a core (docs/report.md).
struct LinkedFlash {
  std::string core, method;
  std::uint64_t text_bytes = 0, rodata_bytes = 0, data_bytes = 0, weights_bytes = 0;
  std::uint64_t total() const { return text_bytes + rodata_bytes + data_bytes + weights_bytes; }
};

struct Document {
  std::string tool, model, name, status;
  std::uint64_t arena_bytes = 0, lower_bound_bytes = 0, gap_bytes = 0, weights_bytes = 0;
  std::optional<std::uint64_t> cap_bytes;
  bool io_in_arena = true;
  std::vector<std::string> batch_pinned;    // inputs whose symbolic batch was compiled as 1
  std::optional<Alignment> alignment;       // absent in reports of older versions
  std::optional<SlowRegions> slow_regions;  // null or absent: no region with a cost held a buffer
  double planner_time_limit_s = 0;
  std::vector<Region> regions;
  std::uint64_t flash_weights_bytes = 0, flash_schedule_bytes = 0, flash_code_estimate_bytes = 0;
  std::optional<LinkedFlash> flash_linked;  // absent: the flash figure is the estimate
  std::uint64_t greedy_by_size_bytes = 0, no_reuse_bytes = 0;
  std::vector<Step> steps;
  std::vector<std::uint64_t> peak_steps;
  std::vector<Buffer> buffers;
  std::optional<Failure> failure;
  std::optional<Order> order;                           // absent in reports of older versions
  std::vector<Overlap> overlaps;                        // empty under --no-overlap
  std::optional<std::uint64_t> no_overlap_bound_bytes;  // the live-sum bound were no output to overlap
  std::vector<Rewrite> rewrites;                        // empty when none applied (or an older report)
  // When a Concat input could be written in place: the arena planned so, and with every Concat copying.
  std::optional<std::uint64_t> zero_copy_concat_bytes, copying_concat_bytes;
  std::vector<CostLevel> ram_vs_cost;  // empty with --no-tiling (or an older report)
  std::string instruction_core;        // whose measured costs estimate the levels' instructions
  std::optional<Measured> measured;    // only in the report of `tightfit run --target`

  // Linked for a core when it was, else weights + the estimate.
  std::uint64_t flash_bytes() const {
    return flash_linked ? flash_linked->total()
                        : flash_weights_bytes + flash_schedule_bytes + flash_code_estimate_bytes;
  }
  std::uint64_t macs() const;  // of all steps
  const Buffer* find_buffer(const std::string& tensor) const;
  // The tensors live at `step` with their sizes (0 for a name that is no buffer), biggest first.
  std::vector<std::pair<std::uint64_t, std::string>> live_by_size(const Step& step) const;
  std::size_t region_index(const std::string& name) const;  // regions.size() when unknown
};

// Checks `report` (throwing tightfit::Error with the first violation) and reads it.
Document read_document(const nlohmann::json& report);

}  // namespace tightfit::report
