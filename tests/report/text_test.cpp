// The text view says what the JSON says: its numbers are the JSON's, found where a reader looks.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <regex>
#include <sstream>

#include "report/report.hpp"
#include "report/units.hpp"
#include "synthetic_report.hpp"

using nlohmann::json;
using tightfit::report::check_report;
using tightfit::report::human_bytes;
using tightfit::report::render_text;
using tightfit::report::testing::fixture;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<std::string> words_of(const std::string& line) {
  std::vector<std::string> words;
  std::istringstream in(line);
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

// The first line that starts with `prefix`; fails the test when there is none.
std::string line_starting(const std::string& text, const std::string& prefix) {
  for (const auto& line : lines_of(text)) {
    if (line.rfind(prefix, 0) == 0) return line;
  }
  FAIL("no line starts with \"" << prefix << "\" in:\n" << text);
  return "";
}

std::string shape_of(const json& step) {
  std::string out;
  for (const auto& d : step["output_shape"]) out += (out.empty() ? "" : "x") + std::to_string(d.get<std::uint64_t>());
  return out;
}

std::uint64_t u64(const json& v) { return v.get<std::uint64_t>(); }

}  // namespace

TEST_CASE("every line of the text fits in 100 columns and is ASCII", "[report][text]") {
  for (const auto& name : tightfit::report::testing::fixture_names()) {
    for (const auto& line : lines_of(render_text(fixture(name)))) {
      INFO(name << ": " << line);
      CHECK(line.size() <= 100);
      CHECK(std::all_of(line.begin(), line.end(), [](unsigned char c) { return c >= 32 && c < 127; }));
    }
  }
}

TEST_CASE("the RAM summary gives the JSON's arena, cap and, per region, peak, bound and gap", "[report][text]") {
  for (const std::string name : {"layers5", "regions3", "layers200"}) {
    INFO(name);
    const json report = fixture(name);
    const std::string text = render_text(report);
    CHECK_THAT(line_starting(text, "RAM "), Catch::StartsWith(fmt::format("RAM    {} B", u64(report["arena_bytes"]))));
    CHECK_THAT(line_starting(text, "RAM "), Catch::Contains(report["status"].get<std::string>()));
    for (const auto& region : report["regions"]) {
      const auto words = words_of(line_starting(text, "  " + region["name"].get<std::string>() + " "));
      REQUIRE(words.size() == 6);
      CHECK(words[1] == (region["capacity"].is_null() ? "-" : std::to_string(u64(region["capacity"]))));
      CHECK(words[2] == std::to_string(u64(region["peak"])));
      CHECK(words[3] == std::to_string(u64(region["lower_bound"])));
      CHECK(words[4] == std::to_string(u64(region["peak"]) - u64(region["lower_bound"])));
      CHECK(words[5] == region["status"].get<std::string>());
    }
    if (report["regions"].size() > 1) {
      const auto words = words_of(line_starting(text, "  all regions"));
      CHECK(words == std::vector<std::string>{"all", "regions", std::to_string(u64(report["arena_bytes"])),
                                              std::to_string(u64(report["lower_bound_bytes"])),
                                              std::to_string(u64(report["gap_bytes"]))});
    }
    if (report["cap_bytes"].is_null()) {
      CHECK_THAT(line_starting(text, "  cap:"), Catch::Contains("none"));
    } else {
      CHECK_THAT(line_starting(text, "  cap:"),
                 Catch::StartsWith(fmt::format("  cap: {} B", u64(report["cap_bytes"]))) &&
                     Catch::Contains(fmt::format("{} B", u64(report["cap_bytes"]) - u64(report["arena_bytes"]))));
    }
  }
}

