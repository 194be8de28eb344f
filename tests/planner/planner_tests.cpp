// The planner's guarantees: known optima, caps, pins, regions, monotonicity, determinism.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>
#include <random>

#include "plan/planner.hpp"
#include "plan/validate.hpp"

using namespace tightfit::plan;

namespace {

Buffer buffer(const std::string& name, std::uint64_t size, int first, int last, std::uint32_t alignment = 1) {
  Buffer b;
  b.name = name;
  b.size = size;
  b.alignment = alignment;
  b.first_step = first;
  b.last_step = last;
  return b;
}

Problem one_region(std::vector<Buffer> buffers, std::uint64_t capacity = UINT64_MAX) {
  return Problem{{Region{"ram", capacity, 1}}, std::move(buffers), {}};
}

Plan solve_valid(const Problem& problem, double seconds = 5) {
  const Plan plan = solve(problem, Options{seconds, {}});
  if (plan.status != Status::Infeasible) {
    const auto errors = validate(problem, plan);
    INFO((errors.empty() ? "" : errors.front()));
    REQUIRE(errors.empty());
  }
  return plan;
}

// The optimum by brute force, sharing nothing with the solver: every order of the free buffers,
// each dropped at the lowest offset clear of those before it. Taking the buffers of an optimal
// plan in offset order, this never puts one higher than that plan did, so the best order wins.
std::uint64_t brute_force_peak(const Problem& problem) {
  const auto& buffers = problem.buffers;
  std::vector<int> order;
  for (int b = 0; b < static_cast<int>(buffers.size()); ++b)
    if (!buffers[b].pin) order.push_back(b);
  std::uint64_t best = UINT64_MAX;
  do {
    std::vector<std::pair<int, std::uint64_t>> placed;
    for (int b = 0; b < static_cast<int>(buffers.size()); ++b)
      if (buffers[b].pin) placed.emplace_back(b, buffers[b].pin->offset);
    for (const int b : order) {
      for (std::uint64_t offset = 0;; offset += buffers[b].alignment) {
        const bool clear = std::none_of(placed.begin(), placed.end(), [&](const auto& p) {
          const Buffer& other = buffers[p.first];
          bool live_together = false;
          for (int step = 0; step <= std::max(other.last_step, buffers[b].last_step); ++step)
            live_together = live_together || (other.live_at(step) && buffers[b].live_at(step));
          return live_together && p.second < offset + buffers[b].size && offset < p.second + other.size;
        });
        if (clear) {
          placed.emplace_back(b, offset);
          break;
        }
      }
    }
    std::uint64_t peak = 0;
    for (const auto& [b, offset] : placed) peak = std::max(peak, offset + buffers[b].size);
    best = std::min(best, peak);
  } while (std::next_permutation(order.begin(), order.end()));
  return best;
}

Problem random_problem(std::mt19937& rng, int count) {
  std::vector<Buffer> buffers;
  for (int i = 0; i < count; ++i) {
    const int first = static_cast<int>(rng() % 6);
    const int last = first + static_cast<int>(rng() % 4);
    buffers.push_back(buffer("b" + std::to_string(i), 1 + rng() % 9, first, last));
  }
  return one_region(std::move(buffers));
}

// An If laid out in the schedule: step 0 before it, its then branch at steps 1 to 3, its else
// branch at 4 and 5, step 6 after it. A buffer gets the gaps its reads and writes imply.
Problem if_problem(std::mt19937& rng, int count) {
  Problem problem = one_region({});
  for (int i = 0; i < count; ++i) {
    Buffer b = buffer("b" + std::to_string(i), 1 + rng() % 9, 0, 0);
    switch (rng() % 5) {
      case 0:
        b.first_step = 1 + rng() % 3, b.last_step = b.first_step + rng() % (4 - b.first_step);
        break;  // then only
      case 1:
        b.first_step = 4 + rng() % 2, b.last_step = 5;
        break;  // else only
      case 2:
        b.first_step = 0, b.last_step = 4 + rng() % 2, b.gaps = {{1, 3}};
        break;  // read by else only
      case 3:
        b.first_step = 0, b.last_step = 4 + rng() % 2, b.gaps = {{2, 3}};
        break;  // read by both
      default:
        b.first_step = 3, b.last_step = 6, b.gaps = {{4, 4}};
        break;  // the If's output
    }
    problem.buffers.push_back(b);
  }
  return problem;
}

}  // namespace

