// DynamicQuantize: ONNX DynamicQuantizeLinear, at the edges only: float32 graph input x -> uint8 y,
// float32 scalar scale, uint8 scalar zero point (outputs 0..2, graph outputs), the parameters
// computed from x on every run; y is not quantized statically.
#include "ops/operator.hpp"
#include "ops/emission.hpp"
#include "ops/translator.hpp"

namespace tightfit::ops {
namespace {

using namespace import;

struct Import : Translator {
  using Translator::Translator;

  // DynamicQuantizeLinear(x) -> y, y_scale, y_zero_point, at the graph's edges only: x a float
  // graph input, every output a graph output that no node reads. The scale and zero point are
  // computed from x on every run, so no static quantization exists for a consumer to fold; a
  // model that quantizes with it and goes on computing is refused.
  void dynamic_quantize_linear(const NodeProto& n) {
    allow_attributes(n, {});
    const Value& x = value(n.input(0));
    if (x.kind != Value::Kind::FloatInput)
      throw Error(
          fmt::format("input '{}' must be a float graph input (tightfit runs DynamicQuantizeLinear only at the edges)",
                      n.input(0)));
    if (n.output_size() != 3) throw Error("expects the outputs y, y_scale and y_zero_point");
    for (const auto& out : n.output())
      if (out.empty() || !only_graph_output(out))
        throw Error(
            fmt::format("output '{}' is read by another node or is not a graph output: its scale and zero point are "
                        "computed from the data at run time, and tightfit compiles only static quantization "
                        "(constant scales and zero points)",
                        out));
    const Shape shape = float_input_shape(n.input(0), x);
    const ir::TensorId y = add_activation(n.output(0), ir::DType::UInt8, shape, nullptr);
    state_.pending_[y] = false;  // not statically quantized: its parameters are the other two outputs
    const ir::TensorId scale = add_activation(n.output(1), ir::DType::Float32, {}, nullptr);
    const ir::TensorId zero_point = add_activation(n.output(2), ir::DType::UInt8, {}, nullptr);
    state_.pending_[zero_point] = false;
    ir::Node& node = emit(n, ir::OpKind::DynamicQuantize, "DynamicQuantizeLinear", {x.tensor}, y);
    node.outputs = {y, scale, zero_point};
    for (int i = 0; i < 3; ++i)
      set_value(n.output(i), Value{Value::Kind::Integer, node.outputs[static_cast<std::size_t>(i)], nullptr});
  }
};

using namespace emit;

struct Emit : Emission {
  using Emission::Emission;

  // DynamicQuantizeLinear: the float input, quantized with parameters computed from it.
  void dynamic_quantize(const Node& n) {
    const Tensor& x = in(n, 0);
    if (x.dtype != DType::Float32 || n.outputs.size() != 3) refuse(n, "expects a float32 input and three outputs");
    call(n, fmt::format("tightfit::dynamic_quantize_linear({}, {}, {}, {}, {})", x.elements(), pointer(n.inputs[0]),
                        pointer(n.outputs[0]), pointer(n.outputs[1]), pointer(n.outputs[2])));
  }
};

}  // namespace

extern const Operator kDynamicQuantize = [] {
  Operator op{};
  op.kind = ir::OpKind::DynamicQuantize;
  op.imports = {
      {"", "DynamicQuantizeLinear", [](ImportState& s, const NodeProto& n) { Import(s).dynamic_quantize_linear(n); }}};
  op.emit = [](EmissionState& s, const std::string&, const ir::Node& n) { Emit(s).dynamic_quantize(n); };
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
  op.tflite_gap = no_tflite_form;
  return op;
}();

}  // namespace tightfit::ops
