#include "driver/report_json.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <map>

#include "cost/instructions.hpp"
#include "ops/operator.hpp"
#include "plan/planner.hpp"

#ifndef TIGHTFIT_VERSION
#error "TIGHTFIT_VERSION must be defined by the build"
#endif

namespace tightfit::driver {
namespace {

using nlohmann::json;

json shape_json(const std::vector<std::int64_t>& shape) { return json(shape); }

// TFLite Micro's greedy planner on the same buffers, as its MicroAllocator would hand them over
// (sizes rounded to 16 bytes, docs/report.md). The order breaks ties of size; TFLM adds tensors
// in the converted model's tensor order, which an ONNX file does not have, so here the tensors
// go by first use in the schedule, then by tensor index, and the kernels' scratch buffers (which
// TFLM requests after all tensors) last, by step.
std::uint64_t tflm_greedy_bytes(const plan::Problem& problem, const schedule::Lifetimes& lifetimes) {
  std::vector<std::size_t> order(problem.buffers.size());
  for (std::size_t b = 0; b < order.size(); ++b) order[b] = b;
  auto key = [&](std::size_t b) {  // buffers are in tensor order, then scratch in step order
    const bool scratch = lifetimes.buffer_tensor[b] == ir::kNoTensor;
    return std::make_pair(scratch, scratch ? 0 : problem.buffers[b].first_step);
  };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return key(a) < key(b); });
  plan::Problem tflm{problem.regions, {}, {}};
  for (const std::size_t b : order) tflm.buffers.push_back(problem.buffers[b]);
  return plan::greedy_by_size(tflm).peak;
}

// Each rewrite of the graph that removed a buffer (docs/report.md, "Rewrites").
json rewrites_json(const CompiledModel& m) {
  json rewrites = json::array();
  for (const passes::PadFold& f : m.pad_folds)
    rewrites.push_back({{"technique", "fold_pad"},
                        {"node", f.pad},
                        {"into", f.into},
                        {"op", f.into_op},
                        {"tensor", f.tensor},
                        {"saved_bytes", f.bytes},
                        {"detail", fmt::format("pads top {}, left {}, bottom {}, right {}", f.pads[0], f.pads[1],
                                               f.pads[2], f.pads[3])}});
  for (const passes::InPlaceInput& in : m.in_place)
    rewrites.push_back(
        {{"technique", "zero_copy_concat"},
         {"node", in.concat},
         {"into", in.producer},
         {"op", in.producer_op},
         {"tensor", in.tensor},
         {"saved_bytes", in.bytes},
         {"detail", in.contiguous ? fmt::format("one block at element {}", in.offset)
                                  : fmt::format("channels from {}, pixel stride {}", in.offset, in.pixel_stride)}});
  if (m.tiled)
    rewrites.push_back({{"technique", "tiling"},
                        {"node", m.tiled->stage.nodes.front()},
                        {"into", m.tiled->stage.nodes.back()},
                        {"op", m.tiled->stage.whole_rows ? "row bands" : "tiles"},
                        {"tensor", m.tiled->output},
                        {"saved_bytes", m.ram_vs_cost.size() > 1 && m.ram_vs_cost[1].arena_bytes > m.plan.peak
                                            ? m.ram_vs_cost[1].arena_bytes - m.plan.peak
                                            : 0},
                        {"detail", describe_stage(*m.tiled, m.macs - m.extra_macs())}});
  return rewrites;
}

