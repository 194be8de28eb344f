// The decision search: place buffers bottom-up in canonical order, prune by cross-section sums.
//
// Why canonical order is enough: take any plan and let every buffer fall until it rests on
// offset 0 or on a buffer live at a common step. Nothing rises, so the peak does not grow, and
// now each buffer sits exactly at the top of the highest buffer below it that shares a step.
// Placing buffers in increasing offset order therefore only ever needs the one candidate offset
// per buffer that the buffers already placed force: its "minimum offset". Ties are broken by a
// static preorder, so each canonical plan is reached once.
//
// What prunes:
//   * cross sections: at a step where buffers end, everything still unplaced there must fit
//     between the section's floor (and the current offset, since later buffers only go higher)
//     and the capacity; the floor is the highest top placed there, or the lowest minimum
//     offset of the unplaced buffers there if that is higher (kept with a count of how many
//     share it, so it is only recounted when the last of them moves up);
//   * dominance: a buffer is never placed at or above the top some other unplaced buffer would
//     have at its minimum offset: that buffer could drop into the gap, a plan found elsewhere;
//   * hatless: if the buffer just placed shares no step with an unplaced one, its position
//     cannot matter to them, so a failure below it is a failure of the whole node;
//   * decomposition: once no unplaced buffer crosses the boundary between two sections, both
//     sides are solved separately;
//   * pins: a pinned buffer's minimum offset starts at its pin, and a branch dies as soon as a
//     placement pushes it higher. Letting the free buffers fall as above leaves pins in place,
//     so canonical plans still cover every plan.
//   * overlap pairs: an output may start `below` bytes below the input it consumes, or `above`
//     bytes above it, over it. Falling, a buffer stops at the highest (offset + separation) of
//     the buffers below it, the separation being that distance within a pair (whichever side
//     is lower) and the size otherwise, so the one candidate offset is still the minimum
//     offset; a pair can share at most its overlap_saving(), which the cross sections take off
//     their sums. At distance 0 one member can rest at the other's very offset: placed right
//     after it, it is canonical whatever its rank.
//   * regions: with several regions on one address line, a buffer must lie wholly inside one, and
//     may be held to one (floor and ceiling). A falling buffer stops at its region's start too;
//     and a plan in which some buffer could move to a lower offset (into a faster region) is
//     never needed, since moving it keeps the plan valid. So the one candidate offset is still
//     the minimum offset, moved up to the start of the next region when the buffer would cross
//     the end of its own; a branch dies when that passes the buffer's ceiling.
//   * gaps (an If's exclusive lifetimes): a buffer with gaps is in the sections of the steps it
//     is live at only, and conflicts with the buffers live at one of them. Nothing above
//     depends on a buffer's steps being one interval but the cuts, which count a buffer across
//     its gaps: one that comes back after a gap must be placed with both sides.
//
// Every change on the way down goes to an undo log, replayed backwards on the way up.
#include "plan/packer.hpp"

#include <algorithm>
#include <tuple>

namespace tightfit::plan::detail {

struct Packer::Part {
  std::vector<int> order;  // the part's buffers in preorder: rank -> buffer
  int first_section, end_section;
};

Packer::Packer(std::vector<Item> items, std::vector<Span> regions)
    : items_(std::move(items)), regions_(std::move(regions)) {
  const int n = static_cast<int>(items_.size());
  // A section for each step where some buffer ends: its live set contains the live set of
  // every earlier step back to the previous such step, so these are the only ones to check.
  // A buffer with gaps ends once more before each gap.
  std::vector<int> ends;
  for (const Item& item : items_) {
    ends.push_back(item.last_step);
    for (const StepRange& gap : item.gaps) ends.push_back(gap.first - 1);
  }
  std::sort(ends.begin(), ends.end());
  ends.erase(std::unique(ends.begin(), ends.end()), ends.end());
  auto section_of = [&](int step) {
    return static_cast<int>(std::lower_bound(ends.begin(), ends.end(), step) - ends.begin());
  };
  auto section_after = [&](int step) {
    return static_cast<int>(std::upper_bound(ends.begin(), ends.end(), step) - ends.begin());
  };
  section_members_.resize(ends.size());
  first_section_.resize(n);
  end_section_.resize(n);
  gapped_sections_.resize(n);
  for (int b = 0; b < n; ++b) {
    first_section_[b] = section_of(items_[b].first_step);
    end_section_[b] = section_after(items_[b].last_step);
    if (!items_[b].gaps.empty())
      for (const StepRange& range : live_ranges(items_[b]))
        for (int s = section_of(range.first); s < section_after(range.last); ++s) gapped_sections_[b].push_back(s);
    each_section(b, [&](int s) { section_members_[s].push_back(b); });
  }
  overlaps_.resize(n);
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b)
      if (share_a_step(items_[a], items_[b])) {
        overlaps_[a].push_back(b);
        overlaps_[b].push_back(a);
      }
  initial_cuts_.assign(ends.empty() ? 0 : ends.size() - 1, 0);
  for (int b = 0; b < n; ++b)
    for (int s = first_section_[b]; s + 1 < end_section_[b]; ++s) ++initial_cuts_[s];
}

