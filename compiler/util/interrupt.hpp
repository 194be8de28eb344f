// Ctrl-C (SIGINT), SIGTERM and SIGHUP: tightfit stops at once and leaves no partial output.
//
// The handler removes the temporary files registered below (the outputs being written), prints
// one line and ends the process with status 128 + the signal (130 for Ctrl-C). Outputs are only
// ever renamed into place from temporary files, and that rename phase runs with the signals
// held (SignalHold): a signal that arrives before it leaves the old outputs untouched; one that
// arrives during it takes effect once every file is in place, never between two of them.
#pragma once

#include <string>

namespace tightfit::interrupt {

// Installs the handler (main() does, once).
void install();

// Registers a temporary file for the handler to delete; returns a slot for forget(), or -1 when
// every slot is taken (the file is then simply not removed on a signal).
int remember(const std::string& path);
void forget(int slot);

// Holds SIGINT, SIGTERM and SIGHUP for its lifetime; they are delivered when it ends.
class SignalHold {
 public:
  SignalHold();
  ~SignalHold();
  SignalHold(const SignalHold&) = delete;
  SignalHold& operator=(const SignalHold&) = delete;
  bool pending() const;  // one of them arrived while held

 private:
  unsigned long long saved_[16];  // the previous signal mask (a sigset_t)
};

}  // namespace tightfit::interrupt
