// The memory map draws each placed buffer once, where the JSON places it; the XML itself is
// parsed by check_svg.py (a real parser), these tests read the markup the view writes.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <map>
#include <regex>

#include "report/report.hpp"
#include "synthetic_report.hpp"

using nlohmann::json;
using tightfit::report::render_svg;
using tightfit::report::testing::fixture;

namespace {

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::size_t placed_buffers(const json& report) {
  return static_cast<std::size_t>(std::count_if(report["buffers"].begin(), report["buffers"].end(),
                                                [](const json& b) { return !b["offset"].is_null(); }));
}

}  // namespace

TEST_CASE("the map has exactly one buffer rectangle per placed buffer", "[report][svg]") {
  for (const auto& name : tightfit::report::testing::fixture_names()) {
    INFO(name);
    const json report = fixture(name);
    const std::string svg = render_svg(report);
    CHECK(count(svg, "<rect class=\"buffer ") == placed_buffers(report));
    for (const auto& b : report["buffers"]) {
      if (b["offset"].is_null()) continue;
      CHECK(count(svg, fmt::format("data-tensor=\"{}\"", b["tensor"].get<std::string>())) == 1);
    }
  }
}

TEST_CASE("an infeasible report draws no buffers and says why", "[report][svg]") {
  const std::string svg = render_svg(fixture("infeasible"));
  CHECK(count(svg, "class=\"buffer ") == 0);
  CHECK_THAT(svg, Catch::Contains("no placement: bytes live at each step against the cap"));
}

TEST_CASE("each buffer's tooltip gives its size, offset, steps and operator", "[report][svg]") {
  const json report = fixture("layers5");
  const std::string svg = render_svg(report);
  for (const auto& b : report["buffers"]) {
    const std::string producer =
        b["producer"].is_null()
            ? "graph input"
            : fmt::format("produced by {} ({})", b["producer"].get<std::string>(), b["op"].get<std::string>());
    const std::string title =
        fmt::format("<title>{}\n{} B", b["tensor"].get<std::string>(), b["size"].get<std::uint64_t>());
    INFO(title);
    const auto at = svg.find(title);
    REQUIRE(at != std::string::npos);
    const std::string tooltip = svg.substr(at, svg.find("</title>", at) - at);
    CHECK_THAT(tooltip, Catch::Contains(fmt::format("at offset {} in {}", b["offset"].get<std::uint64_t>(),
                                                    b["region"].get<std::string>())));
    CHECK_THAT(tooltip,
               Catch::Contains(fmt::format("steps {} to {}", b["first_step"].get<int>(), b["last_step"].get<int>())));
    CHECK_THAT(tooltip, Catch::Contains(producer));
  }
}

TEST_CASE("rectangles stack by address: a buffer at a higher offset is drawn higher", "[report][svg]") {
  // y grows downwards in SVG: the rectangle's top edge is offset + size, its bottom the offset.
  const json report = fixture("layers5");
  const std::string svg = render_svg(report);
  const std::regex rect("data-tensor=\"([^\"]+)\" x=\"[^\"]+\" y=\"([^\"]+)\" width=\"[^\"]+\" height=\"([^\"]+)\"");
  std::map<std::string, double> bottom;
  for (std::sregex_iterator it(svg.begin(), svg.end(), rect), end; it != end; ++it) {
    bottom[(*it)[1]] = std::stod((*it)[2]) + std::stod((*it)[3]);
  }
  REQUIRE(bottom.size() == report["buffers"].size());
  for (const auto& a : report["buffers"]) {
    for (const auto& b : report["buffers"]) {
      if (a["offset"].get<std::uint64_t>() >= b["offset"].get<std::uint64_t>() + b["size"].get<std::uint64_t>()) {
        CHECK(bottom[a["tensor"]] < bottom[b["tensor"]] + 0.01);
      }
    }
  }
}

TEST_CASE("the map stays within a screen's width at 200 steps and keeps short schedules wide", "[report][svg]") {
  const std::regex width("<svg[^>]* width=\"([0-9.]+)\"");
  std::smatch match;
  const std::string long_map = render_svg(fixture("layers200"));
  REQUIRE(std::regex_search(long_map, match, width));
  CHECK(std::stod(match[1]) <= 1440);
  const std::string short_map = render_svg(fixture("layers5"));
  REQUIRE(std::regex_search(short_map, match, width));
  CHECK(std::stod(match[1]) >= 700);
}

TEST_CASE("the cap and lower bound lines are drawn and labelled", "[report][svg]") {
  const json report = fixture("layers5");
  const std::string svg = render_svg(report);
  CHECK_THAT(svg, Catch::Contains(">lower bound "));
  CHECK_THAT(svg, Catch::Contains(">cap "));
  CHECK_THAT(svg, Catch::Contains(">greedy by size "));
}