// The report's "RAM against cost" table (docs/report.md).
json ram_vs_cost_json(const CompiledModel& m) {
  json levels = json::array();
  const std::int64_t untiled_macs = m.macs - m.extra_macs();
  // The row this plan is: the one the cap took with byte-aligned buffers, or its tiled stage, or
  // the free row.
  const bool byte_aligned = m.alignment.source == AlignmentSource::cap;
  auto chosen = [&](const CostLevel& level) {
    if (byte_aligned) return level.technique == Technique::byte_aligned;
    return m.tiled ? level.technique == Technique::tiling && level.stage->stage == m.tiled->stage
                   : level.technique == Technique::free;
  };
  for (const CostLevel& level : m.ram_vs_cost) {
    json stage = nullptr;
    if (level.stage)
      stage = {{"nodes", level.stage->stage.nodes},
               {"bands", level.stage->stage.tiles},
               {"columns", level.stage->stage.columns},
               {"whole_rows", level.stage->stage.whole_rows},
               {"copied_bytes", level.stage->copied_bytes},
               {"input", level.stage->input},
               {"output", level.stage->output}};
    levels.push_back({{"technique", to_string(level.technique)},
                      {"arena_bytes", level.arena_bytes},
                      {"extra_macs", level.extra_macs},
                      {"extra_macs_percent", 100.0 * static_cast<double>(level.extra_macs) /
                                                 static_cast<double>(std::max<std::int64_t>(1, untiled_macs))},
                      {"estimated_instructions", level.instructions ? json(*level.instructions) : json(nullptr)},
                      {"stage", stage},
                      {"chosen", chosen(level)}});
  }
  return levels;
}

// The report's "slow_regions": the two plans weighed and the one kept; null when no region with
// a cost held a buffer.
json slow_regions_json(const CompiledModel& m) {
  if (!m.slow_regions) return nullptr;
  const auto plan_json = [](const std::optional<SlowRegionPlan>& p) -> json {
    if (!p) return nullptr;
    return {{"region_bytes", p->region_bytes},
            {"macs", p->macs},
            {"instructions", p->instructions},
            {"slow_cycles", p->slow_cycles}};
  };
  return {{"with_slow", plan_json(m.slow_regions->with_slow)},
          {"free_only", plan_json(m.slow_regions->free_only)},
          {"kept", to_string(m.slow_regions->kept)}};
}

// Every buffer and where it lies; `no_reuse` gets the arena with no bytes reused.
json buffers_json(const CompiledModel& m, const plan::Problem& problem, std::uint64_t& no_reuse) {
  const ir::Graph& g = m.graph;
  const plan::Plan& p = m.plan;
  const auto& lt = m.lifetimes;
  std::map<ir::TensorId, const ir::Node*> producer;
  for (const ir::Node& n : g.nodes)
    for (ir::TensorId t : n.outputs) producer[t] = &n;

  json buffers = json::array();
  for (std::size_t b = 0; b < problem.buffers.size(); ++b) {
    const plan::Buffer& buf = problem.buffers[b];
    const ir::TensorId t = lt.buffer_tensor[b];
    std::string kind = "scratch";
    const ir::Node* writer = nullptr;  // the node that writes the buffer; none for a graph input
    if (t != ir::kNoTensor) {
      kind = "activation";
      if (std::find(g.inputs.begin(), g.inputs.end(), t) != g.inputs.end()) kind = "input";
      if (std::find(g.outputs.begin(), g.outputs.end(), t) != g.outputs.end()) kind = "output";
      if (producer.count(t)) writer = producer[t];
    } else {
      writer = &g.nodes[lt.buffer_scratch_node[b]];
    }
    const json producer_name = writer ? json(writer->name) : json(nullptr);
    const json op = writer ? json(ir::op_name(writer->op)) : json(nullptr);
    no_reuse += (buf.size + buf.alignment - 1) / buf.alignment * buf.alignment;
    buffers.push_back({{"tensor", buf.name},
                       {"size", buf.size},
                       {"offset", p.placements[b].offset},
                       {"region", m.regions[p.placements[b].region].name},
                       {"first_step", buf.first_step},
                       {"last_step", buf.last_step},
                       {"kind", kind},
                       {"producer", producer_name},
                       {"op", op}});
  }
  return buffers;
}

// Each output allowed over its input, and the bytes the plan lays over it; `shared_by_pair` gets
// them in problem.overlaps' order.
json overlaps_json(const CompiledModel& m, const plan::Problem& problem, std::vector<std::uint64_t>& shared_by_pair) {
  const ir::Graph& g = m.graph;
  const plan::Plan& p = m.plan;
  const auto& lt = m.lifetimes;
  json overlaps = json::array();
  for (std::size_t k = 0; k < problem.overlaps.size(); ++k) {
    const plan::Overlap& o = problem.overlaps[k];
    const bool below = !plan::output_above_input(problem, o, p.placements[o.output], p.placements[o.input]);
    const std::uint64_t shared = plan::shared_bytes(problem, p, o);
    shared_by_pair.push_back(shared);
    const ir::Node& n = g.nodes[lt.overlap_step[k]];
    overlaps.push_back({{"step", lt.overlap_step[k]},
                        {"node", n.name},
                        {"op", ir::op_name(n.op)},
                        {"output", problem.buffers[o.output].name},
                        {"input", problem.buffers[o.input].name},
                        {"direction", below ? "below" : "above"},
                        {"distance", (below ? o.below : o.above).value_or(0)},
                        {"shared_bytes", shared}});
  }
  return overlaps;
}

