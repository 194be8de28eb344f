// What the commands share about targets: tightfit's source tree (runtime/, cmake/, firmware/) and
// the boards of `tightfit run --target` (run_command.cpp holds their table).
#pragma once

#include <filesystem>
#include <string>

namespace tightfit {

// The root of tightfit's sources (TIGHTFIT_SOURCE_DIR in the environment overrides the one built in).
std::filesystem::path source_dir();

// The Cortex-M core of a board `tightfit run --target` knows ("mps2-an386" -> "cortex-m4"), or
// nullptr for a name that is not a board.
const char* board_core(const std::string& board);

}  // namespace tightfit
