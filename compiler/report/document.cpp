#include "report/document.hpp"

#include <algorithm>

#include "error.hpp"
#include "report/report.hpp"
#include "util/model_text.hpp"

namespace tightfit::report {
namespace {

using nlohmann::json;

template <typename T>
std::optional<T> optional_value(const json& value) {
  if (value.is_null()) return std::nullopt;
  return value.get<T>();
}

Step read_step(const json& j) {
  Step s;
  s.step = j.at("step").get<std::uint64_t>();
  s.node = j.at("node").get<std::string>();
  s.op = j.at("op").get<std::string>();
  s.onnx_op = j.at("onnx_op").get<std::string>();
  s.output_shape = j.at("output_shape").get<std::vector<std::uint64_t>>();
  s.macs = j.at("macs").get<std::uint64_t>();
  s.live_bytes = j.at("live_bytes").get<std::uint64_t>();
  s.scratch_bytes = j.at("scratch_bytes").get<std::uint64_t>();
  s.live_tensors = j.at("live_tensors").get<std::vector<std::string>>();
  s.in_float = j.value("float", false);
  s.float_bytes = j.value("float_bytes", std::uint64_t{0});
  return s;
}

Buffer read_buffer(const json& j) {
  Buffer b;
  b.tensor = j.at("tensor").get<std::string>();
  b.size = j.at("size").get<std::uint64_t>();
  b.offset = optional_value<std::uint64_t>(j.at("offset"));
  b.region = j.at("region").get<std::string>();
  b.first_step = j.at("first_step").get<std::uint64_t>();
  b.last_step = j.at("last_step").get<std::uint64_t>();
  b.kind = j.at("kind").get<std::string>();
  b.producer = optional_value<std::string>(j.at("producer"));
  b.op = optional_value<std::string>(j.at("op"));
  return b;
}

Measured read_measured(const json& j) {
  Measured m;
  m.board = j.at("board").get<std::string>();
  m.core = j.at("core").get<std::string>();
  m.method = j.at("method").get<std::string>();
  m.instructions = optional_value<std::uint64_t>(j.at("instructions"));
  const json& flash = j.at("flash");
  m.flash_bytes = optional_value<std::uint64_t>(flash.at("total_bytes"));
  m.text_bytes = optional_value<std::uint64_t>(flash.at("text_bytes"));
  m.rodata_bytes = optional_value<std::uint64_t>(flash.at("rodata_bytes"));
  m.weights_bytes = optional_value<std::uint64_t>(flash.at("weights_bytes"));
  m.inputs_bytes = optional_value<std::uint64_t>(flash.at("inputs_bytes"));
  const json& ram = j.at("ram");
  m.arena_bytes = optional_value<std::uint64_t>(ram.at("arena_bytes"));
  m.planned_arena_bytes = optional_value<std::uint64_t>(ram.at("planned_arena_bytes"));
  m.data_bytes = optional_value<std::uint64_t>(ram.at("data_bytes"));
  m.bss_bytes = optional_value<std::uint64_t>(ram.at("bss_bytes"));
  m.stack_bytes = optional_value<std::uint64_t>(ram.at("stack_bytes"));
  m.stack_peak_bytes = optional_value<std::uint64_t>(ram.at("stack_peak_bytes"));
  if (ram.contains("linked_bytes")) m.linked_ram_bytes = optional_value<std::uint64_t>(ram.at("linked_bytes"));
  if (!j.at("step_instructions").is_null()) {
    for (const json& count : j.at("step_instructions"))
      m.step_instructions.push_back(optional_value<std::uint64_t>(count));
  }
  return m;
}

// Every string of the report as the views print it (model_text::shown): names come from the
// model, and the text view goes to a terminal; the SVG and HTML views escape them further.
json shown_strings(json doc) {
  if (doc.is_string()) return model_text::shown(doc.get_ref<const std::string&>());
  if (doc.is_structured())
    for (auto& item : doc) item = shown_strings(std::move(item));
  return doc;
}

// A row of the RAM-against-cost table.
CostLevel read_cost_level(const json& l) {
  CostLevel level{l.at("technique").get<std::string>(),
                  l.at("arena_bytes").get<std::uint64_t>(),
                  l.at("extra_macs").get<std::int64_t>(),
                  l.at("extra_macs_percent").get<double>(),
                  {},
                  {},
                  0,
                  1,
                  true,
                  l.at("chosen").get<bool>()};
  if (l.contains("estimated_instructions") && !l.at("estimated_instructions").is_null())
    level.instructions = l.at("estimated_instructions").get<std::int64_t>();
  if (!l.at("stage").is_null()) {
    level.nodes = l.at("stage").at("nodes").get<std::vector<std::string>>();
    level.bands = l.at("stage").at("bands").get<std::uint64_t>();
    level.columns = l.at("stage").value("columns", std::uint64_t{1});          // absent in older reports
    level.whole_rows = l.at("stage").value("whole_rows", level.columns == 1);  // the same
  }
  return level;
}

}  // namespace

std::optional<std::uint64_t> Measured::code_and_constants_bytes() const {
  if (!flash_bytes || !weights_bytes || !inputs_bytes || *weights_bytes + *inputs_bytes > *flash_bytes)
    return std::nullopt;
  return *flash_bytes - *weights_bytes - *inputs_bytes;
}

std::optional<std::uint64_t> Measured::ram_in_use_bytes() const {
  if (!arena_bytes || !data_bytes || !bss_bytes || !stack_peak_bytes) return std::nullopt;
  return *arena_bytes + *data_bytes + *bss_bytes + *stack_peak_bytes;
}

bool Measured::arena_as_planned() const {
  return arena_bytes && planned_arena_bytes && *arena_bytes == *planned_arena_bytes;
}

std::uint64_t Document::macs() const {
  std::uint64_t sum = 0;
  for (const auto& s : steps) sum += s.macs;
  return sum;
}

const Buffer* Document::find_buffer(const std::string& tensor) const {
  for (const auto& b : buffers) {
    if (b.tensor == tensor) return &b;
  }
  return nullptr;
}

std::vector<std::pair<std::uint64_t, std::string>> Document::live_by_size(const Step& step) const {
  std::vector<std::pair<std::uint64_t, std::string>> sized;
  for (const auto& name : step.live_tensors) {
    const Buffer* b = find_buffer(name);
    sized.emplace_back(b ? b->size : 0, name);
  }
  std::stable_sort(sized.begin(), sized.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  return sized;
}

std::size_t Document::region_index(const std::string& region_name) const {
  for (std::size_t i = 0; i < regions.size(); ++i) {
    if (regions[i].name == region_name) return i;
  }
  return regions.size();
}

Document read_document(const json& checked) {
  const auto problems = check_report(checked);
  if (!problems.empty()) {
    const std::string more = problems.size() > 1 ? " (and " + std::to_string(problems.size() - 1) + " more)" : "";
    throw Error("not a valid tightfit report: " + problems.front() + more);
  }
  const json report = shown_strings(checked);
  Document d;
  d.tool = report.at("tool").get<std::string>();
  d.model = report.at("model").get<std::string>();
  d.name = report.at("name").get<std::string>();
  d.status = report.at("status").get<std::string>();
  d.arena_bytes = report.at("arena_bytes").get<std::uint64_t>();
  d.lower_bound_bytes = report.at("lower_bound_bytes").get<std::uint64_t>();
  d.gap_bytes = report.at("gap_bytes").get<std::uint64_t>();
  d.cap_bytes = optional_value<std::uint64_t>(report.at("cap_bytes"));
  d.weights_bytes = report.at("weights_bytes").get<std::uint64_t>();
  d.io_in_arena = report.at("io_in_arena").get<bool>();
  if (report.contains("batch_pinned")) d.batch_pinned = report.at("batch_pinned").get<std::vector<std::string>>();
  d.planner_time_limit_s = report.at("planner").at("time_limit_s").get<double>();
  for (const auto& r : report.at("regions")) {
    d.regions.push_back({r.at("name").get<std::string>(), optional_value<std::uint64_t>(r.at("capacity")),
                         r.at("peak").get<std::uint64_t>(), r.at("lower_bound").get<std::uint64_t>(),
                         r.at("status").get<std::string>()});
  }
  const json& flash = report.at("flash");
  d.flash_weights_bytes = flash.at("weights_bytes").get<std::uint64_t>();
  d.flash_schedule_bytes = flash.at("schedule_bytes").get<std::uint64_t>();
  d.flash_code_estimate_bytes = flash.at("code_estimate_bytes").get<std::uint64_t>();
  if (flash.contains("linked")) {
    const json& l = flash.at("linked");
    d.flash_linked = LinkedFlash{l.at("core").get<std::string>(),         l.at("method").get<std::string>(),
                                 l.at("text_bytes").get<std::uint64_t>(), l.at("rodata_bytes").get<std::uint64_t>(),
                                 l.at("data_bytes").get<std::uint64_t>(), l.at("weights_bytes").get<std::uint64_t>()};
  }
  d.greedy_by_size_bytes = report.at("comparisons").at("greedy_by_size_bytes").get<std::uint64_t>();
  d.no_reuse_bytes = report.at("comparisons").at("no_reuse_bytes").get<std::uint64_t>();
  for (const auto& s : report.at("steps")) d.steps.push_back(read_step(s));
  d.peak_steps = report.at("peak_steps").get<std::vector<std::uint64_t>>();
  for (const auto& b : report.at("buffers")) d.buffers.push_back(read_buffer(b));
  if (const json& f = report.at("failure"); !f.is_null()) {
    d.failure = Failure{f.at("cap_bytes").get<std::uint64_t>(), f.at("minimum_bytes").get<std::uint64_t>(),
                        f.at("peak_step").get<std::uint64_t>(), f.at("tensors").get<std::vector<std::string>>()};
  }
  if (report.contains("order")) {
    const json& o = report.at("order");
    d.order = Order{o.at("search").get<std::string>(),
                    o.at("reordered").get<bool>(),
                    o.at("moved_nodes").get<std::uint64_t>(),
                    o.at("states").get<std::uint64_t>(),
                    o.at("search_gap_bytes").get<std::uint64_t>(),
                    o.at("candidates").get<std::uint64_t>(),
                    o.at("file_order_bound_bytes").get<std::uint64_t>(),
                    o.at("bound_bytes").get<std::uint64_t>(),
                    o.at("file_order_arena_bytes").get<std::uint64_t>()};
  }
  if (report.contains("alignment")) {
    const json& a = report.at("alignment");
    auto bytes = [&](const char* key) {
      return a.at(key).is_null() ? std::nullopt : std::optional<std::uint64_t>(a.at(key).get<std::uint64_t>());
    };
    d.alignment = Alignment{a.at("bytes").get<std::uint64_t>(), a.at("source").get<std::string>(),
                            bytes("aligned_arena_bytes"), bytes("aligned_least_bytes")};
  }
  if (report.contains("slow_regions") && !report.at("slow_regions").is_null()) {
    const json& c = report.at("slow_regions");
    auto plan = [&](const char* key) -> std::optional<SlowRegionPlan> {
      const json& p = c.at(key);
      if (p.is_null()) return std::nullopt;
      return SlowRegionPlan{p.at("region_bytes").get<std::vector<std::uint64_t>>(), p.at("macs").get<std::int64_t>(),
                            p.at("instructions").get<std::int64_t>(), p.at("slow_cycles").get<std::int64_t>()};
    };
    d.slow_regions = SlowRegions{plan("with_slow"), plan("free_only"), c.at("kept").get<std::string>()};
  }
  if (report.contains("measured")) d.measured = read_measured(report.at("measured"));
  if (report.contains("overlaps")) {
    for (const auto& o : report.at("overlaps"))
      d.overlaps.push_back({o.at("step").get<std::uint64_t>(), o.at("node").get<std::string>(),
                            o.at("op").get<std::string>(), o.at("output").get<std::string>(),
                            o.at("input").get<std::string>(), o.at("direction").get<std::string>(),
                            o.at("distance").get<std::uint64_t>(), o.at("shared_bytes").get<std::uint64_t>()});
  }
  if (report.contains("rewrites")) {
    for (const auto& r : report.at("rewrites"))
      d.rewrites.push_back({r.at("technique").get<std::string>(), r.at("node").get<std::string>(),
                            r.at("into").get<std::string>(), r.at("op").get<std::string>(),
                            r.at("tensor").get<std::string>(), r.at("saved_bytes").get<std::uint64_t>(),
                            r.at("detail").get<std::string>()});
  }
  if (report.contains("instruction_estimate")) d.instruction_core = report.at("instruction_estimate").at("core");
  if (report.contains("ram_vs_cost")) {
    for (const auto& l : report.at("ram_vs_cost")) d.ram_vs_cost.push_back(read_cost_level(l));
  }
  for (const auto& [key, field] : {std::pair{"zero_copy_concat_bytes", &d.zero_copy_concat_bytes},
                                   std::pair{"copying_concat_bytes", &d.copying_concat_bytes}})
    if (report.at("comparisons").contains(key)) *field = report.at("comparisons").at(key).get<std::uint64_t>();
  if (report.at("comparisons").contains("no_overlap_bound_bytes"))
    d.no_overlap_bound_bytes = report.at("comparisons").at("no_overlap_bound_bytes").get<std::uint64_t>();
  return d;
}

}  // namespace tightfit::report
