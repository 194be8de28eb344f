// Fuzz target: the input's bytes, split at NUL, become the strings of a real model (its graph's
// name and doc string, node names and doc strings, every tensor name, consistently, so the graph
// still links, the metadata), which is then compiled in-process. The compile must succeed; the
// generated code, with comments and string literals taken out, must equal the unrenamed model's
// (a name can only sit in a comment or a literal, and comments hold no line break, "*/", "??" or
// a trailing backslash); the report must be valid UTF-8 JSON that check_report accepts; the SVG
// must be well-formed XML (libxml2); the HTML must have the unrenamed model's tags; the text
// report must hold no control character but line feeds. Building and running the generated code
// is tests/names/run's part (ctest).
//
// It prints how many names it tried ("names tried: N (placed M times) in K inputs") every 1000
// inputs and at exit. fuzz/names.dict holds the hostile pieces.
#include <libxml/parser.h>
#include <onnx/onnx_pb.h>

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "driver/pipeline.hpp"
#include "error.hpp"
#include "import/model_file.hpp"
#include "report/report.hpp"
#include "scratch.hpp"

namespace {

// Small real models (their plans are found long before any time limit, so they do not vary).
const char* const kModels[] = {TIGHTFIT_SOURCE_ROOT "/tests/import/good/conv_relu_qdq.onnx",
                               TIGHTFIT_SOURCE_ROOT "/models/multi_io.qop.onnx",
                               TIGHTFIT_SOURCE_ROOT "/tests/import/good/qop_branches.onnx"};

[[noreturn]] void fail(const std::string& what, const std::string& detail = "") {
  std::fprintf(stderr, "names: %s\n%s\n", what.c_str(), detail.substr(0, 4000).c_str());
  std::abort();
}

// Names made from inputs, and the places they were put in (a short input's names fill many);
// printed every 1000 inputs and at exit.
struct NamesTried {
  std::uint64_t inputs = 0, names = 0, placed = 0;
  void print() const {
    std::fprintf(stderr, "names tried: %llu (placed %llu times) in %llu inputs\n",
                 static_cast<unsigned long long>(names), static_cast<unsigned long long>(placed),
                 static_cast<unsigned long long>(inputs));
  }
  ~NamesTried() { print(); }
} names_tried;

// The code with every comment and the inside of every string literal taken out; checks what it
// takes out of comments.
std::string code_only(const std::string& code) {
  std::string out;
  for (std::size_t i = 0; i < code.size(); ++i) {
    if (code.compare(i, 2, "//") == 0) {
      const std::size_t end = code.find('\n', i);
      const std::string comment = code.substr(i + 2, end == std::string::npos ? std::string::npos : end - i - 2);
      for (char c : comment)
        if (c < 0x20 || c > 0x7e) fail("a byte outside printable ASCII in a comment", comment);
      if (comment.find("*/") != std::string::npos || comment.find("/*") != std::string::npos ||
          comment.find("??") != std::string::npos || (!comment.empty() && comment.back() == '\\'))
        fail("a comment holds */, /*, ?? or ends in a backslash", comment);
      i = end == std::string::npos ? code.size() : end - 1;
    } else if (code[i] == '"') {
      out += '"';
      for (++i; i < code.size() && code[i] != '"'; ++i) {
        if (code[i] == '\n') fail("a line break in a string literal");
        if (code[i] == '\\') ++i;
      }
      out += '"';
    } else {
      out += code[i];
    }
  }
  return out;
}

// The tag names of an HTML document, in order.
std::vector<std::string> tags(const std::string& html) {
  std::vector<std::string> names;
  for (std::size_t i = html.find('<'); i != std::string::npos; i = html.find('<', i + 1)) {
    std::size_t end = i + 1;
    while (end < html.size() &&
           (std::isalnum(static_cast<unsigned char>(html[end])) || html[end] == '/' || html[end] == '!'))
      ++end;
    names.push_back(html.substr(i + 1, end - i - 1));
  }
  return names;
}

// No control character but line feeds, and valid UTF-8 (what model_text::shown leaves alone).
void check_text(const std::string& what, const std::string& text) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    for (char c : line)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) fail(what + ": a control character", line);
    if (tightfit::model_text::shown(line) != line) fail(what + ": not valid UTF-8", line);
  }
}

struct Compiled {
  std::string header, source, html;
  std::vector<std::string> html_tags;
};