Outcome Packer::fit(std::uint64_t capacity, Preorder preorder, std::int64_t node_limit, Clock::time_point deadline,
                    std::vector<std::uint64_t>& offsets) {
  // Callers probe capacity after capacity: once the deadline has passed, not even the set-up.
  if (now_() > deadline) return Outcome::OutOfTime;
  const int n = static_cast<int>(items_.size());
  capacity_ = capacity;
  preorder_ = preorder;
  solution_.assign(n, 0);
  min_offset_.assign(n, 0);
  for (int b = 0; b < n; ++b) {
    min_offset_[b] = settle(b, std::max(items_[b].floor, items_[b].fixed_offset.value_or(0)));
    if (out_of_bounds(b)) return Outcome::NoneExists;
  }
  section_floor_.assign(section_members_.size(), 0);
  section_total_.assign(section_members_.size(), 0);
  for (int b = 0; b < n; ++b) each_section(b, [&](int s) { section_total_[s] += items_[b].size; });
  section_shared_.assign(section_members_.size(), 0);
  for (int b = 0; b < n; ++b)
    if (items_[b].overlap_input >= 0) share(b, true);
  lowest_.assign(section_members_.size(), kPlaced);
  lowest_count_.assign(section_members_.size(), 0);
  for (std::size_t s = 0; s < section_members_.size(); ++s)
    for (const int member : section_members_[s]) lowest_[s] = std::min(lowest_[s], min_offset_[member]);
  for (std::size_t s = 0; s < section_members_.size(); ++s)
    for (const int member : section_members_[s]) lowest_count_[s] += min_offset_[member] == lowest_[s];
  affected_.assign(section_members_.size(), 0);
  undo_.clear();
  cuts_ = initial_cuts_;
  nodes_left_ = node_limit;
  deadline_ = deadline;
  out_of_time_ = false;

  std::vector<int> everything(n), zero_cuts;
  for (int b = 0; b < n; ++b) everything[b] = b;
  for (int s = 0; s < static_cast<int>(cuts_.size()); ++s)
    if (cuts_[s] == 0) zero_cuts.push_back(s);
  const Outcome outcome = solve_pieces(everything, 0, static_cast<int>(section_members_.size()), zero_cuts);
  if (outcome == Outcome::Found) offsets = solution_;
  return outcome;
}

Outcome Packer::solve_pieces(const std::vector<int>& pool, int first_section, int end_section,
                             const std::vector<int>& zero_cuts) {
  int begin = first_section;
  for (std::size_t k = 0; k <= zero_cuts.size(); ++k) {
    const int end = k < zero_cuts.size() ? zero_cuts[k] + 1 : end_section;
    std::vector<int> members;
    for (const int b : pool)
      if (min_offset_[b] != kPlaced && ranges_overlap(first_section_[b], end_section_[b], begin, end))
        members.push_back(b);
    if (!members.empty()) {
      const Outcome outcome = solve_part(std::move(members), begin, end);
      if (outcome != Outcome::Found) return outcome;
    }
    begin = end;
  }
  return Outcome::Found;
}

