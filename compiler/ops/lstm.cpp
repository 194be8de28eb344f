// LSTM: ONNX's LSTM as ORT's quantizer leaves it, float, run as tightfit::lstm_float (ORT's
// deep_cpu_lstm.cc; what is supported: ops/rnn.hpp). Gates i, o, f, c; the bias Wb + Rb per gate.
#include "ops/rnn.hpp"

namespace tightfit::ops {
namespace {

// B [directions, 8H] (Wb[iofc], Rb[iofc]) -> [directions, 4H]: Wb + Rb, as ORT's LoadBias adds them.
std::vector<float> fuse_bias(const std::vector<float>& b, std::int64_t hidden, bool) {
  const std::size_t h4 = static_cast<std::size_t>(4 * hidden), directions = b.size() / (2 * h4);
  std::vector<float> fused(directions * h4);
  for (std::size_t d = 0; d < directions; ++d)
    for (std::size_t j = 0; j < h4; ++j) fused[d * h4 + j] = b[d * 2 * h4 + j] + b[d * 2 * h4 + h4 + j];
  return fused;
}

}  // namespace

extern const Operator kLSTM = [] {
  Operator op{};
  op.kind = ir::OpKind::LSTM;
  op.imports = {{"", "LSTM", [](ImportState& s, const NodeProto& n) {
                   rnn::Import(s).translate(n, ir::OpKind::LSTM, 4, {"sigmoid", "tanh", "tanh"},
                                            {"activation_alpha", "activation_beta", "activations", "clip", "direction",
                                             "hidden_size", "input_forget", "layout"},
                                            fuse_bias);
                 }}};
  op.emit = [](EmissionState& s, const std::string& id, const ir::Node& n) {
    rnn::Emit(s).call_kernel(id, n, "lstm_float", 2);
  };
  op.overlap = nullptr;
  op.scratch = [](const ir::Graph& g, const ir::Node& n) { return rnn::scratch_bytes(g, n, 2, 4); };
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
