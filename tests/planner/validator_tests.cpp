// The validator must catch each way a plan can be broken; each test breaks a good plan once.
#include <catch2/catch.hpp>

#include "plan/planner.hpp"
#include "plan/validate.hpp"

using namespace tightfit::plan;

namespace {

Problem two_live_buffers() {
  Problem problem;
  problem.regions = {Region{"ram", 64, 16}};
  Buffer a;
  a.name = "a";
  a.size = 32;
  a.first_step = 0;
  a.last_step = 2;
  Buffer b = a;
  b.name = "b";
  b.first_step = 1;
  problem.buffers = {a, b};
  return problem;
}

Plan good_plan() {
  Plan plan;
  plan.status = Status::Optimal;
  plan.placements = {{0, 0}, {0, 32}};
  plan.region_peak = {64};
  plan.peak = 64;
  return plan;
}

bool mentions(const std::vector<std::string>& errors, const std::string& word) {
  for (const std::string& error : errors)
    if (error.find(word) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("the validator accepts a correct plan", "[validator]") {
  CHECK(validate(two_live_buffers(), good_plan()).empty());
}

TEST_CASE("the validator catches two live buffers sharing bytes", "[validator]") {
  Plan plan = good_plan();
  plan.placements[1].offset = 16;
  plan.region_peak = {48};
  plan.peak = 48;
  CHECK(mentions(validate(two_live_buffers(), plan), "overlap"));
}

TEST_CASE("the validator lets buffers never live together share bytes", "[validator]") {
  Problem problem = two_live_buffers();
  problem.buffers[1].first_step = 3;
  problem.buffers[1].last_step = 4;
  Plan plan = good_plan();
  plan.placements[1].offset = 0;
  plan.region_peak = {32};
  plan.peak = 32;
  CHECK(validate(problem, plan).empty());
}

TEST_CASE("the validator lets buffers of an If's two branches share bytes", "[validator]") {
  // Steps 1 and 2 are the then branch, 3 the else branch; a is read by the else branch only.
  Problem problem = two_live_buffers();
  problem.buffers[0].last_step = 3;
  problem.buffers[0].gaps = {{1, 2}};
  problem.buffers[1].last_step = 2;
  Plan plan = good_plan();
  plan.placements[1].offset = 0;
  plan.region_peak = {32};
  plan.peak = 32;
  CHECK(validate(problem, plan).empty());
}

TEST_CASE("the validator catches two buffers of one branch of an If sharing bytes", "[validator]") {
  // a lives in the then branch (steps 1 to 3) with a gap at step 2; b at steps 2 and 3 of it.
  Problem problem = two_live_buffers();
  problem.buffers[0].first_step = 1;
  problem.buffers[0].last_step = 3;
  problem.buffers[0].gaps = {{2, 2}};
  problem.buffers[1].first_step = 2;
  problem.buffers[1].last_step = 3;
  Plan plan = good_plan();
  plan.placements[1].offset = 0;
  plan.region_peak = {32};
  plan.peak = 32;
  CHECK(mentions(validate(problem, plan), "overlap"));
}

TEST_CASE("the validator catches a misaligned offset", "[validator]") {
  Problem problem = two_live_buffers();
  problem.regions[0].capacity = 128;
  Plan plan = good_plan();
  plan.placements[1].offset = 40;  // clear of a, but not a multiple of 16
  plan.region_peak = {72};
  plan.peak = 72;
  CHECK(mentions(validate(problem, plan), "not aligned"));
}

TEST_CASE("the validator catches a buffer over the region's cap", "[validator]") {
  Problem problem = two_live_buffers();
  problem.regions[0].capacity = 63;
  CHECK(mentions(validate(problem, good_plan()), "over the 63 bytes"));
}

TEST_CASE("the validator catches a pinned buffer that was moved", "[validator]") {
  Problem problem = two_live_buffers();
  problem.buffers[0].pin = Pin{0, 32};
  CHECK(mentions(validate(problem, good_plan()), "pinned"));
}

TEST_CASE("the validator catches a peak that the placements do not reach", "[validator]") {
  Plan plan = good_plan();
  plan.peak = 48;
  CHECK(mentions(validate(two_live_buffers(), plan), "claims a peak"));
}

TEST_CASE("every plan the solver returns passes the validator", "[validator]") {
  Problem problem = two_live_buffers();
  problem.regions[0].capacity = UINT64_MAX;
  CHECK(validate(problem, solve(problem, {})).empty());
}
