#include <fmt/core.h>

#include <cmath>
#include <limits>
#include <vector>

#include "error.hpp"
#include "passes/passes.hpp"

namespace tightfit::passes {

namespace {

struct Limits {
  std::int64_t min, max;
};

Limits dtype_limits(ir::DType t) {
  switch (t) {
    case ir::DType::Int8: return {-128, 127};
    case ir::DType::UInt8: return {0, 255};
    default: return {std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max()};
  }
}

class Verifier {
 public:
  explicit Verifier(const ir::Graph& g)
      : g_(g), produced_(g.tensors.size(), false), edge_only_(g.tensors.size(), true), dynamic_(g.tensors.size(), false) {
    for (const auto& n : g.nodes) {
      if (n.op == ir::OpKind::DynamicQuantize)
        for (auto id : n.outputs)
          if (id >= 0 && id < static_cast<ir::TensorId>(dynamic_.size())) dynamic_[id] = true;
      if (n.op == ir::OpKind::Quantize || n.op == ir::OpKind::Dequantize) continue;
      for (auto id : n.inputs)
        if (id >= 0 && id < static_cast<ir::TensorId>(edge_only_.size())) edge_only_[id] = false;
      for (auto id : n.outputs)
        if (id >= 0 && id < static_cast<ir::TensorId>(edge_only_.size())) edge_only_[id] = false;
    }
  }

  void run() {
    for (std::size_t i = 0; i < g_.tensors.size(); ++i) check_tensor(static_cast<ir::TensorId>(i));
    for (auto id : g_.inputs) {
      check_id(id, "graph input");
      if (g_.tensors[id].is_constant) fail(fmt::format("graph input '{}' is a constant", g_.tensors[id].name));
      produce(id);
    }
    for (std::size_t i = 0; i < g_.tensors.size(); ++i)
      if (g_.tensors[i].is_constant) produced_[i] = true;
    for (const auto& n : g_.nodes) check_node(n);
    for (auto id : g_.outputs) {
      check_id(id, "graph output");
      if (!produced_[id]) fail(fmt::format("graph output '{}' is never produced", g_.tensors[id].name));
    }
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw Error(fmt::format("{}: IR check: {}", g_.source, what)); }

  void check_id(ir::TensorId id, const char* role) const {
    if (id < 0 || id >= static_cast<ir::TensorId>(g_.tensors.size())) fail(fmt::format("{} id {} out of range", role, id));
  }

  void produce(ir::TensorId id) {
    if (produced_[id]) fail(fmt::format("tensor '{}' is produced twice", g_.tensors[id].name));
    produced_[id] = true;
  }

  void check_tensor(ir::TensorId id) const {
    const ir::Tensor& t = g_.tensors[id];
    for (auto d : t.shape)
      if (d < 1) fail(fmt::format("tensor '{}' has dimension {}", t.name, d));
    if (t.is_constant && t.data.size() != static_cast<std::size_t>(t.bytes()))
      fail(fmt::format("constant '{}' holds {} bytes, its shape needs {}", t.name, t.data.size(), t.bytes()));
    if (t.dtype == ir::DType::Float32) {
      if (t.quantized) fail(fmt::format("float tensor '{}' is marked quantized", t.name));
      return;
    }
    if (!t.quantized) {
      // int32 accumulators, and the outputs of a DynamicQuantize (parameters computed at run time).
      if (t.dtype != ir::DType::Int32 && !dynamic_[id]) fail(fmt::format("integer tensor '{}' has no quantization", t.name));
      return;
    }
    const ir::Quant& q = t.quant;
    // Per-channel: constants, and activations that only a graph-edge Quantize/Dequantize touches
    // (no kernel reads or writes them; the generated set_input/get_output convert them).
    if (q.per_channel() && (q.axis >= static_cast<int>(t.shape.size()) || (!t.is_constant && !edge_only_[id])))
      fail(fmt::format("tensor '{}' is per-channel but is not a constant or has axis {} out of range", t.name, q.axis));
    const std::size_t channels = q.per_channel() ? static_cast<std::size_t>(t.shape[q.axis]) : 1;
    if (q.scale.size() != channels || q.zero_point.size() != channels)
      fail(fmt::format("tensor '{}' has {} scales and {} zero points for {} channels", t.name, q.scale.size(), q.zero_point.size(), channels));
    const Limits lim = dtype_limits(t.dtype);
    for (std::size_t c = 0; c < channels; ++c) {
      if (!(q.scale[c] > 0) || !std::isfinite(q.scale[c])) fail(fmt::format("tensor '{}' has scale {}", t.name, q.scale[c]));
      if (q.zero_point[c] < lim.min || q.zero_point[c] > lim.max) fail(fmt::format("tensor '{}' has zero point {} outside {}", t.name, q.zero_point[c], ir::dtype_name(t.dtype)));
    }
  }

  void check_node(const ir::Node& n) {
    for (auto id : n.inputs) {
      if (id == ir::kNoTensor) continue;
      check_id(id, "node input");
      if (!produced_[id]) fail(fmt::format("node '{}' reads '{}' before it is produced", n.name, g_.tensors[id].name));
    }
    if (n.outputs.empty()) fail(fmt::format("node '{}' has no output", n.name));
    for (auto id : n.outputs) {
      check_id(id, "node output");
      if (g_.tensors[id].is_constant) fail(fmt::format("node '{}' writes the constant '{}'", n.name, g_.tensors[id].name));
      produce(id);
    }
    const ir::Tensor& y = g_.tensors[n.outputs[0]];
    if (y.dtype != ir::DType::Float32) {
      const Limits lim = dtype_limits(y.dtype);
      if (n.attrs.act_min > n.attrs.act_max || n.attrs.act_min < lim.min || n.attrs.act_max > lim.max)
        fail(fmt::format("node '{}' has activation range [{}, {}] outside {}", n.name, n.attrs.act_min, n.attrs.act_max, ir::dtype_name(y.dtype)));
    }
  }

  const ir::Graph& g_;
  std::vector<bool> produced_;
  std::vector<bool> edge_only_;  // per tensor: no node but Quantize/Dequantize reads or writes it
  std::vector<bool> dynamic_;    // per tensor: an output of a DynamicQuantize
};

}  // namespace

void verify(const ir::Graph& graph) { Verifier(graph).run(); }

}  // namespace tightfit::passes
