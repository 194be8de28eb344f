// MiniMalloc's CSV format in and out, and one-line errors that name the file and line.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "error.hpp"
#include "plan/csv.hpp"

using namespace tightfit;

namespace {

// In the system's temporary folder, not wherever the tests happen to run.
std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = (std::filesystem::temp_directory_path() / ("planner_csv_test_" + name + ".csv")).string();
  std::ofstream(path) << text;
  return path;
}

std::string error_of(const std::string& path) {
  try {
    plan::read_csv(path, 1);
  } catch (const Error& e) {
    CHECK(e.exit_code() == kExitError);
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a CSV row becomes a buffer live from lower to upper - 1", "[csv]") {
  const auto buffers = plan::read_csv(write_temp("good", "id,lower,upper,size\nx,3,7,96\n"), 8);
  REQUIRE(buffers.size() == 1);
  CHECK(buffers[0].name == "x");
  CHECK(buffers[0].first_step == 3);
  CHECK(buffers[0].last_step == 6);
  CHECK(buffers[0].size == 96);
  CHECK(buffers[0].alignment == 8);
}

TEST_CASE("the written plan adds the offset and keeps upper exclusive", "[csv]") {
  const auto buffers = plan::read_csv(write_temp("roundtrip", "id,lower,upper,size\nx,3,7,96\n"), 1);
  plan::Plan plan;
  plan.placements = {{0, 128}};
  CHECK(plan::csv_text(buffers, plan) == "id,lower,upper,size,offset\nx,3,7,96,128\n");
}

TEST_CASE("a bad number names the file, the line and the column", "[csv]") {
  const std::string path = write_temp("badnumber", "id,lower,upper,size\na,0,1,4\nb,0,2,four\n");
  CHECK(error_of(path) == path + ":3: size 'four' is not a whole number");
}

TEST_CASE("an empty live interval is refused", "[csv]") {
  const std::string path = write_temp("empty", "id,lower,upper,size\na,5,5,4\n");
  CHECK(error_of(path) == path + ":2: upper 5 must be above lower 5 (upper is exclusive)");
}

TEST_CASE("a missing header column is refused", "[csv]") {
  const std::string path = write_temp("header", "id,lower,size\na,0,4\n");
  CHECK(error_of(path) == path + ":1: expected a header with the columns id,lower,upper,size");
}

TEST_CASE("a short row is refused", "[csv]") {
  const std::string path = write_temp("short", "id,lower,upper,size\na,0,4\n");
  CHECK(error_of(path) == path + ":2: expected 4 fields like the header, found 3");
}

TEST_CASE("a missing file is refused", "[csv]") {
  CHECK(error_of("no_such_planner_file.csv") == "no_such_planner_file.csv: cannot open the file");
}
