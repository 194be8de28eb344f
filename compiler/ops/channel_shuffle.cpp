// ChannelShuffle: attrs.group. Made by passes::fuse_channel_shuffles from ShuffleNet's Reshape to
// [N, g, C/g, H, W], Transpose [0, 2, 1, 3, 4], Reshape back (integer tensors, or between
// DequantizeLinear/QuantizeLinear pairs with the same parameters): it imports no ONNX operator of
// its own. Output channel j * g + i is input channel i * (C/g) + j; bytes are copied, the output
// keeps the input's quantization. Kernel channel_shuffle: per pixel of a channels-last tensor
// (per image of a logical NCHW one). Its output never overlaps its input.
#include "ops/operator.hpp"
#include "ops/emission.hpp"

namespace tightfit::ops {
namespace {

using namespace emit;

struct Emit : Emission {
  using Emission::Emission;

  void channel_shuffle(const std::string& id, const Node& n) {
    const Tensor& x = in(n, 0);
    const std::vector<std::int64_t> s = x.onnx_shape();  // [N, C, H, W]
    const std::int64_t groups = n.attrs.group;
    const bool channels_last = x.layout == ir::Layout::ChannelsLast;
    const std::int64_t outer = channels_last ? s[0] * s[2] * s[3] : s[0];
    const std::int64_t inner = channels_last ? 1 : s[2] * s[3];
    tightfit::ChannelShuffleParams p{};
    p.outer = i32(outer), p.groups = i32(groups), p.group_size = i32(s[1] / groups), p.inner = i32(inner);
    const std::string block = params(id, p);
    call(n, fmt::format("tightfit::channel_shuffle<{}>({}, {}, {})", t_of(n), block, pointer(n.inputs[0]),
                        pointer(n.outputs[0])));
  }
};

}  // namespace

extern const Operator kChannelShuffle = [] {
  Operator op{};
  op.kind = ir::OpKind::ChannelShuffle;
  op.imports = {};
  op.emit = [](EmissionState& s, const std::string& id, const ir::Node& n) { Emit(s).channel_shuffle(id, n); };
  op.overlap = nullptr;
  op.scratch = nullptr;
  op.shared_kernel = SharedKernel::own;
  op.layout = LayoutRule::as_it_comes;
  op.tile_window = TileWindow::none;
  op.pad_fold = PadFold::none;
  op.output_range = OutputRange::unbounded;
  op.strided_output = StridedOutput::contiguous_only;
  op.macs = no_macs;
  op.cost_key = named_for_operator;
  op.cost_work = CostWork::whole_tensors;
  op.tflite_gap = tflite_exact;
  return op;
}();

}  // namespace tightfit::ops
