// Report documents for tests, built by code from a synthetic network (never edited by hand):
// a chain of convolutions with residual adds and per-step scratch, placed by first-fit so that
// every number in the report follows from the buffers as the compile stage's would.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tightfit::report::testing {

struct SyntheticRegion {
  std::string name;
  bool with_capacity = false;  // capacity: the region's peak rounded up to 4 KiB
};

struct SyntheticOptions {
  int layers = 5;
  std::vector<SyntheticRegion> regions = {{"arena", false}};
  std::optional<std::uint64_t> cap;  // --max-ram; below the plan's arena makes the report infeasible
  bool long_names = false;           // some node names longer than any column
  std::uint32_t seed = 1;
};

nlohmann::json synthetic_report(const SyntheticOptions& options);

// `report` with the "measured" section that `tightfit run --target --profile` adds: made-up
// firmware figures, the arena as planned, and no kernel call at step 1.
nlohmann::json with_measured(nlohmann::json report);

// The fixtures the tests share, by name: "layers5", "regions3", "layers200", "infeasible",
// "measured".
std::vector<std::string> fixture_names();
nlohmann::json fixture(const std::string& name);

}  // namespace tightfit::report::testing
