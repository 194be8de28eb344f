// Resize: nearest; attrs.scales per axis (output = floor(input * scale)).
#include "ops/operator.hpp"
#include "ops/emission.hpp"
#include "ops/translator.hpp"

namespace tightfit::ops {
namespace {

using namespace import;

struct Import : Translator {
  using Translator::Translator;

  void resize(const NodeProto& n) {
    data_movement(n, ir::OpKind::Resize, [&](const ir::Tensor& x, bool, ir::Attrs& attrs) {
      attrs.scales = resize_scales(n, x.shape);
      Shape y;
      for (std::size_t i = 0; i < x.shape.size(); ++i)
        y.push_back(x.shape[i] * static_cast<std::int64_t>(attrs.scales[i]));
      return y;
    });
  }

  // Resize, nearest, by whole factors: output index i reads input index floor(i / factor).
  // That is what ONNX computes for (asymmetric, floor) and, with whole factors, for
  // (half_pixel or pytorch_half_pixel, round_prefer_floor or round_prefer_ceil).
  std::vector<float> resize_scales(const NodeProto& n, const Shape& x) const {
    if (string_attr(n, "mode", "nearest") != "nearest")
      throw Error(fmt::format("mode '{}' is not supported (only nearest)", string_attr(n, "mode", "")));
    const std::string ctm = string_attr(n, "coordinate_transformation_mode", "half_pixel");
    const std::string nearest = string_attr(n, "nearest_mode", "round_prefer_floor");
    const bool asymmetric_floor = ctm == "asymmetric" && nearest == "floor";
    const bool half_pixel_round = (ctm == "half_pixel" || ctm == "pytorch_half_pixel") &&
                                  (nearest == "round_prefer_floor" || nearest == "round_prefer_ceil");
    if (state_.opset_ >= 11 && !asymmetric_floor && !half_pixel_round)
      throw Error(
          fmt::format("coordinate_transformation_mode '{}' with nearest_mode '{}' is not supported", ctm, nearest));
    if (int_attr(n, "exclude_outside", 0) != 0) throw Error("attribute exclude_outside=1 is not supported");
    std::vector<float> scales;
    const int scales_index = state_.opset_ < 11 ? 1 : 2;
    if (has_input(n, scales_index) && !constant(n.input(scales_index)).dims().empty() &&
        constant(n.input(scales_index)).dims(0) > 0) {
      scales = constant_floats(n, scales_index);
    } else if (has_input(n, 3)) {
      const auto sizes = constant_ints(n, 3);
      if (sizes.size() != x.size()) throw Error("sizes has the wrong length");
      for (std::size_t i = 0; i < x.size(); ++i) {
        if (sizes[i] % x[i] != 0)
          throw Error(fmt::format("output size {} is not a whole multiple of {}", sizes[i], x[i]));
        scales.push_back(static_cast<float>(sizes[i] / x[i]));
      }
    } else {
      throw Error("neither scales nor sizes is given");
    }
    if (scales.size() != x.size()) throw Error(fmt::format("{} scales for rank {}", scales.size(), x.size()));
    for (float s : scales)
      if (!(s >= 1.0f) || s != std::floor(s) || s > 4096.0f)
        throw Error(fmt::format("scale {} is not a whole factor of at least 1", s));
    return scales;
  }
};

using namespace emit;

struct Emit : Emission {
  using Emission::Emission;

  void resize(const std::string& id, const Node& n) {
    const Tensor &x = in(n, 0), &y = out(n);
    if (x.layout != ir::Layout::ChannelsLast) refuse(n, "Resize is supported on 4-D images only");
    const auto& s = n.attrs.scales;  // memory order after the channels-last stage: N, H, W, C
    if (s[0] != 1.0f || s[3] != 1.0f) refuse(n, "Resize may scale only the height and width");
    auto indices = [&](std::int64_t in_len, std::int64_t out_len, float scale) {
      std::vector<std::int32_t> index;
      for (std::int64_t o = 0; o < out_len; ++o)
        index.push_back(tightfit::resize_nearest_index(i32(o), i32(in_len), i32(out_len), scale,
                                                       tightfit::ResizeCoordinateMode::kAsymmetric,
                                                       tightfit::ResizeNearestMode::kFloor));
      return index;
    };
    tightfit::ResizeNearestParams p{};
    p.batch = i32(x.shape[0]);
    p.in_h = i32(x.shape[1]), p.in_w = i32(x.shape[2]), p.channels = i32(x.shape[3]);
    p.out_h = i32(y.shape[1]), p.out_w = i32(y.shape[2]);
    p.out_stride = pixel_stride_of(y);
    ParamsText<tightfit::ResizeNearestParams> fields = ParamsText<tightfit::ResizeNearestParams>::of(p);
    fields.h_index = array(id + "_rows", "std::int32_t", indices(x.shape[1], y.shape[1], s[1]));
    fields.w_index = array(id + "_columns", "std::int32_t", indices(x.shape[2], y.shape[2], s[2]));
    const std::string block = params(id, fields);
    call(n, fmt::format("tightfit::resize_nearest<{}>({}, {}, {})", t_of(n), block, pointer(n.inputs[0]),
                        pointer(n.outputs[0])));
  }
};

}  // namespace

extern const Operator kResize = [] {
  Operator op{};
  op.kind = ir::OpKind::Resize;
  op.imports = {{"", "Resize", [](ImportState& s, const NodeProto& n) { Import(s).resize(n); }}};
  op.emit = [](EmissionState& s, const std::string& id, const ir::Node& n) { Emit(s).resize(id, n); };
  op.overlap = nullptr;
  op.scratch = nullptr;
  op.shared_kernel = SharedKernel::own;
  op.layout = LayoutRule::scales_attribute;
  op.tile_window = TileWindow::none;
  op.pad_fold = PadFold::none;
  op.output_range = OutputRange::unbounded;
  op.strided_output = StridedOutput::channel_slice;
  op.macs = no_macs;
  op.cost_key = named_for_operator;
  op.cost_work = CostWork::whole_tensors;
  op.tflite_gap = tflite_exact;
  return op;
}();

}  // namespace tightfit::ops
