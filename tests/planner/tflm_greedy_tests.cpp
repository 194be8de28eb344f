// greedy_by_size() against TensorFlow Lite Micro's own GreedyMemoryPlanner: the figures (sizes as
// given, and rounded to 16 bytes as its MicroAllocator does) and the per-buffer offsets it
// produced on 200 random buffer sets and the 11 MiniMalloc instances (tflm_greedy/README.md).
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <sstream>

#include "plan/csv.hpp"
#include "plan/planner.hpp"
#include "plan/validate.hpp"

using namespace tightfit::plan;

namespace {

const std::string kReference = TIGHTFIT_TFLM_GREEDY;  // tests/planner/tflm_greedy

// The rows of a reference CSV file as column name -> text.
std::vector<std::map<std::string, std::string>> read_rows(const std::string& path) {
  std::ifstream in(path);
  INFO(path);
  REQUIRE(in);
  std::vector<std::map<std::string, std::string>> rows;
  std::string line, cell;
  std::vector<std::string> header;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::istringstream fields(line);
    while (std::getline(fields, cell, ',')) cells.push_back(cell);
    if (header.empty()) {
      header = cells;
      continue;
    }
    REQUIRE(cells.size() == header.size());
    std::map<std::string, std::string> row;
    for (std::size_t i = 0; i < cells.size(); ++i) row[header[i]] = cells[i];
    rows.push_back(row);
  }
  return rows;
}

// The buffers of one instance, added to the planner in row order, no alignment (TFLM has none
// but the size rounding).
Problem instance(const std::string& file) {
  const std::string path = kReference + (file.rfind("random_", 0) == 0 ? "/" : "/minimalloc/") + file;
  return Problem{{Region{"arena", UINT64_MAX, 1}}, read_csv(path, 1), {}};
}

// Buffers live at steps 0 and 1, all of them together, of these sizes, added in this order.
Problem live_together(const std::vector<std::uint64_t>& sizes) {
  Problem problem{{Region{"arena", UINT64_MAX, 1}}, {}, {}};
  for (const std::uint64_t size : sizes) {
    Buffer b;
    b.name = "b" + std::to_string(problem.buffers.size());
    b.size = size;
    b.alignment = 1;
    b.first_step = 0;
    b.last_step = 1;
    problem.buffers.push_back(b);
  }
  return problem;
}

}  // namespace

TEST_CASE("greedy_by_size reproduces TFLite Micro's arena on all 211 reference instances", "[tflm]") {
  const auto expected = read_rows(kReference + "/expected.csv");
  REQUIRE(expected.size() == 211);
  int checked = 0;
  for (const auto& row : expected) {
    INFO(row.at("file"));
    const Problem problem = instance(row.at("file"));
    const Plan as_given = greedy_by_size(problem, 1);
    const Plan rounded = greedy_by_size(problem, kTflmSizeGranule);
    CHECK(as_given.peak == std::stoull(row.at("greedy_bytes_unaligned")));
    CHECK(rounded.peak == std::stoull(row.at("greedy_bytes_align16")));
    CHECK(validate(problem, as_given).empty());
    checked += 1;
  }
  CHECK(checked == 211);
}

TEST_CASE("greedy_by_size puts every buffer where TFLite Micro puts it", "[tflm]") {
  for (int n = 0; n < 200; ++n) {
    char file[32];
    std::snprintf(file, sizeof file, "random_%03d.csv", n);
    INFO(file);
    const Problem problem = instance(file);
    const Plan plan = greedy_by_size(problem, 1);
    const auto offsets = read_rows(kReference + "/offsets/" + file);
    REQUIRE(offsets.size() == problem.buffers.size());
    for (std::size_t b = 0; b < offsets.size(); ++b) {
      INFO("buffer " << offsets[b].at("id"));
      REQUIRE(problem.buffers[b].name == offsets[b].at("id"));
      CHECK(plan.placements[b].offset == std::stoull(offsets[b].at("greedy_offset")));
    }
  }
}

TEST_CASE("TFLite Micro's greedy breaks ties of size in the reverse of the add order", "[tflm]") {
  // Two 8-byte buffers live together: the one added last is placed first, at offset 0.
  const Plan plan = greedy_by_size(live_together({8, 8}), 1);
  CHECK(plan.placements[1].offset == 0);
  CHECK(plan.placements[0].offset == 8);
}

TEST_CASE("greedy_by_size rounds sizes to 16 bytes by default, as TFLite Micro's allocator does", "[tflm]") {
  // Sizes 4 and 8, both live: 12 bytes as given, 32 once each is rounded to 16 (the arena holds
  // the rounded sizes, as TFLM's does).
  const Problem problem = live_together({4, 8});
  CHECK(greedy_by_size(problem, 1).peak == 12);
  CHECK(greedy_by_size(problem).peak == 32);
}
