// The one error type of the host program: a single line for the user and the exit status to use.
#pragma once

#include <stdexcept>
#include <string>

#include "util/model_text.hpp"

namespace tightfit {

enum ExitCode : int {
  kExitOk = 0,
  kExitError = 1,       // bad input: unreadable model, unsupported operator, bad file...
  kExitUsage = 2,       // bad command line
  kExitCapTooSmall = 3  // the model does not fit under --max-ram
};

// The line is terminal text (model_text::shown): names read from a model or a JSON file are
// arbitrary bytes, and a newline, a control character or an escape sequence among them must
// neither break the one line nor reach the terminal raw.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& line, int exit_code = kExitError)
      : std::runtime_error(model_text::shown(line)), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

}  // namespace tightfit
