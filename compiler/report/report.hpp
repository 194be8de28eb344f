// The memory report's views. `tightfit compile` builds the report document (JSON, schema
// "tightfit-report" version 1, see docs/report.md) and calls these to write, beside it,
// NAME.report.txt, NAME.memory.svg and NAME.report.html; `tightfit report` calls them to render
// any view again from the JSON alone.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace tightfit::report {

// What is wrong with `report`: one line per violation of docs/report.schema.json, then of the
// rules the schema cannot state (a buffer's region exists, its steps are within the schedule,
// the arena is the sum of the region peaks...). Empty when the report is fine.
std::vector<std::string> check_report(const nlohmann::json& report);

// The views. Each first checks the report and throws tightfit::Error with the first violation,
// so a view is never drawn from a document it would misread.

// For the terminal and NAME.report.txt: summary, savings, peak, per-layer table; lines of at
// most 100 columns, ASCII only.
std::string render_text(const nlohmann::json& report);

// The text view's "Measured" section alone (what `tightfit run --target` prints); empty for a
// report without measured figures.
std::string render_measured_text(const nlohmann::json& report);

// The memory map: x is the schedule step, y the address; one <rect class="buffer"> per placed
// buffer; the cap and lower-bound lines; the live-bytes curve below. A standalone SVG file.
std::string render_svg(const nlohmann::json& report);

// One self-contained page: the memory map, the summary and the tables, with CSS and a small
// script inline; nothing is loaded from anywhere.
std::string render_html(const nlohmann::json& report);

}  // namespace tightfit::report