Compiled compile(const std::string& path) {
  tightfit::driver::CompileOptions options;
  options.model = path;
  options.name = "renamed";
  options.time_limit_seconds = 5;  // small models: the search ends long before, so the plan is the same
  tightfit::driver::CompiledModel m;
  try {
    m = tightfit::driver::compile_model(options);
  } catch (const tightfit::Error& e) {
    fail("the compile failed", e.what());
  }
  Compiled c{code_only(m.header), code_only(m.source), "", {}};

  std::string json;
  try {
    json = m.report.dump(2);
  } catch (const nlohmann::json::exception& e) {
    fail("the report is not valid JSON text", e.what());
  }
  const nlohmann::json back = nlohmann::json::parse(json);
  if (const auto problems = tightfit::report::check_report(back); !problems.empty())
    fail("report refused", problems[0]);
  if (back != m.report) fail("the report does not read back as written");

  const std::string svg = tightfit::report::render_svg(m.report);
  xmlDocPtr doc = xmlReadMemory(svg.data(), static_cast<int>(svg.size()), "memory.svg", nullptr,
                                XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
  if (!doc) fail("the SVG is not well-formed XML", svg);
  xmlFreeDoc(doc);

  c.html = tightfit::report::render_html(m.report);
  check_text("HTML", c.html);
  c.html_tags = tags(c.html);
  check_text("text report", tightfit::report::render_text(m.report));
  return c;
}

onnx::ModelProto load(const char* path) {
  onnx::ModelProto model;
  std::ifstream in(path, std::ios::binary);
  if (!model.ParseFromIstream(&in)) fail(std::string("cannot read ") + path);
  return model;
}

// Every tensor name the graph uses, in order of first use.
std::vector<std::string> tensor_names(const onnx::GraphProto& g) {
  std::vector<std::string> names;
  std::map<std::string, bool> seen;
  auto add = [&](const std::string& n) {
    if (!n.empty() && !seen[n]) seen[n] = true, names.push_back(n);
  };
  for (const auto& v : g.input()) add(v.name());
  for (const auto& t : g.initializer()) add(t.name());
  for (const auto& n : g.node()) {
    for (const auto& i : n.input()) add(i);
    for (const auto& o : n.output()) add(o);
  }
  for (const auto& v : g.output()) add(v.name());
  return names;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  xmlInitParser();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t which = data[0] % (sizeof kModels / sizeof kModels[0]);
  static std::map<std::size_t, Compiled> originals;
  if (!originals.count(which)) originals[which] = compile(kModels[which]);
  const Compiled& original = originals[which];

  std::vector<std::string> names(1);
  for (std::size_t i = 1; i < size; ++i) {
    if (data[i] == 0)
      names.emplace_back();
    else
      names.back() += static_cast<char>(data[i]);
  }
  for (std::string& name : names)  // longer names are refused (import/model_file.hpp)
    if (name.size() > tightfit::import::kMaxNameBytes) name.resize(tightfit::import::kMaxNameBytes);
  std::size_t next = 0;
  auto take = [&] {
    ++names_tried.placed;
    names_tried.names += next < names.size();
    return names[next++ % names.size()];
  };

  onnx::ModelProto model = load(kModels[which]);
  onnx::GraphProto& g = *model.mutable_graph();
  g.set_name(take());
  if (g.name().empty()) g.set_name("g");  // the ONNX checker requires one
  g.set_doc_string(take());
  model.set_doc_string(take());
  auto* meta = model.add_metadata_props();
  meta->set_key(take());
  meta->set_value(take());
  for (auto& n : *g.mutable_node()) {
    n.set_name(take());
    n.set_doc_string(take());
  }
  // Tensor names: distinct and not empty (an empty input name means "absent"), so the graph
  // keeps its meaning; names equal after any sanitizing are welcome.
  std::map<std::string, std::string> renamed;
  std::map<std::string, bool> used;
  for (const std::string& old : tensor_names(g)) {
    std::string name = take();
    if (name.empty()) name = "t";
    while (used[name]) name += "'";
    used[name] = true;
    renamed[old] = name;
  }
  auto rename = [&](std::string* s) {
    if (!s->empty()) *s = renamed.at(*s);
  };
  for (auto& v : *g.mutable_input()) rename(v.mutable_name());
  for (auto& v : *g.mutable_output()) rename(v.mutable_name());
  for (auto& t : *g.mutable_initializer()) rename(t.mutable_name());
  g.clear_value_info();
  for (auto& n : *g.mutable_node()) {
    for (auto& i : *n.mutable_input()) rename(&i);
    for (auto& o : *n.mutable_output()) rename(&o);
  }

  const std::string bytes = model.SerializeAsString();
  const std::string path =
      fuzz::write_input("names.onnx", reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  const Compiled c = compile(path);
  if (c.header != original.header)
    fail("the header differs from the unrenamed model's outside comments and literals", c.header);
  if (c.source != original.source) fail("the source differs from the unrenamed model's outside comments and literals");
  if (c.html_tags != original.html_tags) fail("the HTML's tags differ from the unrenamed model's", c.html);
  if (++names_tried.inputs % 1000 == 0) names_tried.print();
  return 0;
}
