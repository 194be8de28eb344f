#include "cli/target.hpp"

#include <nlohmann/json.hpp>

namespace tightfit {

const char* boards_text();  // boards.cpp, made by CMake from firmware/boards/boards.json

const std::vector<Board>& run_target_boards() {
  static const std::vector<Board> boards = [] {
    const nlohmann::json table = nlohmann::json::parse(boards_text());
    std::vector<Board> list;
    for (const nlohmann::json& b : table.at("boards")) {
      if (!b.contains("run_target")) continue;
      const nlohmann::json& arch = table.at("architectures").at(b.at("architecture").get<std::string>());
      std::string flags;
      for (const nlohmann::json& flag : arch.at("qemu_flags"))
        flags += (flags.empty() ? "" : " ") + flag.get<std::string>();
      list.push_back({b.at("name"), b.at("core"), b.at("architecture"), b.at("qemu_machine"), arch.at("toolchain"),
                      arch.at("qemu"), flags, b.at("run_target")});
    }
    return list;
  }();
  return boards;
}

const Board* find_board(const std::string& name) {
  for (const Board& b : run_target_boards())
    if (name == b.name) return &b;
  return nullptr;
}

const char* board_core(const std::string& board) {
  const Board* b = find_board(board);
  return b ? b->core.c_str() : nullptr;
}

}  // namespace tightfit
