// The one error type of the host program: a single line for the user and the exit status to use.
#pragma once

#include <stdexcept>
#include <string>

namespace tightfit {

enum ExitCode : int {
  kExitOk = 0,
  kExitError = 1,      // bad input: unreadable model, unsupported operator, bad file...
  kExitUsage = 2,      // bad command line
  kExitCapTooSmall = 3 // the model does not fit under --max-ram
};

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& line, int exit_code = kExitError)
      : std::runtime_error(line), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

// The message as one printable line: names read from a model or a JSON file are arbitrary bytes,
// and a newline or control character among them must not break the one line (main() prints this).
inline std::string one_line(std::string text) {
  for (char& c : text)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return text;
}

}  // namespace tightfit
