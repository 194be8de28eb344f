#include "util/interrupt.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <exception>

extern char** environ;

namespace tightfit::interrupt {

namespace {

constexpr int kSlots = 32;
constexpr std::size_t kPathMax = 4096;
char g_paths[kSlots][kPathMax];
volatile sig_atomic_t g_used[kSlots];
constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
volatile sig_atomic_t g_child_group = 0;  // the process group of run_shell()'s program, if any
volatile sig_atomic_t g_deferring = 0;    // a Deferral lives
volatile sig_atomic_t g_requested = 0;    // the signal that came during it, for check()

// Only async-signal-safe calls: kill, unlink, write, _exit.
extern "C" void on_signal(int sig) {
  if (g_child_group > 0) kill(-g_child_group, SIGTERM);
  if (g_deferring) {
    g_requested = sig;
    return;
  }
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

Deferral::Deferral() {
  g_requested = 0;
  g_deferring = 1;
}

Deferral::~Deferral() {
  g_deferring = 0;
  if (g_requested && std::uncaught_exceptions() == 0) raise(g_requested);
}

void check() {
  if (const int sig = g_requested) {
    g_requested = 0;
    throw Interrupted(sig);
  }
}

int run_shell(const std::string& command) {
  posix_spawnattr_t attributes;
  posix_spawn_file_actions_t actions;
  posix_spawnattr_init(&attributes);
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawnattr_setpgroup(&attributes, 0);
  // The program starts with this process's signal mask, less the signals the hold below blocks.
  sigset_t mask;
  pid_t pid = -1;
  int spawned;
  {
    SignalHold hold;
    sigprocmask(SIG_BLOCK, nullptr, &mask);  // reads the mask only
    for (int sig : kSignals) sigdelset(&mask, sig);
    posix_spawnattr_setsigmask(&attributes, &mask);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
    const char* argv[] = {"sh", "-c", command.c_str(), nullptr};
    spawned = posix_spawn(&pid, "/bin/sh", &actions, &attributes, const_cast<char* const*>(argv), environ);
    // Set while the signals are held: one that came before the spawn still reaches the program.
    if (spawned == 0) g_child_group = pid;
  }
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (spawned != 0) throw Error(std::string("cannot start /bin/sh: ") + std::strerror(spawned));

  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  g_child_group = 0;
  check();
  return status;
}

}  // namespace tightfit::interrupt