// Each step: its node, what its call reads and writes, and what is live there (`live_at`: the live
// bytes per step, an output's bytes over its input counted once).
json steps_json(const CompiledModel& m, const plan::Problem& problem, const std::vector<std::uint64_t>& live_at) {
  const ir::Graph& g = m.graph;
  const auto& lt = m.lifetimes;
  json steps = json::array();
  for (std::size_t s = 0; s < g.nodes.size(); ++s) {
    const ir::Node& n = g.nodes[s];
    json live = json::array();
    std::uint64_t scratch = 0, float_bytes = 0;
    for (std::size_t b = 0; b < problem.buffers.size(); ++b) {
      const plan::Buffer& buf = problem.buffers[b];
      if (!buf.live_at(static_cast<int>(s))) continue;
      if (lt.buffer_tensor[b] == ir::kNoTensor)
        scratch += buf.size;
      else
        live.push_back(buf.name);
      if (lt.buffer_tensor[b] != ir::kNoTensor && g.tensors[lt.buffer_tensor[b]].dtype == ir::DType::Float32)
        float_bytes += buf.size;
    }
    // A step of a float island: a float32 kernel, or the Quantize/Dequantize at its ends.
    bool in_float = false;
    for (const std::vector<ir::TensorId>* ids : {&n.inputs, &n.outputs})
      for (ir::TensorId t : *ids)
        in_float =
            in_float || (t != ir::kNoTensor && !g.tensors[t].is_constant && g.tensors[t].dtype == ir::DType::Float32);
    if (in_float) float_bytes += scratch;  // a float kernel's scratch holds float32 (LSTM, GRU: states and gates)
    const cost::Work work = cost::work_of(g, n);  // what the estimate of the step's call reads
    steps.push_back({{"step", s},
                     {"node", n.name},
                     {"op", ir::op_name(n.op)},
                     {"onnx_op", n.onnx_op},
                     {"output_shape", n.outputs.empty() ? json::array() : shape_json(g.tensors[n.outputs[0]].shape)},
                     {"macs", ops::macs(g, n)},
                     {"kernel", cost::kernel_of(g, n)},
                     {"input_bytes", work.input_bytes},
                     {"output_bytes", work.output_bytes},
                     {"output_pixels", work.output_pixels},
                     {"window_reads", work.window_reads},
                     {"live_bytes", live_at[s]},
                     {"scratch_bytes", scratch},
                     {"live_tensors", live},
                     {"float", in_float},
                     {"float_bytes", float_bytes}});
  }
  return steps;
}

// Each region: its cap, its peak and bound, how it is placed in the image.
json regions_json(const CompiledModel& m) {
  const plan::Plan& p = m.plan;
  json regions = json::array();
  for (std::size_t r = 0; r < m.regions.size(); ++r) {
    const std::uint64_t peak = r < p.region_peak.size() ? p.region_peak[r] : 0;
    const std::uint64_t bound = r < p.region_lower_bound.size() ? p.region_lower_bound[r] : 0;
    const plan::Status status = p.status == plan::Status::Infeasible ? p.status
                                : peak <= bound                      ? plan::Status::Optimal
                                                                     : plan::Status::Feasible;
    regions.push_back({{"name", m.regions[r].name},
                       {"capacity", m.regions[r].capacity ? json(*m.regions[r].capacity) : json(nullptr)},
                       {"peak", peak},
                       {"lower_bound", bound},
                       {"status", plan::status_name(status)},
                       {"section", m.regions[r].section},
                       {"cycles_per_byte", m.regions[r].cycles_per_byte}});
  }
  return regions;
}

}  // namespace

