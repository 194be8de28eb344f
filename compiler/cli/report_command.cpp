// `tightfit report FILE.report.json [--format text|json|svg|html] [-o FILE]`: renders any view of
// a memory report again from its JSON alone (the JSON view is the checked document, re-indented).
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/commands.hpp"
#include "error.hpp"
#include "report/report.hpp"

namespace tightfit {
namespace {

struct ReportOptions {
  std::string input;
  std::string format = "text";
  std::string output;  // empty: standard output
};

nlohmann::json read_report_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("cannot read {}", path));
  std::stringstream text;
  text << in.rdbuf();
  try {
    return nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::parse_error& e) {
    // nlohmann's message starts with its own tag, "[json.exception.parse_error.101] ": not for users.
    const std::string message = e.what();
    const auto tag_end = message.find("] ");
    throw Error(
        fmt::format("{} is not JSON: {}", path, tag_end == std::string::npos ? message : message.substr(tag_end + 2)));
  }
}

void run_report(const ReportOptions& options) {
  const nlohmann::json report = read_report_file(options.input);
  if (const auto problems = report::check_report(report); !problems.empty()) {
    const std::string more = problems.size() > 1 ? fmt::format(" (and {} more)", problems.size() - 1) : "";
    throw Error(fmt::format("{} is not a valid tightfit report: {}{}", options.input, problems.front(), more));
  }
  std::string view;
  if (options.format == "text") view = report::render_text(report);
  if (options.format == "json") view = report.dump(2) + "\n";
  if (options.format == "svg") view = report::render_svg(report);
  if (options.format == "html") view = report::render_html(report);

  if (options.output.empty()) {
    std::fwrite(view.data(), 1, view.size(), stdout);
    return;
  }
  std::ofstream out(options.output, std::ios::binary);
  out << view;
  if (!out.flush()) throw Error(fmt::format("cannot write {}", options.output));
}

}  // namespace

void add_report_command(CLI::App& app) {
  auto options = std::make_shared<ReportOptions>();
  CLI::App* command =
      app.add_subcommand("report", "render a memory report (NAME.report.json) as text, JSON, SVG or HTML");
  command->add_option("report", options->input, "the report written by `tightfit compile`")->required();
  command->add_option("--format", options->format, "the view to render (default text)")
      ->check(CLI::IsMember({"text", "json", "svg", "html"}));
  command->add_option("-o,--output", options->output, "write the view to this file instead of standard output");
  command->callback([options] { run_report(*options); });
}

}  // namespace tightfit