Outcome Packer::solve_part(std::vector<int> members, int first_section, int end_section) {
  struct Keys {
    std::uint64_t width, area, total;
  };
  std::vector<Keys> keys(items_.size());
  for (const int b : members) {
    const Item& item = items_[b];
    Keys& k = keys[b];
    k.width = static_cast<std::uint64_t>(item.last_step - item.first_step) + 1;
    k.area = k.width * item.size;
    k.total = 0;
    each_section(b, [&](int s) { k.total = std::max(k.total, section_total_[s]); });
  }
  auto key_tuple = [&](int b) {
    const Keys& k = keys[b];
    switch (preorder_) {
      case Preorder::WAT:
        return std::make_tuple(k.width, k.area, k.total);
      case Preorder::TAW:
        return std::make_tuple(k.total, k.area, k.width);
      case Preorder::TWA:
        break;
    }
    return std::make_tuple(k.total, k.width, k.area);
  };
  std::sort(members.begin(), members.end(), [&](int a, int b) {
    const auto ka = key_tuple(a), kb = key_tuple(b);
    if (ka != kb) return ka > kb;
    return a < b;
  });
  Part part{std::move(members), first_section, end_section};
  std::vector<Candidate> everyone(part.order.size());
  for (std::size_t rank = 0; rank < everyone.size(); ++rank) everyone[rank] = {0, static_cast<int>(rank)};
  return search(part, everyone, 0, 0);
}

Outcome Packer::search(const Part& part, const std::vector<Candidate>& previous, std::uint64_t floor_offset,
                       int floor_rank) {
  if (nodes_left_ <= 0) return Outcome::OutOfNodes;
  --nodes_left_;
  if (out_of_time()) return Outcome::OutOfTime;

  std::vector<Candidate> ordering;
  ordering.reserve(previous.size());
  for (const Candidate& c : previous) {
    const int b = part.order[c.rank];
    if (min_offset_[b] != kPlaced) ordering.push_back({min_offset_[b], c.rank});
  }
  if (ordering.empty()) return Outcome::Found;
  std::sort(ordering.begin(), ordering.end(), [](const Candidate& x, const Candidate& y) {
    return x.offset != y.offset ? x.offset < y.offset : x.rank < y.rank;
  });
  std::uint64_t lowest_top = UINT64_MAX;
  for (const Candidate& c : ordering) lowest_top = std::min(lowest_top, c.offset + items_[part.order[c.rank]].size);

  const int last_placed = part.order[floor_rank];
  for (const Candidate& c : ordering) {
    const bool rests_on_last =
        min_offset_[last_placed] == kPlaced && separation(items_, last_placed, part.order[c.rank]) == 0;
    if (c.offset < floor_offset || (c.offset == floor_offset && c.rank < floor_rank && !rests_on_last))
      continue;                         // not canonical
    if (c.offset >= lowest_top) break;  // dominated, and so is everything after it
    bool hatless = false;
    const Outcome outcome = place_and_descend(part, ordering, c, hatless);
    if (outcome != Outcome::NoneExists) return outcome;
    if (hatless) break;
  }
  return Outcome::NoneExists;
}

void Packer::assign(std::uint64_t& value, std::uint64_t new_value) {
  undo_.emplace_back(&value, value);
  value = new_value;
}

void Packer::raise_min_offset(int b, std::uint64_t value) {
  const std::uint64_t old = min_offset_[b];
  assign(min_offset_[b], value);
  each_section(b, [&](int s) {
    if (affected_[s] || old != lowest_[s]) return;
    if (lowest_count_[s] > 1) {
      assign(lowest_count_[s], lowest_count_[s] - 1);
      return;
    }
    // b was the last at the section's lowest offset: recount it once all buffers have moved.
    affected_[s] = 1;
    affected_list_.push_back(s);
  });
}

