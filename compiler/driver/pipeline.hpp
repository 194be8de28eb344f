// The compiler as one function: ONNX import -> Pad folding -> channels-last schedule -> zero-copy
// Concat -> order -> lifetimes -> memory plan (-> row bands when the cap asks) -> C++ emission ->
// report. Every stage is called here, in order; read this file to follow a
// model through tightfit.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cost/instructions.hpp"
#include "ir/ir.hpp"
#include "passes/passes.hpp"
#include "plan/planner.hpp"
#include "schedule/lifetimes.hpp"
#include "schedule/order.hpp"

namespace tightfit::driver {

// A RAM region of the target, from --max-ram (one region, "arena") or a --memory file.
struct RegionSpec {
  std::string name;
  std::optional<std::uint64_t> capacity;  // none: unbounded
  std::string section;                    // linker section for its array; empty: plain .bss
  // The core cycles each byte read or written there costs beyond the fastest region (an external
  // PSRAM's bandwidth); 0 for internal RAM. A region with a cost is used only when that costs
  // less than tiling into the free regions (docs/planner.md, "Slow regions").
  double cycles_per_byte = 0;
};

// A buffer fixed by the user to a region and an offset.
struct PinSpec {
  std::string tensor;
  std::string region;
  std::uint64_t offset = 0;
};

struct CompileOptions {
  std::string model;                     // the .onnx file
  std::string name;                      // C++ namespace and file stem of the generated code
  std::optional<std::uint64_t> max_ram;  // cap of the single arena (the CLI refuses it with a memory file)
  std::string memory_file;               // JSON: {"regions": [...], "pins": [...]}
  std::optional<ir::Numerics> numerics;  // --numerics; none: the importer's choice (ONNX: ORT's)
  std::vector<PinSpec> pins;
  double time_limit_seconds = 5.0;
  bool io_in_arena = true;
  bool reorder = true;                   // false (--no-reorder): the nodes run in the ONNX file's order
  // Of every buffer, in bytes (int32 and float ones are aligned to their element whatever it says).
  // None: 4, and 1 for the int8 ones when a cap needs it (docs/tiling.md, "Byte-aligned buffers").
  std::optional<std::uint32_t> alignment;
  bool overlap = true;                   // outputs may overlap the inputs they consume (--no-overlap)
  bool fold_pad = true;                  // a Pad becomes the pads of the Conv/pool reading it (--no-fold-pad)
  bool zero_copy_concat = true;          // producers write Concat inputs in place (--no-zero-copy-concat)
  bool tiling = true;                    // a stage may run in row bands to fit the cap (--no-tiling)
  std::string cost_core = cost::kDefaultCore;  // whose measured kernel costs rank plans of equal MACs
  std::string weights_section;           // empty: the toolchain's .rodata
  std::string arena_section;             // for the single arena; empty: plain .bss
  std::function<void(const plan::Progress&)> on_plan_progress;  // may be empty
};

// How the order of the nodes was chosen (schedule/order.hpp), for the report.
struct OrderChoice {
  const char* search = "off";               // "exact", "beam" (the state budget ran out) or "off"
  std::uint64_t states = 0;                 // sets of nodes the search visited
  std::uint64_t search_gap_bytes = 0;       // beam: how far its order may be from the least peak
  int moved_nodes = 0;                      // nodes not at their file position
  int candidates = 1;                       // orders planned, the file order among them
  std::uint64_t file_order_bound_bytes = 0; // live-sum bound of the ONNX file order
  std::uint64_t file_order_arena_bytes = 0; // the planned arena in the file order
};

// One row of the report's "RAM against cost" table: the arena a plan needs and the MACs it adds.
struct CostLevel {
  // "none", "free" (overlap, zero-copy Concat, order), "tiling", or "byte_aligned": the plan the cap
  // kept with byte-aligned int8 buffers, untiled or with `stage`.
  std::string technique;
  std::uint64_t arena_bytes = 0;
  std::int64_t extra_macs = 0;              // over the untiled model (halo rows computed again)
  std::optional<std::int64_t> instructions; // estimated on CompileOptions::cost_core, when it was measured
  std::optional<passes::TiledStage> stage;  // for "tiling" (and "byte_aligned" when tiled)
};

// How the buffers' alignment was chosen, for the report.
struct AlignmentChoice {
  std::uint32_t bytes = 4;         // of the int8 buffers as planned
  std::string source = "default";  // "default", "flag" (--alignment) or "cap" (the cap needed 1)
  // "cap": what the 4-byte aligned plans reached: the plan the cap would have kept (none when none
  // fit) and the least arena of their RAM-against-cost table.
  std::optional<std::uint64_t> aligned_arena_bytes;
  std::uint64_t aligned_least_bytes = 0;
};

// With a memory file whose regions have a cost: the plans weighed against each other ("Slow
// regions", docs/planner.md), for the report.
struct SlowRegionPlan {
  std::vector<std::uint64_t> region_bytes;  // the arena per region, in the memory file's order
  std::int64_t macs = 0;
  std::int64_t instructions = 0;            // estimated on cost_core; the MACs when it was not measured
  std::int64_t slow_cycles = 0;             // traffic in the regions with a cost, times their cycles per byte
};
struct SlowRegionChoice {
  std::optional<SlowRegionPlan> with_slow;  // the plan that may use them (none: it does not fit)
  std::optional<SlowRegionPlan> free_only;  // the regions with a cost left empty (none: nothing fits)
  std::string kept;                         // "with_slow" or "free_only"
};

struct CompiledModel {
  ir::Graph graph;                       // after the channels-last stage and the order: what the code runs
  OrderChoice order;
  std::vector<passes::PadFold> pad_folds;  // the Pads folded away, for the report
  std::vector<passes::InPlaceInput> in_place;  // the Concat inputs written in place, for the report
  // When some Concat input could be written in place: the arenas planned with all of them in place
  // and with every Concat copying (the plan kept may have some in place: in_place lists them).
  std::optional<std::uint64_t> zero_copy_arena_bytes, copying_arena_bytes;
  std::optional<passes::TiledStage> tiled;  // the stage run in row bands, when the cap asked for one
  std::int64_t macs = 0;                    // of the model as compiled (a tiled stage's halo rows included)
  std::vector<CostLevel> ram_vs_cost;       // empty with --no-tiling
  AlignmentChoice alignment;
  schedule::Lifetimes lifetimes;
  std::vector<RegionSpec> regions;
  std::optional<SlowRegionChoice> slow_regions;  // only when a region has a cost and was used
  plan::Plan plan;
  std::uint64_t weights_bytes = 0;       // flash taken by constant data
  std::string header;                    // NAME.hpp
  std::string source;                    // NAME.cpp
  nlohmann::json report;                 // NAME.report.json (docs/report.md)
};

// Runs every stage. Throws tightfit::Error: exit 1 for bad input, 3 when the model cannot fit under
// the cap (the message gives the minimum reachable and the tensors that hold it there).
CompiledModel compile_model(const CompileOptions& options);

// Writes NAME.hpp, NAME.cpp and the report files into `dir`, all or nothing (util/write_files.hpp).
void write_outputs(const CompiledModel& model, const std::string& dir, const std::string& name);

// Reads a --memory file (docs/planner.md): its regions, fastest first, and its pins, appended to
// `regions` and `pins`. Throws tightfit::Error naming the file for anything malformed.
void read_memory_file(const std::string& path, std::vector<RegionSpec>& regions, std::vector<PinSpec>& pins);

// Throws tightfit::Error ("<context>: section '...' is not a linker section name") unless
// `section` is letters, digits and . _ $ - + @ only.
void check_section_name(const std::string& section, const std::string& context);

// The model file's stem made a valid C++ identifier: "models/ds-cnn.v2.onnx" -> "ds_cnn_v2".
std::string default_name(const std::string& model_path);

}  // namespace tightfit::driver
