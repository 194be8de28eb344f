// Writes every synthetic fixture and its views into a folder, for the tests that need files
// (an XML parser, a JSON Schema validator, the CLI, headless Chromium) and for people to look at:
//   DIR/NAME.report.json, NAME.report.txt, NAME.memory.svg, NAME.report.html
#include <filesystem>
#include <fstream>
#include <iostream>

#include "report/report.hpp"
#include "synthetic_report.hpp"

namespace {

void write(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out.flush()) throw std::runtime_error("cannot write " + path);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: write_report_fixtures DIR\n";
    return 2;
  }
  const std::string dir = argv[1];
  std::filesystem::create_directories(dir);
  for (const auto& name : tightfit::report::testing::fixture_names()) {
    const auto report = tightfit::report::testing::fixture(name);
    write(dir + "/" + name + ".report.json", report.dump(2) + "\n");
    write(dir + "/" + name + ".report.txt", tightfit::report::render_text(report));
    write(dir + "/" + name + ".memory.svg", tightfit::report::render_svg(report));
    write(dir + "/" + name + ".report.html", tightfit::report::render_html(report));
  }
  return 0;
}
