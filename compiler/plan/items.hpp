// The planner's inner view of a problem: the buffers of one region, without names or regions.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "plan/planner.hpp"

namespace tightfit::plan::detail {

struct Item {  // one buffer of one region, size > 0
  std::uint64_t size = 0;
  std::uint64_t alignment = 1;                // a power of two
  int first_step = 0, last_step = 0;          // inclusive
  std::optional<std::uint64_t> fixed_offset;  // a pin
  // Where the item may lie: [floor, ceiling). Only the search of several regions at once sets
  // these, to hold a buffer inside the region it was given.
  std::uint64_t floor = 0, ceiling = UINT64_MAX;
  // An overlap pair (plan::Overlap), as indices into the same list: this item is the output of
  // the input `overlap_input` (-1: none), which it may start `overlap_below` bytes below; and
  // the input of the output `overlap_output` (-1: none), which may start `overlap_above` bytes
  // above it. kNoOverlap: not that way.
  int overlap_input = -1, overlap_output = -1;
  std::uint64_t overlap_below = UINT64_MAX, overlap_above = UINT64_MAX;
  std::vector<StepRange> gaps;  // Buffer::gaps: steps inside the interval where it is dead
};

// Whether the item is live at `step`: in its interval and in none of its gaps.
bool live_at(const Item& item, int step);

// Whether two items are live at a common step (one of them in a gap of the other is not).
bool share_a_step_across_gaps(const Item& a, const Item& b);
inline bool share_a_step(const Item& a, const Item& b) {
  if (a.first_step > b.last_step || b.first_step > a.last_step) return false;
  return (a.gaps.empty() && b.gaps.empty()) || share_a_step_across_gaps(a, b);
}

// The maximal runs of steps the item is live at, ascending: its interval cut by its gaps.
std::vector<StepRange> live_ranges(const Item& item);

// The bytes the pair of `output` (and its overlap_input) can share at most, the better way:
// min(output size - below, input size) or min(input size - above, output size); 0 for none.
std::uint64_t overlap_saving(const std::vector<Item>& items, int output);

// How far above an item placed at offset x the other item must start: its size, or less when
// the two are an overlap pair and the lower one's side allows it (an output its `below`, an
// input its output's `above`).
std::uint64_t separation(const std::vector<Item>& items, int lower, int upper);

// max(offset + size): the bytes the region needs for these offsets.
std::uint64_t peak_of(const std::vector<Item>& items, const std::vector<std::uint64_t>& offsets);

// The largest number of bytes live at one step, counting the padding that alignment forces
// below every buffer but the top one (at a step where overlap pairs live: the sizes less what the
// pairs can share). `step` receives a step where it is reached.
std::uint64_t live_sum_bound(const std::vector<Item>& items, int* step);

}  // namespace tightfit::plan::detail
