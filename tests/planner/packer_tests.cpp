// The exact search's deadline, with a clock the test controls: no test here depends on how fast
// the machine is.
#include <catch2/catch.hpp>

#include <vector>

#include "plan/packer.hpp"

using namespace tightfit::plan::detail;

namespace {

// Buffers all live at step 0, so one search node tries each of them at offset 0; under a
// capacity one byte short of their sum every one of those placements fails, and the search
// ends after that single node with NoneExists.
constexpr int kBuffers = 64;
constexpr std::uint64_t kTooSmall = kBuffers * (kBuffers + 1) / 2 - 1;

Packer all_live_together() {
  std::vector<Item> items;
  for (int i = 1; i <= kBuffers; ++i) {
    Item item;
    item.size = static_cast<std::uint64_t>(i);
    items.push_back(item);
  }
  return Packer(items);
}

// A clock that stands still at 0 s until its `passes_at`-th reading, then reads 2 s.
struct FakeClock {
  int passes_at;
  int readings = 0;
  Clock::time_point operator()() { return Clock::time_point{} + std::chrono::seconds(++readings < passes_at ? 0 : 2); }
};

const Clock::time_point kDeadline = Clock::time_point{} + std::chrono::seconds(1);

}  // namespace

TEST_CASE("the search reads the clock at every placement it tries, not only every so many nodes", "[deadline]") {
  Packer packer = all_live_together();
  FakeClock clock{1 << 30};
  packer.set_clock([&clock] { return clock(); });
  std::vector<std::uint64_t> offsets;
  REQUIRE(packer.fit(kTooSmall, Preorder::WAT, 1, kDeadline, offsets) == Outcome::NoneExists);
  CHECK(clock.readings >= kBuffers);
}

TEST_CASE("a deadline that passes inside one search node ends the search there", "[deadline]") {
  Packer packer = all_live_together();
  // Read on entry, at the node, then at the first placement: the deadline has passed by then.
  FakeClock clock{3};
  packer.set_clock([&clock] { return clock(); });
  std::vector<std::uint64_t> offsets;
  REQUIRE(packer.fit(kTooSmall, Preorder::WAT, 1, kDeadline, offsets) == Outcome::OutOfTime);
  CHECK(clock.readings == 3);
}