TEST_CASE("linked for a core, the flash line is the link's figures, weights apart", "[report][text]") {
  json report = fixture("layers200");
  const std::uint64_t weights = u64(report["flash"]["weights_bytes"]);
  report["flash"]["linked"] = {{"core", "cortex-m7"}, {"method", "arm-none-eabi-g++ 12.2.1 -O2"},
                               {"text_bytes", 9500},  {"rodata_bytes", 870},
                               {"data_bytes", 4},     {"weights_bytes", weights + 16}};
  const std::string text = render_text(report);
  CHECK(line_starting(text, "Flash") ==
        fmt::format("Flash  {} B ({}) = weights {} + code 9500 + constants 870 + .data 4", weights + 16 + 10374,
                    human_bytes(weights + 16 + 10374), weights + 16));
  CHECK_THAT(text, Catch::Contains("linked for cortex-m7 (arm-none-eabi-g++ 12.2.1 -O2)"));
  CHECK_THAT(render_text(fixture("layers200")), Catch::Contains("an estimate (no core linked"));
  report["flash"]["linked"].erase("text_bytes");
  CHECK_FALSE(check_report(report).empty());
}

TEST_CASE("the flash line and the savings are the JSON's numbers", "[report][text]") {
  const json report = fixture("layers200");
  const std::string text = render_text(report);
  const json& flash = report["flash"];
  const auto total = u64(flash["weights_bytes"]) + u64(flash["code_estimate_bytes"]) + u64(flash["schedule_bytes"]);
  const std::string line = line_starting(text, "Flash");
  CHECK_THAT(line, Catch::StartsWith(fmt::format("Flash  {} B (", total)));
  CHECK_THAT(line,
             Catch::EndsWith(fmt::format("= weights {} + code (estimate) {} + schedule {}", u64(flash["weights_bytes"]),
                                         u64(flash["code_estimate_bytes"]), u64(flash["schedule_bytes"]))));
  const auto arena = u64(report["arena_bytes"]);
  CHECK(words_of(line_starting(text, "  tightfit (this plan)")).back() == std::to_string(arena));
  const auto greedy = u64(report["comparisons"]["greedy_by_size_bytes"]);
  const auto greedy_words = words_of(line_starting(text, "  TFLite Micro greedy"));
  CHECK(std::find(greedy_words.begin(), greedy_words.end(), std::to_string(greedy)) != greedy_words.end());
  const auto no_reuse = u64(report["comparisons"]["no_reuse_bytes"]);
  REQUIRE(no_reuse > arena);
  CHECK_THAT(line_starting(text, "  no reuse"),
             Catch::Contains(fmt::format("{}   {} B ({:.1f}%)", no_reuse, no_reuse - arena,
                                         100.0 * (no_reuse - arena) / no_reuse)));
}

TEST_CASE("each layer row gives the step's node, op, shape, MACs, live bytes and scratch", "[report][text]") {
  for (const std::string name : {"layers5", "layers200", "regions3"}) {
    INFO(name);
    const json report = fixture(name);
    const std::string text = render_text(report);
    const auto& peaks = report["peak_steps"];
    for (const auto& step : report["steps"]) {
      const auto index = u64(step["step"]);
      const bool peak = std::find(peaks.begin(), peaks.end(), step["step"]) != peaks.end();
      const std::string marker = std::to_string(index) + (peak ? "*" : "");
      std::vector<std::string> row;
      for (const auto& line : lines_of(text.substr(text.find("\nLayers")))) {
        const auto words = words_of(line);
        if (!words.empty() && words[0] == marker) row = words;
      }
      INFO("step " << index);
      REQUIRE(row.size() >= 7);
      const std::string node = step["node"].get<std::string>();
      if (node.size() <= 16)
        CHECK(row[1] == node);
      else
        CHECK(row[1] == node.substr(0, 15) + "~");
      CHECK(row[2] == step["op"].get<std::string>());
      CHECK(row[3] == shape_of(step));
      CHECK(row[4] == std::to_string(u64(step["macs"])));
      CHECK(row[5] == std::to_string(u64(step["live_bytes"])));
      CHECK(row[6] == std::to_string(u64(step["scratch_bytes"])));
    }
  }
}

