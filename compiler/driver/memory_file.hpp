// The --memory file (docs/planner.md): the target's RAM regions, fastest first, and the buffers
// the user pins to them.
#pragma once

#include <string>
#include <vector>

#include "driver/options.hpp"

namespace tightfit::driver {

// Reads a --memory file (docs/planner.md): its regions, fastest first, and its pins, appended to
// `regions` and `pins`. Throws tightfit::Error naming the file for anything malformed.
void read_memory_file(const std::string& path, std::vector<RegionSpec>& regions, std::vector<PinSpec>& pins);

// Throws tightfit::Error ("<context>: section '...' is not a linker section name") unless
// `section` is letters, digits and . _ $ - + @ only.
void check_section_name(const std::string& section, const std::string& context);

}  // namespace tightfit::driver
