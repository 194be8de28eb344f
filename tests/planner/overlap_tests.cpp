// Overlap pairs (plan::Overlap): an output may start its distance below the input it consumes,
// or above it for a kernel run backwards.
// The solver stays exact with them (against brute force), its bound stays a bound, and the
// validator rejects an output that starts nearer its input than the distance.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

#include "plan/planner.hpp"
#include "plan/validate.hpp"

using namespace tightfit::plan;

namespace {

Buffer buffer(const char* name, std::uint64_t size, int first, int last) {
  Buffer b;
  b.name = name;
  b.size = size;
  b.alignment = 1;
  b.first_step = first;
  b.last_step = last;
  return b;
}

Problem one_region(std::vector<Buffer> buffers, std::vector<Overlap> overlaps) {
  Problem p;
  p.regions.push_back({"ram", UINT64_MAX, 1});
  p.buffers = std::move(buffers);
  p.overlaps = std::move(overlaps);
  return p;
}

// Whether buffers a and b may lie at these offsets, by the rule itself, written out again here.
bool compatible(const Problem& p, int a, std::uint64_t at_a, int b, std::uint64_t at_b) {
  const Buffer &x = p.buffers[a], &y = p.buffers[b];
  if (x.last_step < y.first_step || y.last_step < x.first_step) return true;
  if (at_a + x.size <= at_b || at_b + y.size <= at_a) return true;
  for (const Overlap& o : p.overlaps) {
    if (o.output == b && o.input == a) std::swap(at_a, at_b);  // now at_a is the output's offset
    if ((o.output == a && o.input == b) || (o.output == b && o.input == a))
      return (o.below && at_a + *o.below <= at_b) || (o.above && at_b + *o.above <= at_a);
  }
  return false;
}

// The least peak over every placement, by depth-first search over all offsets below the best.
std::uint64_t brute_force_peak(const Problem& p) {
  const int n = static_cast<int>(p.buffers.size());
  std::uint64_t total = 0;
  for (const Buffer& b : p.buffers) total += b.size;
  std::uint64_t best = total;
  std::vector<std::uint64_t> at(n);
  auto place = [&](auto&& self, int i, std::uint64_t peak) -> void {
    if (peak >= best) return;
    if (i == n) {
      best = peak;
      return;
    }
    for (std::uint64_t offset = 0; offset + p.buffers[i].size < best; ++offset) {
      bool ok = true;
      for (int j = 0; j < i && ok; ++j) ok = compatible(p, i, offset, j, at[j]);
      if (!ok) continue;
      at[i] = offset;
      self(self, i + 1, std::max(peak, offset + p.buffers[i].size));
    }
  };
  place(place, 0, 0);
  return best;
}

}  // namespace

TEST_CASE("an output may start its distance below its input, and the validator says so") {
  // in: [d, d + 10) live at steps 0-1; out: 8 bytes written at step 1, distance 3.
  const Problem p = one_region({buffer("in", 10, 0, 1), buffer("out", 8, 1, 2)}, {{1, 0, 3, std::nullopt}});
  Plan plan;
  plan.placements = {{0, 3}, {0, 0}};
  plan.region_peak = {13};
  plan.peak = 13;
  CHECK(validate(p, plan).empty());
  plan.placements = {{0, 2}, {0, 0}};  // one byte too near
  plan.region_peak = {12};
  plan.peak = 12;
  const auto errors = validate(p, plan);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].find("needs it 3 bytes below or never bytes above") != std::string::npos);
  plan.placements = {{0, 0}, {0, 2}};  // the output above its input, overlapping: not this kernel
  CHECK(!validate(p, plan).empty());
  // A kernel that runs backwards may start its output above: 2 bytes or more, here.
  const Problem backwards = one_region(p.buffers, {{1, 0, 3, 2}});
  plan.placements = {{0, 0}, {0, 2}};
  plan.region_peak = {10};
  plan.peak = 10;
  CHECK(validate(backwards, plan).empty());
  plan.placements = {{0, 0}, {0, 1}};
  plan.region_peak = {10};
  CHECK(!validate(backwards, plan).empty());
  // Without the pair the same placement is an ordinary collision.
  plan.placements = {{0, 3}, {0, 0}};
  plan.region_peak = {13};
  plan.peak = 13;
  CHECK(!validate(one_region(p.buffers, {}), plan).empty());
}

TEST_CASE("the solver places an output over its input at the distance, and proves it optimal") {
  const Problem p = one_region({buffer("in", 10, 0, 1), buffer("out", 8, 1, 2)}, {{1, 0, 3, std::nullopt}});
  const Plan plan = solve(p, Options{});
  CHECK(plan.peak == 13);
  CHECK(plan.lower_bound == 13);
  CHECK(plan.status == Status::Optimal);
  CHECK(validate(p, plan).empty());
  // In place (distance 0): the two take the larger one's bytes.
  const Problem in_place = one_region({buffer("in", 10, 0, 1), buffer("out", 10, 1, 2)}, {{1, 0, 0, std::nullopt}});
  const Plan same = solve(in_place, Options{});
  CHECK(same.peak == 10);
  CHECK(same.status == Status::Optimal);
  CHECK(validate(in_place, same).empty());
}