Outcome Packer::place_and_descend(const Part& part, const std::vector<Candidate>& ordering, const Candidate& chosen,
                                  bool& hatless) {
  if (out_of_time()) return Outcome::OutOfTime;
  const int b = part.order[chosen.rank];
  const Item& item = items_[b];
  const std::uint64_t top = chosen.offset + item.size;
  const std::size_t undo_mark = undo_.size();
  solution_[b] = chosen.offset;
  raise_min_offset(b, kPlaced);

  // Buffers sharing a step with b must now go above it.
  bool out_of_place = false;  // a pin or a ceiling was passed
  hatless = true;
  for (const int other : overlaps_[b]) {
    if (min_offset_[other] == kPlaced) continue;
    hatless = false;
    const std::uint64_t above = chosen.offset + separation(items_, b, other);
    if (min_offset_[other] >= above) continue;
    raise_min_offset(other, settle(other, above));
    if (out_of_bounds(other)) out_of_place = true;
  }
  // A pair with one member placed shares nothing more among the unplaced: b's pair as an output,
  // and as an input.
  const bool unshare_below = item.overlap_input >= 0 && min_offset_[item.overlap_input] != kPlaced;
  const bool unshare_above = item.overlap_output >= 0 && min_offset_[item.overlap_output] != kPlaced;
  if (unshare_below) share(b, false);
  if (unshare_above) share(item.overlap_output, false);
  // Nothing unplaced in a section goes below the lowest of their minimum offsets. In b's own
  // sections everything unplaced shares a step with b, so that lowest is at least b's top, or
  // b's distance above it for the input b may overlap.
  for (const int s : affected_list_) {
    affected_[s] = 0;
    std::uint64_t lowest = kPlaced, count = 0;
    for (const int member : section_members_[s]) {
      if (min_offset_[member] < lowest) {
        lowest = min_offset_[member];
        count = 0;
      }
      count += min_offset_[member] == lowest;
    }
    assign(lowest_[s], lowest);
    assign(lowest_count_[s], count);
    if (lowest != kPlaced && section_floor_[s] < lowest) assign(section_floor_[s], lowest);
  }
  affected_list_.clear();
  each_section(b, [&](int s) {
    assign(section_floor_[s], lowest_[s] == kPlaced ? top : lowest_[s]);
    section_total_[s] -= item.size;
  });

  Outcome outcome = Outcome::NoneExists;
  if (!out_of_place && sections_fit(part, chosen.offset)) outcome = split_or_search(part, ordering, chosen);

  while (undo_.size() > undo_mark) {
    *undo_.back().first = undo_.back().second;
    undo_.pop_back();
  }
  each_section(b, [&](int s) { section_total_[s] += item.size; });
  if (unshare_below) share(b, true);
  if (unshare_above) share(item.overlap_output, true);
  return outcome;
}

void Packer::share(int output, bool add) {
  const int input = items_[output].overlap_input;
  const std::uint64_t saving = overlap_saving(items_, output);
  // The sections of both; with gaps, a section of the output's inside the input's range may
  // still not be the input's.
  auto in_input = [&](int s) {
    if (s < first_section_[input] || s >= end_section_[input]) return false;
    const std::vector<int>& listed = gapped_sections_[input];
    return listed.empty() || std::binary_search(listed.begin(), listed.end(), s);
  };
  each_section(output, [&](int s) {
    if (in_input(s)) section_shared_[s] = add ? section_shared_[s] + saving : section_shared_[s] - saving;
  });
}

Outcome Packer::split_or_search(const Part& part, const std::vector<Candidate>& ordering, const Candidate& chosen) {
  const int b = part.order[chosen.rank];
  std::vector<int> zero_cuts;
  for (int s = first_section_[b]; s + 1 < end_section_[b]; ++s)
    if (--cuts_[s] == 0) zero_cuts.push_back(s);
  const Outcome outcome = zero_cuts.empty() ? search(part, ordering, chosen.offset, chosen.rank)
                                            : solve_pieces(part.order, part.first_section, part.end_section, zero_cuts);
  for (int s = first_section_[b]; s + 1 < end_section_[b]; ++s) ++cuts_[s];
  return outcome;
}

std::uint64_t Packer::settle(int b, std::uint64_t offset) const {
  const Item& item = items_[b];
  offset = round_up(offset, item.alignment);
  for (const Span& region : regions_) {
    const std::uint64_t start = std::max(offset, region.begin);
    if (start + item.size <= region.end) return start;
  }
  // Fits in no region: past the last one, where its ceiling or the capacity ends the branch.
  return regions_.empty() ? offset : std::max(offset, regions_.back().end);
}

bool Packer::out_of_bounds(int b) const {
  const Item& item = items_[b];
  return (item.fixed_offset && min_offset_[b] > *item.fixed_offset) || min_offset_[b] + item.size > item.ceiling;
}

// Read at every node and every placement tried: one node may try every unplaced buffer, and a
// placement may update thousands of section counts (over ten milliseconds on 400 buffers under
// the sanitizers), so reading the clock only every 256 nodes let the deadline pass by most of a
// second there. A reading costs tens of nanoseconds, far below the cheapest placement.
bool Packer::out_of_time() {
  if (!out_of_time_ && now_() > deadline_) out_of_time_ = true;
  return out_of_time_;
}

bool Packer::sections_fit(const Part& part, std::uint64_t floor_offset) const {
  for (int s = part.first_section; s < part.end_section; ++s)
    if (std::max(floor_offset, section_floor_[s]) + section_total_[s] - section_shared_[s] > capacity_) return false;
  return true;
}

}  // namespace tightfit::plan::detail
