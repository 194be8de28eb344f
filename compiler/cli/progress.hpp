// The planner's progress line: when planning takes longer than about a second, one line on
// stderr, redrawn in place, with the best peak so far, the bound and the time. Only on a terminal,
// and never with --quiet, so scripts and logs see nothing of it.
#pragma once

#include "plan/planner.hpp"

namespace tightfit {

class ProgressLine {
 public:
  explicit ProgressLine(bool quiet);
  ~ProgressLine();  // clears the line if one was drawn
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // For plan::Options::on_progress; empty when no line is to be drawn.
  std::function<void(const plan::Progress&)> callback();

 private:
  bool enabled_;
  bool drawn_ = false;
};

}  // namespace tightfit
