// Deliberately plain: every pair of buffers is compared directly, O(n^2), and every overlap pair
// looked up in the list for each pair of buffers that share a byte.
#include "plan/validate.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace tightfit::plan {

std::vector<std::string> validate(const Problem& problem, const Plan& plan) {
  std::vector<std::string> errors;
  const auto& buffers = problem.buffers;
  if (plan.placements.size() != buffers.size()) {
    errors.push_back(
        fmt::format("the plan places {} buffers, the problem has {}", plan.placements.size(), buffers.size()));
    return errors;
  }
  const int regions = static_cast<int>(problem.regions.size());
  std::vector<std::uint64_t> reached(regions, 0);
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    const Buffer& buffer = buffers[i];
    const Placement& at = plan.placements[i];
    if (at.region < 0 || at.region >= regions) {
      errors.push_back(fmt::format("buffer '{}' is in region {}, which does not exist", buffer.name, at.region));
      continue;
    }
    if (buffer.pin && (buffer.pin->region != at.region || buffer.pin->offset != at.offset))
      errors.push_back(fmt::format("buffer '{}' is pinned to region {} offset {} but placed in region {} offset {}",
                                   buffer.name, buffer.pin->region, buffer.pin->offset, at.region, at.offset));
    if (at.offset % buffer.alignment != 0)
      errors.push_back(
          fmt::format("buffer '{}' at offset {} is not aligned to {}", buffer.name, at.offset, buffer.alignment));
    if (buffer.size == 0) continue;
    const std::uint64_t end = at.offset + buffer.size;
    if (end > problem.regions[at.region].capacity)
      errors.push_back(fmt::format("buffer '{}' ends at {}, over the {} bytes of region '{}'", buffer.name, end,
                                   problem.regions[at.region].capacity, problem.regions[at.region].name));
    if (end > reached[at.region]) reached[at.region] = end;
  }
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    for (std::size_t j = i + 1; j < buffers.size(); ++j) {
      const Buffer &a = buffers[i], &b = buffers[j];
      const Placement &pa = plan.placements[i], &pb = plan.placements[j];
      if (a.size == 0 || b.size == 0 || pa.region != pb.region) continue;
      // Live at a common step: one not in a gap of either (an If's branches exclude each other).
      bool share_a_step = a.first_step <= b.last_step && b.first_step <= a.last_step;
      if (share_a_step && (!a.gaps.empty() || !b.gaps.empty())) {
        auto in_gap = [](const Buffer& x, int step) {
          return std::any_of(x.gaps.begin(), x.gaps.end(),
                             [step](const StepRange& g) { return g.first <= step && step <= g.last; });
        };
        share_a_step = false;
        for (int step = std::max(a.first_step, b.first_step); step <= std::min(a.last_step, b.last_step); ++step)
          share_a_step = share_a_step || (!in_gap(a, step) && !in_gap(b, step));
      }
      const bool share_a_byte = ranges_overlap(pa.offset, pa.offset + a.size, pb.offset, pb.offset + b.size);
      if (!share_a_step || !share_a_byte) continue;
      // An overlap pair may share bytes when the output starts its distance below the input, or
      // its distance above it.
      const Overlap* pair = nullptr;
      for (const Overlap& o : problem.overlaps)
        if ((o.output == static_cast<int>(i) && o.input == static_cast<int>(j)) ||
            (o.output == static_cast<int>(j) && o.input == static_cast<int>(i)))
          pair = &o;
      if (pair) {
        const Placement &out = plan.placements[pair->output], &in = plan.placements[pair->input];
        if (pair->below && out.offset + *pair->below <= in.offset) continue;
        if (pair->above && in.offset + *pair->above <= out.offset) continue;
        auto need = [](const std::optional<std::uint64_t>& d) {
          return d ? fmt::format("{}", *d) : std::string("never");
        };
        errors.push_back(
            fmt::format("buffer '{}' at {} overlaps its input '{}' at {}; its kernel needs it {} bytes "
                        "below or {} bytes above",
                        buffers[pair->output].name, out.offset, buffers[pair->input].name, in.offset, need(pair->below),
                        need(pair->above)));
        continue;
      }
      errors.push_back(fmt::format("buffers '{}' [{}, {}) and '{}' [{}, {}) overlap while both live", a.name, pa.offset,
                                   pa.offset + a.size, b.name, pb.offset, pb.offset + b.size));
    }
  }
  std::uint64_t total = 0;
  for (int r = 0; r < regions; ++r) {
    total += reached[r];
    if (r < static_cast<int>(plan.region_peak.size()) && plan.region_peak[r] != reached[r])
      errors.push_back(fmt::format("region '{}' claims a peak of {} but its buffers reach {}", problem.regions[r].name,
                                   plan.region_peak[r], reached[r]));
  }
  if (plan.region_peak.size() != problem.regions.size())
    errors.push_back(fmt::format("the plan gives {} region peaks for {} regions", plan.region_peak.size(), regions));
  if (plan.peak != total)
    errors.push_back(fmt::format("the plan claims a peak of {} but its buffers reach {}", plan.peak, total));
  return errors;
}

}  // namespace tightfit::plan
