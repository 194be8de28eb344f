// Ctrl-C (SIGINT), SIGTERM and SIGHUP: tightfit stops at once and leaves no partial output.
//
// The handler removes the temporary files registered below (the outputs being written), prints
// one line and ends the process with status 128 + the signal (130 for Ctrl-C). Outputs are only
// ever renamed into place from temporary files, and that rename phase runs with the signals
// held (SignalHold): a signal that arrives before it leaves the old outputs untouched; one that
// arrives during it takes effect once every file is in place, never between two of them.
//
// A command that makes a build folder and runs other programs (`tightfit run`) needs its
// destructors to run, so it holds a Deferral: a signal then stops the program it is running and
// is remembered, and the next check() throws Interrupted, which main() reports like the handler.
#pragma once

#include <string>

#include "error.hpp"

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

// What check() throws; main() prints "tightfit: interrupted" and exits 128 + the signal.
class Interrupted : public Error {
 public:
  explicit Interrupted(int signal) : Error("interrupted", 128 + signal) {}
};

// While one lives, a signal does not end the process: it stops the program run_shell() is running
// and is remembered for check(). A signal remembered but not yet checked when it ends (and no
// exception is on its way) ends the process then, as without a Deferral.
class Deferral {
 public:
  Deferral();
  ~Deferral();
  Deferral(const Deferral&) = delete;
  Deferral& operator=(const Deferral&) = delete;
};

// Throws Interrupted if a signal came during a Deferral.
void check();

// Runs `/bin/sh -c command` with stdin from /dev/null, in its own process group so that a signal
// stops the whole of it (compilers under cmake, QEMU under timeout), and waits for it. Returns its
// wait status, as std::system does. Under a Deferral, a signal meanwhile makes it throw Interrupted.
int run_shell(const std::string& command);

}  // namespace tightfit::interrupt
