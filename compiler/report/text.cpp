// The text view: what `tightfit compile` prints and writes to NAME.report.txt. Exact byte counts
// (the JSON's numbers, so a reader can check one against the other) with KiB beside them for
// people; at most kWidth columns; ASCII only.
#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "report/document.hpp"
#include "report/report.hpp"
#include "report/units.hpp"

namespace tightfit::report {
namespace {

constexpr std::size_t kWidth = 100;

std::size_t digits(std::uint64_t value) { return fmt::formatted_size("{}", value); }

// "name size" for each tensor live at a step, biggest first.
std::vector<std::string> live_items(const Document& d, const Step& step) {
  std::vector<std::string> items;
  for (const auto& [size, name] : d.live_by_size(step)) items.push_back(size ? fmt::format("{} {}", name, size) : name);
  return items;
}

// Items joined by ", " and wrapped into lines of at most kWidth columns, each starting with `indent`.
std::string wrap(const std::vector<std::string>& items, const std::string& indent) {
  std::string out, line = indent;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string item = fit(items[i], kWidth - indent.size() - 1) + (i + 1 < items.size() ? "," : "");
    if (line.size() > indent.size() && line.size() + 1 + item.size() > kWidth) {
      out += line + "\n";
      line = indent;
    }
    line += (line.size() > indent.size() ? " " : "") + item;
  }
  return out + line + "\n";
}

// `names` joined by ", " in lines of at most `width` columns, at most `max_lines` of them; what
// does not fit is counted as "+N" at the end.
std::vector<std::string> fit_list(const std::vector<std::string>& names, std::size_t width, std::size_t max_lines) {
  std::vector<std::string> lines(1);
  for (std::size_t i = 0; i < names.size(); ++i) {
    const bool last_name = i + 1 == names.size();
    const std::string item = fit(names[i], width - 4) + (last_name ? "" : ",");
    const std::string joined = lines.back().empty() ? item : lines.back() + " " + item;
    // On the last allowed line, keep room for " +N" unless this is the last name.
    const std::size_t room =
        lines.size() == max_lines && !last_name ? width - fmt::formatted_size(" +{}", names.size() - i) : width;
    if (joined.size() <= room) {
      lines.back() = joined;
    } else if (lines.size() < max_lines && !lines.back().empty()) {
      lines.push_back(item);
    } else {
      lines.back() += fmt::format(" +{}", names.size() - i);
      break;
    }
  }
  return lines;
}

std::string status_phrase(const Document& d) {
  if (d.status == "infeasible") return "infeasible: no plan fits under the cap";
  if (d.gap_bytes == 0) return fmt::format("{}: equals the lower bound", d.status);
  if (d.status == "optimal") {
    return fmt::format("optimal, proven by search ({} B above the live-bytes lower bound, which no plan reaches)",
                       d.gap_bytes);
  }
  return fmt::format("feasible: at most {} B ({:.1f}%) above the optimum, the time limit ended the search", d.gap_bytes,
                     percent_of(d.gap_bytes, d.arena_bytes));
}

std::string step_name(const Document& d, std::uint64_t step) {
  const Step& s = d.steps.at(step);
  return fmt::format("step {} ({}, {})", step, s.node, s.op);
}

std::string header(const Document& d) {
  std::string out = fit(fmt::format("tightfit memory report: {}", d.name), kWidth) + "\n";
  out +=
      fit(fmt::format("  model {}; {}; planner time limit {:g} s", d.model, d.tool, d.planner_time_limit_s), kWidth) +
      "\n";
  for (const std::string& input : d.batch_pinned)
    out += fit(fmt::format("  input '{}': its symbolic batch (dimension 0) is compiled as 1", input), kWidth) + "\n";
  out += "\n";
  return out;
}

std::string failure_section(const Document& d) {
  if (!d.failure) return "";
  const Failure& f = *d.failure;
  std::string out = fmt::format("DOES NOT FIT: cap {} B ({}), minimum reachable {} B ({}), {} B over\n", f.cap_bytes,
                                human_bytes(f.cap_bytes), f.minimum_bytes, human_bytes(f.minimum_bytes),
                                f.minimum_bytes > f.cap_bytes ? f.minimum_bytes - f.cap_bytes : 0);
  out +=
      fit(fmt::format("  bottleneck: {}, where these tensors are live together:", step_name(d, f.peak_step)), kWidth) +
      "\n";
  std::vector<std::string> items;
  for (const auto& name : f.tensors) {
    const Buffer* b = d.find_buffer(name);
    items.push_back(b ? fmt::format("{} {}", name, b->size) : name);
  }
  out += wrap(items, "    ");
  out +=
      fmt::format("  to fit: a cap of at least {} B, or smaller tensors at step {}\n\n", f.minimum_bytes, f.peak_step);
  return out;
}

std::string ram_section(const Document& d) {
  std::string out = fit(fmt::format("RAM    {} B ({}) in {} region{}, {}", d.arena_bytes, human_bytes(d.arena_bytes),
                                    d.regions.size(), d.regions.size() == 1 ? "" : "s", status_phrase(d)),
                        kWidth) +
                    "\n";
  out += d.io_in_arena ? "       the model's inputs and outputs are inside the arena\n"
                       : "       the model's inputs and outputs are outside the arena: the caller owns them\n";
  if (d.alignment && d.alignment->source == "cap")
    out += fmt::format("       int8 buffers on any byte, for the cap (4-byte aligned: {})\n",
                       d.alignment->aligned_arena_bytes
                           ? fmt::format("{} B, with more extra MACs", *d.alignment->aligned_arena_bytes)
                           : fmt::format("{} B at least", d.alignment->aligned_least_bytes.value_or(0)));
  else if (d.alignment)
    out += fmt::format("       buffers aligned to {} B{}\n", d.alignment->bytes,
                       d.alignment->source == "flag" ? " (--alignment)" : "");
  out += fmt::format("  {:<16} {:>10} {:>10} {:>12} {:>8}  {}\n", "region", "capacity", "peak", "lower bound", "gap",
                     "status");
  for (const auto& r : d.regions) {
    out += fmt::format("  {:<16} {:>10} {:>10} {:>12} {:>8}  {}\n", fit(r.name, 16),
                       r.capacity ? std::to_string(*r.capacity) : "-", r.peak, r.lower_bound, r.peak - r.lower_bound,
                       r.status);
  }
  if (d.regions.size() > 1) {
    out += fmt::format("  {:<16} {:>10} {:>10} {:>12} {:>8}\n", "all regions", "", d.arena_bytes, d.lower_bound_bytes,
                       d.gap_bytes);
  }
  if (d.slow_regions) {
    // The two plans of "Slow regions" (docs/planner.md), in estimated cycles.
    const auto describe = [&](const std::optional<SlowRegionPlan>& p) {
      if (!p) return std::string("does not fit");
      std::vector<std::string> parts;
      for (std::size_t r = 0; r < p->region_bytes.size() && r < d.regions.size(); ++r)
        parts.push_back(fmt::format("{} {} B", fit(d.regions[r].name, 16), p->region_bytes[r]));
      return fmt::format("{}; {} MACs, {} + {} slow = {} cycles", fmt::join(parts, ", "), p->macs, p->instructions,
                         p->slow_cycles, p->instructions + p->slow_cycles);
    };
    const SlowRegions& c = *d.slow_regions;
    out += fmt::format("  slow regions: kept {}\n",
                       c.kept == "free_only" ? "the plan without them (tiled if need be)" : "the plan with them");
    out += "    with them: " + describe(c.with_slow) + "\n";
    out += "    without:   " + describe(c.free_only) + "\n";
  }
  if (!d.cap_bytes) {
    out += "  cap: none (no --max-ram)\n";
  } else if (d.status == "infeasible") {
    out += fmt::format("  cap: {} B ({}), too small: see above\n", *d.cap_bytes, human_bytes(*d.cap_bytes));
  } else {
    const auto spare = *d.cap_bytes - d.arena_bytes;
    out += fmt::format("  cap: {} B ({}), {} B ({:.1f}%) to spare\n", *d.cap_bytes, human_bytes(*d.cap_bytes), spare,
                       percent_of(spare, *d.cap_bytes));
  }
  return out;
}

// How the order was chosen, and what it saved against the ONNX file order.
std::string order_section(const Document& d) {
  if (!d.order) return "";
  const Order& o = *d.order;
  if (o.search == "off")
    return fmt::format("Order  the ONNX file order (--no-reorder); live-sum bound {} B\n", o.file_order_bound_bytes);
  const std::string kind =
      o.reordered ? fmt::format("reordered, {} of {} nodes moved", o.moved_nodes, d.steps.size()) : "file order kept";
  std::string out = fit(fmt::format("Order  {}: live-sum bound {} B in the file order, {} B in this", kind,
                                    o.file_order_bound_bytes, o.bound_bytes),
                        kWidth) +
                    "\n";
  const std::string search =
      o.search == "exact"
          ? fmt::format("exact search ({} sets of nodes)", o.states)
          : fmt::format("beam search ({} sets of nodes; up to {} B from the least peak)", o.states, o.search_gap_bytes);
  const std::string saved = o.file_order_arena_bytes > d.arena_bytes
                                ? fmt::format("saves {} B", o.file_order_arena_bytes - d.arena_bytes)
                                : std::string("no saving");
  out +=
      fit(fmt::format("       {}; arena in the file order {} B: {}", search, o.file_order_arena_bytes, saved), kWidth) +
      "\n";
  return out;
}

std::string flash_section(const Document& d) {
  if (const auto& l = d.flash_linked)
    return fmt::format(
        "Flash  {} B ({}) = weights {} + code {} + constants {} + .data {}\n"
        "       linked for {} ({}): the generated code and what it calls;\n"
        "       a firmware adds its own start-up and board support code\n\n",
        d.flash_bytes(), human_bytes(d.flash_bytes()), l->weights_bytes, l->text_bytes, l->rodata_bytes, l->data_bytes,
        l->core, l->method);
  return fmt::format(
      "Flash  {} B ({}) = weights {} + code (estimate) {} + schedule {}\n"
      "       an estimate (no core linked: see --target): it leaves out the kernels' real size, often\n"
      "       several times 600 B each with their fast paths, their constant tables, and the C library\n\n",
      d.flash_bytes(), human_bytes(d.flash_bytes()), d.flash_weights_bytes, d.flash_code_estimate_bytes,
      d.flash_schedule_bytes);
}

// "?" for a figure the firmware did not print.
std::string figure(const std::optional<std::uint64_t>& value) { return value ? std::to_string(*value) : "?"; }

std::string measured_section(const Document& d) {
  if (!d.measured) return "";
  const Measured& m = *d.measured;
  std::string out = fit(fmt::format("Measured on {} ({}), {}", m.board, m.core, m.method), kWidth) + "\n";
  out += fmt::format("  flash  {} B = weights {} + code and constants {} + built-in test inputs {}\n",
                     figure(m.flash_bytes), figure(m.weights_bytes), figure(m.code_and_constants_bytes()),
                     figure(m.inputs_bytes));
  out += fmt::format("  RAM    {} B = arena {} + .data {} + .bss {} + peak stack {}\n", figure(m.ram_in_use_bytes()),
                     figure(m.arena_bytes), figure(m.data_bytes), figure(m.bss_bytes), figure(m.stack_peak_bytes));
  out += fmt::format(
      "         the arena is {} ({} B); the stack reserved is {} B{}\n",
      m.arena_as_planned() ? "the plan's to the byte" : "NOT the plan's", figure(m.planned_arena_bytes),
      figure(m.stack_bytes),
      m.linked_ram_bytes ? fmt::format("; {} B linked (the stack reserved, not its peak)", *m.linked_ram_bytes) : "");
  const std::uint64_t macs = d.macs();
  out += fmt::format("  speed  {} instructions per inference{}\n", figure(m.instructions),
                     m.instructions && macs
                         ? fmt::format(", {:.2f} per MAC ({} MACs)",
                                       static_cast<double>(*m.instructions) / static_cast<double>(macs), macs)
                         : "");
  if (m.step_instructions.empty()) return out + "\n";

  out +=
      "  per step, from a second, profiled run (each kernel call with its argument set-up; - : no call);\n"
      "  this build holds the profiled copy of the schedule too: take flash and .bss from one without it\n";
  std::size_t w_node = 4, w_op = 2;
  for (const auto& s : d.steps) {
    w_node = std::max(w_node, s.node.size());
    w_op = std::max(w_op, s.op.size());
  }
  w_node = std::min<std::size_t>(w_node, 28);
  w_op = std::min<std::size_t>(w_op, 24);
  auto row = [&](const std::string& step, const std::string& node, const std::string& op, const std::string& count,
                 const std::string& step_macs, const std::string& per_mac) {
    std::string line = fmt::format("  {:>5}  {:<{}}  {:<{}}  {:>12}  {:>10}  {:>7}", step, fit(node, w_node), w_node,
                                   fit(op, w_op), w_op, count, step_macs, per_mac);
    line.erase(line.find_last_not_of(' ') + 1);
    out += line + "\n";
  };
  row("step", "node", "op", "instructions", "MACs", "per MAC");
  for (std::size_t i = 0; i < d.steps.size(); ++i) {
    const Step& s = d.steps[i];
    const std::optional<std::uint64_t> n = m.step_instructions[i];
    row(std::to_string(s.step), s.node, s.op, n ? std::to_string(*n) : "-", s.macs ? std::to_string(s.macs) : "",
        n && s.macs ? fmt::format("{:.2f}", static_cast<double>(*n) / static_cast<double>(s.macs)) : "");
  }
  return out + "\n";
}

std::string savings_section(const Document& d) {
  if (d.status == "infeasible") return "";
  auto saving = [&](std::uint64_t other) {
    if (other <= d.arena_bytes) return std::string("no saving");
    return fmt::format("{} B ({:.1f}%)", other - d.arena_bytes, percent_of(other - d.arena_bytes, other));
  };
  std::string out = fmt::format("{:<40}{:>10}   {}\n", "Other planners, same schedule", "bytes", "tightfit saves");
  out += fmt::format("  {:<38}{:>10}\n", "tightfit (this plan)", d.arena_bytes);
  out += fmt::format("  {:<38}{:>10}   {}\n", "TFLite Micro greedy (sizes to 16 B)", d.greedy_by_size_bytes,
                     saving(d.greedy_by_size_bytes));
  out += fmt::format("  {:<38}{:>10}   {}\n\n", "no reuse (each tensor its own slot)", d.no_reuse_bytes,
                     saving(d.no_reuse_bytes));
  return out;
}

// Each output the plan lays over the input it consumes, with the bytes they share.
std::string overlap_section(const Document& d) {
  if (d.overlaps.empty() || d.status == "infeasible") return "";
  std::uint64_t shared = 0, used = 0;
  for (const Overlap& o : d.overlaps) {
    shared += o.shared_bytes;
    used += o.shared_bytes > 0;
  }
  std::string out = fit(fmt::format("Overlap: {} of {} outputs written over the input they consume, {} B shared{}",
                                    used, d.overlaps.size(), shared, used ? ":" : ""),
                        kWidth) +
                    "\n";
  for (const Overlap& o : d.overlaps) {
    if (o.shared_bytes == 0) continue;
    out += fit(fmt::format("  step {} {} ({}): {} over {}, {} B {} it{}, {} B shared", o.step, o.node, o.op, o.output,
                           o.input, o.distance, o.direction, o.direction == "above" ? " (run backwards)" : "",
                           o.shared_bytes),
               kWidth) +
           "\n";
  }
  if (d.no_overlap_bound_bytes)
    out += fmt::format("  live-sum bound without overlap {} B, with it {} B (--no-overlap turns it off)\n",
                       *d.no_overlap_bound_bytes, d.lower_bound_bytes);
  return out + "\n";
}

// Each rewrite that removed a buffer: a Pad folded into its reader, a Concat input written in place.
std::string rewrite_section(const Document& d) {
  std::string choice;
  if (d.zero_copy_concat_bytes && d.copying_concat_bytes) {
    std::size_t in_place = 0;
    for (const Rewrite& r : d.rewrites) in_place += r.technique == "zero_copy_concat";
    choice = fit(fmt::format("  zero-copy Concat: arena {} B with every candidate in place, {} B with none; {} kept",
                             *d.zero_copy_concat_bytes, *d.copying_concat_bytes, in_place),
                 kWidth) +
             "\n";
  }
  if (d.rewrites.empty()) return choice.empty() ? "" : "Rewrites: none kept\n" + choice + "\n";
  std::uint64_t saved = 0;
  for (const Rewrite& r : d.rewrites) saved += r.saved_bytes;
  std::string out = fit(fmt::format("Rewrites: {} applied, {} B saved (--no-fold-pad, --no-zero-copy-concat, "
                                    "--no-tiling turn them off):",
                                    d.rewrites.size(), saved),
                        kWidth) +
                    "\n";
  for (const Rewrite& r : d.rewrites) {
    const std::string what = r.technique == "fold_pad" ? fmt::format("{} folded into {} ({})", r.node, r.into, r.op)
                             : r.technique == "tiling"
                                 ? fmt::format("{} .. {} run in {}", r.node, r.into, r.op)
                                 : fmt::format("{} ({}) writes {} into {}", r.into, r.op, r.tensor, r.node);
    out += fit(fmt::format("  {}: {} B; {}", what, r.saved_bytes, r.detail), kWidth) + "\n";
  }
  return out + choice + "\n";
}

// The arena against the MACs each technique costs: nothing, the free techniques, each level of
// patch-based execution.
std::string cost_section(const Document& d) {
  if (d.ram_vs_cost.empty()) return "";
  // Instructions as a ratio to the free level's: the estimate's scale is its core's, its ratios
  // are what a level costs in time.
  const auto free = std::find_if(d.ram_vs_cost.begin(), d.ram_vs_cost.end(),
                                 [](const CostLevel& l) { return l.technique == "free"; });
  const bool estimated = free != d.ram_vs_cost.end() && free->instructions && *free->instructions > 0;
  std::string out = "RAM against cost (--max-ram takes the fewest extra MACs that fit; * this plan)\n";
  if (estimated)
    out += fit(fmt::format("  time: instructions against the free level's, estimated for {} from measured kernel costs",
                           d.instruction_core),
               kWidth) +
           "\n";
  out += fmt::format("  {:<12} {:>9} {:>12} {:>7} {:>6}  {}\n", "", "arena", "extra MACs", "", estimated ? "time" : "",
                     "what");
  for (const CostLevel& l : d.ram_vs_cost) {
    const std::string stage =
        l.nodes.empty() ? "untiled"
        : l.whole_rows  ? fmt::format("{} row bands of {} .. {}", l.bands, l.nodes.front(), l.nodes.back())
                        : fmt::format("{}x{} tiles of {} .. {}", l.bands, l.columns, l.nodes.front(), l.nodes.back());
    const std::string what = l.technique == "none"   ? "file order, no overlap, every Concat copying"
                             : l.technique == "free" ? "overlap, zero-copy Concat, order (on by default)"
                                                     : stage;  // "byte-aligned" rows too: the label says it
    const std::string time =
        estimated && l.instructions
            ? fmt::format("x{:.2f}", static_cast<double>(*l.instructions) / static_cast<double>(*free->instructions))
            : "";
    out += fit(fmt::format("{} {:<12} {:>9} {:>12} {:>6.1f}% {:>6}  {}", l.chosen ? "*" : " ",
                           l.technique == "byte_aligned" ? "byte-aligned" : l.technique, l.arena_bytes, l.extra_macs,
                           l.extra_macs_percent, time, what),
               kWidth) +
           "\n";
  }
  return out + "\n";
}

std::string peak_section(const Document& d) {
  if (d.peak_steps.empty()) return "";
  constexpr std::size_t kShown = 3;  // a flat peak can span many steps; their live sets repeat
  const Step& first = d.steps.at(d.peak_steps.front());
  std::string steps_text;
  for (std::size_t i = 0; i < std::min(kShown, d.peak_steps.size()); ++i) {
    steps_text += (i ? ", " : "") + std::to_string(d.peak_steps[i]);
  }
  if (d.peak_steps.size() > kShown) steps_text += fmt::format(" and {} more", d.peak_steps.size() - kShown);
  std::string out = fit(fmt::format("Peak   {} B live at step{} {}; the tensors live there set it:", first.live_bytes,
                                    d.peak_steps.size() == 1 ? "" : "s", steps_text),
                        kWidth) +
                    "\n";
  for (std::size_t i = 0; i < std::min(kShown, d.peak_steps.size()); ++i) {
    const Step& s = d.steps.at(d.peak_steps[i]);
    out += fit(fmt::format("  {}: {} B", step_name(d, s.step), s.live_bytes), kWidth) + "\n";
    out += wrap(live_items(d, s), "    ");
  }
  return out + "\n";
}

std::string layer_table(const Document& d) {
  std::size_t w_node = 4, w_op = 2, w_shape = 12, w_macs = 4, w_live = 4;
  for (const auto& s : d.steps) {
    w_node = std::max(w_node, s.node.size());
    w_op = std::max(w_op, s.op.size() + (s.in_float ? 4 : 0));
    w_shape = std::max(w_shape, shape_text(s.output_shape).size());
    w_macs = std::max(w_macs, digits(s.macs));
    w_live = std::max(w_live, digits(s.live_bytes));
  }
  w_node = std::min<std::size_t>(w_node, 16);
  w_op = std::min<std::size_t>(w_op, 14);
  w_shape = std::min<std::size_t>(w_shape, 16);
  const std::size_t w_step = std::max<std::size_t>(4, digits(d.steps.empty() ? 0 : d.steps.size() - 1) + 1);
  const std::size_t w_scratch = 7;
  const std::size_t used = w_step + w_node + w_op + w_shape + w_macs + w_live + w_scratch + 2 * 7;
  const std::size_t w_tensors = kWidth > used + 12 ? kWidth - used : 12;

  std::string out = "Layers (* peak step; live: bytes of every tensor live during the step, scratch included)\n";
  auto row = [&](const std::string& step, const std::string& node, const std::string& op, const std::string& shape,
                 const std::string& macs, const std::string& live, const std::string& scratch,
                 const std::string& tensors) {
    std::string line = fmt::format("{:>{}}  {:<{}}  {:<{}}  {:<{}}  {:>{}}  {:>{}}  {:>{}}  {}", step, w_step,
                                   fit(node, w_node), w_node, fit(op, w_op), w_op, fit(shape, w_shape), w_shape, macs,
                                   w_macs, live, w_live, scratch, w_scratch, tensors);
    line.erase(line.find_last_not_of(' ') + 1);
    out += line + "\n";
  };
  // A short schedule shows every live tensor (wrapping under the column); a long one keeps to
  // one line per step and counts the rest.
  const std::size_t max_lines = d.steps.size() <= 40 ? 3 : 1;
  row("step", "node", "op", "output shape", "MACs", "live", "scratch", "tensors live");
  for (const auto& s : d.steps) {
    const bool peak = std::find(d.peak_steps.begin(), d.peak_steps.end(), s.step) != d.peak_steps.end();
    std::vector<std::string> names;
    for (const auto& sized : d.live_by_size(s)) names.push_back(sized.second);
    const auto tensor_lines = fit_list(names, w_tensors, max_lines);
    row(fmt::format("{}{}", s.step, peak ? "*" : " "), s.node, s.in_float ? s.op + " f32" : s.op,
        shape_text(s.output_shape), std::to_string(s.macs), std::to_string(s.live_bytes),
        std::to_string(s.scratch_bytes), tensor_lines.front());
    for (std::size_t i = 1; i < tensor_lines.size(); ++i) out += std::string(used, ' ') + tensor_lines[i] + "\n";
  }
  std::size_t float_steps = 0;
  std::uint64_t float_peak = 0;
  for (const auto& s : d.steps) {
    float_steps += s.in_float;
    float_peak = std::max(float_peak, s.float_bytes);
  }
  if (float_steps)
    out += fmt::format(
        "Float islands: {} step{} marked f32 (float32 kernels, and the Dequantize/Quantize at\n"
        "  their ends); float32 buffers (4 B an element) take up to {} B of a step's live bytes\n",
        float_steps, float_steps == 1 ? "" : "s", float_peak);
  return out;
}

}  // namespace

std::string render_text(const nlohmann::json& report) {
  const Document d = read_document(report);
  return header(d) + failure_section(d) + ram_section(d) + order_section(d) + flash_section(d) + measured_section(d) +
         savings_section(d) + overlap_section(d) + rewrite_section(d) + cost_section(d) + peak_section(d) +
         layer_table(d);
}

std::string render_measured_text(const nlohmann::json& report) { return measured_section(read_document(report)); }

}  // namespace tightfit::report
