// The HTML view: one file that opens anywhere, offline. The summary first (what a reader came
// for), then the memory map, then the tables. CSS and a small script are inline; the only
// "link" is an empty data: icon, which stops the browser asking for /favicon.ico.
#include <fmt/format.h>

#include <algorithm>

#include "report/report.hpp"
#include "report/units.hpp"
#include "util/model_text.hpp"
#include "report/views.hpp"

namespace tightfit::report {
namespace {

const char* const kStyle = R"css(
:root { color-scheme: light; --ink: #1d2733; --muted: #5b6675; --line: #dde2e8; --accent: #1f4e79; }
* { box-sizing: border-box; }
body { margin: 0; padding: 24px 32px 48px; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Helvetica, Arial,
       sans-serif; color: var(--ink); background: #fff; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 32px 0 10px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
.sub { color: var(--muted); margin: 0; }
.badge { display: inline-block; font-size: 13px; font-weight: 600; padding: 2px 10px; border-radius: 10px;
         vertical-align: middle; margin-left: 8px; }
.badge.optimal { background: #d9f2e1; color: #145a2c; }
.badge.feasible { background: #fff0c2; color: #6b4d00; }
.badge.infeasible { background: #fbd9d9; color: #8a1414; }
.cards { display: flex; flex-wrap: wrap; gap: 12px; margin-top: 18px; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: 10px 14px; min-width: 170px; }
.card h3 { margin: 0; font-size: 12px; font-weight: 600; color: var(--muted); text-transform: uppercase;
           letter-spacing: .04em; }
.card b { display: block; font-size: 22px; margin: 2px 0; }
.card small { color: var(--muted); }
.failure { border: 1px solid #e8a3a3; background: #fdf1f1; border-radius: 8px; padding: 10px 14px; margin-top: 18px; }
.bars { display: grid; grid-template-columns: max-content 1fr max-content; gap: 6px 12px; align-items: center;
        max-width: 900px; }
.bar { height: 18px; border-radius: 3px; background: #9ecae1; }
.bar.ours { background: var(--accent); }
.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.map { overflow-x: auto; border: 1px solid var(--line); border-radius: 8px; padding: 8px; }
.map svg { display: block; max-width: 100%; height: auto; }
.hint { color: var(--muted); font-size: 12px; }
table { border-collapse: collapse; font-size: 13px; }
th, td { padding: 3px 10px; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; }
th { background: #f3f5f8; position: sticky; top: 0; }
td.num, th.num { text-align: right; }
tr.peak td { background: #fff6d1; }
td.tensors { color: var(--muted); max-width: 520px; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 6px; }
tbody tr:hover td { background: #eef4fb; }
.buffer.hl { stroke: #000 !important; stroke-width: 2px !important; }
#tip { position: fixed; display: none; pointer-events: none; white-space: pre; background: #1d2733; color: #fff;
       font-size: 12px; padding: 6px 9px; border-radius: 5px; box-shadow: 0 2px 8px rgba(0,0,0,.25); z-index: 10; }
)css";

// The map's <title> tooltips appear late and plain in a browser: the script shows them at once
// as a styled box, and lights up a buffer's rectangle when its table row is hovered.
const char* const kScript = R"js(
(function () {
  var tip = document.getElementById('tip');
  var byTensor = {};
  document.querySelectorAll('.map .buffer, .map .step-hit').forEach(function (el) {
    var title = el.querySelector('title');
    if (!title) return;
    var text = title.textContent;
    title.remove();
    if (el.classList.contains('buffer')) byTensor[el.getAttribute('data-tensor')] = el;
    el.addEventListener('mousemove', function (e) {
      tip.textContent = text;
      tip.style.display = 'block';
      tip.style.left = Math.min(e.clientX + 14, window.innerWidth - tip.offsetWidth - 8) + 'px';
      tip.style.top = (e.clientY + 14) + 'px';
    });
    el.addEventListener('mouseleave', function () { tip.style.display = 'none'; });
  });
  document.querySelectorAll('tr[data-tensor]').forEach(function (row) {
    var rect = byTensor[row.getAttribute('data-tensor')];
    if (!rect) return;
    row.addEventListener('mouseenter', function () { rect.classList.add('hl'); });
    row.addEventListener('mouseleave', function () { rect.classList.remove('hl'); });
  });
})();
)js";

std::string esc(std::string_view text) { return model_text::xml(text); }

std::string card(const std::string& heading, const std::string& big, const std::string& small) {
  return fmt::format("<div class=\"card\"><h3>{}</h3><b>{}</b><small>{}</small></div>\n", esc(heading), esc(big),
                     esc(small));
}

std::string summary_cards(const Document& d) {
  std::string out = "<section class=\"cards\">\n";
  if (d.status == "infeasible") {
    out += card("RAM needed", human_bytes(d.failure->minimum_bytes),
                fmt::format("{} B at least; the cap is {} B", d.failure->minimum_bytes, d.failure->cap_bytes));
  } else {
    out += card("RAM (arena)", human_bytes(d.arena_bytes),
                fmt::format("{} B in {} region{}", d.arena_bytes, d.regions.size(), d.regions.size() == 1 ? "" : "s"));
  }
  std::string gap = d.gap_bytes == 0
                        ? "reached: gap 0 B"
                        : fmt::format("gap {} B ({:.1f}%)", d.gap_bytes, percent_of(d.gap_bytes, d.arena_bytes));
  if (d.status == "infeasible") gap = "no plan needs less";
  out += card("Lower bound", human_bytes(d.lower_bound_bytes), fmt::format("{} B, {}", d.lower_bound_bytes, gap));
  if (d.cap_bytes) {
    const std::string spare =
        d.status == "infeasible" ? "too small" : fmt::format("{} B to spare", *d.cap_bytes - d.arena_bytes);
    out += card("Cap (--max-ram)", human_bytes(*d.cap_bytes), fmt::format("{} B, {}", *d.cap_bytes, spare));
  } else {
    out += card("Cap (--max-ram)", "none", "no limit was given");
  }
  if (const auto& l = d.flash_linked)
    out += card("Flash", human_bytes(d.flash_bytes()),
                fmt::format("weights {} + code {} + constants {} + .data {} B, linked for {}", l->weights_bytes,
                            l->text_bytes, l->rodata_bytes, l->data_bytes, l->core));
  else
    out += card("Flash", human_bytes(d.flash_bytes()),
                fmt::format("weights {} + code ~{} + schedule {} B (an estimate)", d.flash_weights_bytes,
                            d.flash_code_estimate_bytes, d.flash_schedule_bytes));
  out += card("Inputs and outputs", d.io_in_arena ? "in the arena" : "outside",
              d.io_in_arena ? "counted in the RAM above" : "the caller owns their buffers");
  if (d.alignment)
    out += card("Buffer alignment", fmt::format("{} B", d.alignment->bytes),
                d.alignment->source == "cap"
                    ? fmt::format("int8 buffers byte-aligned for the cap; 4-byte aligned the least is {} B",
                                  d.alignment->aligned_least_bytes.value_or(0))
                : d.alignment->source == "flag" ? std::string("--alignment")
                                                : std::string("the default; 1 only when a cap needs it"));
  return out + "</section>\n";
}

std::string failure_box(const Document& d) {
  if (!d.failure) return "";
  const Failure& f = *d.failure;
  std::string tensors;
  for (const auto& name : f.tensors) {
    const Buffer* b = d.find_buffer(name);
    tensors += fmt::format("{}<code>{}</code>{}", tensors.empty() ? "" : ", ", esc(name),
                           b ? fmt::format(" ({} B)", b->size) : "");
  }
  return fmt::format(
      "<div class=\"failure\"><b>Does not fit.</b> The cap is {} B ({}); the least this schedule can use is {} B ({}). "
      "The bottleneck is step {} (<code>{}</code>, {}), where these tensors are live together: {}.</div>\n",
      f.cap_bytes, human_bytes(f.cap_bytes), f.minimum_bytes, human_bytes(f.minimum_bytes), f.peak_step,
      esc(d.steps.at(f.peak_step).node), esc(d.steps.at(f.peak_step).op), tensors);
}

std::string comparison_bars(const Document& d) {
  if (d.status == "infeasible") return "";
  const double widest =
      static_cast<double>(std::max({d.arena_bytes, d.greedy_by_size_bytes, d.no_reuse_bytes, std::uint64_t{1}}));
  auto bar = [&](const std::string& label, std::uint64_t bytes, bool ours) {
    std::string note = ours ? std::string("this plan") : std::string("no saving");
    if (!ours && bytes > d.arena_bytes) {
      note =
          fmt::format("tightfit saves {} B ({:.1f}%)", bytes - d.arena_bytes, percent_of(bytes - d.arena_bytes, bytes));
    }
    return fmt::format(
        "<div>{}</div><div><div class=\"bar{}\" style=\"width:{:.1f}%\"></div></div><div class=\"num\">{} B ({}) "
        "&middot; {}</div>\n",
        esc(label), ours ? " ours" : "", 100.0 * static_cast<double>(bytes) / widest, bytes, human_bytes(bytes),
        esc(note));
  };
  return "<h2>Against other planners, same schedule</h2>\n<div class=\"bars\">\n" +
         bar("tightfit (exact)", d.arena_bytes, true) +
         bar("TFLite Micro greedy (sizes rounded to 16 B)", d.greedy_by_size_bytes, false) +
         bar("no reuse (each tensor its own slot)", d.no_reuse_bytes, false) + "</div>\n";
}

// How the nodes' order was chosen and what it saved against the ONNX file order.
std::string order_paragraph(const Document& d) {
  if (!d.order) return "";
  const Order& o = *d.order;
  if (o.search == "off")
    return fmt::format("<h2>Order</h2>\n<p>The ONNX file order (<code>--no-reorder</code>): live-sum bound {} B.</p>\n",
                       o.file_order_bound_bytes);
  const std::string what = o.reordered ? fmt::format("Reordered: {} of {} nodes moved", o.moved_nodes, d.steps.size())
                                       : std::string("The ONNX file order, kept");
  const std::string search =
      o.search == "exact"
          ? fmt::format("exact search, {} sets of nodes", o.states)
          : fmt::format("beam search, {} sets of nodes, up to {} B from the least peak", o.states, o.search_gap_bytes);
  const std::string saved = o.file_order_arena_bytes > d.arena_bytes
                                ? fmt::format("saves {} B", o.file_order_arena_bytes - d.arena_bytes)
                                : std::string("no saving");
  return fmt::format(
      "<h2>Order</h2>\n<p>{} ({}). Live-sum bound: {} B in the file order, {} B in this order. "
      "Arena in the file order: {} B; this order {}.</p>\n",
      esc(what), esc(search), o.file_order_bound_bytes, o.bound_bytes, o.file_order_arena_bytes, saved);
}

std::string known(const std::optional<std::uint64_t>& value, const char* unit) {
  return value ? fmt::format("{} {}", *value, unit) : "not printed";
}

std::string measured_section(const Document& d) {
  if (!d.measured) return "";
  const Measured& m = *d.measured;
  const std::string profiled =
      m.step_instructions.empty() ? ""
                                  : " Instructions per step are in the Layers table, from a second, profiled run; this "
                                    "build holds the profiled copy of the schedule too, so take flash and .bss from "
                                    "one without it.";
  std::string out =
      fmt::format("<h2>Measured on {} ({})</h2>\n<p class=\"hint\">{}.{}</p>\n<section class=\"cards\">\n",
                  esc(m.board), esc(m.core), esc(m.method), esc(profiled));
  out += card("Flash", m.flash_bytes ? human_bytes(*m.flash_bytes) : "?",
              fmt::format("weights {} + code and constants {} + test inputs {}", known(m.weights_bytes, "B"),
                          known(m.code_and_constants_bytes(), "B"), known(m.inputs_bytes, "B")));
  out += card("RAM in use", m.ram_in_use_bytes() ? human_bytes(*m.ram_in_use_bytes()) : "?",
              fmt::format("arena {} + .data {} + .bss {} + peak stack {}", known(m.arena_bytes, "B"),
                          known(m.data_bytes, "B"), known(m.bss_bytes, "B"), known(m.stack_peak_bytes, "B")));
  out += card("Arena", m.arena_as_planned() ? "as planned" : "NOT as planned",
              fmt::format("section {}, plan {}", known(m.arena_bytes, "B"), known(m.planned_arena_bytes, "B")));
  out += card("Peak stack", m.stack_peak_bytes ? fmt::format("{} B", *m.stack_peak_bytes) : "?",
              fmt::format("painted; {} reserved", known(m.stack_bytes, "B")));
  const std::uint64_t macs = d.macs();
  out += card("Instructions", m.instructions ? fmt::format("{}", *m.instructions) : "?",
              m.instructions && macs ? fmt::format("per inference; {:.2f} per MAC",
                                                   static_cast<double>(*m.instructions) / static_cast<double>(macs))
                                     : "per inference");
  return out + "</section>\n";
}

std::string regions_table(const Document& d) {
  std::string out =
      "<h2>Regions</h2>\n<table><thead><tr><th>region</th><th class=\"num\">capacity</th><th class=\"num\">peak</th>"
      "<th class=\"num\">lower bound</th><th class=\"num\">gap</th><th>status</th></tr></thead><tbody>\n";
  for (std::size_t i = 0; i < d.regions.size(); ++i) {
    const Region& r = d.regions[i];
    out += fmt::format(
        "<tr><td><span class=\"swatch\" style=\"background:{}\"></span>{}</td><td class=\"num\">{}</td>"
        "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>\n",
        buffer_fill(i, "activation", 0), esc(r.name), r.capacity ? fmt::format("{} B", *r.capacity) : "none",
        fmt::format("{} B", r.peak), fmt::format("{} B", r.lower_bound), fmt::format("{} B", r.peak - r.lower_bound),
        esc(r.status));
  }
  return out + "</tbody></table>\n";
}

std::string peak_section(const Document& d) {
  if (d.peak_steps.empty()) return "";
  std::string out = "<h2>Peak</h2>\n";
  for (const auto step : d.peak_steps) {
    const Step& s = d.steps.at(step);
    std::string items;
    for (const auto& [size, name] : d.live_by_size(s)) {
      items += fmt::format("{}<code>{}</code> {} B", items.empty() ? "" : ", ", esc(name), size);
    }
    out += fmt::format("<p>Step {} (<code>{}</code>, {}): <b>{} B</b> live, set by {}.</p>\n", step, esc(s.node),
                       esc(s.op), s.live_bytes, items);
  }
  return out;
}

std::string layers_table(const Document& d) {
  // A profiled run's instructions per step, as two more columns beside the MACs.
  const std::vector<std::optional<std::uint64_t>> no_counts;
  const auto& counts = d.measured ? d.measured->step_instructions : no_counts;
  std::string out =
      "<h2>Layers</h2>\n<p class=\"hint\">live: bytes of every tensor live during the step, scratch included. "
      "Peak steps are highlighted.</p>\n<table><thead><tr><th class=\"num\">step</th><th>node</th><th>op</th>"
      "<th>ONNX op</th><th>output shape</th><th class=\"num\">MACs</th>";
  if (!counts.empty()) out += "<th class=\"num\">instructions</th><th class=\"num\">per MAC</th>";
  out += "<th class=\"num\">live</th><th class=\"num\">scratch</th><th>tensors live</th></tr></thead><tbody>\n";
  for (const auto& s : d.steps) {
    const bool peak = std::find(d.peak_steps.begin(), d.peak_steps.end(), s.step) != d.peak_steps.end();
    std::string tensors;
    for (const auto& name : s.live_tensors) tensors += (tensors.empty() ? "" : ", ") + esc(name);
    std::string measured;
    if (!counts.empty()) {
      const std::optional<std::uint64_t> n = counts.at(s.step);
      measured =
          fmt::format("<td class=\"num\">{}</td><td class=\"num\">{}</td>", n ? std::to_string(*n) : "no call",
                      n && s.macs ? fmt::format("{:.2f}", static_cast<double>(*n) / static_cast<double>(s.macs)) : "");
    }
    out += fmt::format(
        "<tr{}><td class=\"num\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td>{}"
        "<td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"tensors\">{}</td></tr>\n",
        peak ? " class=\"peak\"" : "", s.step, esc(s.node), s.in_float ? esc(s.op) + " f32" : esc(s.op), esc(s.onnx_op),
        shape_text(s.output_shape), s.macs, measured, s.live_bytes, s.scratch_bytes, tensors);
  }
  return out + "</tbody></table>\n";
}

std::string buffers_table(const Document& d) {
  std::vector<const Buffer*> order;
  for (const auto& b : d.buffers) order.push_back(&b);
  // By region (fastest first, as listed), then by address: the order of the map, read upwards.
  std::stable_sort(order.begin(), order.end(), [&d](const Buffer* a, const Buffer* b) {
    const auto ra = d.region_index(a->region), rb = d.region_index(b->region);
    if (ra != rb) return ra < rb;
    return a->offset.value_or(0) < b->offset.value_or(0);
  });
  std::string out =
      "<h2>Buffers</h2>\n<p class=\"hint\">Hover a row to find its rectangle in the map.</p>\n"
      "<table><thead><tr><th>tensor</th><th>region</th><th class=\"num\">offset</th><th class=\"num\">size</th>"
      "<th class=\"num\">steps</th><th>kind</th><th>produced by</th></tr></thead><tbody>\n";
  for (const Buffer* b : order) {
    out += fmt::format(
        "<tr data-tensor=\"{}\"><td><code>{}</code></td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>"
        "<td class=\"num\">{} to {}</td><td>{}</td><td>{}</td></tr>\n",
        esc(b->tensor), esc(b->tensor), esc(b->region), b->offset ? std::to_string(*b->offset) : "not placed", b->size,
        b->first_step, b->last_step, esc(b->kind),
        b->producer ? fmt::format("{} ({})", esc(*b->producer), esc(b->op.value_or("?"))) : "graph input");
  }
  return out + "</tbody></table>\n";
}

}  // namespace

std::string render_html(const nlohmann::json& report) {
  const Document d = read_document(report);
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += "<link rel=\"icon\" href=\"data:,\">\n";
  out += fmt::format("<title>{}: tightfit memory report</title>\n<style>{}</style>\n</head>\n<body>\n", esc(d.name),
                     kStyle);
  out +=
      fmt::format("<header><h1>{}<span class=\"badge {}\">{}</span></h1>\n", esc(d.name), esc(d.status), esc(d.status));
  out += fmt::format("<p class=\"sub\">{} &middot; {} &middot; planner time limit {:g} s</p></header>\n", esc(d.model),
                     esc(d.tool), d.planner_time_limit_s);
  out += failure_box(d) + summary_cards(d) + measured_section(d) + comparison_bars(d) + order_paragraph(d);
  out += "<h2>Memory map</h2>\n<div class=\"map\">\n" + memory_map_svg(d) + "</div>\n";
  out +=
      "<p class=\"hint\">x: schedule step; y: address in the region. One rectangle per buffer; hover it for its "
      "tensor, size, offset, steps and operator.</p>\n";
  out += regions_table(d) + peak_section(d) + layers_table(d) + buffers_table(d);
  out += fmt::format("<div id=\"tip\"></div>\n<script>{}</script>\n</body>\n</html>\n", kScript);
  return out;
}

}  // namespace tightfit::report
