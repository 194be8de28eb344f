#include <fmt/core.h>

#include <cmath>
#include <vector>

#include "error.hpp"
#include "ops/operator.hpp"
#include "passes/passes.hpp"

namespace tightfit::passes {

namespace {

class Verifier {
 public:
  Verifier(const ir::Graph& g, const char* after_pass)
      : g_(g),
        after_pass_(after_pass),
        produced_(g.tensors.size(), false),
        written_in_place_(g.tensors.size(), false),
        edge_only_(g.tensors.size(), true),
        dynamic_(g.tensors.size(), false),
        producer_guard_(g.tensors.size()) {
    for (const auto& n : g.nodes) {
      if (n.op == ir::OpKind::DynamicQuantize)
        for (auto id : n.outputs)
          if (id >= 0 && id < static_cast<ir::TensorId>(dynamic_.size())) dynamic_[id] = true;
      // Quantize and Dequantize convert per-channel edges; a view (no emission) moves no values.
      if (n.op == ir::OpKind::Quantize || n.op == ir::OpKind::Dequantize || !ops::of(n.op).emit) continue;
      for (auto id : n.inputs)
        if (id >= 0 && id < static_cast<ir::TensorId>(edge_only_.size())) edge_only_[id] = false;
      for (auto id : n.outputs)
        if (id >= 0 && id < static_cast<ir::TensorId>(edge_only_.size())) edge_only_[id] = false;
    }
  }

  void run() {
    for (std::size_t i = 0; i < g_.tensors.size(); ++i) check_tensor(static_cast<ir::TensorId>(i));
    for (std::size_t i = 0; i < g_.tensors.size(); ++i) check_slice(static_cast<ir::TensorId>(i));
    for (auto id : g_.inputs) {
      check_id(id, "graph input");
      if (g_.tensors[id].is_constant) fail(fmt::format("graph input '{}' is a constant", g_.tensors[id].name));
      if (produced_[id]) fail(fmt::format("tensor '{}' is produced twice", g_.tensors[id].name));
      produced_[id] = true;
    }
    for (std::size_t i = 0; i < g_.tensors.size(); ++i)
      if (g_.tensors[i].is_constant) produced_[i] = true;
    for (const auto& n : g_.nodes) {
      check_guard(n);
      check_node(n);
    }
    if (previous_ && previous_->guard.guarded() && !closes_if(*previous_, false))
      fail(fmt::format("the schedule ends inside a branch of an If, at node '{}'", previous_->name));
    for (auto id : g_.outputs) {
      check_id(id, "graph output");
      if (!produced_[id]) fail(fmt::format("graph output '{}' is never produced", g_.tensors[id].name));
    }
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    if (after_pass_) throw Error(fmt::format("{}: IR check after {}: {}", g_.source, after_pass_, what));
    throw Error(fmt::format("{}: IR check: {}", g_.source, what));
  }

  void check_id(ir::TensorId id, const char* role) const {
    if (id < 0 || id >= static_cast<ir::TensorId>(g_.tensors.size()))
      fail(fmt::format("{} id {} out of range", role, id));
  }

  void produce(ir::TensorId id, const ir::Node& n) {
    // The If's output: written by the last node of each branch (then first), then read as the graph's.
    const bool else_result =
        n.op == ir::OpKind::IfResult && !n.guard.then_branch && producer_guard_[id].excludes(n.guard);
    if (produced_[id] && !else_result) fail(fmt::format("tensor '{}' is produced twice", g_.tensors[id].name));
    produced_[id] = true;
    for (ir::TensorId h = g_.tensors[id].slice_of; h != ir::kNoTensor; h = g_.tensors[h].slice_of)
      written_in_place_[h] = true;
    producer_guard_[id] = n.op == ir::OpKind::IfResult && !n.guard.then_branch ? ir::Guard{} : n.guard;
  }

  // Whether `n` ends a branch of an If: the IfResult of its then (or else) branch.
  static bool closes_if(const ir::Node& n, bool then_branch) {
    return n.op == ir::OpKind::IfResult && n.guard.guarded() && n.guard.then_branch == then_branch;
  }

