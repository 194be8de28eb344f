// Requantize: change the scale, zero point or dtype of an integer tensor (made by QuantizeLinear
// after DequantizeLinear, by Relu/Clip and by Concat; no ONNX operator of its own; a .tflite's
// QUANTIZE between int8 quantizations and RELU that requantizes). From int32: float(x - zp) *
// scale, then QuantizeLinear.
#include "ops/operator.hpp"
#include "ops/tflite_numerics.hpp"
#include "ops/emission.hpp"

namespace tightfit::ops {
namespace {

using namespace emit;

struct Emit : Emission {
  using Emission::Emission;

  // An int32 accumulator requantized (ConvInteger -> DequantizeLinear -> QuantizeLinear).
  void requantize_accumulator(const std::string& id, const Node& n) {
    const Tensor &x = in(n, 0), &y = out(n);
    require_per_tensor(n, x);
    require_per_tensor(n, y);
    tightfit::AccumulatorRequantizeParams p{};
    p.count = i32(x.elements());
    p.input_scale = x.quant.scale[0], p.input_zero_point = x.quant.zero_point[0];
    p.output_scale = y.quant.scale[0], p.output_zero_point = y.quant.zero_point[0];
    p.output_min = n.attrs.act_min, p.output_max = n.attrs.act_max;
    const std::string block = params(id, p);
    call(n, fmt::format("tightfit::requantize_accumulator<{}>({}, {}, {})", ctype(y.dtype), block, pointer(n.inputs[0]),
                        pointer(n.outputs[0])));
  }

  void requantize(const std::string& id, const Node& n) {
    if (in(n, 0).dtype == DType::Int32) return requantize_accumulator(id, n);
    // TFLite's QUANTIZE or RELU between int8 quantizations (--numerics tflite; passes/numerics.cpp
    // checked the types): the fixed-point multiplier.
    if (tflite())
      return lookup(id, n, [](bool, float xs, std::int32_t xz, float ys, std::int32_t yz, std::uint8_t table[256]) {
        tightfit::build_requantize_table_tflite(xs, xz, ys, yz, table);
      });
    lookup(id, n, [](bool s8, float xs, std::int32_t xz, float ys, std::int32_t yz, std::uint8_t table[256]) {
      s8 ? tightfit::build_requantize_table<std::int8_t>(xs, xz, ys, yz, table)
         : tightfit::build_requantize_table<std::uint8_t>(xs, xz, ys, yz, table);
    });
  }
};

std::string tflite_gap(const ir::Graph& g, const ir::Node& n) {
  if (!int8_to_int8(g, n)) return "TFLite's requantization (QUANTIZE) is int8 to int8 here";
  // TFLite Micro's RELU6 clamps in its input's quantization and writes the input's bytes: it
  // has no requantizing form (the importer labels nodes with the TFLite operator's name).
  if (n.onnx_op == "RELU6" || n.onnx_op == "RELU_N1_TO_1")
    return "TFLite Micro's RELU6 does not requantize: its output must be quantized as its input";
  return {};
}

}  // namespace

extern const Operator kRequantize = [] {
  Operator op{};
  op.kind = ir::OpKind::Requantize;
  op.imports = {};
  op.emit = [](EmissionState& s, const std::string& id, const ir::Node& n) { Emit(s).requantize(id, n); };
  op.overlap = lookup_overlap;
  op.scratch = nullptr;
  op.shared_kernel = SharedKernel::lookup_table;
  op.layout = LayoutRule::as_it_comes;
  op.tile_window = TileWindow::elementwise;
  op.pad_fold = PadFold::none;
  op.output_range = OutputRange::clamped_to_act_range;
  op.strided_output = StridedOutput::contiguous_only;
  op.macs = no_macs;
  op.cost_key = lookup_table_cost;
  op.cost_work = CostWork::whole_tensors;
  op.tflite_gap = tflite_gap;
  return op;
}();

}  // namespace tightfit::ops