TEST_CASE("MiniMalloc's small example is packed into its 12 bytes", "[known]") {
  const Problem problem = one_region({buffer("b1", 4, 0, 2), buffer("b2", 4, 3, 8), buffer("b3", 4, 0, 8),
                                      buffer("b4", 4, 9, 20), buffer("b5", 4, 0, 20)});
  const Plan plan = solve_valid(problem);
  CHECK(plan.peak == 12);
  CHECK(plan.lower_bound == 12);
  CHECK(plan.status == Status::Optimal);
}

TEST_CASE("an instance that fragments is proven optimal one byte above its live sum", "[known]") {
  // Found by a random search and shrunk by hand; the brute force and a separate Python check
  // agree that 16 is the optimum while no step has more than 15 bytes live.
  const Problem problem =
      one_region({buffer("b1", 6, 6, 7), buffer("b2", 6, 7, 11), buffer("b3", 4, 2, 6), buffer("b4", 1, 3, 5),
                  buffer("b5", 6, 0, 3), buffer("b6", 9, 0, 0), buffer("b7", 5, 4, 6)});
  CHECK(live_sum_lower_bound(problem) == 15);
  const Plan plan = solve_valid(problem);
  CHECK(plan.peak == 16);
  CHECK(plan.lower_bound == 16);
  CHECK(plan.status == Status::Optimal);
  CHECK(brute_force_peak(problem) == 16);
}

TEST_CASE("the plan beats greedy-by-size where greedy leaves a hole", "[known]") {
  // Greedy puts the big buffers first at offset 0 and the small long-lived one above them.
  const Problem problem = one_region({buffer("long", 2, 0, 3), buffer("early", 4, 0, 1), buffer("late", 4, 2, 3)});
  const Plan greedy = greedy_by_size(problem);
  const Plan plan = solve_valid(problem);
  CHECK(plan.peak == 6);
  CHECK(plan.status == Status::Optimal);
  CHECK(greedy.peak >= plan.peak);
  CHECK(plan.greedy_peak == greedy.peak);
}

TEST_CASE("the live-sum bound names the step and the buffers live there", "[bound]") {
  const Problem problem = one_region({buffer("a", 10, 0, 1), buffer("b", 20, 1, 2), buffer("c", 5, 2, 3)});
  int step = -1;
  CHECK(live_sum_lower_bound(problem, &step) == 30);
  CHECK(step == 1);
  const Plan plan = solve_valid(problem);
  CHECK(plan.peak_step == 1);
  CHECK(plan.peak_buffers == std::vector<int>{0, 1});
}

TEST_CASE("alignment pads every buffer but the topmost in the bound and the plan", "[alignment]") {
  const Problem problem = one_region({buffer("a", 10, 0, 0, 16), buffer("b", 10, 0, 0, 16)});
  CHECK(live_sum_lower_bound(problem) == 26);
  const Plan plan = solve_valid(problem);
  CHECK(plan.peak == 26);
  CHECK(plan.status == Status::Optimal);
}

TEST_CASE("zero-size buffers sit at offset 0 and take no room", "[edge]") {
  const Problem problem = one_region({buffer("empty", 0, 0, 5), buffer("a", 8, 0, 5)});
  const Plan plan = solve_valid(problem);
  CHECK(plan.placements[0].offset == 0);
  CHECK(plan.peak == 8);
}

TEST_CASE("sizes too large to add up safely are refused, not wrapped around", "[edge]") {
  const Problem problem = one_region(
      {buffer("a", std::uint64_t{1} << 59, 0, 1), buffer("b", std::uint64_t{1} << 59, 0, 1), buffer("c", 1, 0, 1)});
  CHECK_THROWS_WITH(solve(problem, {}), "buffer 'c': sizes and pin offsets add up to more than 2^60 bytes");
}

