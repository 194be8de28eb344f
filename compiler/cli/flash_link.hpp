// The flash a compiled model takes on a core, measured: the generated code compiled with the
// target toolchain and the flags firmware builds use (cmake/arm-none-eabi.cmake, -O2), linked on
// its own with --gc-sections from its public functions, so that exactly the runtime kernels it
// calls and the C library functions they need are in.
#pragma once

#include <cstdint>
#include <string>

#include "driver/pipeline.hpp"

namespace tightfit {

struct LinkedFlash {
  std::string core;                                                // e.g. "cortex-m4"
  std::string method;                                              // the compiler and what was linked, for the report
  std::uint64_t text_bytes = 0, rodata_bytes = 0, data_bytes = 0;  // rodata without the weights
  std::uint64_t weights_bytes = 0;
};

// Whether arm-none-eabi-g++ is on the PATH.
bool arm_toolchain_found();

// Links `model` (as `tightfit compile` wrote it under `name`) for `core`, a core of
// cmake/arm-none-eabi.cmake, in a temporary folder. Throws tightfit::Error when the core is
// unknown or the toolchain fails.
LinkedFlash link_for_core(const driver::CompiledModel& model, const std::string& name, const std::string& core,
                          const std::string& weights_section);

// Adds `flash.linked` to the model's report (docs/report.md).
void add_linked_flash(driver::CompiledModel& model, const LinkedFlash& flash);

}  // namespace tightfit
