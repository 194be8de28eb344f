// The host program `tightfit run` builds around the generated code (harness.cpp): reads the staged
// inputs from a folder (input_N.f32 or input_N.raw), runs, writes output_N.f32 or output_N.raw there.
#pragma once

#include <string>
#include <vector>

#include "ir/ir.hpp"

namespace tightfit::emit {

// The harness's source for `graph` compiled as `name` with its RAM `regions` (their names, in the
// plan's order); io_in_arena as the model was compiled.
std::string harness(const ir::Graph& graph, const std::vector<std::string>& regions, const std::string& name,
                    bool io_in_arena);

}  // namespace tightfit::emit