  // The layout of an If's branches in the schedule (ir/ir.hpp): its then branch's nodes, ending with
  // an IfResult, right after them its else branch's, ending with one; the condition a one-element
  // bool tensor computed before; a branch's node reads no other branch's tensor.
  void check_guard(const ir::Node& n) {
    const ir::Guard& g = n.guard;
    const ir::Guard before = previous_ ? previous_->guard : ir::Guard{};
    const bool inside = before.guarded() && !closes_if(*previous_, false);  // the previous node is in a branch
    if (g.guarded()) {
      check_id(g.condition, "If condition");
      const ir::Tensor& c = g_.tensors[g.condition];
      if (c.dtype != ir::DType::Bool || c.elements() != 1)
        fail(fmt::format("node '{}' is guarded by '{}', not a one-element bool tensor", n.name, c.name));
      if (!produced_[g.condition] || producer_guard_[g.condition].guarded())
        fail(fmt::format("node '{}' is guarded by '{}', which is not computed before the If", n.name, c.name));
      const bool continues = inside && before.condition == g.condition && before.then_branch == g.then_branch &&
                             !closes_if(*previous_, true);
      const bool starts_then = !inside && g.then_branch;
      const bool starts_else =
          inside && before.condition == g.condition && closes_if(*previous_, true) && !g.then_branch;
      if (!continues && !starts_then && !starts_else)
        fail(
            fmt::format("node '{}' of the {} branch of the If on '{}' is out of place: a branch's nodes follow one "
                        "another, the then branch's first, each ending with an IfResult",
                        n.name, g.then_branch ? "then" : "else", c.name));
    } else if (inside) {
      fail(fmt::format("node '{}' runs always but lies inside a branch of an If, after '{}'", n.name, previous_->name));
    }
    for (auto id : n.inputs) {
      if (id == ir::kNoTensor || id < 0 || id >= static_cast<ir::TensorId>(producer_guard_.size())) continue;
      const ir::Guard& p = producer_guard_[id];
      if (p.guarded() && (p.condition != g.condition || p.then_branch != g.then_branch))
        fail(fmt::format("node '{}' reads '{}', a tensor of the {} branch of an If it is not in", n.name,
                         g_.tensors[id].name, p.then_branch ? "then" : "else"));
    }
    previous_ = &n;
  }

  void check_tensor(ir::TensorId id) const {
    const ir::Tensor& t = g_.tensors[id];
    for (auto d : t.shape)
      if (d < 1) fail(fmt::format("tensor '{}' has dimension {}", t.name, d));
    if (t.is_constant && t.data.size() != static_cast<std::size_t>(t.bytes()))
      fail(fmt::format("constant '{}' holds {} bytes, its shape needs {}", t.name, t.data.size(), t.bytes()));
    if (t.dtype == ir::DType::Float32 || t.dtype == ir::DType::Bool) {
      if (t.quantized) fail(fmt::format("{} tensor '{}' is marked quantized", ir::dtype_name(t.dtype), t.name));
      return;
    }
    if (!t.quantized) {
      // int32 accumulators, and the outputs of a DynamicQuantize (parameters computed at run time).
      if (t.dtype != ir::DType::Int32 && !dynamic_[id])
        fail(fmt::format("integer tensor '{}' has no quantization", t.name));
      return;
    }
    const ir::Quant& q = t.quant;
    // Per-channel: constants, and activations that only a graph-edge Quantize/Dequantize or a view
    // touches (no kernel reads or writes them; the generated set_input/get_output convert them).
    if (q.per_channel() && (q.axis >= static_cast<int>(t.shape.size()) || (!t.is_constant && !edge_only_[id])))
      fail(fmt::format("tensor '{}' is per-channel but is not a constant or has axis {} out of range", t.name, q.axis));
    const std::size_t channels = q.per_channel() ? static_cast<std::size_t>(t.shape[q.axis]) : 1;
    if (q.scale.size() != channels || q.zero_point.size() != channels)
      fail(fmt::format("tensor '{}' has {} scales and {} zero points for {} channels", t.name, q.scale.size(),
                       q.zero_point.size(), channels));
    const ir::DTypeRange lim = ir::dtype_range(t.dtype);
    for (std::size_t c = 0; c < channels; ++c) {
      if (!(q.scale[c] > 0) || !std::isfinite(q.scale[c]))
        fail(fmt::format("tensor '{}' has scale {}", t.name, q.scale[c]));
      if (q.zero_point[c] < lim.min || q.zero_point[c] > lim.max)
        fail(fmt::format("tensor '{}' has zero point {} outside {}", t.name, q.zero_point[c], ir::dtype_name(t.dtype)));
    }
  }

