// check_report(): the synthetic reports pass; each kind of breakage is caught and named by path.
#include <catch2/catch.hpp>

#include <algorithm>

#include "error.hpp"
#include "report/json_schema.hpp"
#include "report/report.hpp"
#include "synthetic_report.hpp"

using nlohmann::json;
using tightfit::report::check_report;
using tightfit::report::testing::fixture;

namespace {

// True when one of `problems` mentions `text`.
bool mentions(const std::vector<std::string>& problems, const std::string& text) {
  return std::any_of(problems.begin(), problems.end(),
                     [&](const std::string& p) { return p.find(text) != std::string::npos; });
}

}  // namespace

TEST_CASE("every synthetic report passes the check", "[report][check]") {
  for (const auto& name : tightfit::report::testing::fixture_names()) {
    INFO(name);
    CHECK(check_report(fixture(name)).empty());
  }
}

TEST_CASE("the fixtures cover one region, several, 200 steps, a failure and measured figures", "[report][check]") {
  CHECK(fixture("layers5")["steps"].size() == 5);
  CHECK(fixture("regions3")["regions"].size() == 3);
  CHECK(fixture("layers200")["steps"].size() == 200);
  CHECK(fixture("infeasible")["status"] == "infeasible");
  CHECK(fixture("measured").contains("measured"));
  CHECK(!fixture("layers5").contains("measured"));
}

TEST_CASE("measured figures that do not belong to the report are caught", "[report][check]") {
  json report = fixture("measured");
  report["measured"]["ram"]["planned_arena_bytes"] = report["arena_bytes"].get<std::uint64_t>() + 4;
  CHECK(mentions(check_report(report), "$.measured.ram.planned_arena_bytes: "));
  report = fixture("measured");
  report["measured"]["step_instructions"].erase(0);
  CHECK(mentions(check_report(report), "$.measured.step_instructions: 5 counts for 6 steps"));
  report = fixture("measured");
  report["measured"]["flash"].erase("weights_bytes");
  CHECK(mentions(check_report(report), "$.measured.flash: missing key \"weights_bytes\""));
  report = fixture("measured");
  report["measured"]["instructions"] = -1;
  CHECK(mentions(check_report(report), "$.measured.instructions: must be at least 0"));
}

TEST_CASE("a missing key is caught", "[report][check]") {
  json report = fixture("layers5");
  report.erase("buffers");
  CHECK(mentions(check_report(report), "$: missing key \"buffers\""));
  report = fixture("layers5");
  report["steps"][2].erase("macs");
  CHECK(mentions(check_report(report), "$.steps[2]: missing key \"macs\""));
}

TEST_CASE("a value of the wrong type is caught", "[report][check]") {
  json report = fixture("layers5");
  report["buffers"][1]["size"] = "big";
  CHECK(mentions(check_report(report), "$.buffers[1].size: must be integer, not string"));
  report = fixture("layers5");
  report["arena_bytes"] = -4;
  CHECK(mentions(check_report(report), "$.arena_bytes: must be at least 0"));
}

TEST_CASE("an unknown status, kind or schema version is caught", "[report][check]") {
  json report = fixture("layers5");
  report["status"] = "good";
  CHECK(mentions(check_report(report), "$.status: must be one of"));
  report = fixture("layers5");
  report["buffers"][0]["kind"] = "weights";
  CHECK(mentions(check_report(report), "$.buffers[0].kind"));
  report = fixture("layers5");
  report["version"] = 2;
  CHECK(mentions(check_report(report), "$.version: must be 1"));
}

TEST_CASE("a buffer in a region that is not listed is caught", "[report][check]") {
  json report = fixture("regions3");
  report["buffers"][0]["region"] = "ITCM";
  CHECK(mentions(check_report(report), "$.buffers[0].region: \"ITCM\" is not one of the regions"));
}

TEST_CASE("a buffer outside the schedule or above its region's peak is caught", "[report][check]") {
  json report = fixture("layers5");
  report["buffers"][0]["last_step"] = 5;
  CHECK(mentions(check_report(report), "$.buffers[0]: last_step 5 is past the last step"));
  report = fixture("layers5");
  report["buffers"][0]["first_step"] = 3;
  report["buffers"][0]["last_step"] = 2;
  CHECK(mentions(check_report(report), "$.buffers[0]: first_step 3 is after last_step 2"));
  report = fixture("layers5");
  report["buffers"][0]["offset"] = report["arena_bytes"];
  CHECK(mentions(check_report(report), "above the peak"));
}

TEST_CASE("totals that disagree with the regions are caught", "[report][check]") {
  json report = fixture("regions3");
  report["arena_bytes"] = report["arena_bytes"].get<int>() + 16;
  CHECK(mentions(check_report(report), "$.arena_bytes:"));
  report = fixture("layers5");
  report["gap_bytes"] = report["gap_bytes"].get<int>() + 1;
  CHECK(mentions(check_report(report), "$.gap_bytes: must be arena_bytes - lower_bound_bytes"));
}

TEST_CASE("a failure belongs to an infeasible report and only there", "[report][check]") {
  json report = fixture("layers5");
  report["failure"] = fixture("infeasible")["failure"];
  CHECK(mentions(check_report(report), "$.failure: must be an object exactly when status is \"infeasible\""));
  report = fixture("infeasible");
  report["failure"] = nullptr;
  CHECK(mentions(check_report(report), "$.failure"));
  report = fixture("layers5");
  report["buffers"][0]["offset"] = nullptr;
  CHECK(mentions(check_report(report), "$.buffers[0].offset: null, but the plan is"));
}

TEST_CASE("the views refuse a report that fails the check, with one line", "[report][check]") {
  json report = fixture("layers5");
  report.erase("steps");
  CHECK_THROWS_AS(tightfit::report::render_text(report), tightfit::Error);
  CHECK_THROWS_AS(tightfit::report::render_svg(report), tightfit::Error);
  CHECK_THROWS_WITH(tightfit::report::render_html(report), Catch::Contains("missing key \"steps\""));
}

TEST_CASE("a schema keyword the validator does not know is reported, not ignored", "[report][check]") {
  const json schema = {{"type", "string"}, {"pattern", "^a"}};
  CHECK(mentions(tightfit::report::validate_against_schema("abc", schema), "keyword \"pattern\""));
}