TEST_CASE("a cap at the optimum succeeds; one byte less is infeasible with the reason", "[cap]") {
  std::vector<Buffer> buffers{buffer("input", 100, 0, 1), buffer("hidden", 300, 1, 2), buffer("output", 50, 2, 3)};
  CHECK(solve_valid(one_region(buffers, 400)).status == Status::Optimal);
  const Plan plan = solve_valid(one_region(buffers, 399));
  CHECK(plan.status == Status::Infeasible);
  CHECK(plan.reason.find("cap of 399 bytes") != std::string::npos);
  CHECK(plan.reason.find("the minimum is 400 bytes") != std::string::npos);
  CHECK(plan.reason.find("step 1") != std::string::npos);
  CHECK(plan.reason.find("hidden (300 B), input (100 B)") != std::string::npos);
}

TEST_CASE("pinned buffers stay put and the rest pack around them optimally", "[pins]") {
  std::vector<Buffer> buffers{buffer("a", 4, 0, 3), buffer("b", 4, 0, 1), buffer("c", 4, 2, 3), buffer("d", 2, 1, 2)};
  buffers[0].pin = Pin{0, 4};  // a sits in the middle: b, c and d must find room around it
  const Problem problem = one_region(buffers);
  const Plan plan = solve_valid(problem);
  CHECK(plan.placements[0].offset == 4);
  CHECK(plan.peak == brute_force_peak(problem));
  CHECK(plan.status == Status::Optimal);
}

TEST_CASE("pins that collide are refused, not silently moved", "[pins]") {
  std::vector<Buffer> buffers{buffer("a", 8, 0, 1), buffer("b", 8, 1, 2)};
  buffers[0].pin = Pin{0, 0};
  buffers[1].pin = Pin{0, 4};
  CHECK_THROWS_WITH(solve(one_region(buffers), {}),
                    "buffers 'a' and 'b' are pinned to overlapping bytes while both are live");
}

TEST_CASE("a pin above the cap makes the plan infeasible", "[pins]") {
  std::vector<Buffer> buffers{buffer("a", 8, 0, 1)};
  buffers[0].pin = Pin{0, 64};
  CHECK(solve(one_region(buffers, 64), {}).status == Status::Infeasible);
  CHECK(solve(one_region(buffers, 72), {}).status == Status::Optimal);
}

TEST_CASE("with two regions the busiest buffers get the fast one and everything fits", "[regions]") {
  Problem problem;
  problem.regions = {Region{"dtcm", 64, 1}, Region{"sram", 1024, 1}};
  problem.buffers = {buffer("cold", 48, 0, 2), buffer("hot", 48, 0, 2), buffer("warm", 16, 0, 2)};
  problem.buffers[0].traffic = 10;
  problem.buffers[1].traffic = 1000;
  problem.buffers[2].traffic = 100;
  const Plan plan = solve_valid(problem);
  CHECK(plan.placements[1].region == 0);  // hot
  CHECK(plan.placements[2].region == 0);  // warm fills the rest of dtcm
  CHECK(plan.placements[0].region == 1);  // cold spills
  CHECK(plan.region_peak == std::vector<std::uint64_t>{64, 48});
  CHECK(plan.peak == 112);
  CHECK(plan.status == Status::Optimal);
}

TEST_CASE("with two regions too small together the plan is infeasible", "[regions]") {
  Problem problem;
  problem.regions = {Region{"dtcm", 32, 1}, Region{"sram", 32, 1}};
  problem.buffers = {buffer("a", 40, 0, 1)};
  const Plan plan = solve(problem, {});
  CHECK(plan.status == Status::Infeasible);
  CHECK(plan.reason.find("sram") != std::string::npos);
}

TEST_CASE(
    "with two regions the regions are chosen together: it fits where filling the fast one busiest-first would not",
    "[regions]") {
  // Busiest first, "a" would take all of dtcm; then "c" (live with "a" at step 4) and "b" (live
  // with "c" at step 3) would both need sram: 12 bytes > 11. Together: "c" in dtcm, "a" and "b"
  // (never live at once) share sram.
  Problem problem;
  problem.regions = {Region{"dtcm", 5, 1}, Region{"sram", 11, 1}};
  problem.buffers = {buffer("a", 5, 4, 4), buffer("b", 8, 0, 3), buffer("c", 4, 3, 6)};
  problem.buffers[0].traffic = 300;
  problem.buffers[1].traffic = 200;
  problem.buffers[2].traffic = 100;
  const Plan plan = solve_valid(problem);
  REQUIRE(plan.status == Status::Optimal);
  CHECK(plan.placements[0].region == 1);
  CHECK(plan.placements[1].region == 1);
  CHECK(plan.placements[2].region == 0);
  CHECK(plan.region_peak == std::vector<std::uint64_t>{4, 8});
}

