// `tightfit inspect MODEL.onnx [--json]`: imports the model and shows the integer
// IR it became, node by node (operator, tensors with shape, dtype and quantization, MACs,
// weight bytes), then the totals.
#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/commands.hpp"
#include "error.hpp"
#include "driver/pipeline.hpp"
#include "ops/operator.hpp"
#include "import/onnx_import.hpp"
#include "import/tflite_import.hpp"
#include "util/model_text.hpp"

namespace tightfit {

namespace {

struct InspectOptions {
  std::string model;
  bool json = false;
};

std::string shape_text(const ir::Tensor& t) {
  std::string s = "[";
  for (std::size_t i = 0; i < t.shape.size(); ++i) s += (i ? ", " : "") + std::to_string(t.shape[i]);
  return s + "]";
}

// "scale 0.0235 zp -128", "16 ch: scale 0.0012..0.031 zp 0", or "" when not quantized.
std::string quant_text(const ir::Tensor& t) {
  if (!t.quantized) return "";
  const ir::Quant& q = t.quant;
  if (!q.per_channel()) return fmt::format("scale {:.6g} zp {}", q.scale[0], q.zero_point[0]);
  const auto [smin, smax] = std::minmax_element(q.scale.begin(), q.scale.end());
  const auto [zmin, zmax] = std::minmax_element(q.zero_point.begin(), q.zero_point.end());
  const std::string zp = *zmin == *zmax ? std::to_string(*zmin) : fmt::format("{}..{}", *zmin, *zmax);
  return fmt::format("{} ch: scale {:.3g}..{:.3g} zp {}", q.scale.size(), *smin, *smax, zp);
}

std::string fit(const std::string& s, std::size_t width) {
  if (s.size() <= width) return s;
  return s.substr(0, width - 1) + "~";
}

std::int64_t activation_bytes(const ir::Graph& g) {
  std::int64_t bytes = 0;
  for (const auto& t : g.tensors)
    if (!t.is_constant) bytes += t.bytes();
  return bytes;
}

std::int64_t total_weight_bytes(const ir::Graph& g) {
  std::int64_t bytes = 0;
  for (const auto& t : g.tensors)
    if (t.is_constant) bytes += t.bytes();
  return bytes;
}

std::int64_t total_macs(const ir::Graph& g) {
  std::int64_t macs = 0;
  for (const auto& n : g.nodes) macs += ops::macs(g, n);
  return macs;
}

void print_tensor_line(const ir::Graph& g, const char* role, ir::TensorId id) {
  if (id == ir::kNoTensor) return;
  const ir::Tensor& t = g.tensors[id];
  fmt::print("    {:<4} {:<22} {:<7} {:<18} {}\n", role, fit(model_text::shown(t.name), 22), ir::dtype_name(t.dtype),
             fit(shape_text(t), 18), quant_text(t));
}

void print_text(const ir::Graph& g) {
  fmt::print("{}: nodes {}, inputs {}, outputs {}\n", model_text::shown(g.source), g.nodes.size(), g.inputs.size(),
             g.outputs.size());
  for (auto id : g.inputs) print_tensor_line(g, "in", id);
  for (auto id : g.outputs) print_tensor_line(g, "out", id);
  for (const std::string& input : g.batch_pinned)
    fmt::print("    input '{}': symbolic batch (dimension 0) pinned to 1\n", model_text::shown(input));
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const ir::Node& n = g.nodes[i];
    fmt::print("\n{:>3}  {:<17} {:<28} from {}\n", i, ir::op_name(n.op), fit(model_text::shown(n.name), 28),
               fit(model_text::shown(n.onnx_op), 40));
    // "w" marks a constant input (weights, bias): it lives in flash, not in RAM.
    for (auto id : n.inputs) print_tensor_line(g, g.tensors[id].is_constant ? "w" : "in", id);
    for (auto id : n.outputs) print_tensor_line(g, "out", id);
    const ir::Tensor& y = g.tensors[n.outputs[0]];
    std::string extra;
    if (y.dtype != ir::DType::Float32) extra = fmt::format("clamp [{}, {}]", n.attrs.act_min, n.attrs.act_max);
    fmt::print("    {:<29} MACs {:<14L} weights {:L} B\n", extra, ops::macs(g, n), g.weight_bytes(n));
  }
  fmt::print("\ntotals: {} nodes, {:L} weight bytes, {:L} activation bytes, {:L} MACs\n", g.nodes.size(),
             total_weight_bytes(g), activation_bytes(g), total_macs(g));
}

nlohmann::json tensor_json(const ir::Graph& g, ir::TensorId id) {
  const ir::Tensor& t = g.tensors[id];
  nlohmann::json j = {{"name", t.name},
                      {"dtype", ir::dtype_name(t.dtype)},
                      {"shape", t.shape},
                      {"constant", t.is_constant},
                      {"bytes", t.bytes()}};
  if (!t.quantized) return j;
  const ir::Quant& q = t.quant;
  if (!q.per_channel()) {
    j["quant"] = {{"scale", q.scale[0]}, {"zero_point", q.zero_point[0]}};
  } else {
    const auto [smin, smax] = std::minmax_element(q.scale.begin(), q.scale.end());
    const auto [zmin, zmax] = std::minmax_element(q.zero_point.begin(), q.zero_point.end());
    j["quant"] = {{"axis", q.axis},     {"channels", q.scale.size()}, {"scale_min", *smin},
                  {"scale_max", *smax}, {"zero_point_min", *zmin},    {"zero_point_max", *zmax}};
  }
  return j;
}

void print_json(const ir::Graph& g) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const auto& n : g.nodes) {
    nlohmann::json inputs = nlohmann::json::array(), outputs = nlohmann::json::array();
    for (auto id : n.inputs)
      if (id != ir::kNoTensor) inputs.push_back(tensor_json(g, id));
    for (auto id : n.outputs) outputs.push_back(tensor_json(g, id));
    nlohmann::json node = {{"name", n.name},
                           {"op", ir::op_name(n.op)},
                           {"onnx_op", n.onnx_op},
                           {"inputs", inputs},
                           {"outputs", outputs},
                           {"macs", ops::macs(g, n)},
                           {"weight_bytes", g.weight_bytes(n)}};
    if (g.tensors[n.outputs[0]].dtype != ir::DType::Float32) node["clamp"] = {n.attrs.act_min, n.attrs.act_max};
    nodes.push_back(node);
  }
  nlohmann::json inputs = nlohmann::json::array(), outputs = nlohmann::json::array();
  for (auto id : g.inputs) inputs.push_back(tensor_json(g, id));
  for (auto id : g.outputs) outputs.push_back(tensor_json(g, id));
  nlohmann::json doc = {{"model", g.source},
                        {"inputs", inputs},
                        {"outputs", outputs},
                        {"batch_pinned", g.batch_pinned},
                        {"nodes", nodes},
                        {"unsupported", nlohmann::json::array()},  // as after a refusal: here, none
                        {"totals",
                         {{"nodes", g.nodes.size()},
                          {"weight_bytes", total_weight_bytes(g)},
                          {"activation_bytes", activation_bytes(g)},
                          {"macs", total_macs(g)}}}};
  model_text::json_strings(doc);
  fmt::print("{}\n", doc.dump(2));
}

