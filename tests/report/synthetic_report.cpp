#include "synthetic_report.hpp"

#include <algorithm>
#include <functional>
#include <cctype>
#include <numeric>
#include <stdexcept>

namespace tightfit::report::testing {
namespace {

using nlohmann::json;

constexpr std::uint64_t kAlign = 16;

std::uint64_t align_up(std::uint64_t value, std::uint64_t to) { return (value + to - 1) / to * to; }

// A small deterministic generator, so a fixture is the same on every machine.
class Random {
 public:
  explicit Random(std::uint32_t seed) : state_(seed * 2654435761u + 1) {}
  std::uint64_t pick(std::initializer_list<std::uint64_t> options) {
    state_ = state_ * 1664525u + 1013904223u;
    return options.begin()[(state_ >> 8) % options.size()];
  }

 private:
  std::uint32_t state_;
};

struct Tensor {
  std::string name, kind, region;
  std::vector<std::uint64_t> shape;
  std::uint64_t size = 0, offset = 0;
  int first = 0, last = 0;
  int producer = -1;  // step, -1 for the graph input
};

struct Layer {
  std::string node, op, onnx_op;
  std::uint64_t macs = 0, weights = 0;
  int output = -1;  // index into the tensors
};

bool overlap_in_time(const Tensor& a, const Tensor& b) { return a.first <= b.last && b.first <= a.last; }

// First-fit: each buffer, in `order`, at the lowest aligned offset clear of the buffers already
// placed that are live at the same time. Returns the peak; leaves the offsets in `tensors`.
std::uint64_t first_fit(std::vector<Tensor>& tensors, const std::vector<int>& members,
                        const std::function<bool(const Tensor&, const Tensor&)>& order) {
  std::vector<int> sorted = members;
  std::stable_sort(sorted.begin(), sorted.end(), [&](int a, int b) { return order(tensors[a], tensors[b]); });
  std::vector<int> placed;
  std::uint64_t peak = 0;
  for (const int i : sorted) {
    std::uint64_t offset = 0;
    for (bool moved = true; moved;) {
      moved = false;
      for (const int j : placed) {
        const bool clash = overlap_in_time(tensors[i], tensors[j]) && offset < tensors[j].offset + tensors[j].size &&
                           tensors[j].offset < offset + tensors[i].size;
        if (clash) {
          offset = align_up(tensors[j].offset + tensors[j].size, kAlign);
          moved = true;
        }
      }
    }
    tensors[i].offset = offset;
    placed.push_back(i);
    peak = std::max(peak, offset + tensors[i].size);
  }
  return peak;
}

std::string node_name(const std::string& op, int step, bool long_names) {
  std::string base = op;
  std::transform(base.begin(), base.end(), base.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (long_names && step % 7 == 3)
    return "stage" + std::to_string(step / 7) + "/block/" + base + "_bn_relu6_" + std::to_string(step);
  return base + std::to_string(step);
}

// The network: conv, depthwise conv, conv, residual add (of the output three steps back), max
// pool, repeated; the last layer a fully connected classifier writing the graph output.
void build_network(const SyntheticOptions& options, std::vector<Tensor>& tensors, std::vector<Layer>& layers) {
  Random random(options.seed);
  const std::uint64_t input_side = options.layers > 20 ? 16 : 24;
  tensors.push_back({"input",
                     "input",
                     "",
                     {1, 3, input_side, input_side},
                     align_up(3 * input_side * input_side, kAlign),
                     0,
                     0,
                     0,
                     -1});
  std::uint64_t channels = 3, side = input_side;
  static const char* const kOps[] = {"Conv", "DepthwiseConv", "Conv", "Add", "MaxPool"};
  static const char* const kOnnxOps[] = {"QLinearConv", "QLinearConv", "QLinearConv", "QLinearAdd", "MaxPool"};
  for (int step = 0; step < options.layers; ++step) {
    const bool last = step == options.layers - 1;
    const int kind = step % 5;
    Layer layer;
    layer.op = last ? "FullyConnected" : kOps[kind];
    layer.onnx_op = last ? "QLinearMatMul" : kOnnxOps[kind];
    layer.node = node_name(layer.op, step, options.long_names);
    std::vector<int> inputs = {static_cast<int>(tensors.size()) - 1};
    std::uint64_t out_channels = channels, out_side = side;
    if (last) {
      layer.macs = 10 * channels * side * side;
      layer.weights = layer.macs + 40;
      out_channels = 10;
      out_side = 1;
    } else if (kind == 0 || kind == 2) {
      out_channels = random.pick({8, 16, 24, 32, 48}) * (input_side / side);  // deeper layers: more channels
      const std::uint64_t kernel = step == 0 ? 9 : 1;                         // a 3x3 stem, then pointwise convolutions
      layer.macs = out_channels * channels * kernel * side * side;
      layer.weights = out_channels * channels * kernel + 4 * out_channels;
    } else if (kind == 1) {
      layer.macs = channels * 9 * side * side;
      layer.weights = channels * 9 + 4 * channels;
    } else if (kind == 3 && step >= 3 && tensors[layers[step - 3].output].shape == tensors[inputs[0]].shape) {
      inputs.push_back(layers[step - 3].output);  // the residual: keeps a tensor alive across steps
    } else if (kind == 4 && side > 4 && (options.layers <= 20 || step % 50 == 4)) {
      out_side = side / 2;
    }
    const std::vector<std::uint64_t> shape =
        last ? std::vector<std::uint64_t>{1, 10} : std::vector<std::uint64_t>{1, out_channels, out_side, out_side};
    const std::uint64_t bytes = std::accumulate(shape.begin(), shape.end(), std::uint64_t{1}, std::multiplies<>());
    tensors.push_back(
        {layer.node + "_out", last ? "output" : "activation", "", shape, align_up(bytes, kAlign), 0, step, step, step});
    layer.output = static_cast<int>(tensors.size()) - 1;
    for (const int input : inputs) tensors[input].last = std::max(tensors[input].last, step);
    if (layer.op == "Conv" && step % 3 == 0) {
      tensors.push_back(
          {layer.node + "_scratch", "scratch", "", {random.pick({256, 512, 1024})}, 0, 0, step, step, step});
      tensors.back().size = tensors.back().shape[0];
    }
    if (last) tensors[layer.output].last = step;
    channels = out_channels;
    side = out_side;
    layers.push_back(layer);
  }
}

}  // namespace

json synthetic_report(const SyntheticOptions& options) {
  if (options.layers < 1 || options.regions.empty()) throw std::invalid_argument("synthetic_report: bad options");
  std::vector<Tensor> tensors;
  std::vector<Layer> layers;
  build_network(options, tensors, layers);

  // Regions, fastest first: every region takes its share of buffers, the biggest round-robin.
  std::vector<int> by_size(tensors.size());
  std::iota(by_size.begin(), by_size.end(), 0);
  std::stable_sort(by_size.begin(), by_size.end(), [&](int a, int b) { return tensors[a].size > tensors[b].size; });
  for (std::size_t rank = 0; rank < by_size.size(); ++rank) {
    tensors[by_size[rank]].region = options.regions[rank % options.regions.size()].name;
  }

  const int steps = options.layers;
  json regions = json::array();
  std::uint64_t arena = 0, bound = 0, greedy = 0;
  for (const auto& region : options.regions) {
    std::vector<int> members;
    for (std::size_t i = 0; i < tensors.size(); ++i) {
      if (tensors[i].region == region.name) members.push_back(static_cast<int>(i));
    }
    const auto by_size_order = [](const Tensor& a, const Tensor& b) { return a.size > b.size; };
    const auto by_lifetime = [](const Tensor& a, const Tensor& b) { return a.last - a.first > b.last - b.first; };
    const std::uint64_t greedy_peak = first_fit(tensors, members, by_size_order);
    std::uint64_t peak = first_fit(tensors, members, by_lifetime);
    if (greedy_peak <= peak) peak = first_fit(tensors, members, by_size_order);  // keep the better placement
    std::uint64_t region_bound = 0;
    for (int step = 0; step < steps; ++step) {
      std::uint64_t live = 0;
      for (const int i : members) live += (tensors[i].first <= step && step <= tensors[i].last) ? tensors[i].size : 0;
      region_bound = std::max(region_bound, live);
    }
    arena += peak;
    bound += region_bound;
    greedy += greedy_peak;
    regions.push_back({{"name", region.name},
                       {"capacity", region.with_capacity ? json(align_up(peak, 4096)) : json(nullptr)},
                       {"peak", peak},
                       {"lower_bound", region_bound},
                       {"status", peak == region_bound ? "optimal" : "feasible"}});
  }
  const bool fits = !options.cap || arena <= *options.cap;
  std::string status = !fits ? "infeasible" : arena == bound ? "optimal" : "feasible";
  if (!fits) {
    for (auto& r : regions) r["status"] = "infeasible";
  }

  json step_rows = json::array();
  std::uint64_t most_live = 0;
  std::vector<std::uint64_t> live_per_step;
  for (int step = 0; step < steps; ++step) {
    std::uint64_t live = 0, scratch = 0;
    json names = json::array();
    for (const auto& t : tensors) {
      if (t.first > step || step > t.last) continue;
      live += t.size;
      names.push_back(t.name);
      if (t.kind == "scratch") scratch += t.size;
    }
    const Layer& layer = layers[step];
    step_rows.push_back({{"step", step},
                         {"node", layer.node},
                         {"op", layer.op},
                         {"onnx_op", layer.onnx_op},
                         {"output_shape", tensors[layer.output].shape},
                         {"macs", layer.macs},
                         {"live_bytes", live},
                         {"scratch_bytes", scratch},
                         {"live_tensors", names}});
    live_per_step.push_back(live);
    most_live = std::max(most_live, live);
  }
  json peak_steps = json::array();
  for (int step = 0; step < steps; ++step) {
    if (live_per_step[step] == most_live) peak_steps.push_back(step);
  }

  json buffers = json::array();
  std::uint64_t no_reuse = 0;
  for (const auto& t : tensors) {
    no_reuse += t.size;
    const bool graph_input = t.producer < 0;
    buffers.push_back({{"tensor", t.name},
                       {"size", t.size},
                       {"offset", fits ? json(t.offset) : json(nullptr)},
                       {"region", t.region},
                       {"first_step", t.first},
                       {"last_step", t.last},
                       {"kind", t.kind},
                       {"producer", graph_input ? json(nullptr) : json(layers[t.producer].node)},
                       {"op", graph_input ? json(nullptr) : json(layers[t.producer].op)}});
  }
  std::uint64_t weights = 0;
  for (const auto& layer : layers) weights += layer.weights;

  json failure = nullptr;
  if (!fits) {
    const int at = peak_steps.front().get<int>();
    failure = {{"cap_bytes", *options.cap},
               {"minimum_bytes", arena},
               {"peak_step", at},
               {"tensors", step_rows[at]["live_tensors"]}};
  }
  const std::string name = "synthetic" + std::to_string(options.layers);
  return {{"schema", "tightfit-report"},
          {"version", 1},
          {"tool", "tightfit 0.1.0"},
          {"model", "models/" + name + ".qop.onnx"},
          {"name", name},
          {"status", status},
          {"arena_bytes", arena},
          {"lower_bound_bytes", bound},
          {"gap_bytes", arena - bound},
          {"cap_bytes", options.cap ? json(*options.cap) : json(nullptr)},
          {"weights_bytes", weights},
          {"io_in_arena", true},
          {"planner", {{"time_limit_s", 5}}},
          {"regions", regions},
          {"flash",
           {{"weights_bytes", weights}, {"schedule_bytes", 48 * steps}, {"code_estimate_bytes", 6000 + 120 * steps}}},
          {"comparisons", {{"greedy_by_size_bytes", greedy}, {"no_reuse_bytes", no_reuse}}},
          {"steps", step_rows},
          {"peak_steps", peak_steps},
          {"buffers", buffers},
          {"failure", failure}};
}

json with_measured(json report) {
  const std::uint64_t arena = report["arena_bytes"], weights = report["flash"]["weights_bytes"];
  json counts = json::array();
  for (const auto& step : report["steps"]) {
    // The second step stands for one without a kernel call (a Reshape that renames its input).
    if (step["step"] == 1)
      counts.push_back(nullptr);
    else
      counts.push_back(3 * step["macs"].get<std::uint64_t>() + 700);
  }
  std::uint64_t instructions = 0;
  for (const auto& count : counts) instructions += count.is_null() ? 0 : count.get<std::uint64_t>() - 20;
  report["measured"] = {{"board", "mps2-an386"},
                        {"core", "cortex-m4"},
                        {"method", "qemu-system-arm -icount shift=0 (exact instruction counts)"},
                        {"instructions", instructions},
                        {"flash",
                         {{"total_bytes", weights + 14000 + 1960},
                          {"weights_bytes", weights},
                          {"text_bytes", 12000},
                          {"rodata_bytes", 1800},
                          {"inputs_bytes", 1960}}},
                        {"ram",
                         {{"arena_bytes", arena},
                          {"planned_arena_bytes", arena},
                          {"data_bytes", 8},
                          {"bss_bytes", 60},
                          {"stack_bytes", 16384},
                          {"stack_peak_bytes", 832}}},
                        {"step_instructions", counts}};
  return report;
}

std::vector<std::string> fixture_names() { return {"layers5", "regions3", "layers200", "infeasible", "measured"}; }

json fixture(const std::string& name) {
  if (name == "layers5") return synthetic_report({5, {{"arena", true}}, 65536, false, 1});
  if (name == "regions3") {
    return synthetic_report({24, {{"DTCM", true}, {"SRAM1", true}, {"SRAM2", false}}, std::nullopt, true, 2});
  }
  if (name == "layers200") return synthetic_report({200, {{"arena", false}}, std::nullopt, true, 3});
  if (name == "infeasible") return synthetic_report({12, {{"arena", false}}, 4096, false, 4});
  if (name == "measured") return with_measured(synthetic_report({6, {{"arena", false}}, std::nullopt, false, 5}));
  throw std::invalid_argument("no fixture " + name);
}

}  // namespace tightfit::report::testing