TEST_CASE("a short schedule's layer rows list every live tensor", "[report][text]") {
  const json report = fixture("layers5");
  const auto lines = lines_of(render_text(report));
  for (const auto& step : report["steps"]) {
    const std::string index = std::to_string(u64(step["step"]));
    auto row = std::find_if(lines.begin(), lines.end(), [&](const std::string& line) {
      const auto words = words_of(line);
      return words.size() > 1 && (words[0] == index || words[0] == index + "*") && words[1] == step["node"];
    });
    REQUIRE(row != lines.end());
    std::string cell = *row;  // with the lines that continue it, indented under the tensors column
    for (++row; row != lines.end() && row->rfind(std::string(40, ' '), 0) == 0; ++row) cell += " " + *row;
    INFO(cell);
    CHECK_THAT(cell, !Catch::Contains(" +"));
    for (const auto& tensor : step["live_tensors"]) CHECK_THAT(cell, Catch::Contains(tensor.get<std::string>()));
  }
}

TEST_CASE("a long schedule's layer rows keep to one line and count the tensors left out", "[report][text]") {
  const json report = fixture("layers200");
  const std::string text = render_text(report);
  const auto table = lines_of(text.substr(text.find("\nLayers") + 1));
  CHECK(table.size() == 2 + report["steps"].size());
  bool counted = false;
  for (const auto& line : table) counted = counted || std::regex_search(line, std::regex(" \\+[0-9]+$"));
  CHECK(counted);
}

TEST_CASE("the peak names its bytes, its step and every tensor live there", "[report][text]") {
  const json report = fixture("layers5");
  const std::string text = render_text(report);
  const json& step = report["steps"][u64(report["peak_steps"][0])];
  CHECK_THAT(line_starting(text, "Peak"),
             Catch::StartsWith(fmt::format("Peak   {} B live at step", u64(step["live_bytes"]))));
  const std::string peak_block = text.substr(text.find("Peak"), text.find("Layers") - text.find("Peak"));
  for (const auto& tensor : step["live_tensors"]) {
    for (const auto& b : report["buffers"]) {
      if (b["tensor"] == tensor)
        CHECK_THAT(peak_block, Catch::Contains(fmt::format("{} {}", tensor.get<std::string>(), u64(b["size"]))));
    }
  }
}

TEST_CASE("an infeasible report gives the cap, the minimum reachable and the bottleneck", "[report][text]") {
  const json report = fixture("infeasible");
  const json& failure = report["failure"];
  const std::string text = render_text(report);
  const std::string first = line_starting(text, "DOES NOT FIT");
  CHECK_THAT(first, Catch::Contains(fmt::format("cap {} B", u64(failure["cap_bytes"]))));
  CHECK_THAT(first, Catch::Contains(fmt::format("minimum reachable {} B", u64(failure["minimum_bytes"]))));
  CHECK_THAT(first,
             Catch::Contains(fmt::format("{} B over", u64(failure["minimum_bytes"]) - u64(failure["cap_bytes"]))));
  CHECK_THAT(line_starting(text, "  bottleneck:"),
             Catch::Contains(fmt::format("step {} (", u64(failure["peak_step"]))));
  const std::string block = text.substr(text.find("DOES NOT FIT"), text.find("RAM ") - text.find("DOES NOT FIT"));
  for (const auto& tensor : failure["tensors"]) CHECK_THAT(block, Catch::Contains(tensor.get<std::string>()));
}