// When the import fails, --json still tells what it can: the error line and every node whose
// operator tightfit has no rule for, so that a user sees the whole gap at once (the error line
// names only the first problem).
void print_refusal_json(const std::string& model, const Error& error) {
  std::vector<import::UnsupportedNode> unsupported;
  try {
    if (!import::is_tflite_file(model)) unsupported = import::unsupported_nodes(model);  // a .tflite's line names them
  } catch (const Error&) {
    return;  // unreadable: the error line says it all
  }
  nlohmann::json nodes = nlohmann::json::array();
  for (const auto& n : unsupported) nodes.push_back({{"node", n.node}, {"domain", n.domain}, {"op", n.op_type}});
  nlohmann::json doc = {{"model", model}, {"error", error.what()}, {"unsupported", nodes}};
  model_text::json_strings(doc);
  fmt::print("{}\n", doc.dump(2));
}

}  // namespace

void add_inspect_command(CLI::App& app) {
  auto options = std::make_shared<InspectOptions>();
  CLI::App* cmd =
      app.add_subcommand("inspect", "Import a quantized ONNX or TFLite model and show its integer IR, node by node");
  cmd->add_option("model", options->model, "The model (.onnx or .tflite)")->required();
  cmd->add_flag("--json", options->json, "Print JSON instead of text");
  // Older scripts pass it: a symbolic batch was refused without it, and is pinned to 1 now.
  cmd->add_flag("--pin-batch", "Accepted and ignored: a symbolic batch dimension is pinned to 1")->group("");
  cmd->callback([options] {
    if (!options->json) return print_text(driver::import_graph(options->model));
    ir::Graph graph;
    try {
      graph = driver::import_graph(options->model);
    } catch (const Error& e) {
      print_refusal_json(options->model, e);
      throw;  // the one-line error and the exit status, as without --json
    }
    print_json(graph);
  });
}

}  // namespace tightfit
