// Runs the built `tightfit` binary as a user would and captures what it printed.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace import_tests {

struct Run {
  bool exited = false;  // false when the process died of a signal (a crash)
  int status = -1;      // the exit status when exited
  std::string out, err;
};

inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// A fresh empty file in the temporary folder.
inline std::string temp_file(const std::string& stem) {
  std::string path = "/tmp/tightfit-import-test-" + stem + "-XXXXXX";
  const int fd = mkstemp(path.data());
  if (fd >= 0) close(fd);
  return path;
}

inline Run run_tightfit(const std::string& args) {
  const std::string out = temp_file("out"), err = temp_file("err");
  const std::string cmd = std::string(TIGHTFIT_EXE) + " " + args + " >" + out + " 2>" + err;
  const int raw = std::system(cmd.c_str());
  Run r;
  // system() runs a shell: a child killed by a signal shows as the shell's status 128 + signal.
  r.exited = WIFEXITED(raw) && WEXITSTATUS(raw) < 128;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  std::remove(out.c_str());
  std::remove(err.c_str());
  return r;
}

}  // namespace import_tests
