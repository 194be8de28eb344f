// Zero-copy Concat: an input of a Concat that the Concat only copies (same type, scale and zero
// point as the output) is written by its producer straight into its part of the Concat's output,
// and has no buffer of its own. Run after the channels-last stage, on memory-order shapes.
//
// Where the input's part of the output lies:
//  * contiguous, when the dims before the axis are all 1 (a concat along the outermost axis
//    that is not 1: H of a single-image NHWC tensor, or C after a global pool): any kernel
//    writes it, as it would its own buffer, at an offset;
//  * strided, a channel concat of NHWC images: each pixel's channels of this input lie at their
//    channel offset inside the output's pixel. The requantizing convolution (ConvParams::out_stride,
//    honoured by every variant of its kernels) and Resize (ResizeNearestParams::out_stride) write
//    such an output.
// The input must be read by the Concat alone (once), be no graph input or output, and be written
// by a node of its own (not a view); the Concat's output must not itself lie in another tensor.
#include <algorithm>

#include "ops/operator.hpp"
#include "passes/passes.hpp"
#include "passes/uses.hpp"

namespace tightfit::passes {

namespace {

bool contains(const std::vector<ir::TensorId>& ids, ir::TensorId id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

}  // namespace

std::vector<InPlaceInput> zero_copy_candidates(const ir::Graph& g) {
  const TensorUses uses = tensor_uses(g);
  const std::vector<int>& readers = uses.readers;
  const std::vector<int>& producer = uses.producer;

  std::vector<InPlaceInput> candidates;
  for (const ir::Node& concat : g.nodes) {
    if (concat.op != ir::OpKind::Concat) continue;
    const ir::TensorId y = concat.outputs[0];
    const ir::Tensor& out = g.tensors[y];
    if (out.slice_of != ir::kNoTensor || (out.dtype != ir::DType::Int8 && out.dtype != ir::DType::UInt8)) continue;
    const std::size_t axis = static_cast<std::size_t>(concat.attrs.axis);
    std::int64_t outer = 1, after = 1;
    for (std::size_t d = 0; d < axis; ++d) outer *= out.shape[d];
    for (std::size_t d = axis + 1; d < out.shape.size(); ++d) after *= out.shape[d];
    const bool channel_slices = out.layout == ir::Layout::ChannelsLast && out.shape.size() == 4 && axis == 3;
    std::int64_t start = 0;  // along the axis
    for (const ir::TensorId t : concat.inputs) {
      const ir::Tensor& x = g.tensors[t];
      const std::int64_t extent = x.shape[axis];
      start += extent;
      const int p = producer[t];
      if (p < 0 || readers[t] != 1 || x.is_constant || contains(g.inputs, t) || contains(g.outputs, t) ||
          std::count(concat.inputs.begin(), concat.inputs.end(), t) != 1 || !same_quant(x, out))
        continue;
      const ir::Node& writer = g.nodes[static_cast<std::size_t>(p)];
      if (writer.outputs.size() != 1 || writer.op == ir::OpKind::Reshape || writer.op == ir::OpKind::Concat) continue;
      InPlaceInput in{
          concat.name, writer.name, ir::op_name(writer.op), x.name, static_cast<std::uint64_t>(x.bytes()), t, y, 0,
          0,           outer == 1};
      if (outer == 1) {
        in.offset = (start - extent) * after;
        in.pixel_stride = x.shape.empty() ? 0 : x.shape.back();
      } else if (channel_slices && ops::of(writer.op).strided_output == ops::StridedOutput::channel_slice) {
        in.offset = start - extent;
        in.pixel_stride = out.shape[3];
      } else {
        continue;
      }
      candidates.push_back(in);
    }
  }
  return candidates;
}

void write_in_place(ir::Graph& g, const InPlaceInput& in) {
  ir::Tensor& x = g.tensors[in.input];
  x.slice_of = in.output;
  x.slice_offset = in.offset;
  x.slice_pixel_stride = in.pixel_stride;
}

}  // namespace tightfit::passes
