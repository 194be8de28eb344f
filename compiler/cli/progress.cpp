#include "cli/progress.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <cstdio>

namespace tightfit {

ProgressLine::ProgressLine(bool quiet) : enabled_(!quiet && isatty(STDERR_FILENO)) {}

ProgressLine::~ProgressLine() {
  if (drawn_) fmt::print(stderr, "\r\033[K");
}

std::function<void(const plan::Progress&)> ProgressLine::callback() {
  if (!enabled_) return {};
  return [this](const plan::Progress& p) {
    if (p.elapsed_ms < 1000) return;
    fmt::print(stderr, "\r\033[Kplanning: best {} B, lower bound {} B, gap {} B, {:.1f} s", p.best_peak, p.lower_bound,
               p.best_peak - p.lower_bound, p.elapsed_ms / 1000);
    std::fflush(stderr);
    drawn_ = true;
  };
}

}  // namespace tightfit
