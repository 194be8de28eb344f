// An independent check of a plan, written apart from the solver and sharing none of its data
// structures, so that a bug in one is unlikely to hide in the other.
#pragma once

#include <string>
#include <vector>

#include "plan/planner.hpp"

namespace tightfit::plan {

// Every way `plan` breaks the rules of `problem`, one line each; empty when it is valid:
// two nonempty buffers of one region live at a common step (in both intervals and in neither's
// gaps: the branches of an If exclude each other) share no byte, except an overlap pair
// whose output starts at least its distance below (or above) its input; every offset is a
// multiple of its buffer's alignment; every buffer ends under its region's cap; pinned buffers
// are where they were pinned; region_peak and peak say what the placements reach.
std::vector<std::string> validate(const Problem& problem, const Plan& plan);

}  // namespace tightfit::plan