TEST_CASE("with two regions whose caps add up to the live bytes but cannot split them, the plan is infeasible",
          "[regions]") {
  // 14 bytes live at step 4 and 4 + 10 bytes of RAM, but only "c" fits dtcm, and "a" + "b" = 11.
  Problem problem;
  problem.regions = {Region{"dtcm", 4, 1}, Region{"sram", 10, 1}};
  problem.buffers = {buffer("a", 6, 4, 5), buffer("b", 5, 2, 5), buffer("c", 3, 4, 4)};
  const Plan plan = solve(problem, {});
  REQUIRE(plan.status == Status::Infeasible);
  CHECK(plan.reason ==
        "regions 'dtcm' (4 B), 'sram' (10 B) cannot hold the buffers together (proven by exhaustive search); "
        "the best plan found needs 'dtcm' 3 B, 'sram' 11 B; the live set peaks at step 4 with 14 bytes in 3 buffers: "
        "a (6 B), b (5 B), c (3 B)");
}

// Whether some choice of region for each free buffer fits every cap, by brute force: every
// assignment, each region's optimum by brute_force_peak.
bool some_assignment_fits(const Problem& problem) {
  const int n = static_cast<int>(problem.buffers.size());
  const int regions = static_cast<int>(problem.regions.size());
  std::vector<int> region_of(n, 0);
  for (;;) {
    bool fits = true;
    for (int r = 0; r < regions && fits; ++r) {
      std::vector<Buffer> members;
      for (int b = 0; b < n; ++b)
        if (region_of[b] == r) members.push_back(problem.buffers[b]);
      fits = members.empty() || brute_force_peak(one_region(members)) <= problem.regions[r].capacity;
    }
    if (fits) return true;
    int b = 0;
    while (b < n && ++region_of[b] == regions) region_of[b++] = 0;
    if (b == n) return false;
  }
}

TEST_CASE("random instances with two or three capped regions are feasible exactly when brute force finds a fit",
          "[regions][property]") {
  std::mt19937 rng(17);
  int feasible = 0, infeasible = 0;
  for (int trial = 0; trial < 300; ++trial) {
    Problem problem = random_problem(rng, 3 + trial % 3);
    const int regions = 2 + trial % 2;
    problem.regions.clear();
    for (int r = 0; r < regions; ++r) problem.regions.push_back(Region{"r" + std::to_string(r), 3 + rng() % 10, 1});
    for (Buffer& b : problem.buffers) b.traffic = rng() % 100;
    const Plan plan = solve_valid(problem);
    INFO("trial " << trial);
    const bool fits = some_assignment_fits(problem);
    REQUIRE((plan.status != Status::Infeasible) == fits);
    ++(fits ? feasible : infeasible);
    for (int r = 0; fits && r < regions; ++r) REQUIRE(plan.region_peak[r] <= problem.regions[r].capacity);
  }
  CHECK(feasible > 50);
  CHECK(infeasible > 50);
}

TEST_CASE("random small instances are solved to the brute-force optimum", "[property]") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    const Problem problem = random_problem(rng, 2 + trial % 6);
    const Plan plan = solve_valid(problem);
    INFO("trial " << trial);
    REQUIRE(plan.status == Status::Optimal);
    REQUIRE(plan.peak == brute_force_peak(problem));
    REQUIRE(plan.lower_bound == plan.peak);
    REQUIRE(plan.peak <= plan.greedy_peak);
  }
}

TEST_CASE("random small instances with alignments and a pin are solved to the brute-force optimum", "[property]") {
  std::mt19937 rng(13);
  for (int trial = 0; trial < 300; ++trial) {
    Problem problem = random_problem(rng, 2 + trial % 6);
    for (Buffer& b : problem.buffers) b.alignment = 1u << (rng() % 3);
    Buffer& pinned = problem.buffers[rng() % problem.buffers.size()];
    pinned.pin = Pin{0, pinned.alignment * (rng() % 6)};
    const Plan plan = solve_valid(problem);
    INFO("trial " << trial);
    REQUIRE(plan.status == Status::Optimal);
    REQUIRE(plan.peak == brute_force_peak(problem));
  }
}

