// check_report(): the schema first, then the rules that tie one part of the report to another.
#include <fmt/format.h>

#include <set>

#include "report/json_schema.hpp"
#include "report/report.hpp"

namespace tightfit::report {
namespace {

using nlohmann::json;

std::uint64_t u64(const json& value) { return value.get<std::uint64_t>(); }

// Rules between keys; only run on a report that matches the schema, so every key is there.
std::vector<std::string> check_consistency(const json& report) {
  std::vector<std::string> problems;
  auto fail = [&problems](const std::string& line) { problems.push_back(line); };

  const bool placed = report.at("status") != "infeasible";
  const json& steps = report.at("steps");
  const json& regions = report.at("regions");

  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (u64(steps[i].at("step")) != i) fail(fmt::format("$.steps[{}].step: must be {}, the step's index", i, i));
  }
  for (std::size_t i = 0; i < report.at("peak_steps").size(); ++i) {
    if (u64(report.at("peak_steps")[i]) >= steps.size()) {
      fail(fmt::format("$.peak_steps[{}]: step {} is past the last step", i, u64(report.at("peak_steps")[i])));
    }
  }

  std::set<std::string> region_names;
  std::uint64_t peak_sum = 0;
  for (std::size_t i = 0; i < regions.size(); ++i) {
    const json& r = regions[i];
    const auto name = r.at("name").get<std::string>();
    if (!region_names.insert(name).second) fail(fmt::format("$.regions[{}].name: \"{}\" is listed twice", i, name));
    peak_sum += u64(r.at("peak"));
    if (u64(r.at("lower_bound")) > u64(r.at("peak"))) {
      fail(fmt::format("$.regions[{}]: lower_bound {} is above peak {}", i, u64(r.at("lower_bound")),
                       u64(r.at("peak"))));
    }
    if (placed && !r.at("capacity").is_null() && u64(r.at("peak")) > u64(r.at("capacity"))) {
      fail(fmt::format("$.regions[{}]: peak {} is above capacity {}", i, u64(r.at("peak")), u64(r.at("capacity"))));
    }
  }

  const json& buffers = report.at("buffers");
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    const json& b = buffers[i];
    const std::string path = fmt::format("$.buffers[{}]", i);
    const auto region = b.at("region").get<std::string>();
    const auto first = u64(b.at("first_step")), last = u64(b.at("last_step"));
    if (first > last) fail(fmt::format("{}: first_step {} is after last_step {}", path, first, last));
    if (last >= steps.size()) fail(fmt::format("{}: last_step {} is past the last step", path, last));
    if (region_names.count(region) == 0) {
      fail(fmt::format("{}.region: \"{}\" is not one of the regions", path, region));
    } else if (!b.at("offset").is_null()) {
      for (const auto& r : regions) {
        const auto end = u64(b.at("offset")) + u64(b.at("size"));
        if (r.at("name") == region && end > u64(r.at("peak"))) {
          fail(fmt::format("{}: ends at {}, above the peak {} of region {}", path, end, u64(r.at("peak")), region));
        }
      }
    } else if (placed) {
      fail(fmt::format("{}.offset: null, but the plan is {}", path, report.at("status").get<std::string>()));
    }
  }

  const auto arena = u64(report.at("arena_bytes")), bound = u64(report.at("lower_bound_bytes"));
  if (placed) {
    if (arena != peak_sum)
      fail(fmt::format("$.arena_bytes: {} is not the sum of the region peaks, {}", arena, peak_sum));
    if (bound > arena)
      fail(fmt::format("$.lower_bound_bytes: {} is above arena_bytes {}", bound, arena));
    else if (u64(report.at("gap_bytes")) != arena - bound) {
      fail(fmt::format("$.gap_bytes: must be arena_bytes - lower_bound_bytes = {}", arena - bound));
    }
    if (!report.at("cap_bytes").is_null() && arena > u64(report.at("cap_bytes"))) {
      fail(fmt::format("$.arena_bytes: {} is above cap_bytes {} in a plan that is not infeasible", arena,
                       u64(report.at("cap_bytes"))));
    }
  }
  const json& failure = report.at("failure");
  if (placed != failure.is_null()) fail("$.failure: must be an object exactly when status is \"infeasible\"");
  if (!failure.is_null() && u64(failure.at("peak_step")) >= steps.size()) {
    fail(fmt::format("$.failure.peak_step: step {} is past the last step", u64(failure.at("peak_step"))));
  }
  if (report.contains("measured")) {
    const json& measured = report.at("measured");
    const json& planned = measured.at("ram").at("planned_arena_bytes");
    if (!planned.is_null() && u64(planned) != arena) {
      fail(fmt::format("$.measured.ram.planned_arena_bytes: {} is not this report's arena_bytes {}", u64(planned),
                       arena));
    }
    const json& counts = measured.at("step_instructions");
    if (!counts.is_null() && counts.size() != steps.size()) {
      fail(fmt::format("$.measured.step_instructions: {} counts for {} steps", counts.size(), steps.size()));
    }
  }
  return problems;
}

}  // namespace

std::vector<std::string> check_report(const json& report) {
  static const json schema = json::parse(report_schema_text());
  auto problems = validate_against_schema(report, schema);
  if (problems.empty()) problems = check_consistency(report);
  return problems;
}

}  // namespace tightfit::report
