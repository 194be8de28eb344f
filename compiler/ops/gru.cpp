// GRU: ONNX's GRU as ORT's quantizer leaves it, float, run as tightfit::gru_float (ORT's
// deep_cpu_gru.cc; what is supported: ops/rnn.hpp). Gates z, r, h; linear_before_reset 0 or 1.
#include "ops/rnn.hpp"

namespace tightfit::ops {
namespace {

// B [directions, 6H] (Wb[zrh], Rb[zrh]) -> [directions, 4H]: Wbz + Rbz, Wbr + Rbr, then Wbh + Rbh
// and zeros, or with linear_before_reset Wbh and Rbh apart (ORT adds Rbh to h.Rh before r
// multiplies it).
std::vector<float> fuse_bias(const std::vector<float>& b, std::int64_t hidden, bool linear_before_reset) {
  const std::size_t h = static_cast<std::size_t>(hidden), directions = b.size() / (6 * h);
  std::vector<float> fused(directions * 4 * h, 0.0f);
  for (std::size_t d = 0; d < directions; ++d) {
    const float* wb = b.data() + d * 6 * h;
    const float* rb = wb + 3 * h;
    float* out = fused.data() + d * 4 * h;
    for (std::size_t j = 0; j < h; ++j) {
      out[j] = wb[j] + rb[j];
      out[h + j] = wb[h + j] + rb[h + j];
      if (linear_before_reset) {
        out[2 * h + j] = wb[2 * h + j];
        out[3 * h + j] = rb[2 * h + j];
      } else {
        out[2 * h + j] = wb[2 * h + j] + rb[2 * h + j];
      }
    }
  }
  return fused;
}

}  // namespace

extern const Operator kGRU = [] {
  Operator op{};
  op.kind = ir::OpKind::GRU;
  op.imports = {{"", "GRU", [](ImportState& s, const NodeProto& n) {
                   rnn::Import(s).translate(n, ir::OpKind::GRU, 3, {"sigmoid", "tanh"},
                                            {"activation_alpha", "activation_beta", "activations", "clip", "direction",
                                             "hidden_size", "layout", "linear_before_reset"},
                                            fuse_bias);
                 }}};
  op.emit = [](EmissionState& s, const std::string& id, const ir::Node& n) {
    rnn::Emit(s).call_kernel(id, n, "gru_float", 1);
  };
  op.overlap = nullptr;
  op.scratch = [](const ir::Graph& g, const ir::Node& n) { return rnn::scratch_bytes(g, n, 1, 4); };
  op.shared_kernel = SharedKernel::own;
  op.layout = LayoutRule::as_it_comes;
  op.tile_window = TileWindow::none;
  op.pad_fold = PadFold::none;
  op.output_range = OutputRange::unbounded;
  op.strided_output = StridedOutput::contiguous_only;
  op.macs = rnn::macs;
  op.cost_key = named_for_operator;
  op.cost_work = CostWork::whole_tensors;
  op.tflite_gap = no_tflite_form;
  return op;
}();

}  // namespace tightfit::ops