TEST_CASE("the RAM against cost table's time column is each level's estimate over the free level's", "[report][text]") {
  json report = fixture("layers5");
  const json stage = {{"nodes", {"a", "b"}}, {"bands", 4},   {"columns", 1}, {"whole_rows", true},
                      {"copied_bytes", 0},   {"input", "x"}, {"output", "y"}};
  report["ram_vs_cost"] = json::array({{{"technique", "none"},
                                        {"arena_bytes", 900},
                                        {"extra_macs", 0},
                                        {"extra_macs_percent", 0.0},
                                        {"estimated_instructions", 1000},
                                        {"stage", nullptr},
                                        {"chosen", false}},
                                       {{"technique", "free"},
                                        {"arena_bytes", 800},
                                        {"extra_macs", 0},
                                        {"extra_macs_percent", 0.0},
                                        {"estimated_instructions", 800},
                                        {"stage", nullptr},
                                        {"chosen", true}},
                                       {{"technique", "tiling"},
                                        {"arena_bytes", 500},
                                        {"extra_macs", 40},
                                        {"extra_macs_percent", 5.0},
                                        {"estimated_instructions", 1100},
                                        {"stage", stage},
                                        {"chosen", false}}});
  report["instruction_estimate"] = {{"core", "cortex-m4"}, {"measured", true}};
  REQUIRE(check_report(report).empty());
  const std::string text = render_text(report);
  CHECK_THAT(text, Catch::Contains("estimated for cortex-m4 from measured kernel costs"));
  CHECK(words_of(line_starting(text, "  none")).at(4) == "x1.25");
  CHECK(words_of(line_starting(text, "* free")).at(5) == "x1.00");
  CHECK(words_of(line_starting(text, "  tiling")).at(4) == "x1.38");
  // A core that was not measured: no estimates, no column.
  for (json& level : report["ram_vs_cost"]) level["estimated_instructions"] = nullptr;
  report["instruction_estimate"]["measured"] = false;
  REQUIRE(check_report(report).empty());
  const std::string plain = render_text(report);
  CHECK_THAT(plain, !Catch::Contains("estimated for"));
  CHECK_THAT(plain, !Catch::Contains("x1."));
}

TEST_CASE("a plan the cap made byte-aligned is the table's last row and the RAM section says what aligned took",
          "[report][text]") {
  json report = fixture("layers5");
  const json stage = {{"nodes", {"a", "b"}}, {"bands", 4},   {"columns", 1}, {"whole_rows", true},
                      {"copied_bytes", 0},   {"input", "x"}, {"output", "y"}};
  report["ram_vs_cost"] = json::array({{{"technique", "free"},
                                        {"arena_bytes", 800},
                                        {"extra_macs", 0},
                                        {"extra_macs_percent", 0.0},
                                        {"stage", nullptr},
                                        {"chosen", false}},
                                       {{"technique", "tiling"},
                                        {"arena_bytes", 500},
                                        {"extra_macs", 40},
                                        {"extra_macs_percent", 5.0},
                                        {"stage", stage},
                                        {"chosen", false}},
                                       {{"technique", "byte_aligned"},
                                        {"arena_bytes", 797},
                                        {"extra_macs", 0},
                                        {"extra_macs_percent", 0.0},
                                        {"stage", nullptr},
                                        {"chosen", true}}});
  report["alignment"] = {{"bytes", 1}, {"source", "cap"}, {"aligned_arena_bytes", 500}, {"aligned_least_bytes", 500}};
  REQUIRE(check_report(report).empty());
  const std::string text = render_text(report);
  CHECK_THAT(line_starting(text, "* byte-aligned"), Catch::Contains("797") && Catch::Contains("untiled"));
  CHECK_THAT(text,
             Catch::Contains("int8 buffers on any byte, for the cap (4-byte aligned: 500 B, with more extra MACs)"));
  // When no aligned plan fit, the least aligned arena instead.
  report["alignment"]["aligned_arena_bytes"] = nullptr;
  report["ram_vs_cost"][2]["stage"] = stage;
  report["ram_vs_cost"][2]["arena_bytes"] = 497;
  REQUIRE(check_report(report).empty());
  const std::string none_fit = render_text(report);
  CHECK_THAT(none_fit, Catch::Contains("(4-byte aligned: 500 B at least)"));
  CHECK_THAT(line_starting(none_fit, "* byte-aligned"), Catch::Contains("4 row bands of a .. b"));
  // An unknown source is refused by the schema.
  report["alignment"]["source"] = "guess";
  CHECK(!check_report(report).empty());
}

TEST_CASE("an input whose symbolic batch was compiled as 1 is named under the heading", "[report][text]") {
  json r = fixture(tightfit::report::testing::fixture_names().front());
  CHECK(render_text(r).find("symbolic batch") == std::string::npos);
  r["batch_pinned"] = {"images"};
  REQUIRE(check_report(r).empty());
  CHECK(line_starting(render_text(r), "  input 'images'") ==
        "  input 'images': its symbolic batch (dimension 0) is compiled as 1");
}
