// The "measured" section that `tightfit run --target` adds: the text and HTML views give the
// firmware's figures as the JSON has them, and the sums they derive from them.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <sstream>

#include "report/report.hpp"
#include "synthetic_report.hpp"

using nlohmann::json;
using tightfit::report::render_html;
using tightfit::report::render_measured_text;
using tightfit::report::render_text;
using tightfit::report::testing::fixture;

namespace {

std::uint64_t u64(const json& v) { return v.get<std::uint64_t>(); }

// The first line that starts with `prefix`, or "" when there is none.
std::string line_starting(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(prefix, 0) == 0) return line;
  return "";
}

}  // namespace

TEST_CASE("the text gives the measured flash and RAM as the firmware's figures and their sums", "[report][measured]") {
  const json report = fixture("measured");
  const json& flash = report["measured"]["flash"];
  const json& ram = report["measured"]["ram"];
  const std::string text = render_text(report);
  CHECK(line_starting(text, "Measured on mps2-an386 (cortex-m4), qemu-system-arm -icount shift=0") != "");
  CHECK(line_starting(text, "  flash  ") ==
        fmt::format("  flash  {} B = weights {} + code and constants {} + built-in test inputs {}",
                    u64(flash["total_bytes"]), u64(flash["weights_bytes"]),
                    u64(flash["total_bytes"]) - u64(flash["weights_bytes"]) - u64(flash["inputs_bytes"]),
                    u64(flash["inputs_bytes"])));
  CHECK(line_starting(text, "  RAM    ") ==
        fmt::format(
            "  RAM    {} B = arena {} + .data {} + .bss {} + peak stack {}",
            u64(ram["arena_bytes"]) + u64(ram["data_bytes"]) + u64(ram["bss_bytes"]) + u64(ram["stack_peak_bytes"]),
            u64(ram["arena_bytes"]), u64(ram["data_bytes"]), u64(ram["bss_bytes"]), u64(ram["stack_peak_bytes"])));
  CHECK(line_starting(text, "         the arena is ") ==
        fmt::format("         the arena is the plan's to the byte ({} B); the stack reserved is {} B",
                    u64(report["arena_bytes"]), u64(ram["stack_bytes"])));
}

TEST_CASE("an arena that is not the plan's is said so", "[report][measured]") {
  json report = fixture("measured");
  report["measured"]["ram"]["arena_bytes"] = u64(report["arena_bytes"]) + 8;
  const std::string text = render_text(report);
  CHECK(line_starting(text, "         the arena is ") ==
        fmt::format("         the arena is NOT the plan's ({} B); the stack reserved is 16384 B",
                    u64(report["arena_bytes"])));
  CHECK(render_html(report).find("NOT as planned") != std::string::npos);
}

TEST_CASE("a figure the firmware did not print shows as '?'", "[report][measured]") {
  json report = fixture("measured");
  report["measured"]["ram"]["stack_peak_bytes"] = nullptr;
  report["measured"]["instructions"] = nullptr;
  const std::string text = render_text(report);
  CHECK(line_starting(text, "  RAM    ? B = arena ").find("peak stack ?") != std::string::npos);
  CHECK(line_starting(text, "  speed  ") == "  speed  ? instructions per inference");
}

TEST_CASE("the speed line divides the instructions by the MACs of every step", "[report][measured]") {
  const json report = fixture("measured");
  std::uint64_t macs = 0;
  for (const auto& step : report["steps"]) macs += u64(step["macs"]);
  const std::uint64_t instructions = u64(report["measured"]["instructions"]);
  CHECK(line_starting(render_text(report), "  speed  ") ==
        fmt::format("  speed  {} instructions per inference, {:.2f} per MAC ({} MACs)", instructions,
                    static_cast<double>(instructions) / static_cast<double>(macs), macs));
}

TEST_CASE("a profiled run lists each step's instructions, '-' where no kernel was called", "[report][measured]") {
  const json report = fixture("measured");
  const std::string text = render_measured_text(report);
  for (const auto& step : report["steps"]) {
    const json& count = report["measured"]["step_instructions"][u64(step["step"])];
    const std::string row =
        line_starting(text, fmt::format("  {:>5}  {} ", u64(step["step"]), step["node"].get<std::string>()));
    INFO(text);
    REQUIRE(row != "");
    std::istringstream words(row);
    std::vector<std::string> fields;
    for (std::string w; words >> w;) fields.push_back(w);
    REQUIRE(fields.size() >= 4);
    CHECK(fields[3] == (count.is_null() ? "-" : std::to_string(u64(count))));
  }
  // The HTML layers table gains the two columns.
  const std::string html = render_html(report);
  CHECK(html.find("<th class=\"num\">instructions</th><th class=\"num\">per MAC</th>") != std::string::npos);
  CHECK(html.find("<td class=\"num\">no call</td>") != std::string::npos);
}

TEST_CASE("a report without measured figures has no measured section", "[report][measured]") {
  const json report = fixture("layers5");
  CHECK(render_measured_text(report).empty());
  CHECK(render_text(report).find("Measured on") == std::string::npos);
  CHECK(render_html(report).find("Measured on") == std::string::npos);
  json plain = fixture("measured");
  plain["measured"]["step_instructions"] = nullptr;
  CHECK(render_measured_text(plain).find("per step") == std::string::npos);
  CHECK(render_html(plain).find("<th class=\"num\">instructions</th>") == std::string::npos);
}
