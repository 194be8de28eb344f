// TensorFlow Lite Micro's GreedyMemoryPlanner, reproduced to the byte: the baseline every report
// compares with, and the plan the search starts from.
#pragma once

#include <cstdint>
#include <vector>

#include "plan/items.hpp"

namespace tightfit::plan::detail {

// TFLite Micro's placement of `items`, taken as added to its planner in this order, each size
// first rounded up to a multiple of `size_granule` (1: sizes as given; its MicroAllocator uses
// 16). Pinned items keep their offsets and are placed first, in order; then the others, largest
// first, equal sizes in the reverse of their order (TFLM's AddBuffer files them from the back of
// the array its stable sort then orders); each at the lowest offset where it fits: the first
// gap, walking the items placed so far that share a step with it in offset order, that holds
// its size. Lives are inclusive of both steps. An item's offset is also rounded up to its
// alignment, which changes nothing unless TFLM's own offset would break that alignment (it
// cannot when every alignment divides `size_granule` and every pin is a multiple of it).
std::vector<std::uint64_t> greedy_offsets(const std::vector<Item>& items, std::uint64_t size_granule);

}  // namespace tightfit::plan::detail
