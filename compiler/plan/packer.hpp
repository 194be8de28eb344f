// The exact search at the heart of the planner: do these buffers fit below a given capacity?
// A branch and bound over canonical solutions, after MiniMalloc (Moffitt, ASPLOS 2023).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <vector>

#include "plan/items.hpp"

namespace tightfit::plan::detail {

using Clock = std::chrono::steady_clock;

enum class Outcome {
  Found,       // offsets filled in, every top <= capacity
  NoneExists,  // proven: no placement fits below the capacity
  OutOfNodes,  // the node limit ran out first
  OutOfTime,   // the deadline passed first
};

// The static order in which the search tries buffers that could go at the same offset.
// Each is a key list compared lexicographically, largest first: W = live width in steps,
// A = area (size x width), T = the fullest cross-section the buffer lives in.
enum class Preorder { WAT, TAW, TWA };
inline constexpr Preorder kPreorders[] = {Preorder::WAT, Preorder::TAW, Preorder::TWA};

// One region's bytes on the common address line of a search over several regions.
struct Span {
  std::uint64_t begin = 0, end = 0;
};

class Packer {
 public:
  // With `regions` (ascending, disjoint, each begin a multiple of every item's alignment) the
  // search places every item wholly inside one of them; without, anywhere below the capacity.
  explicit Packer(std::vector<Item> items, std::vector<Span> regions = {});

  // Searches for offsets with every top (offset + size) <= capacity, visiting at most
  // `node_limit` nodes. The result depends on the arguments only, except for OutOfTime.
  Outcome fit(std::uint64_t capacity, Preorder preorder, std::int64_t node_limit, Clock::time_point deadline,
              std::vector<std::uint64_t>& offsets);

  // The clock the deadline is compared with: steady_clock unless a test gives one it controls.
  void set_clock(std::function<Clock::time_point()> now) { now_ = std::move(now); }

 private:
  struct Part;  // buffers whose placement does not interact with the rest: a range of sections
  struct Candidate {
    std::uint64_t offset;
    int rank;  // position in the part's preorder
  };
  Outcome solve_pieces(const std::vector<int>& pool, int first_section, int end_section,
                       const std::vector<int>& zero_cuts);
  Outcome solve_part(std::vector<int> members, int first_section, int end_section);
  Outcome search(const Part& part, const std::vector<Candidate>& previous, std::uint64_t floor_offset, int floor_rank);
  Outcome place_and_descend(const Part& part, const std::vector<Candidate>& ordering, const Candidate& chosen,
                            bool& hatless);
  Outcome split_or_search(const Part& part, const std::vector<Candidate>& ordering, const Candidate& chosen);
  bool sections_fit(const Part& part, std::uint64_t floor_offset) const;
  void assign(std::uint64_t& value, std::uint64_t new_value);  // undone on the way back up
  void raise_min_offset(int buffer, std::uint64_t value);
  std::uint64_t settle(int buffer, std::uint64_t offset) const;  // lowest legal offset >= `offset`
  bool out_of_bounds(int buffer) const;                          // its minimum offset passed its pin or its ceiling
  bool out_of_time();  // reads the clock unless the deadline has been seen already

  // The problem, fixed at construction.
  std::vector<Item> items_;
  std::vector<Span> regions_;
  std::vector<std::vector<int>> section_members_;  // a section: the buffers live at one step where one ends
  std::vector<int> first_section_, end_section_;   // buffer -> its sections [first, end)
  // A buffer with gaps (an If's exclusive lifetimes) is in only some sections of [first, end):
  // those, listed; empty for the others. each_section() goes over a buffer's sections either way.
  std::vector<std::vector<int>> gapped_sections_;
  template <class F>
  void each_section(int b, F f) const {
    if (gapped_sections_[b].empty()) {
      for (int s = first_section_[b]; s < end_section_[b]; ++s) f(s);
    } else {
      for (const int s : gapped_sections_[b]) f(s);
    }
  }
  std::vector<std::vector<int>> overlaps_;  // buffer -> buffers live at a common step
  std::vector<int> initial_cuts_;           // cut s: buffers whose sections [first, end) hold both s and s + 1
  void share(int output, bool add);         // adds or takes a pair's saving in its sections

  // The state of one fit() call.
  static constexpr std::uint64_t kPlaced = UINT64_MAX;  // the min_offset_ of a placed buffer
  std::uint64_t capacity_ = 0;
  Preorder preorder_ = Preorder::WAT;
  std::vector<std::uint64_t> min_offset_, solution_;          // solution_: offsets of the placed
  std::vector<std::uint64_t> section_floor_, section_total_;  // highest placed top / unplaced bytes
  std::vector<std::uint64_t> section_shared_;                 // bytes that unplaced overlap pairs there can share
  std::vector<std::uint64_t> lowest_, lowest_count_;          // lowest min offset of the unplaced, and how many have it
  std::vector<int> cuts_;
  std::vector<char> affected_;      // scratch: sections whose lowest must be recounted, as flags
  std::vector<int> affected_list_;  // and as a list
  std::vector<std::pair<std::uint64_t*, std::uint64_t>> undo_;  // values changed on the way down
  std::int64_t nodes_left_ = 0;
  std::function<Clock::time_point()> now_ = Clock::now;
  Clock::time_point deadline_;
  bool out_of_time_ = false;
};

}  // namespace tightfit::plan::detail