TEST_CASE("shrinking a buffer never raises the optimal peak", "[property]") {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    Problem problem = random_problem(rng, 3 + trial % 8);
    const Plan before = solve_valid(problem);
    REQUIRE(before.status == Status::Optimal);
    Buffer& shrunk = problem.buffers[rng() % problem.buffers.size()];
    shrunk.size -= 1 + rng() % shrunk.size;  // down to anything from size - 1 to 0
    const Plan after = solve_valid(problem);
    INFO("trial " << trial);
    REQUIRE(after.status == Status::Optimal);
    REQUIRE(after.peak <= before.peak);
  }
}

TEST_CASE("the same problem gives the same plan every time", "[determinism]") {
  std::mt19937 rng(3);
  std::vector<Buffer> buffers;
  for (int i = 0; i < 60; ++i) {
    const int first = static_cast<int>(rng() % 40);
    buffers.push_back(
        buffer("t" + std::to_string(i), 16 * (1 + rng() % 64), first, first + static_cast<int>(rng() % 8), 16));
  }
  const Problem problem = one_region(buffers);
  const Plan first = solve_valid(problem);
  for (int run = 0; run < 3; ++run) {
    const Plan again = solve_valid(problem);
    REQUIRE(again.peak == first.peak);
    REQUIRE(again.status == first.status);
    for (std::size_t i = 0; i < buffers.size(); ++i) REQUIRE(again.placements[i].offset == first.placements[i].offset);
  }
}

TEST_CASE("buffers of an If's two branches share bytes and the arena is the most any run needs", "[if]") {
  // Step 0 before the If, the then branch at steps 1 to 3, the else branch at 4 and 5, step 6
  // after. x is read by both branches, p by the else branch only; out is written by the last step
  // of each.
  Buffer x = buffer("x", 50, 0, 4), p = buffer("p", 20, 0, 4), out = buffer("out", 20, 3, 6);
  x.gaps = {{2, 3}};
  p.gaps = {{1, 3}};
  out.gaps = {{4, 4}};
  Problem problem =
      one_region({x, p, out, buffer("then 1", 100, 1, 2), buffer("then 2", 100, 2, 3), buffer("else 1", 150, 4, 5)});
  int step = -1;
  CHECK(live_sum_lower_bound(problem, &step) == 20 + 50 + 150);  // p, x and the else branch's buffer
  CHECK(step == 4);
  const Plan plan = solve_valid(problem);
  CHECK(plan.peak == 220);
  CHECK(plan.status == Status::Optimal);
  // Without the gaps, the then branch's buffers would be live with x and p at step 2.
  for (Buffer& b : problem.buffers) b.gaps.clear();
  CHECK(live_sum_lower_bound(problem) == 50 + 20 + 100 + 100);
  // The else branch's buffer lies over bytes of the then branch's.
  const Placement &then_1 = plan.placements[3], &else_1 = plan.placements[5];
  CHECK(else_1.offset < then_1.offset + 100);
  CHECK(then_1.offset < else_1.offset + 150);
}

TEST_CASE("a gap that does not lie inside its buffer's interval is refused", "[if]") {
  Buffer b = buffer("b", 8, 0, 4);
  b.gaps = {{3, 4}};
  CHECK_THROWS_WITH(solve(one_region({b}), Options{}), Catch::Contains("'b'") && Catch::Contains("gap"));
}

TEST_CASE("random small instances with an If's exclusive lifetimes are solved to the brute-force optimum", "[if]") {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    const Problem problem = if_problem(rng, 2 + trial % 6);
    const Plan plan = solve_valid(problem);
    INFO("trial " << trial);
    REQUIRE(plan.status == Status::Optimal);
    REQUIRE(plan.peak == brute_force_peak(problem));
    REQUIRE(plan.lower_bound == plan.peak);
    REQUIRE(plan.peak <= plan.greedy_peak);
  }
}