json build_report(const CompileOptions& options, const CompiledModel& m, const plan::Problem& problem,
                  const emit::EmittedCode& code) {
  const plan::Plan& p = m.plan;
  std::uint64_t no_reuse = 0;
  const json buffers = buffers_json(m, problem, no_reuse);
  std::vector<std::uint64_t> shared_by_pair;
  const json overlaps = overlaps_json(m, problem, shared_by_pair);
  const std::vector<std::uint64_t> live_at =
      plan::live_bytes_per_step(problem, m.graph.nodes.size(), m.lifetimes.overlap_step, shared_by_pair);
  const json steps = steps_json(m, problem, live_at);
  const std::uint64_t most_live = live_at.empty() ? 0 : *std::max_element(live_at.begin(), live_at.end());
  json peak_steps = json::array();
  for (std::size_t s = 0; s < live_at.size(); ++s)
    if (live_at[s] == most_live) peak_steps.push_back(s);
  plan::Problem apart = problem;
  apart.overlaps.clear();
  json cap = nullptr;
  if (m.regions.size() == 1 && m.regions[0].capacity) cap = *m.regions[0].capacity;

  json comparisons = {{"greedy_by_size_bytes", tflm_greedy_bytes(problem, m.lifetimes)},
                      {"no_reuse_bytes", no_reuse},
                      {"no_overlap_bound_bytes", plan::live_sum_lower_bound(apart)}};
  if (m.zero_copy_arena_bytes) comparisons["zero_copy_concat_bytes"] = *m.zero_copy_arena_bytes;
  if (m.copying_arena_bytes) comparisons["copying_concat_bytes"] = *m.copying_arena_bytes;
  return {{"schema", "tightfit-report"},
          {"version", 1},
          {"tool", "tightfit " TIGHTFIT_VERSION},
          {"model", options.model},
          {"name", options.name},
          {"status", plan::status_name(p.status)},
          {"arena_bytes", p.peak},
          {"lower_bound_bytes", p.lower_bound},
          {"gap_bytes", p.peak - std::min(p.peak, p.lower_bound)},
          {"cap_bytes", cap},
          {"weights_bytes", code.weights_bytes},
          {"io_in_arena", options.io_in_arena},
          {"batch_pinned", m.graph.batch_pinned},
          {"alignment",
           {{"bytes", m.alignment.bytes},
            {"source", to_string(m.alignment.source)},
            {"aligned_arena_bytes",
             m.alignment.aligned_arena_bytes ? json(*m.alignment.aligned_arena_bytes) : json(nullptr)},
            {"aligned_least_bytes",
             m.alignment.source == AlignmentSource::cap ? json(m.alignment.aligned_least_bytes) : json(nullptr)}}},
          // No wall-clock time in the files: compiling twice must give the same bytes.
          {"planner", {{"time_limit_s", options.time_limit_seconds}}},
          {"regions", regions_json(m)},
          {"flash",
           {{"weights_bytes", code.weights_bytes},
            {"schedule_bytes", code.schedule_bytes},
            {"code_estimate_bytes", code.code_estimate_bytes}}},
          {"comparisons", comparisons},
          {"overlaps", overlaps},
          {"rewrites", rewrites_json(m)},
          {"macs", m.macs},
          {"ram_vs_cost", ram_vs_cost_json(m)},
          {"instruction_estimate", {{"core", options.cost_core}, {"measured", cost::measured(options.cost_core)}}},
          {"order",
           {{"search", to_string(m.order.search)},
            {"reordered", m.order.moved_nodes > 0},
            {"moved_nodes", m.order.moved_nodes},
            {"states", m.order.states},
            {"search_gap_bytes", m.order.search_gap_bytes},
            {"candidates", m.order.candidates},
            {"file_order_bound_bytes", m.order.file_order_bound_bytes},
            {"bound_bytes", plan::live_sum_lower_bound(problem)},
            {"file_order_arena_bytes", m.order.file_order_arena_bytes}}},
          {"steps", steps},
          {"peak_steps", peak_steps},
          {"buffers", buffers},
          {"failure", nullptr},
          {"slow_regions", slow_regions_json(m)}};
}

}  // namespace tightfit::driver
