// What the commands share about targets: tightfit's source tree (runtime/, cmake/, firmware/) and
// the boards of `tightfit run --target` (firmware/boards/boards.json, compiled in).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace tightfit {

// The root of tightfit's sources (TIGHTFIT_SOURCE_DIR in the environment overrides the one built in).
std::filesystem::path source_dir();

// A board `tightfit run --target` runs on: its core, architecture ("arm" or "riscv"), the QEMU
// machine it runs on, the CMake toolchain file (in cmake/) that builds for it, the QEMU program
// and flags that run it, and its text in `--target`'s help.
struct Board {
  std::string name;
  std::string core;
  std::string architecture;
  std::string machine;
  std::string toolchain;
  std::string qemu;
  std::string qemu_flags;  // one string, as a shell command takes them
  std::string help;
};

// The boards of firmware/boards/boards.json that `tightfit run --target` takes, in its order.
const std::vector<Board>& run_target_boards();

// The board of that name, or nullptr.
const Board* find_board(const std::string& name);

// The core of a board `tightfit run --target` knows ("mps2-an386" -> "cortex-m4"), or nullptr for
// a name that is not a board.
const char* board_core(const std::string& board);

}  // namespace tightfit
