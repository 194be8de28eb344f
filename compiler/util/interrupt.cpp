#include "util/interrupt.hpp"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

namespace tightfit::interrupt {

namespace {

constexpr int kSlots = 32;
constexpr std::size_t kPathMax = 4096;
char g_paths[kSlots][kPathMax];
volatile sig_atomic_t g_used[kSlots];
constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};

// Only async-signal-safe calls: unlink, write, _exit.
extern "C" void on_signal(int sig) {
  for (int i = 0; i < kSlots; ++i)
    if (g_used[i]) unlink(g_paths[i]);
  const char line[] = "tightfit: interrupted\n";
  ssize_t ignored = write(STDERR_FILENO, line, sizeof line - 1);
  (void)ignored;
  _exit(128 + sig);
}

sigset_t held_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : kSignals) sigaddset(&set, sig);
  return set;
}

}  // namespace

void install() {
  struct sigaction action;
  std::memset(&action, 0, sizeof action);
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  for (int sig : kSignals) sigaddset(&action.sa_mask, sig);
  for (int sig : kSignals) {
    struct sigaction old;
    // A signal ignored by whoever started us (nohup, `&` in a non-interactive shell) stays ignored.
    if (sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    sigaction(sig, &action, nullptr);
  }
}

int remember(const std::string& path) {
  if (path.size() >= kPathMax) return -1;
  for (int i = 0; i < kSlots; ++i) {
    if (g_used[i]) continue;
    std::memcpy(g_paths[i], path.c_str(), path.size() + 1);
    std::atomic_signal_fence(std::memory_order_seq_cst);  // the path is complete before the flag
    g_used[i] = 1;
    return i;
  }
  return -1;
}

void forget(int slot) {
  if (slot >= 0 && slot < kSlots) g_used[slot] = 0;
}

SignalHold::SignalHold() {
  static_assert(sizeof(saved_) >= sizeof(sigset_t), "sigset_t does not fit");
  const sigset_t set = held_signals();
  sigprocmask(SIG_BLOCK, &set, reinterpret_cast<sigset_t*>(saved_));
}

SignalHold::~SignalHold() { sigprocmask(SIG_SETMASK, reinterpret_cast<const sigset_t*>(saved_), nullptr); }

bool SignalHold::pending() const {
  sigset_t set;
  sigemptyset(&set);
  if (sigpending(&set) != 0) return false;
  for (int sig : kSignals)
    if (sigismember(&set, sig) == 1) return true;
  return false;
}

}  // namespace tightfit::interrupt
