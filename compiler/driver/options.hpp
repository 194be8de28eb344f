// What a compilation is asked for: the command line's options and the target's RAM regions, the
// vocabulary every stage of the driver reads.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cost/instructions.hpp"
#include "ir/ir.hpp"
#include "plan/planner.hpp"

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
  bool reorder = true;  // false (--no-reorder): the nodes run in the ONNX file's order
  // Of every buffer, in bytes (int32 and float ones are aligned to their element whatever it says).
  // None: 4, and 1 for the int8 ones when a cap needs it (docs/tiling.md, "Byte-aligned buffers").
  std::optional<std::uint32_t> alignment;
  bool overlap = true;                         // outputs may overlap the inputs they consume (--no-overlap)
  bool fold_pad = true;                        // a Pad becomes the pads of the Conv/pool reading it (--no-fold-pad)
  bool zero_copy_concat = true;                // producers write Concat inputs in place (--no-zero-copy-concat)
  bool tiling = true;                          // a stage may run in row bands to fit the cap (--no-tiling)
  std::string cost_core = cost::kDefaultCore;  // whose measured kernel costs rank plans of equal MACs
  std::string weights_section;                 // empty: the toolchain's .rodata
  std::string arena_section;                   // for the single arena; empty: plain .bss
  std::function<void(const plan::Progress&)> on_plan_progress;  // may be empty
};

}  // namespace tightfit::driver
