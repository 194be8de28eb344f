// Written from a reading of TFLite Micro's greedy_memory_planner.cc (CalculateOffsetsIfNeeded)
// and micro_allocation_info.cc (CreatePlan: sizes rounded up to the arena alignment before
// AddBuffer); checked against figures and offsets that TFLM's own planner produced
// (tests/planner/tflm_greedy/).
#include "plan/greedy.hpp"

#include <algorithm>

namespace tightfit::plan::detail {

std::vector<std::uint64_t> greedy_offsets(const std::vector<Item>& items, std::uint64_t size_granule) {
  const int n = static_cast<int>(items.size());
  std::vector<std::uint64_t> size(items.size());
  for (int i = 0; i < n; ++i) size[i] = round_up(items[i].size, size_granule);

  // The order TFLM places them in: pinned in add order, then the rest from the last added to the
  // first, stably sorted by size, largest first.
  std::vector<int> order, unpinned;
  for (int i = 0; i < n; ++i)
    if (items[i].fixed_offset) order.push_back(i);
  for (int i = n - 1; i >= 0; --i)
    if (!items[i].fixed_offset) unpinned.push_back(i);
  std::stable_sort(unpinned.begin(), unpinned.end(), [&](int a, int b) { return size[a] > size[b]; });
  order.insert(order.end(), unpinned.begin(), unpinned.end());

  std::vector<std::uint64_t> offsets(items.size(), 0);
  std::vector<int> by_offset;  // the placed items by offset; equal offsets in placement order
  for (const int i : order) {
    const Item& item = items[i];
    std::uint64_t offset = 0;
    if (item.fixed_offset) {
      offset = *item.fixed_offset;
    } else {
      for (const int other : by_offset) {
        if (!share_a_step(items[other], item)) continue;
        if (offsets[other] >= offset + size[i]) break;  // the gap below `other` holds it
        offset = round_up(std::max(offset, offsets[other] + size[other]), item.alignment);
      }
    }
    offsets[i] = offset;
    const auto after_equal_offsets = std::upper_bound(by_offset.begin(), by_offset.end(), offset,
                                                      [&](std::uint64_t o, int placed) { return o < offsets[placed]; });
    by_offset.insert(after_equal_offsets, i);
  }
  return offsets;
}

}  // namespace tightfit::plan::detail
