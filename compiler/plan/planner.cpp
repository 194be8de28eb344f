// solve(): checks the problem, chooses the buffers' regions by one exact search over all the
// regions together (then moves the busiest to the fastest regions where everything still fits),
// then for each region squeezes the peak between a proven lower bound and the best plan found,
// using the exact search of packer.cpp as a yes/no oracle at one capacity at a time.
#include "plan/planner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "error.hpp"
#include "plan/greedy.hpp"
#include "plan/packer.hpp"

namespace tightfit::plan {

using detail::Clock;
using detail::Item;
using detail::Outcome;

bool Buffer::live_at(int step) const {
  if (step < first_step || step > last_step) return false;
  for (const StepRange& gap : gaps)
    if (gap.first <= step && step <= gap.last) return false;
  return true;
}

bool output_above_input(const Problem& problem, const Overlap& pair, const Placement& output, const Placement& input) {
  const std::uint64_t output_end = output.offset + problem.buffers[pair.output].size;
  const std::uint64_t input_end = input.offset + problem.buffers[pair.input].size;
  const bool share_a_byte =
      output.region == input.region && ranges_overlap(output.offset, output_end, input.offset, input_end);
  return share_a_byte && !(pair.below && output.offset + *pair.below <= input.offset);
}

const char* status_name(Status status) {
  switch (status) {
    case Status::Optimal:
      return "optimal";
    case Status::Feasible:
      return "feasible";
    case Status::Infeasible:
      return "infeasible";
  }
  return "?";
}

namespace {

bool is_power_of_two(std::uint64_t x) { return x != 0 && (x & (x - 1)) == 0; }

void check_problem(const Problem& problem) {
  if (problem.regions.empty()) throw Error("the memory plan needs at least one region");
  for (const Region& region : problem.regions)
    if (!is_power_of_two(region.alignment))
      throw Error(fmt::format("region '{}': alignment {} is not a power of two", region.name, region.alignment));
  for (const Buffer& buffer : problem.buffers) {
    if (!is_power_of_two(buffer.alignment))
      throw Error(fmt::format("buffer '{}': alignment {} is not a power of two", buffer.name, buffer.alignment));
    if (buffer.first_step > buffer.last_step)
      throw Error(fmt::format("buffer '{}': live from step {} to step {}, which ends before it starts", buffer.name,
                              buffer.first_step, buffer.last_step));
    int after = buffer.first_step + 1;  // a gap starts here at the earliest: after a live step
    for (const StepRange& gap : buffer.gaps) {
      if (gap.first < after || gap.first > gap.last || gap.last >= buffer.last_step)
        throw Error(
            fmt::format("buffer '{}': the gap of steps {} to {} is not inside its interval [{}, {}], after its "
                        "previous gap and a live step",
                        buffer.name, gap.first, gap.last, buffer.first_step, buffer.last_step));
      after = gap.last + 2;
    }
    if (buffer.pin) {
      if (buffer.pin->region < 0 || buffer.pin->region >= static_cast<int>(problem.regions.size()))
        throw Error(
            fmt::format("buffer '{}': pinned to region {}, which does not exist", buffer.name, buffer.pin->region));
      if (buffer.pin->offset % buffer.alignment != 0)
        throw Error(fmt::format("buffer '{}': pinned at offset {}, not a multiple of its alignment {}", buffer.name,
                                buffer.pin->offset, buffer.alignment));
    }
  }
  // Offsets and section sums are computed in 64 bits: keep every total far from overflow.
  constexpr std::uint64_t kMaxBytes = std::uint64_t{1} << 60;
  std::uint64_t total = 0;
  for (const Buffer& buffer : problem.buffers) {
    const std::uint64_t pin_offset = buffer.pin ? buffer.pin->offset : 0;
    if (buffer.size > kMaxBytes || pin_offset > kMaxBytes || (total += buffer.size + pin_offset) > kMaxBytes)
      throw Error(fmt::format("buffer '{}': sizes and pin offsets add up to more than 2^60 bytes", buffer.name));
  }
  std::vector<int> as_output(problem.buffers.size(), 0), as_input(problem.buffers.size(), 0);
  for (const Overlap& pair : problem.overlaps) {
    const int n = static_cast<int>(problem.buffers.size());
    if (pair.output < 0 || pair.output >= n || pair.input < 0 || pair.input >= n || pair.output == pair.input)
      throw Error(
          fmt::format("overlap pair ({}, {}): not two different buffers of the problem", pair.output, pair.input));
    if (++as_output[pair.output] > 1 || ++as_input[pair.input] > 1)
      throw Error(fmt::format("buffer '{}': in more than one overlap pair on the same side",
                              problem.buffers[as_output[pair.output] > 1 ? pair.output : pair.input].name));
    for (const Overlap& other : problem.overlaps)
      if (other.output == pair.input && other.input == pair.output)
        throw Error(fmt::format("buffers '{}' and '{}': overlap pairs both ways", problem.buffers[pair.output].name,
                                problem.buffers[pair.input].name));
    if (pair.below.value_or(0) > kMaxBytes || pair.above.value_or(0) > kMaxBytes)
      throw Error(fmt::format("buffer '{}': overlap distance too large", problem.buffers[pair.output].name));
  }
  // Pins are not moved, so two that collide leave no plan at all.
  const auto& buffers = problem.buffers;
  for (std::size_t i = 0; i < buffers.size(); ++i)
    for (std::size_t j = i + 1; j < buffers.size(); ++j) {
      const Buffer &a = buffers[i], &b = buffers[j];
      if (!a.pin || !b.pin || a.pin->region != b.pin->region || a.size == 0 || b.size == 0) continue;
      bool live_together = false;  // pins are few: step by step
      for (int step = std::max(a.first_step, b.first_step); step <= std::min(a.last_step, b.last_step); ++step)
        live_together = live_together || (a.live_at(step) && b.live_at(step));
      if (live_together && ranges_overlap(a.pin->offset, a.pin->offset + a.size, b.pin->offset, b.pin->offset + b.size))
        throw Error(
            fmt::format("buffers '{}' and '{}' are pinned to overlapping bytes while both are live", a.name, b.name));
    }
}

// The buffers of `members` as the search sees them (zero-size ones are left out by callers).
// Overlap pairs whose two buffers are both among the members carry over.
std::vector<Item> items_of(const Problem& problem, const std::vector<int>& members) {
  std::vector<Item> items;
  std::vector<int> item_of(problem.buffers.size(), -1);
  for (const int b : members) {
    const Buffer& buffer = problem.buffers[b];
    Item item;
    item.size = buffer.size;
    item.alignment = buffer.alignment;
    item.first_step = buffer.first_step;
    item.last_step = buffer.last_step;
    item.gaps = buffer.gaps;
    if (buffer.pin) item.fixed_offset = buffer.pin->offset;
    item_of[b] = static_cast<int>(items.size());
    items.push_back(item);
  }
  for (const Overlap& pair : problem.overlaps) {
    if (item_of[pair.output] < 0 || item_of[pair.input] < 0) continue;
    Item &out = items[item_of[pair.output]], &in = items[item_of[pair.input]];
    out.overlap_input = item_of[pair.input];
    in.overlap_output = item_of[pair.output];
    out.overlap_below = pair.below.value_or(UINT64_MAX);
    in.overlap_above = pair.above.value_or(UINT64_MAX);
  }
  return items;
}

std::uint64_t pinned_top(const std::vector<Item>& items) {
  std::uint64_t top = 0;
  for (const Item& item : items)
    if (item.fixed_offset) top = std::max(top, *item.fixed_offset + item.size);
  return top;
}

// Every offset a canonical plan uses, hence every peak, is a multiple of this. Tops are sums
// of sizes (and pins, and overlap distances); aligning a multiple of g up to a changes nothing when a divides g, and
// gives a multiple of g when g divides a. Alignments are powers of two, so after one pass that
// replaces g by gcd(g, a) for each a not dividing it, one of the two holds for every a.
std::uint64_t granularity(const std::vector<Item>& items) {
  std::uint64_t g = 0;
  for (const Item& item : items) {
    g = std::gcd(g, item.size);
    if (item.fixed_offset) g = std::gcd(g, *item.fixed_offset);
    // An input may rest on its output, or an output on its input, at a distance.
    if (item.overlap_below != UINT64_MAX) g = std::gcd(g, item.overlap_below);
    if (item.overlap_above != UINT64_MAX) g = std::gcd(g, item.overlap_above);
  }
  for (const Item& item : items)
    if (g % item.alignment != 0) g = std::gcd(g, item.alignment);
  return g == 0 ? 1 : g;
}

struct RegionPlan {
  std::vector<std::uint64_t> offsets;
  std::uint64_t peak = 0, lower_bound = 0;
  bool optimal() const { return peak <= lower_bound; }
};

// The smallest peak for these items, proven or as close as the deadline allows. Starts from the
// better of TFLite Micro's greedy plans with sizes as given and rounded to 16 bytes (so never
// above Plan::greedy_peak with one region), or from `seed`, a plan already known, if that is
// lower; then alternates two kinds of capacity probes, each a round of the exact search under
// every preorder with a node limit that doubles every round (so the result depends on the node
// counts, not the clock, unless the deadline cuts; the rounds end once the limit reaches
// `nodes_per_buffer` per buffer, when that is not 0: Options): one at the lower bound, which
// either finds an optimal plan or raises the bound, and a bisection downwards from the incumbent.
RegionPlan minimize_peak(const std::vector<Item>& items, const std::vector<std::uint64_t>& seed,
                         Clock::time_point deadline, std::int64_t nodes_per_buffer,
                         const std::function<void(std::uint64_t peak, std::uint64_t bound)>& report) {
  RegionPlan best;
  best.peak = UINT64_MAX;
  auto adopt_if_lower = [&](const std::vector<std::uint64_t>& offsets) {
    if (detail::peak_of(items, offsets) >= best.peak) return;
    best.offsets = offsets;
    best.peak = detail::peak_of(items, offsets);
  };
  adopt_if_lower(detail::greedy_offsets(items, kTflmSizeGranule));
  adopt_if_lower(detail::greedy_offsets(items, 1));
  if (!seed.empty()) adopt_if_lower(seed);
  if (items.empty()) return best;
  const std::uint64_t g = granularity(items);
  best.lower_bound = round_up(std::max(detail::live_sum_bound(items, nullptr), pinned_top(items)), g);
  // The search's tables are quadratic in the buffers: past the deadline, the greedy plan it is.
  if (best.optimal() || Clock::now() > deadline) return best;

  detail::Packer packer(items);
  std::vector<std::uint64_t> offsets;
  // Searches at `capacity` under each preorder in turn, `limit` nodes each, and adopts a plan
  // it finds.
  auto probe = [&](std::uint64_t capacity, std::int64_t limit) {
    for (const detail::Preorder preorder : detail::kPreorders) {
      const Outcome outcome = packer.fit(capacity, preorder, limit, deadline, offsets);
      if (outcome == Outcome::Found) {
        best.offsets = offsets;
        best.peak = detail::peak_of(items, offsets);
      }
      if (outcome != Outcome::OutOfNodes) return outcome;
    }
    return Outcome::OutOfNodes;
  };

  const std::int64_t n = static_cast<std::int64_t>(items.size());
  const std::int64_t node_budget = nodes_per_buffer * std::max(n, Options::kBudgetBuffers);
  for (std::int64_t node_limit = 2 * n;; node_limit = std::min<std::int64_t>(node_limit * 2, INT64_MAX / 4)) {
    while (!best.optimal()) {
      const Outcome outcome = probe(best.lower_bound, node_limit);
      if (outcome == Outcome::NoneExists) best.lower_bound += g;
      report(best.peak, best.lower_bound);
      if (outcome == Outcome::OutOfTime) return best;
      if (outcome == Outcome::OutOfNodes) break;
    }
    // Downwards, with a quarter of the nodes: plans that are merely better come easily, and on
    // instances whose bound is the optimum the effort belongs to the bound.
    std::uint64_t step = std::max(g, (best.peak - best.lower_bound) / 2 / g * g);
    while (!best.optimal()) {
      const std::uint64_t target = std::max(best.lower_bound, best.peak - std::min(step, best.peak - best.lower_bound));
      const Outcome outcome = probe(target, std::max(n, node_limit / 4));
      if (outcome == Outcome::NoneExists) best.lower_bound = target + g;
      report(best.peak, best.lower_bound);
      if (outcome == Outcome::OutOfTime) return best;
      if (outcome == Outcome::OutOfNodes) {
        if (step == g) break;
        step = std::max(g, step / 2 / g * g);
      }
    }
    if (best.optimal() || (node_budget > 0 && node_limit >= node_budget)) return best;
  }
}

// Which region each buffer is in, and an offset for each that fits every cap.
struct Assignment {
  Outcome outcome = Outcome::NoneExists;  // Found: region_of and offsets hold a plan
  std::vector<int> region_of;
  std::vector<std::uint64_t> offsets;  // within the region
};

// The regions as one search: region r's bytes lie on one address line after those of region r-1,
// and the exact search of packer.cpp places every buffer wholly inside one region. `held[b]` >= 0
// keeps buffer b in that region. Tries the preorders in turn with `node_limit` nodes each, the
// limit doubling until `max_node_limit`: Found, NoneExists (proven: nothing fits), or out of
// nodes or time.
Assignment fit_jointly(const Problem& problem, const std::vector<std::uint64_t>& caps, const std::vector<int>& held,
                       std::int64_t max_node_limit, Clock::time_point deadline) {
  std::uint64_t line_alignment = 1, total = 0;
  std::vector<int> members;
  for (int b = 0; b < static_cast<int>(problem.buffers.size()); ++b) {
    const Buffer& buffer = problem.buffers[b];
    if (buffer.size == 0) continue;
    members.push_back(b);
    line_alignment = std::max<std::uint64_t>(line_alignment, buffer.alignment);
    total += round_up(buffer.size, buffer.alignment) + (buffer.pin ? buffer.pin->offset : 0);
  }
  // No region needs more than all the buffers take stacked (and their pins), so a bigger cap
  // (or none) is cut to that: the line stays far from overflow.
  std::vector<detail::Span> spans;
  for (std::size_t r = 0; r < caps.size(); ++r) {
    const std::uint64_t begin = r == 0 ? 0 : round_up(spans.back().end, line_alignment);
    spans.push_back({begin, begin + std::min(caps[r], total)});
  }
  std::vector<Item> items = items_of(problem, members);
  for (std::size_t i = 0; i < items.size(); ++i) {
    const int b = members[i];
    const Buffer& buffer = problem.buffers[b];
    const int region = buffer.pin ? buffer.pin->region : held[b];
    items[i].ceiling = spans.back().end;
    if (region < 0) continue;
    items[i].floor = spans[region].begin;
    items[i].ceiling = spans[region].end;
    if (buffer.pin) items[i].fixed_offset = spans[region].begin + buffer.pin->offset;
  }

  Assignment result;
  result.region_of.assign(problem.buffers.size(), 0);
  result.offsets.assign(problem.buffers.size(), 0);
  for (int b = 0; b < static_cast<int>(problem.buffers.size()); ++b)
    if (problem.buffers[b].pin) result.region_of[b] = problem.buffers[b].pin->region;
  if (items.empty()) {
    result.outcome = Outcome::Found;
    return result;
  }
  // The search would stop before its first node, but only after building its tables.
  if (Clock::now() > deadline) {
    result.outcome = Outcome::OutOfTime;
    return result;
  }
  detail::Packer packer(items, spans);
  std::vector<std::uint64_t> offsets;
  const std::int64_t n = static_cast<std::int64_t>(items.size());
  for (std::int64_t node_limit = 2 * n;; node_limit *= 2) {
    for (const detail::Preorder preorder : detail::kPreorders) {
      result.outcome = packer.fit(spans.back().end, preorder, std::min(node_limit, max_node_limit), deadline, offsets);
      if (result.outcome != Outcome::OutOfNodes) break;
    }
    if (result.outcome != Outcome::OutOfNodes || node_limit >= max_node_limit) break;
  }
  if (result.outcome != Outcome::Found) return result;
  for (std::size_t i = 0; i < items.size(); ++i) {
    int r = static_cast<int>(spans.size()) - 1;
    while (offsets[i] < spans[r].begin) --r;
    result.region_of[members[i]] = r;
    result.offsets[members[i]] = offsets[i] - spans[r].begin;
  }
  return result;
}

// The regions of the buffers: a placement in which everything fits under every cap, found by one
// search over all the regions together; then, busiest buffer first (by traffic, then size), each
// is moved to the fastest region where the search still finds room for everything, given the
// regions of the busier ones. Pins keep their regions. With one region there is nothing to choose.
Assignment assign_regions(const Problem& problem, const std::vector<std::uint64_t>& caps, Clock::time_point deadline) {
  const int n = static_cast<int>(problem.buffers.size());
  std::vector<int> held(n, -1);
  if (caps.size() == 1) {
    Assignment one;
    one.outcome = Outcome::Found;
    one.region_of.assign(n, 0);
    return one;
  }
  Assignment best = fit_jointly(problem, caps, held, INT64_MAX / 4, deadline);
  if (best.outcome != Outcome::Found) return best;

  std::vector<int> by_traffic;
  for (int b = 0; b < n; ++b)
    if (!problem.buffers[b].pin && problem.buffers[b].size > 0) by_traffic.push_back(b);
  std::stable_sort(by_traffic.begin(), by_traffic.end(), [&](int a, int b) {
    const Buffer &x = problem.buffers[a], &y = problem.buffers[b];
    return x.traffic != y.traffic ? x.traffic > y.traffic : x.size > y.size;
  });
  // Each move is a short search: one that runs out of nodes leaves the buffer where it is.
  const std::int64_t move_node_limit = 50 * static_cast<std::int64_t>(by_traffic.size()) + 1000;
  for (const int b : by_traffic) {
    // Once the deadline has passed every try would fail: none is started.
    if (Clock::now() > deadline) break;
    for (int r = 0; r < best.region_of[b]; ++r) {
      held[b] = r;
      Assignment moved = fit_jointly(problem, caps, held, move_node_limit, deadline);
      if (moved.outcome == Outcome::Found) {
        best = std::move(moved);
        break;
      }
    }
    held[b] = best.region_of[b];
  }
  return best;
}

// "a (8000 B), b (490 B) and 3 more": the buffers, largest first, the first eight named.
std::string largest_first(const Problem& problem, std::vector<int> buffers) {
  std::stable_sort(buffers.begin(), buffers.end(),
                   [&](int a, int b) { return problem.buffers[a].size > problem.buffers[b].size; });
  std::string names;
  const std::size_t shown = std::min<std::size_t>(buffers.size(), 8);
  for (std::size_t i = 0; i < shown; ++i)
    names +=
        fmt::format("{}{} ({} B)", i ? ", " : "", problem.buffers[buffers[i]].name, problem.buffers[buffers[i]].size);
  if (buffers.size() > shown) names += fmt::format(" and {} more", buffers.size() - shown);
  return names;
}

std::string describe_shortfall(const Problem& problem, int region, const std::vector<int>& members,
                               const RegionPlan& result) {
  const Region& r = problem.regions[region];
  const std::vector<Item> items = items_of(problem, members);
  int step = 0;
  detail::live_sum_bound(items, &step);
  std::vector<int> live;
  for (const int b : members)
    if (problem.buffers[b].live_at(step)) live.push_back(b);
  const std::string names = largest_first(problem, live);
  const std::string minimum = result.optimal()
                                  ? fmt::format("the minimum is {} bytes", result.peak)
                                  : fmt::format("the minimum is at least {} bytes (best plan found: {} bytes)",
                                                result.lower_bound, result.peak);
  return fmt::format("region '{}' has a cap of {} bytes but {}; the live set peaks at step {} with {} buffer{}: {}",
                     r.name, r.capacity, minimum, step, live.size(), live.size() == 1 ? "" : "s", names);
}

// Why several regions cannot hold the buffers together: the caps, what the best plan found (with
// the last region uncapped) needs, and the live set where the most bytes are live at once.
std::string describe_joint_shortfall(const Problem& problem, Outcome outcome, const Plan& relaxed) {
  std::string caps, needs;
  for (std::size_t r = 0; r < problem.regions.size(); ++r) {
    caps += fmt::format("{}'{}' ({} B)", r ? ", " : "", problem.regions[r].name, problem.regions[r].capacity);
    needs += fmt::format("{}'{}' {} B", r ? ", " : "", problem.regions[r].name, relaxed.region_peak[r]);
  }
  std::uint64_t live_bytes = 0;
  const std::vector<int>& live = relaxed.peak_buffers;
  for (const int b : live) live_bytes += problem.buffers[b].size;
  const std::string names = largest_first(problem, live);
  const char* why =
      outcome == Outcome::NoneExists ? "proven by exhaustive search" : "no placement found within the time limit";
  return fmt::format(
      "regions {} cannot hold the buffers together ({}); the best plan found needs {}; "
      "the live set peaks at step {} with {} bytes in {} buffer{}: {}",
      caps, why, needs, relaxed.peak_step, live_bytes, live.size(), live.size() == 1 ? "" : "s", names);
}

}  // namespace

std::uint64_t live_sum_lower_bound(const Problem& problem, int* step) {
  std::vector<int> members;
  for (int b = 0; b < static_cast<int>(problem.buffers.size()); ++b)
    if (problem.buffers[b].size > 0) members.push_back(b);
  return detail::live_sum_bound(items_of(problem, members), step);
}

std::vector<std::uint64_t> live_bytes_per_step(const Problem& problem, std::size_t steps,
                                               const std::vector<int>& overlap_step,
                                               const std::vector<std::uint64_t>& shared) {
  std::vector<std::uint64_t> live(steps, 0);
  for (const Buffer& b : problem.buffers)
    for (int v = b.first_step; v <= b.last_step; ++v)
      if (b.live_at(v)) live[static_cast<std::size_t>(v)] += b.size;
  for (std::size_t k = 0; k < problem.overlaps.size(); ++k)
    live[static_cast<std::size_t>(overlap_step[k])] -= shared[k];
  return live;
}

std::uint64_t most_shared_bytes(const Problem& problem, const Overlap& o) {
  const std::uint64_t out = problem.buffers[o.output].size, in = problem.buffers[o.input].size;
  return std::max(o.below && *o.below < out ? std::min(out - *o.below, in) : 0,
                  o.above && *o.above < in ? std::min(in - *o.above, out) : 0);
}

std::uint64_t shared_bytes(const Problem& problem, const Plan& plan, const Overlap& o) {
  const Placement &out = plan.placements[o.output], &in = plan.placements[o.input];
  const std::uint64_t low = std::max(out.offset, in.offset);
  const std::uint64_t high =
      std::min(out.offset + problem.buffers[o.output].size, in.offset + problem.buffers[o.input].size);
  return out.region == in.region && high > low ? high - low : 0;
}

Plan greedy_by_size(const Problem& problem, std::uint64_t size_granule) {
  check_problem(problem);
  // TFLite Micro has one arena: everything not pinned elsewhere goes to the first region.
  std::vector<std::vector<int>> members(problem.regions.size());
  for (int b = 0; b < static_cast<int>(problem.buffers.size()); ++b)
    if (problem.buffers[b].size > 0) members[problem.buffers[b].pin ? problem.buffers[b].pin->region : 0].push_back(b);
  Plan plan;
  plan.placements.resize(problem.buffers.size());
  for (int b = 0; b < static_cast<int>(problem.buffers.size()); ++b)
    if (problem.buffers[b].pin) plan.placements[b] = {problem.buffers[b].pin->region, problem.buffers[b].pin->offset};
  bool over_cap = false;
  for (int r = 0; r < static_cast<int>(problem.regions.size()); ++r) {
    const std::vector<Item> items = items_of(problem, members[r]);
    const std::vector<std::uint64_t> offsets = detail::greedy_offsets(items, size_granule);
    for (std::size_t i = 0; i < items.size(); ++i) plan.placements[members[r][i]] = {r, offsets[i]};
    std::uint64_t peak = 0;  // TFLM's arena holds the rounded sizes
    for (std::size_t i = 0; i < items.size(); ++i)
      peak = std::max(peak, offsets[i] + round_up(items[i].size, size_granule));
    plan.region_peak.push_back(peak);
    plan.region_lower_bound.push_back(detail::live_sum_bound(items, nullptr));
    plan.peak += plan.region_peak.back();
    over_cap = over_cap || plan.region_peak.back() > problem.regions[r].capacity;
  }
  plan.status = over_cap ? Status::Infeasible : Status::Feasible;
  plan.greedy_peak = plan.peak;
  plan.lower_bound = live_sum_lower_bound(problem, &plan.peak_step);
  for (int b = 0; b < static_cast<int>(problem.buffers.size()); ++b) {
    const Buffer& buffer = problem.buffers[b];
    if (buffer.size > 0 && buffer.live_at(plan.peak_step)) plan.peak_buffers.push_back(b);
  }
  return plan;
}

Plan solve(const Problem& problem, const Options& options) {
  const Clock::time_point start = Clock::now();
  const Clock::time_point deadline =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
                  // NaN, negative or beyond a year (whose nanoseconds overflow the clock): clamped.
                  std::clamp(std::isnan(options.time_limit_seconds) ? 0.0 : options.time_limit_seconds, 0.0, 3.2e7)));
  check_problem(problem);
  Plan plan = greedy_by_size(problem);  // placements of zero-size and pinned buffers, the peak step
  plan.status = Status::Optimal;
  plan.peak = 0;
  plan.lower_bound = 0;
  plan.region_peak.clear();
  plan.region_lower_bound.clear();

  const int regions = static_cast<int>(problem.regions.size());
  std::vector<std::uint64_t> caps;
  for (const Region& region : problem.regions) caps.push_back(region.capacity);
  Assignment assignment = assign_regions(problem, caps, deadline);
  const Outcome joint_outcome = assignment.outcome;
  if (joint_outcome != Outcome::Found) {
    // Nothing fits under every cap at once (or nothing was found in time). For the report, plan
    // with the last region uncapped: how far over it goes is what the model lacks.
    caps.back() = UINT64_MAX;
    assignment = assign_regions(problem, caps, deadline);
    if (assignment.outcome != Outcome::Found) {  // pins over their caps, or no time left
      assignment.region_of.assign(problem.buffers.size(), 0);
      assignment.offsets.clear();
      for (int b = 0; b < static_cast<int>(problem.buffers.size()); ++b)
        if (problem.buffers[b].pin) assignment.region_of[b] = problem.buffers[b].pin->region;
    }
  }

  for (int r = 0; r < regions; ++r) {
    std::vector<int> members;
    std::vector<std::uint64_t> seed;
    for (int b = 0; b < static_cast<int>(problem.buffers.size()); ++b)
      if (assignment.region_of[b] == r && problem.buffers[b].size > 0) {
        members.push_back(b);
        if (!assignment.offsets.empty()) seed.push_back(assignment.offsets[b]);
      }
    // Later regions get an equal share of the time that is left.
    const Clock::time_point region_deadline = Clock::now() + (deadline - Clock::now()) / (regions - r);
    auto report = [&](std::uint64_t peak, std::uint64_t bound) {
      if (options.on_progress)
        options.on_progress({peak, bound, std::chrono::duration<double, std::milli>(Clock::now() - start).count()});
    };
    const RegionPlan result = minimize_peak(items_of(problem, members), seed, std::max(Clock::now(), region_deadline),
                                            options.nodes_per_buffer, report);
    for (std::size_t i = 0; i < members.size(); ++i) plan.placements[members[i]] = {r, result.offsets[i]};
    plan.region_peak.push_back(result.peak);
    plan.region_lower_bound.push_back(result.lower_bound);
    plan.peak += result.peak;
    plan.lower_bound += result.lower_bound;
    if (!result.optimal() && plan.status == Status::Optimal) plan.status = Status::Feasible;
    if (regions == 1 && result.peak > problem.regions[r].capacity) {
      plan.status = Status::Infeasible;
      plan.reason = describe_shortfall(problem, r, members, result);
    }
  }
  if (joint_outcome != Outcome::Found) {
    plan.status = Status::Infeasible;
    plan.reason = describe_joint_shortfall(problem, joint_outcome, plan);
  }
  plan.time_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  return plan;
}

}  // namespace tightfit::plan