TEST_CASE("with overlap pairs the solver's peak is the brute-force minimum and its bound is below it") {
  std::mt19937 rng(7);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const char* names[] = {"a", "b", "c", "d", "e", "f"};
  int pairs_seen = 0, overlapping_plans = 0;
  for (int round = 0; round < 300; ++round) {
    const int n = uniform(2, 6);
    std::vector<Buffer> buffers;
    for (int i = 0; i < n; ++i) {
      const int first = uniform(0, 4);
      buffers.push_back(buffer(names[i], static_cast<std::uint64_t>(uniform(1, 6)), first, first + uniform(0, 2)));
    }
    // Pairs as a schedule makes them: an output born at the step where its input, born
    // before, dies.
    std::vector<Overlap> overlaps;
    std::vector<bool> is_output(n, false), is_input(n, false);
    for (int out = 0; out < n; ++out)
      for (int in = 0; in < n; ++in)
        if (!is_output[out] && !is_input[in] && buffers[out].first_step == buffers[in].last_step &&
            buffers[in].first_step < buffers[out].first_step && uniform(0, 3) != 0) {
          // Below, above or both ways, as the kernels allow.
          const int ways = uniform(0, 2);
          Overlap pair{out, in, std::nullopt, std::nullopt};
          if (ways != 1) pair.below = static_cast<std::uint64_t>(uniform(0, static_cast<int>(buffers[out].size)));
          if (ways != 0) pair.above = static_cast<std::uint64_t>(uniform(0, static_cast<int>(buffers[in].size)));
          overlaps.push_back(pair);
          is_output[out] = is_input[in] = true;
        }
    const Problem p = one_region(buffers, overlaps);
    pairs_seen += static_cast<int>(overlaps.size());
    const std::uint64_t minimum = brute_force_peak(p);
    overlapping_plans += minimum < brute_force_peak(one_region(buffers, {}));
    const Plan plan = solve(p, Options{});
    INFO("round " << round << ": " << n << " buffers, " << overlaps.size() << " pairs");
    CHECK(validate(p, plan).empty());
    CHECK(plan.status == Status::Optimal);
    CHECK(plan.peak == minimum);
    CHECK(live_sum_lower_bound(p) <= minimum);
  }
  CHECK(pairs_seen > 150);
  CHECK(overlapping_plans > 50);  // instances where overlapping pays
}

TEST_CASE("an overlap pair naming a buffer twice on one side, or two buffers both ways, is refused") {
  const Problem twice = one_region({buffer("a", 4, 0, 1), buffer("b", 4, 1, 2), buffer("c", 4, 1, 2)},
                                   {{1, 0, 1, std::nullopt}, {2, 0, 1, std::nullopt}});
  CHECK_THROWS(solve(twice, Options{}));
  const Problem both_ways =
      one_region({buffer("a", 4, 1, 1), buffer("b", 4, 1, 1)}, {{1, 0, 1, std::nullopt}, {0, 1, 1, std::nullopt}});
  CHECK_THROWS(solve(both_ways, Options{}));
}

TEST_CASE("an output at its input's offset lies above it unless its below distance is 0") {
  // The emitter runs a kernel backwards exactly when this says so; it once ran forwards an output
  // placed at its input's offset under an above distance of 0 (difftest seed 504, a depthwise
  // conv with a folded Pad, output longer than its input).
  Problem p = one_region({buffer("in", 16, 0, 1), buffer("out", 72, 1, 1)}, {{1, 0, 50, 0}});
  const Placement at_zero{0, 0};
  CHECK(output_above_input(p, p.overlaps[0], at_zero, at_zero));
  p.overlaps[0].below = 0;
  CHECK_FALSE(output_above_input(p, p.overlaps[0], at_zero, at_zero));
  CHECK_FALSE(output_above_input(p, p.overlaps[0], Placement{0, 0}, Placement{0, 72}));  // apart
  p.overlaps[0].below = 50;
  CHECK(output_above_input(p, p.overlaps[0], Placement{0, 8}, Placement{0, 0}));
  CHECK_FALSE(output_above_input(p, p.overlaps[0], Placement{0, 0}, Placement{0, 50}));
  Plan plan;  // the validator accepts the first placement through the above distance only
  plan.placements = {at_zero, at_zero};
  plan.region_peak = {72};
  plan.peak = 72;
  CHECK(validate(p, plan).empty());
  p.overlaps[0].above.reset();
  CHECK_FALSE(validate(p, plan).empty());
}
