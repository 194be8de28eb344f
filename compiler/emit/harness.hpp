// The host program `tightfit run` builds around the generated code (harness.cpp): reads the staged
// inputs from a folder (input_N.f32 or input_N.raw), runs, writes output_N.f32 or output_N.raw there.
#pragma once

#include <string>

#include "driver/pipeline.hpp"

namespace tightfit::emit {

// The harness's source for `model` compiled as `name`; io_in_arena as the model was compiled.
std::string harness(const driver::CompiledModel& model, const std::string& name, bool io_in_arena);

}  // namespace tightfit::emit
