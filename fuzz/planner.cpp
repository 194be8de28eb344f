// Fuzz target: bytes -> a small planning problem (regions with caps, buffers with sizes,
// alignments, live intervals, pins and overlap pairs) -> plan::solve() with a tiny time limit. Checks, none of
// which trusts the solver's own data structures:
//   * a plan that is not infeasible passes the independent validator (plan/validate.cpp);
//   * lower_bound <= peak; with one region, peak <= the greedy-by-size peak (the search starts
//     from it) and the proven bound is at least the live-sum bound;
//   * "optimal" with one region means peak == lower_bound, and on tiny problems an exhaustive
//     search written here finds no plan with a smaller peak.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "error.hpp"
#include "plan/planner.hpp"
#include "plan/validate.hpp"

using namespace tightfit::plan;

namespace {

[[noreturn]] void bug(const std::string& what) {
  std::fprintf(stderr, "planner fuzz: %s\n", what.c_str());
  std::abort();
}

struct Reader {
  const std::uint8_t* data;
  std::size_t size, at = 0;
  bool more(std::size_t n) const { return at + n <= size; }
  std::uint8_t byte() { return at < size ? data[at++] : 0; }
  std::uint16_t word() { return static_cast<std::uint16_t>(byte() | (byte() << 8)); }
};

// Whether some placement of the one-region problem reaches a peak below `peak`: every aligned
// offset of every buffer, depth first; gives up (true: "don't know") past a node budget.
bool better_exists(const Problem& problem, std::uint64_t peak, bool& gave_up) {
  const auto& b = problem.buffers;
  std::vector<std::uint64_t> offset(b.size(), 0);
  long budget = 300000;
  auto clash = [&](std::size_t i, std::size_t j) {
    if (!(b[i].size && b[j].size && b[i].first_step <= b[j].last_step && b[j].first_step <= b[i].last_step &&
          offset[i] < offset[j] + b[j].size && offset[j] < offset[i] + b[i].size))
      return false;
    // An overlap pair shares bytes lawfully from its distance below or above (docs/planner.md).
    for (const Overlap& o : problem.overlaps) {
      const bool forward = o.output == static_cast<int>(i) && o.input == static_cast<int>(j);
      if (!forward && !(o.output == static_cast<int>(j) && o.input == static_cast<int>(i))) continue;
      const std::uint64_t out = forward ? offset[i] : offset[j], input = forward ? offset[j] : offset[i];
      return !((o.below && out + *o.below <= input) || (o.above && input + *o.above <= out));
    }
    return true;
  };
  std::function<bool(std::size_t)> place = [&](std::size_t i) -> bool {
    if (i == b.size()) return true;
    if (--budget < 0) {
      gave_up = true;
      return false;
    }
    std::vector<std::uint64_t> options;
    if (b[i].pin)
      options.push_back(b[i].pin->offset);
    else if (b[i].size == 0)
      options.push_back(0);
    else
      for (std::uint64_t o = 0; o + b[i].size < peak; o += b[i].alignment) options.push_back(o);
    for (std::uint64_t o : options) {
      if (b[i].size && o + b[i].size >= peak) continue;
      offset[i] = o;
      bool ok = true;
      for (std::size_t j = 0; j < i && ok; ++j) ok = !clash(i, j);
      if (ok && place(i + 1)) return true;
      if (gave_up) return false;
    }
    return false;
  };
  return place(0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Reader in{data, size};
  Problem problem;
  const std::uint8_t head = in.byte();
  const int regions = 1 + head % 3;
  const bool tiny = (head & 0x80) != 0;  // small sizes: the exhaustive check can run
  for (int r = 0; r < regions; ++r) {
    const std::uint16_t cap = in.word();
    Region region;
    region.name = "r" + std::to_string(r);
    region.capacity = cap >= 0xF000 ? UINT64_MAX : std::uint64_t{cap} * 16;
    region.alignment = 16;
    problem.regions.push_back(region);
  }
  while (in.more(6) && problem.buffers.size() < (tiny ? 5u : 40u)) {
    Buffer b;
    const std::uint16_t s = in.word();
    b.size = tiny ? s % 12 : s % 8192;
    b.first_step = in.byte() % 32;
    b.last_step = b.first_step + in.byte() % 12;
    b.alignment = 1u << (in.byte() % (tiny ? 3 : 6));
    const std::uint8_t pin = in.byte();
    if (pin & 0x80) b.pin = Pin{(pin >> 5) % regions, std::uint64_t{pin & 0x1fu} * b.alignment * (tiny ? 1 : 8)};
    b.name = "b" + std::to_string(problem.buffers.size());
    problem.buffers.push_back(b);
  }
  // Overlap pairs from what is left: malformed ones (a buffer twice on a side) are refused.
  const int n = static_cast<int>(problem.buffers.size());
  while (n >= 2 && in.more(4) && problem.overlaps.size() < static_cast<std::size_t>(n / 2)) {
    Overlap pair;
    pair.output = in.byte() % n;
    pair.input = in.byte() % n;
    const std::uint8_t below = in.byte(), above = in.byte();
    if (below & 0x80) pair.below = std::uint64_t{below & 0x7fu} % (tiny ? 12 : 8192);
    if (above & 0x80) pair.above = std::uint64_t{above & 0x7fu} % (tiny ? 12 : 8192);
    problem.overlaps.push_back(pair);
  }

  Options options;
  options.time_limit_seconds = 0.005;
  Plan plan;
  try {
    plan = solve(problem, options);
  } catch (const tightfit::Error&) {
    return 0;  // refused as malformed (e.g. pins that overlap)
  }
  if (plan.placements.size() != problem.buffers.size()) bug("placements missing");
  if (plan.status == Status::Infeasible) {
    if (plan.reason.empty()) bug("infeasible without a reason");
    return 0;
  }
  const auto errors = validate(problem, plan);
  if (!errors.empty()) bug("the plan fails validation: " + errors.front());
  if (plan.lower_bound > plan.peak) bug("lower bound above the peak");
  if (regions == 1) {
    if (plan.peak > plan.greedy_peak)
      bug("worse than greedy: " + std::to_string(plan.peak) + " > " + std::to_string(plan.greedy_peak));
    if (plan.lower_bound < live_sum_lower_bound(problem)) bug("bound below the live-sum bound");
    if (plan.status == Status::Optimal && plan.peak != plan.lower_bound) bug("optimal but peak != lower bound");
    if (plan.status == Status::Optimal && tiny && plan.peak > 0 && plan.peak <= 48) {
      bool gave_up = false;
      if (better_exists(problem, plan.peak, gave_up) && !gave_up)
        bug("claimed optimal at " + std::to_string(plan.peak) + " but a smaller plan exists");
    }
  }
  return 0;
}