  // A tensor lying in another (ir.hpp, `slice_of`): a chain of holders that ends, each of the same
  // dtype, the tensor's pixels inside its holder's elements and apart from one another.
  void check_slice(ir::TensorId id) const {
    const ir::Tensor& t = g_.tensors[id];
    if (t.slice_of == ir::kNoTensor) return;
    check_id(t.slice_of, "slice holder");
    ir::TensorId holder = t.slice_of;
    for (std::size_t depth = 0; holder != ir::kNoTensor; holder = g_.tensors[holder].slice_of, ++depth) {
      check_id(holder, "slice holder");
      if (holder == id || depth > g_.tensors.size())
        fail(fmt::format("tensor '{}' lies in a chain of tensors that leads back to itself", t.name));
    }
    const ir::Tensor& h = g_.tensors[t.slice_of];
    if (t.is_constant || h.is_constant) fail(fmt::format("constant '{}' lies in another tensor or holds one", t.name));
    if (t.dtype != h.dtype)
      fail(fmt::format("tensor '{}' ({}) lies in '{}' ({})", t.name, ir::dtype_name(t.dtype), h.name,
                       ir::dtype_name(h.dtype)));
    const std::int64_t pixel = t.shape.empty() ? 1 : t.shape.back();
    const std::int64_t pixels = t.elements() / pixel;
    const std::int64_t stride = t.slice_pixel_stride == 0 ? pixel : t.slice_pixel_stride;
    if (t.slice_offset < 0 || (pixels > 1 && stride < pixel) ||
        t.slice_offset + (pixels - 1) * stride + pixel > h.elements())
      fail(
          fmt::format("tensor '{}' ({} pixels of {} elements, every {} from element {}) does not fit in '{}' ({} "
                      "elements)",
                      t.name, pixels, pixel, stride, t.slice_offset, h.name, h.elements()));
  }

  // Whether the bytes of `id` hold values when a node reads it: it was produced, or a tensor it
  // lies in was (a band of a tiled stage's input), or a tensor lying in it was (written in place).
  bool holds_values(ir::TensorId id) const {
    for (ir::TensorId t = id; t != ir::kNoTensor; t = g_.tensors[t].slice_of)
      if (produced_[t]) return true;
    return written_in_place_[id];
  }

  void check_node(const ir::Node& n) {
    for (auto id : n.inputs) {
      if (id == ir::kNoTensor) continue;
      check_id(id, "node input");
      if (!holds_values(id))
        fail(fmt::format("node '{}' reads '{}' before it is produced", n.name, g_.tensors[id].name));
    }
    if (n.outputs.empty()) fail(fmt::format("node '{}' has no output", n.name));
    for (auto id : n.outputs) {
      check_id(id, "node output");
      if (g_.tensors[id].is_constant)
        fail(fmt::format("node '{}' writes the constant '{}'", n.name, g_.tensors[id].name));
      produce(id, n);
    }
    const ir::Tensor& y = g_.tensors[n.outputs[0]];
    if (y.dtype != ir::DType::Float32) {
      const ir::DTypeRange lim = ir::dtype_range(y.dtype);
      if (n.attrs.act_min > n.attrs.act_max || n.attrs.act_min < lim.min || n.attrs.act_max > lim.max)
        fail(fmt::format("node '{}' has activation range [{}, {}] outside {}", n.name, n.attrs.act_min, n.attrs.act_max,
                         ir::dtype_name(y.dtype)));
    }
  }

  const ir::Graph& g_;
  const char* after_pass_;  // the pass whose output this is, or nullptr
  std::vector<bool> produced_;
  std::vector<bool> written_in_place_;  // per tensor: a tensor lying in it was produced
  std::vector<bool> edge_only_;         // per tensor: only Quantize, Dequantize or a view reads or writes it
  std::vector<bool> dynamic_;           // per tensor: an output of a DynamicQuantize
  std::vector<ir::Guard>
      producer_guard_;                  // per tensor: its producer's branch (the If's output: none, once both wrote it)
  const ir::Node* previous_ = nullptr;  // the node checked last
};

}  // namespace

void verify(const ir::Graph& graph) { Verifier(graph, nullptr).run(); }

void verify_after(const char* pass, const ir::Graph& graph) { Verifier(graph, pass).run(); }

}  // namespace tightfit::passes
