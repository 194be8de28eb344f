// Pad: attrs.pads (ONNX order: all begins then all ends), constant mode, pad value = zero point.
#include "ops/operator.hpp"
#include "ops/emission.hpp"
#include "ops/translator.hpp"

namespace tightfit::ops {
namespace {

using namespace import;

struct Import : Translator {
  using Translator::Translator;

  void pad(const NodeProto& n) {
    data_movement(n, ir::OpKind::Pad, [&](const ir::Tensor& x, bool dequantized, ir::Attrs& attrs) {
      attrs.pads = pad_attrs(n, x, dequantized);
      return import::pad(x.shape, attrs.pads);
    });
  }

  // Pad: constant mode with the value zero (real 0 = the zero point, which is what the IR pads
  // with); for an integer tensor the pad value must be its zero point.
  std::vector<std::int64_t> pad_attrs(const NodeProto& n, const ir::Tensor& x, bool dequantized) const {
    if (string_attr(n, "mode", "constant") != "constant")
      throw Error(fmt::format("mode '{}' is not supported (only constant)", string_attr(n, "mode", "")));
    std::vector<std::int64_t> pads = state_.opset_ < 11 ? ints_attr(n, "pads") : constant_ints(n, 1);
    if (state_.opset_ < 11) {
      if (float_attr(n, "value", 0.0f) != 0.0f) throw Error("a pad value other than 0 is not supported");
    } else if (has_input(n, 2)) {
      const Value& v = value(n.input(2));
      if (dequantized) {
        // A float 0, or a dequantized constant holding the zero point (real 0).
        bool zero = false;
        if (v.kind == Value::Kind::Constant) {
          const auto values = constant_floats(n, 2);
          zero = values.size() == 1 && values[0] == 0.0f;
        } else if (v.kind == Value::Kind::Dequantized && state_.out_.tensors[v.tensor].is_constant) {
          const ir::Tensor& c = state_.out_.tensors[v.tensor];
          zero = c.elements() == 1 && c.data.size() == 1 &&
                 static_cast<std::int32_t>(c.dtype == ir::DType::Int8 ? static_cast<std::int8_t>(c.data[0])
                                                                      : c.data[0]) == c.quant.zero_point[0];
        }
        if (!zero) throw Error("a pad value other than 0 is not supported");
      } else {
        const auto value = constant_ints(n, 2);
        // An integer graph input read by no QLinear operator before this Pad has no zero point yet.
        if (x.quant.zero_point.empty())
          throw Error(
              fmt::format("the pad value cannot be checked against the zero point of '{}': no operator states "
                          "its quantization before this Pad",
                          x.name));
        if (value.size() != 1 || value[0] != x.quant.zero_point[0])
          throw Error("the pad value must be the input's zero point");
      }
    }
    return pads;
  }
};

using namespace emit;

struct Emit : Emission {
  using Emission::Emission;

  void pad(const std::string& id, const Node& n) {
    const Tensor& x = in(n, 0);
    const std::size_t rank = x.shape.size();
    if (rank > 4) refuse(n, "padding more than 4 dimensions is not supported");
    const std::vector<std::int64_t> before(n.attrs.pads.begin(), n.attrs.pads.begin() + static_cast<long>(rank));
    const std::vector<std::int64_t> after(n.attrs.pads.begin() + static_cast<long>(rank), n.attrs.pads.end());
    const auto dims = padded4(x.shape, 1), b = padded4(before, 0), a = padded4(after, 0);
    tightfit::PadParams p{};
    std::copy(dims.begin(), dims.end(), p.in_dims);
    std::copy(b.begin(), b.end(), p.pads_before);
    std::copy(a.begin(), a.end(), p.pads_after);
    p.value = x.quant.zero_point[0];
    const std::string block = params(id, p);
    call(n, fmt::format("tightfit::pad<{}>({}, {}, {})", t_of(n), block, pointer(n.inputs[0]), pointer(n.outputs[0])));
  }
};

}  // namespace

extern const Operator kPad = [] {
  Operator op{};
  op.kind = ir::OpKind::Pad;
  op.imports = {{"", "Pad", [](ImportState& s, const NodeProto& n) { Import(s).pad(n); }}};
  op.emit = [](EmissionState& s, const std::string& id, const ir::Node& n) { Emit(s).pad(id, n); };
  op.overlap = nullptr;
  op.scratch = nullptr;
  op.shared_kernel = SharedKernel::own;
  op.layout = LayoutRule::pads_attribute;
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
