#include "plan/items.hpp"

#include <algorithm>

namespace tightfit::plan::detail {

bool live_at(const Item& item, int step) {
  if (step < item.first_step || step > item.last_step) return false;
  for (const StepRange& gap : item.gaps)
    if (gap.first <= step && step <= gap.last) return false;
  return true;
}

bool share_a_step_across_gaps(const Item& a, const Item& b) {
  const int first = std::max(a.first_step, b.first_step), last = std::min(a.last_step, b.last_step);
  // Walk the common interval over the gaps of either, in order of their starts: a step left
  // uncovered is live in both.
  std::vector<StepRange> gaps(a.gaps);
  gaps.insert(gaps.end(), b.gaps.begin(), b.gaps.end());
  std::sort(gaps.begin(), gaps.end(), [](const StepRange& x, const StepRange& y) { return x.first < y.first; });
  int step = first;
  for (const StepRange& gap : gaps) {
    if (gap.first > step) break;
    step = std::max(step, gap.last + 1);
  }
  return step <= last;
}

std::vector<StepRange> live_ranges(const Item& item) {
  std::vector<StepRange> ranges;
  int from = item.first_step;
  for (const StepRange& gap : item.gaps) {
    ranges.push_back({from, gap.first - 1});
    from = gap.last + 1;
  }
  ranges.push_back({from, item.last_step});
  return ranges;
}

std::uint64_t overlap_saving(const std::vector<Item>& items, int output) {
  const Item& out = items[output];
  if (out.overlap_input < 0) return 0;
  const Item& in = items[out.overlap_input];
  const std::uint64_t from_below = out.overlap_below < out.size ? std::min(out.size - out.overlap_below, in.size) : 0;
  const std::uint64_t from_above = in.overlap_above < in.size ? std::min(in.size - in.overlap_above, out.size) : 0;
  return std::max(from_below, from_above);
}

std::uint64_t separation(const std::vector<Item>& items, int lower, int upper) {
  const Item& item = items[lower];
  if (item.overlap_input == upper) return std::min(item.overlap_below, item.size);
  if (item.overlap_output == upper) return std::min(item.overlap_above, item.size);
  return item.size;
}

std::uint64_t peak_of(const std::vector<Item>& items, const std::vector<std::uint64_t>& offsets) {
  std::uint64_t peak = 0;
  for (std::size_t i = 0; i < items.size(); ++i) peak = std::max(peak, offsets[i] + items[i].size);
  return peak;
}

std::uint64_t live_sum_bound(const std::vector<Item>& items, int* step) {
  // The live set only grows when a buffer starts (or comes back after a gap), so the starts are
  // the steps to look at. Every run of the model executes some of the steps, and its peak is
  // reached at one of them: the most over the steps is the most over the runs.
  std::vector<int> starts;
  for (const Item& item : items) {
    starts.push_back(item.first_step);
    for (const StepRange& gap : item.gaps) starts.push_back(gap.last + 1);
  }
  std::sort(starts.begin(), starts.end());
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  std::uint64_t best = 0;
  int best_step = starts.empty() ? 0 : starts.front();
  for (const int t : starts) {
    // Offsets are multiples of the smallest alignment m live here, so stacked buffers are at
    // least their size rounded up to m apart; only the topmost one keeps its bare size.
    std::uint64_t m = UINT64_MAX;
    for (const Item& item : items)
      if (live_at(item, t)) m = std::min(m, item.alignment);
    // Where overlap pairs live, the union of the buffers covers at least the sizes less what
    // each pair can share: only pairs may intersect (Bonferroni: |union| >= sum of the sizes
    // less the sum of the pairwise intersections).
    std::uint64_t sum = 0, largest_padding = 0, sizes = 0, shared = 0;
    auto live = [t](const Item& item) { return live_at(item, t); };
    for (std::size_t i = 0; i < items.size(); ++i) {
      const Item& item = items[i];
      if (!live(item)) continue;
      const std::uint64_t rounded = round_up(item.size, m);
      sum += rounded;
      sizes += item.size;
      largest_padding = std::max(largest_padding, rounded - item.size);
      if (item.overlap_input >= 0 && live(items[item.overlap_input]))
        shared += overlap_saving(items, static_cast<int>(i));
    }
    const std::uint64_t bound = shared > 0 ? sizes - shared : sum - largest_padding;
    if (bound > best) {
      best = bound;
      best_step = t;
    }
  }
  if (step) *step = best_step;
  return best;
}

}  // namespace tightfit::plan::detail
