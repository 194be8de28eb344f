// The measured instruction costs of the kernels (instructions.hpp).
#include "cost/instructions.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>

#include "ops/operator.hpp"

namespace tightfit::cost {

const char* kernel_costs_text();  // kernel_costs.json, compiled in (kernel_costs.cpp.in)

namespace {

struct Coefficients {
  double call = 0, mac = 0, input_byte = 0, output_byte = 0, pixel = 0, window_read = 0;
};

// Per core, per kernel; "default" (fitted over every call) for a kernel the runs did not meet.
using Table = std::map<std::string, std::map<std::string, Coefficients>>;

const Table& table() {
  static const Table parsed = [] {
    Table t;
    const nlohmann::json j = nlohmann::json::parse(kernel_costs_text());
    for (const auto& [core, entry] : j.at("cores").items())
      for (const auto& [kernel, c] : entry.at("kernels").items())
        t[core][kernel] = {c.at("call").get<double>(),       c.at("mac").get<double>(),
                           c.at("input_byte").get<double>(), c.at("output_byte").get<double>(),
                           c.at("pixel").get<double>(),      c.at("window_read").get<double>()};
    return t;
  }();
  return parsed;
}

}  // namespace

std::string kernel_of(const ir::Graph& graph, const ir::Node& node) { return ops::of(node.op).cost_key(graph, node); }

Work work_of(const ir::Graph& graph, const ir::Node& node) {
  Work w;
  w.macs = ops::macs(graph, node);
  for (const ir::TensorId t : node.inputs)
    if (t != ir::kNoTensor && !graph.tensors[t].is_constant && !graph.written_in_place(node, t))
      w.input_bytes += graph.tensors[t].bytes();
  // A copy writes the bytes it copies; every other call its whole outputs.
  const ops::CostWork rule = ops::of(node.op).cost_work;
  if (rule == ops::CostWork::copies_inputs)
    w.output_bytes = w.input_bytes;
  else
    for (const ir::TensorId t : node.outputs)
      if (t != ir::kNoTensor) w.output_bytes += graph.tensors[t].bytes();
  const std::vector<std::int64_t>& shape = graph.tensors[node.outputs[0]].shape;
  w.output_pixels =
      shape.size() < 2 ? 1 : graph.tensors[node.outputs[0]].elements() / std::max<std::int64_t>(1, shape.back());
  if (rule == ops::CostWork::pooling_window && node.attrs.kernel_shape.size() == 2)
    w.window_reads =
        graph.tensors[node.outputs[0]].elements() * node.attrs.kernel_shape[0] * node.attrs.kernel_shape[1];
  return w;
}

bool measured(const std::string& core) { return table().count(core) > 0; }

std::optional<std::int64_t> estimated_instructions(const std::string& core, const ir::Graph& graph) {
  const auto found = table().find(core);
  if (found == table().end()) return std::nullopt;
  const std::map<std::string, Coefficients>& kernels = found->second;
  double total = 0;
  for (const ir::Node& n : graph.nodes) {
    const std::string kernel = kernel_of(graph, n);
    if (kernel.empty()) continue;
    const auto k = kernels.find(kernel);
    const Coefficients& c = k != kernels.end() ? k->second : kernels.at("default");
    const Work w = work_of(graph, n);
    total += c.call + c.mac * static_cast<double>(w.macs) + c.input_byte * static_cast<double>(w.input_bytes) +
             c.output_byte * static_cast<double>(w.output_bytes) + c.pixel * static_cast<double>(w.output_pixels) +
             c.window_read * static_cast<double>(w.window_reads);
  }
  return static_cast<std::int64_t>(std::llround(total));
}

}  // namespace tightfit::cost
