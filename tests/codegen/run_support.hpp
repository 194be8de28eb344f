// What the code generation tests share: running a command as a shell would, reading what it left,
// and a scratch folder per test. Both test programs run the `tightfit` program and the compilers
// this way; one copy keeps their quoting and exit-status decoding the same.
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <nlohmann/json.hpp>

namespace tightfit::codegen_test {

inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

inline std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline nlohmann::json read_json(const std::filesystem::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

struct Result {
  int status = -1;  // exit status, or 128 + signal
  std::string output;
};

// Runs a shell command, stdout and stderr captured together in `log`.
inline Result run(const std::string& command, const std::filesystem::path& log) {
  const int raw = std::system((command + " > " + shell_quote(log.string()) + " 2>&1").c_str());
  Result r;
  if (raw != -1 && WIFEXITED(raw))
    r.status = WEXITSTATUS(raw);
  else if (raw != -1 && WIFSIGNALED(raw))
    r.status = 128 + WTERMSIG(raw);
  r.output = read_text(log);
  return r;
}

// A fresh scratch folder for one test, under the build tree's work folder (TIGHTFIT_CODEGEN_WORK,
// which each test program's CMake target defines).
inline std::filesystem::path scratch(const std::string& what) {
  const std::filesystem::path dir = std::filesystem::path(TIGHTFIT_CODEGEN_WORK) / what;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace tightfit::codegen_test
