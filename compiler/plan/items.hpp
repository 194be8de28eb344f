// The planner's inner view of a problem: the buffers of one region, without names or regions.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace tightfit::plan::detail {

struct Item {  // one buffer of one region, size > 0
  std::uint64_t size = 0;
  std::uint64_t alignment = 1;                // a power of two
  int first_step = 0, last_step = 0;          // inclusive
  std::optional<std::uint64_t> fixed_offset;  // a pin
  // Where the item may lie: [floor, ceiling). Only the search of several regions at once sets
  // these, to hold a buffer inside the region it was given.
  std::uint64_t floor = 0, ceiling = UINT64_MAX;
};

// max(offset + size): the bytes the region needs for these offsets.
std::uint64_t peak_of(const std::vector<Item>& items, const std::vector<std::uint64_t>& offsets);

// The largest number of bytes live at one step, counting the padding that alignment forces
// below every buffer but the top one. `step` receives a step where it is reached.
std::uint64_t live_sum_bound(const std::vector<Item>& items, int* step);

}  // namespace tightfit::plan::detail
