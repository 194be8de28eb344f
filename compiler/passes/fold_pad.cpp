// A Pad over the spatial axes whose only reader is a convolution or a pool becomes that node's
// own padding: the padded copy never exists. The IR's Pad pads with the input's zero point (real
// 0), which is what a convolution's padded taps contribute (nothing: the kernels skip them, as
// ORT pads with the zero point), so for a Conv the fold is exact whatever the pads. For the pools:
//  * AveragePool counts the padded taps only with count_include_pad: it folds when the pool has
//    that already, or has no pads of its own (it then gets it); never in ceil mode, never when
//    the pool covers the whole padded image without pads of its own (the kernel, as ORT, then
//    takes the integer global average, which the padded pool does not);
//  * MaxPool skips padded taps, which is the same as padding with the zero point only when no
//    value can be below the zero point: the zero point is the type's minimum, or the producer's
//    fused clamp keeps every value at or above it.
// Pools keep every window touching the image (each combined pad below the window's extent).
#include <algorithm>
#include <array>
#include <optional>

#include "ops/operator.hpp"
#include "passes/passes.hpp"
#include "passes/uses.hpp"

namespace tightfit::passes {

namespace {

std::int64_t at_or(const std::vector<std::int64_t>& v, std::size_t i, std::int64_t fallback) {
  return i < v.size() ? v[i] : fallback;
}

// The Pad's spatial pads as [top, left, bottom, right], when it pads H and W only, by >= 0.
std::optional<std::array<std::int64_t, 4>> spatial_pads(const ir::Node& pad) {
  const auto& p = pad.attrs.pads;  // ONNX order: begins N, C, H, W, then ends
  if (p.size() != 8 || p[0] != 0 || p[1] != 0 || p[4] != 0 || p[5] != 0) return std::nullopt;
  if (std::any_of(p.begin(), p.end(), [](std::int64_t v) { return v < 0; })) return std::nullopt;
  return std::array<std::int64_t, 4>{p[2], p[3], p[6], p[7]};
}

// Every pool window keeps a tap inside the image with these pads.
bool windows_touch_image(const ir::Attrs& a, const std::array<std::int64_t, 4>& pads) {
  for (std::size_t axis = 0; axis < 2; ++axis) {
    const std::int64_t extent = at_or(a.dilations, axis, 1) * (a.kernel_shape[axis] - 1) + 1;
    if (pads[axis] >= extent || pads[axis + 2] >= extent) return false;
  }
  return true;
}

// Whether `consumer` computes the same with the pads `combined` on the unpadded input `x` as it
// does on the padded tensor `padded` with its own pads; `producer` wrote x (nullptr: a graph input).
bool pool_folds(const ir::Node& consumer, const ir::Node* producer, const ir::Tensor& x, const ir::Tensor& padded,
                const std::array<std::int64_t, 4>& combined) {
  const ir::Attrs& a = consumer.attrs;
  if (a.ceil_mode || a.kernel_shape.size() != 2 || !windows_touch_image(a, combined)) return false;
  const bool own_pads = std::any_of(a.pads.begin(), a.pads.end(), [](std::int64_t v) { return v != 0; });
  if (ops::of(consumer.op).pad_fold == ops::PadFold::average_pool) {
    if (own_pads && !a.count_include_pad) return false;
    const bool whole_image = !own_pads && a.kernel_shape[0] == padded.shape[2] && a.kernel_shape[1] == padded.shape[3];
    return !whole_image;
  }
  const std::int32_t zero_point = x.quant.zero_point[0];
  const std::int32_t type_min = x.dtype == ir::DType::UInt8 ? 0 : -128;
  const bool clamps = producer && ops::of(producer->op).output_range == ops::OutputRange::clamped_to_act_range;
  const bool clamped_above = clamps && producer->attrs.act_min >= zero_point;
  return zero_point <= type_min || clamped_above;
}

}  // namespace

std::vector<PadFold> fold_pads(ir::Graph& g) {
  const TensorUses uses = tensor_uses(g);
  const std::vector<int>& readers = uses.readers;
  const std::vector<int>& producer = uses.producer;

  std::vector<PadFold> folds;
  std::vector<bool> removed(g.nodes.size(), false);
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const ir::Node& pad = g.nodes[i];
    if (pad.op != ir::OpKind::Pad) continue;
    const ir::TensorId x = pad.inputs[0], padded = pad.outputs[0];
    const auto pads = spatial_pads(pad);
    if (!pads || g.tensors[x].shape.size() != 4 || readers[padded] != 1 ||
        !same_quant(g.tensors[x], g.tensors[padded]) || g.tensors[x].quant.zero_point.size() != 1)
      continue;
    auto reader = std::find_if(g.nodes.begin(), g.nodes.end(), [&](const ir::Node& n) {
      return std::find(n.inputs.begin(), n.inputs.end(), padded) != n.inputs.end();
    });
    if (reader == g.nodes.end()) continue;  // its one reader is the graph's output
    ir::Node& consumer = *reader;
    if (consumer.inputs[0] != padded) continue;
    const ops::PadFold fold = ops::of(consumer.op).pad_fold;
    if (fold == ops::PadFold::none || fold == ops::PadFold::unstated) continue;
    const bool pool = fold != ops::PadFold::convolution;
    std::array<std::int64_t, 4> combined{};
    for (std::size_t k = 0; k < 4; ++k) combined[k] = at_or(consumer.attrs.pads, k, 0) + (*pads)[k];
    const ir::Node* writer = producer[x] >= 0 ? &g.nodes[producer[x]] : nullptr;
    if (pool && !pool_folds(consumer, writer, g.tensors[x], g.tensors[padded], combined)) continue;
    if (fold == ops::PadFold::average_pool) consumer.attrs.count_include_pad = true;
    consumer.attrs.pads.assign(combined.begin(), combined.end());
    consumer.inputs[0] = x;
    removed[i] = true;
    folds.push_back({pad.name, consumer.name, ir::op_name(consumer.op), g.tensors[padded].name,
                     static_cast<std::uint64_t>(g.tensors[padded].bytes()), *pads});
  }
  std::vector<ir::Node> kept;
  for (std::size_t i = 0; i < g.nodes.size(); ++i)
    if (!removed[i]) kept.push_back(std::move(g.nodes[i]));
  g.nodes = std::move(kept);
  if (!folds.empty()) prune_unused_tensors(g);
  return folds;
}

}  // namespace tightfit::passes
