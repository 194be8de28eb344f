#include "plan/items.hpp"

#include <algorithm>

namespace tightfit::plan::detail {

namespace {

std::uint64_t align_up(std::uint64_t value, std::uint64_t alignment) {
  const std::uint64_t rest = value % alignment;
  return rest == 0 ? value : value + (alignment - rest);
}

}  // namespace

std::uint64_t peak_of(const std::vector<Item>& items, const std::vector<std::uint64_t>& offsets) {
  std::uint64_t peak = 0;
  for (std::size_t i = 0; i < items.size(); ++i) peak = std::max(peak, offsets[i] + items[i].size);
  return peak;
}

std::uint64_t live_sum_bound(const std::vector<Item>& items, int* step) {
  // The live set only grows when a buffer starts, so the starts are the steps to look at.
  std::vector<int> starts;
  for (const Item& item : items) starts.push_back(item.first_step);
  std::sort(starts.begin(), starts.end());
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  std::uint64_t best = 0;
  int best_step = starts.empty() ? 0 : starts.front();
  for (const int t : starts) {
    // Offsets are multiples of the smallest alignment m live here, so stacked buffers are at
    // least their size rounded up to m apart; only the topmost one keeps its bare size.
    std::uint64_t m = UINT64_MAX;
    for (const Item& item : items)
      if (item.first_step <= t && t <= item.last_step) m = std::min(m, item.alignment);
    std::uint64_t sum = 0, largest_padding = 0;
    for (const Item& item : items)
      if (item.first_step <= t && t <= item.last_step) {
        const std::uint64_t rounded = align_up(item.size, m);
        sum += rounded;
        largest_padding = std::max(largest_padding, rounded - item.size);
      }
    if (sum - largest_padding > best) {
      best = sum - largest_padding;
      best_step = t;
    }
  }
  if (step) *step = best_step;
  return best;
}

}  // namespace tightfit::plan::detail
