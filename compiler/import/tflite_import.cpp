// A .tflite model to the integer IR: the file checked and verified, then subgraph 0's operators in
// order, each mapped onto the IR operator that computes it (docs/import.md, "TFLite models").
//
// Layout: a 4-D TFLite activation [N, H, W, C] is the IR tensor [N, C, H, W] (the IR keeps ONNX's
// logical order; the channels-last stage lays it out as N, H, W, C again, TFLite's own bytes).
// Weights are reordered once here into ONNX's layouts (OIHW; a depthwise filter [1, kh, kw, C*m]
// as [C*m, 1, kh, kw] with group C), and every axis an operator names is mapped. Where the two
// orders give different element sequences (a RESHAPE or FULLY_CONNECTED flattening an image), the
// IR spells TFLite's NHWC order out with a Transpose, or permutes the weight columns.
#include "import/tflite_import.hpp"

#include <fmt/format.h>
#include <flatbuffers/flatbuffers.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>

#include "error.hpp"
#include "import/model_file.hpp"
#include "ops/shape_rules.hpp"
#include "ops/tensor_data.hpp"
#include "tflite_schema_generated.h"

namespace tightfit::import {

namespace fs = std::filesystem;
namespace tfl = tightfit::tflite;

namespace {

// IR (NCHW) axis i of a 4-D activation is TFLite (NHWC) axis kTfliteAxisOfIr[i], and TFLite axis j
// is IR axis kIrAxisOfTflite[j].
constexpr std::array<std::int64_t, 4> kTfliteAxisOfIr = {0, 3, 1, 2};
constexpr std::array<std::int64_t, 4> kIrAxisOfTflite = {0, 2, 3, 1};

// Deeper or larger buffers than any model has: the Verifier's bounds on what it walks.
constexpr flatbuffers::uoffset_t kMaxVerifierDepth = 64;
constexpr flatbuffers::uoffset_t kMaxVerifierTables = 1000000;

// An Error whose line already names the file and operator: passed through unchanged.
struct Located : Error {
  using Error::Error;
};

// The IR shape of a TFLite shape: NCHW for rank 4, the same otherwise.
Shape ir_shape(const Shape& tflite) {
  if (tflite.size() != 4) return tflite;
  return {tflite[0], tflite[3], tflite[1], tflite[2]};
}

// NCHW and NHWC give the elements of an image in the same order when one channel or one pixel
// makes the difference vanish.
bool orders_agree(const Shape& tflite_nhwc) {
  return tflite_nhwc.size() != 4 || tflite_nhwc[3] == 1 || tflite_nhwc[1] * tflite_nhwc[2] == 1;
}

// Elements of `size` bytes in row-major order of `shape`, permuted: output axis i is input axis
// perm[i].
std::vector<std::uint8_t> transpose_elements(const std::uint8_t* data, const Shape& shape,
                                             const std::vector<std::int64_t>& perm, std::size_t size) {
  const std::size_t rank = shape.size();
  std::int64_t count = 1;
  for (auto d : shape) count *= d;
  std::vector<std::int64_t> in_stride(rank, 1);
  for (std::size_t i = rank; i-- > 1;) in_stride[i - 1] = in_stride[i] * shape[i];
  Shape out_shape(rank);
  for (std::size_t i = 0; i < rank; ++i) out_shape[i] = shape[static_cast<std::size_t>(perm[i])];
  std::vector<std::uint8_t> out(static_cast<std::size_t>(count) * size);
  std::vector<std::int64_t> index(rank, 0);  // the output element's index
  for (std::int64_t o = 0; o < count; ++o) {
    std::int64_t from = 0;
    for (std::size_t i = 0; i < rank; ++i) from += index[i] * in_stride[static_cast<std::size_t>(perm[i])];
    std::memcpy(&out[static_cast<std::size_t>(o) * size], data + static_cast<std::size_t>(from) * size, size);
    for (std::size_t i = rank; i-- > 0;) {
      if (++index[i] < out_shape[i]) break;
      index[i] = 0;
    }
  }
  return out;
}

// TFLite's name of a builtin operator code, or "builtin operator <code>" for one the schema here
// does not list.
std::string builtin_name(std::int32_t code) {
  const char* name = code >= 0 && code <= static_cast<std::int32_t>(tfl::BuiltinOperator::MAX)
                         ? tfl::EnumNameBuiltinOperator(static_cast<tfl::BuiltinOperator>(code))
                         : "";
  return *name ? std::string(name) : fmt::format("builtin operator {}", code);
}

const char* type_name(tfl::TensorType t) {
  const char* name = tfl::EnumNameTensorType(t);
  return *name ? name : "an unknown type";
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string read_bytes(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw Error(path + ": no such file");
  if (fs::is_directory(path, ec)) throw Error(path + ": is a directory, not a model file");
  const auto size = fs::file_size(path, ec);
  if (ec) throw Error(path + ": cannot read: " + ec.message());
  if (size == 0) throw Error(path + ": empty file, not a TFLite model");
  if (static_cast<long long>(size) > kMaxModelBytes)
    throw Error(fmt::format("{}: model file of {} bytes is above the limit of {} bytes", path, size, kMaxModelBytes));
  std::ifstream in(path, std::ios::binary);
  std::string bytes(size, '\0');
  if (!in.read(bytes.data(), static_cast<std::streamsize>(size))) throw Error(path + ": cannot read the file");
  return bytes;
}

class Importer {
 public:
  Importer(std::string path, const tfl::Model& model) : path_(std::move(path)), model_(model) {}

  ir::Graph run() {
    out_.source = path_;
    out_.source_format = ir::Graph::SourceFormat::TFLite;
    out_.numerics = ir::Numerics::Tflite;  // a .tflite follows TFLite's arithmetic unless told otherwise
    const auto* subgraphs = model_.subgraphs();
    if (!subgraphs || subgraphs->size() == 0) throw Error(path_ + ": the model has no subgraph");
    if (subgraphs->size() > 1)
      throw Error(
          fmt::format("{}: the model has {} subgraphs; tightfit reads models of one (control flow, such as "
                      "IF, WHILE and CALL_ONCE, is not supported)",
                      path_, subgraphs->size()));
    graph_ = subgraphs->Get(0);
    if (!graph_->tensors() || !graph_->inputs() || !graph_->outputs() || !graph_->operators())
      throw Error(path_ + ": subgraph 0 lacks its tensors, inputs, outputs or operators");
    ir_of_.assign(graph_->tensors()->size(), ir::kNoTensor);
    for (const std::int32_t input : *graph_->inputs()) at_tensor("input", input, [&] { add_graph_input(input); });
    for (flatbuffers::uoffset_t i = 0; i < graph_->operators()->size(); ++i) {
      const tfl::Operator& op = *graph_->operators()->Get(i);
      const std::string name = operator_name(op);
      try {
        translate(op, name);
      } catch (const Located&) {
        throw;
      } catch (const Error& e) {
        throw Located(fmt::format("{}: operator {} ({}): {}", path_, i, name, e.what()));
      }
    }
    for (const std::int32_t output : *graph_->outputs()) at_tensor("output", output, [&] { add_graph_output(output); });
    return std::move(out_);
  }

 private:
  using Activation = tfl::ActivationFunctionType;

  struct Range {
    std::int64_t min, max;
  };

  // ----- tensors ------------------------------------------------------------------------------

  // Runs `f` on graph input or output `index` (its `role`), naming it in an error.
  template <typename F>
  void at_tensor(const char* role, std::int32_t index, F&& f) {
    try {
      f();
    } catch (const Located&) {
      throw;
    } catch (const Error& e) {
      throw Located(fmt::format("{}: graph {} '{}': {}", path_, role, name_of(index), e.what()));
    }
  }

  const tfl::Tensor& tensor(std::int32_t index) const {
    if (index < 0 || static_cast<flatbuffers::uoffset_t>(index) >= graph_->tensors()->size())
      throw Error(fmt::format("tensor index {} is out of range (the subgraph has {} tensors)", index,
                              graph_->tensors()->size()));
    return *graph_->tensors()->Get(static_cast<flatbuffers::uoffset_t>(index));
  }

  std::string name_of(std::int32_t index) const {
    if (index < 0 || static_cast<flatbuffers::uoffset_t>(index) >= graph_->tensors()->size())
      return fmt::format("#{}", index);
    const auto* name = graph_->tensors()->Get(static_cast<flatbuffers::uoffset_t>(index))->name();
    return name && name->size() > 0 ? name->str() : fmt::format("#{}", index);
  }

  Shape shape_of(std::int32_t index) const {
    const tfl::Tensor& t = tensor(index);
    Shape shape;
    if (t.shape())
      for (const std::int32_t d : *t.shape()) shape.push_back(d);
    checked_elements(shape, name_of(index));
    if (t.is_variable())
      throw Error(fmt::format("tensor '{}' is a variable; tightfit reads stateless models", name_of(index)));
    if (t.sparsity()) throw Error(fmt::format("tensor '{}' is sparse; tightfit reads dense tensors", name_of(index)));
    return shape;
  }

  // The bytes of a constant tensor, or nullptr for a tensor with no data (an activation).
  const flatbuffers::Vector<std::uint8_t>* data_of(std::int32_t index) const {
    const tfl::Tensor& t = tensor(index);
    const auto* buffers = model_.buffers();
    if (!buffers || t.buffer() >= buffers->size())
      throw Error(
          fmt::format("tensor '{}' names buffer {}, which the model does not have", name_of(index), t.buffer()));
    const tfl::Buffer& b = *buffers->Get(t.buffer());
    if (b.offset() != 0 || b.size() != 0)
      throw Error(fmt::format(
          "tensor '{}' keeps its data outside the flatbuffer (buffer offset), which is not supported", name_of(index)));
    return b.data() && b.data()->size() > 0 ? b.data() : nullptr;
  }

  bool is_constant(std::int32_t index) const { return data_of(index) != nullptr; }

  // The per-tensor quantization of int8 activation `index`.
  ir::Quant activation_quant(std::int32_t index) const {
    const tfl::Tensor& t = tensor(index);
    const std::string name = name_of(index);
    switch (t.type()) {
      case tfl::TensorType::INT8:
        break;
      case tfl::TensorType::INT16:
        throw Error(fmt::format(
            "tensor '{}' is int16; tightfit reads int8 activations (int16 activations are not supported)", name));
      case tfl::TensorType::FLOAT32:
      case tfl::TensorType::FLOAT16:
        throw Error(fmt::format("tensor '{}' is {}: the operator runs in float; tightfit reads int8 quantized models",
                                name, lower(type_name(t.type()))));
      default:
        throw Error(
            fmt::format("tensor '{}' is {}; tightfit reads int8 activations", name, lower(type_name(t.type()))));
    }
    const ir::Quant q = quant_of(index);
    if (q.per_channel())
      throw Error(fmt::format("activation '{}' is quantized per channel; activations must be per tensor", name));
    return q;
  }

  // The quantization stated on tensor `index`: per tensor, or per channel along TFLite's axis.
  ir::Quant quant_of(std::int32_t index) const {
    const tfl::Tensor& t = tensor(index);
    const std::string name = name_of(index);
    const tfl::QuantizationParameters* q = t.quantization();
    if (!q || !q->scale() || q->scale()->size() == 0) throw Error(fmt::format("tensor '{}' is not quantized", name));
    if (q->details_type() != tfl::QuantizationDetails::NONE)
      throw Error(fmt::format("tensor '{}' has a custom quantization, which is not supported", name));
    ir::Quant quant;
    const Range range = t.type() == tfl::TensorType::INT32 ? Range{0, 0} : Range{-128, 127};
    for (flatbuffers::uoffset_t c = 0; c < q->scale()->size(); ++c) {
      const float scale = q->scale()->Get(c);
      const std::int64_t zero_point = q->zero_point() && c < q->zero_point()->size() ? q->zero_point()->Get(c) : 0;
      if (!std::isfinite(scale) || scale <= 0)
        throw Error(fmt::format("tensor '{}' has scale {}; scales must be positive and finite", name, scale));
      if (zero_point < range.min || zero_point > range.max)
        throw Error(
            fmt::format("tensor '{}' has zero point {}, outside [{}, {}]", name, zero_point, range.min, range.max));
      quant.scale.push_back(scale);
      quant.zero_point.push_back(static_cast<std::int32_t>(zero_point));
    }
    if (q->zero_point() && q->zero_point()->size() != q->scale()->size())
      throw Error(fmt::format("tensor '{}' has {} scales and {} zero points", name, q->scale()->size(),
                              q->zero_point()->size()));
    if (quant.scale.size() > 1) {
      const Shape shape = shape_of(index);
      const std::int32_t axis = q->quantized_dimension();
      if (axis < 0 || static_cast<std::size_t>(axis) >= shape.size() ||
          shape[static_cast<std::size_t>(axis)] != static_cast<std::int64_t>(quant.scale.size()))
        throw Error(fmt::format("tensor '{}' has {} scales along dimension {} of shape {}", name, quant.scale.size(),
                                axis, shape_text(shape)));
      quant.axis = axis;
    }
    return quant;
  }

  // The IR activation that TFLite tensor `index` is: a graph input or an operator's output.
  ir::TensorId activation(std::int32_t index) const {
    if (index < 0) throw Error("a required input is absent");
    tensor(index);
    if (ir_of_[static_cast<std::size_t>(index)] != ir::kNoTensor) {
      const ir::TensorId id = ir_of_[static_cast<std::size_t>(index)];
      if (out_.tensors[id].dtype == ir::DType::Float32)
        throw Error(
            fmt::format("tensor '{}' is float32: the operator runs in float; tightfit reads int8 quantized models",
                        name_of(index)));
      return id;
    }
    if (is_constant(index))
      throw Error(fmt::format("input '{}' is a constant where tightfit expects an activation", name_of(index)));
    activation_quant(index);  // the tensor's type, if that is what is wrong
    throw Error(fmt::format("input '{}' is read before any operator writes it", name_of(index)));
  }

  ir::TensorId add_tensor(ir::Tensor t) {
    out_.tensors.push_back(std::move(t));
    return static_cast<ir::TensorId>(out_.tensors.size() - 1);
  }

  // A new int8 IR activation of `shape` (IR order) with the quantization of `like`.
  ir::TensorId add_activation(const std::string& name, const Shape& shape, const ir::Quant& quant) {
    ir::Tensor t;
    t.name = name;
    t.dtype = ir::DType::Int8;
    t.shape = shape;
    t.quantized = true;
    t.quant = quant;
    return add_tensor(std::move(t));
  }

  // The IR tensor for TFLite tensor `index`, written by the operator being translated.
  ir::TensorId output(std::int32_t index) {
    const Shape shape = shape_of(index);
    if (ir_of_.at(static_cast<std::size_t>(index)) != ir::kNoTensor || is_constant(index))
      throw Error(fmt::format("output '{}' is written twice, or is a constant", name_of(index)));
    const ir::TensorId id = add_activation(name_of(index), ir_shape(shape), activation_quant(index));
    ir_of_[static_cast<std::size_t>(index)] = id;
    return id;
  }

  // Checks that what the operator computes has the shape the model gives its output.
  void expect_shape(std::int32_t out_index, const Shape& computed_ir) const {
    const Shape declared = ir_shape(shape_of(out_index));
    if (declared != computed_ir)
      throw Error(fmt::format("output '{}' has shape {} in the model, but the operator computes {} (in NCHW order)",
                              name_of(out_index), shape_text(shape_of(out_index)), shape_text(computed_ir)));
  }

  std::vector<std::int64_t> int_constant(std::int32_t index) const {
    const auto* data = data_of(index);
    const tfl::Tensor& t = tensor(index);
    if (!data) throw Error(fmt::format("input '{}' must be a constant", name_of(index)));
    const std::size_t size = t.type() == tfl::TensorType::INT32 ? 4 : t.type() == tfl::TensorType::INT64 ? 8 : 0;
    if (size == 0)
      throw Error(fmt::format("constant '{}' is {}, not int32 or int64", name_of(index), lower(type_name(t.type()))));
    const std::int64_t count = checked_elements(shape_of(index), name_of(index));
    if (data->size() != static_cast<std::size_t>(count) * size)
      throw Error(fmt::format("constant '{}' holds {} bytes for {} elements", name_of(index), data->size(), count));
    std::vector<std::int64_t> values;
    for (std::int64_t i = 0; i < count; ++i) {
      if (size == 4) {
        std::int32_t v;
        std::memcpy(&v, data->data() + i * 4, 4);
        values.push_back(v);
      } else {
        std::int64_t v;
        std::memcpy(&v, data->data() + i * 8, 8);
        values.push_back(v);
      }
    }
    return values;
  }

  // A constant of TFLite tensor `index` as an IR constant with the elements reordered by `perm`
  // (output axis i is TFLite axis perm[i]; empty: as they are), its quantization axis following.
  ir::TensorId constant(std::int32_t index, tfl::TensorType type, const std::vector<std::int64_t>& perm,
                        const std::string& role) {
    const tfl::Tensor& t = tensor(index);
    const auto* data = data_of(index);
    if (!data) throw Error(fmt::format("{} '{}' is not a constant", role, name_of(index)));
    if (t.type() != type)
      throw Error(fmt::format("{} '{}' is {}, not {}", role, name_of(index), lower(type_name(t.type())),
                              lower(type_name(type))));
    const Shape shape = shape_of(index);
    const std::size_t size = type == tfl::TensorType::INT32 ? 4 : 1;
    const std::int64_t count = checked_elements(shape, name_of(index));
    if (data->size() != static_cast<std::size_t>(count) * size)
      throw Error(fmt::format("{} '{}' holds {} bytes for {} elements", role, name_of(index), data->size(), count));
    ir::Tensor c;
    c.name = name_of(index);
    c.dtype = type == tfl::TensorType::INT32 ? ir::DType::Int32 : ir::DType::Int8;
    c.is_constant = true;
    c.quantized = true;
    if (type != tfl::TensorType::INT32) c.quant = quant_of(index);
    if (perm.empty()) {
      c.shape = shape;
      c.data.assign(data->begin(), data->end());
    } else {
      c.data = transpose_elements(data->data(), shape, perm, size);
      for (auto p : perm) c.shape.push_back(shape[static_cast<std::size_t>(p)]);
      if (c.quant.per_channel())
        c.quant.axis = static_cast<int>(std::find(perm.begin(), perm.end(), c.quant.axis) - perm.begin());
    }
    return add_tensor(std::move(c));
  }

  // An int32 bias [channels] added to the accumulator as is: its scale is x_scale * w_scale. The
  // quantizations are copies: adding the bias tensor may move out_.tensors, where they lie.
  ir::TensorId bias(std::int32_t index, ir::Quant x, ir::Quant w, std::int64_t channels) {
    const ir::TensorId b = constant(index, tfl::TensorType::INT32, {}, "bias");
    ir::Tensor& t = out_.tensors[b];
    if (t.shape != Shape{channels})
      throw Error(fmt::format("bias '{}' has shape {} for {} output channels", t.name, shape_text(t.shape), channels));
    t.quant = ir::Quant{};
    for (float ws : w.scale) {
      t.quant.scale.push_back(x.scale[0] * ws);
      t.quant.zero_point.push_back(0);
    }
    t.quant.axis = w.per_channel() ? 0 : -1;
    return b;
  }

  // ----- nodes --------------------------------------------------------------------------------

  ir::Node& emit(ir::OpKind op, std::vector<ir::TensorId> inputs, ir::TensorId out, const std::string& suffix = "") {
    ir::Node n;
    std::string name = out_.tensors[out].name + suffix;
    for (int k = 2; !node_names_.insert(name).second; ++k)
      name = fmt::format("{}{} ({})", out_.tensors[out].name, suffix, k);
    n.name = name;
    n.onnx_op = op_label_;
    n.op = op;
    n.inputs = std::move(inputs);
    n.outputs = {out};
    out_.nodes.push_back(std::move(n));
    return out_.nodes.back();
  }

  // The clamp of a fused activation in the output's integer domain, as TFLite computes it
  // (CalculateActivationRangeQuantized: the zero point plus the bound over the scale, rounded half
  // away from zero, within int8).
  void fuse(ir::Node& n, Activation f) const {
    const ir::Quant& y = out_.tensors[n.outputs[0]].quant;
    auto q = [&](float v) {
      const std::int64_t r = y.zero_point[0] + static_cast<std::int64_t>(std::round(v / y.scale[0]));
      return static_cast<std::int32_t>(std::clamp<std::int64_t>(r, -128, 127));
    };
    switch (f) {
      case Activation::NONE:
        return;
      case Activation::RELU:
        n.attrs.act_min = q(0.0f);
        return;
      case Activation::RELU6:
        n.attrs.act_min = q(0.0f), n.attrs.act_max = q(6.0f);
        return;
      case Activation::RELU_N1_TO_1:
        n.attrs.act_min = q(-1.0f), n.attrs.act_max = q(1.0f);
        return;
      default:
        throw Error(fmt::format("fused activation {} is not supported", tfl::EnumNameActivationFunctionType(f)));
    }
  }

  // Activation `x` (IR) seen under TFLite shape `target` (a RESHAPE, a squeeze): TFLite reshapes in
  // NHWC order, so a 4-D side whose orders disagree goes through a Transpose to or from NHWC.
  ir::TensorId view_as(ir::TensorId x, const Shape& x_tflite, const Shape& target, const std::string& name,
                       ir::TensorId into) {
    const ir::Quant quant = out_.tensors[x].quant;
    if (!orders_agree(x_tflite)) {
      const ir::TensorId nhwc = add_activation(name + ":nhwc", x_tflite, quant);
      emit(ir::OpKind::Transpose, {x}, nhwc, "").attrs.perm = {0, 2, 3, 1};
      x = nhwc;
    }
    if (!orders_agree(target)) {
      const ir::TensorId flat = add_activation(name + ":nhwc_view", target, quant);
      emit(ir::OpKind::Reshape, {x}, flat);
      emit(ir::OpKind::Transpose, {flat}, into).attrs.perm = {0, 3, 1, 2};
      return into;
    }
    emit(ir::OpKind::Reshape, {x}, into);
    return into;
  }

  std::int32_t input(const tfl::Operator& op, std::size_t i) const {
    if (!op.inputs() || op.inputs()->size() <= i) throw Error(fmt::format("input {} is missing", i));
    return op.inputs()->Get(static_cast<flatbuffers::uoffset_t>(i));
  }

  std::int32_t output_index(const tfl::Operator& op) const {
    if (!op.outputs() || op.outputs()->size() != 1)
      throw Error(
          fmt::format("{} outputs; tightfit reads operators of one output", op.outputs() ? op.outputs()->size() : 0));
    return op.outputs()->Get(0);
  }

  template <typename T>
  const T& options(const T* o) const {
    if (!o) throw Error("its builtin options are missing or of another operator");
    return *o;
  }

  std::int32_t builtin_code(const tfl::Operator& op) const {
    const auto* codes = model_.operator_codes();
    if (!codes || op.opcode_index() >= codes->size())
      throw Error(
          fmt::format("{}: an operator names opcode {}, which the model does not have", path_, op.opcode_index()));
    const tfl::OperatorCode& code = *codes->Get(op.opcode_index());
    // Schema 3a: a code above 127 is in builtin_code and deprecated_builtin_code holds 127; older
    // files set deprecated_builtin_code alone.
    return std::max<std::int32_t>(code.deprecated_builtin_code(), static_cast<std::int32_t>(code.builtin_code()));
  }

  std::string operator_name(const tfl::Operator& op) const {
    const std::int32_t code = builtin_code(op);
    if (code == static_cast<std::int32_t>(tfl::BuiltinOperator::CUSTOM)) {
      const auto* custom = model_.operator_codes()->Get(op.opcode_index())->custom_code();
      return fmt::format("CUSTOM '{}'", custom ? custom->str() : "");
    }
    return builtin_name(code);
  }

  // ----- graph edges --------------------------------------------------------------------------

  void add_graph_input(std::int32_t index) {
    const tfl::Tensor& t = tensor(index);
    const Shape shape = shape_of(index);
    if (is_constant(index)) throw Error("holds constant data");
    if (ir_of_.at(static_cast<std::size_t>(index)) != ir::kNoTensor) throw Error("is listed twice");
    ir::TensorId id;
    if (t.type() == tfl::TensorType::FLOAT32) {  // a float interface: a QUANTIZE must read it
      ir::Tensor f;
      f.name = name_of(index);
      f.dtype = ir::DType::Float32;
      f.shape = ir_shape(shape);
      id = add_tensor(std::move(f));
    } else {
      id = add_activation(name_of(index), ir_shape(shape), activation_quant(index));
    }
    ir_of_[static_cast<std::size_t>(index)] = id;
    out_.inputs.push_back(id);
  }

  void add_graph_output(std::int32_t index) {
    tensor(index);
    const ir::TensorId id = ir_of_.at(static_cast<std::size_t>(index));
    if (id == ir::kNoTensor || std::count(out_.inputs.begin(), out_.inputs.end(), id) > 0)
      throw Error("is not computed from the input (a constant, or a graph input passed through)");
    out_.outputs.push_back(id);
  }

  // ----- operators ----------------------------------------------------------------------------

  void translate(const tfl::Operator& op, const std::string& name) {
    op_label_ = name;
    if (op.custom_options() && op.custom_options()->size() > 0 &&
        builtin_code(op) != static_cast<std::int32_t>(tfl::BuiltinOperator::CUSTOM))
      throw Error("custom options on a builtin operator are not supported");
    switch (static_cast<tfl::BuiltinOperator>(builtin_code(op))) {
      case tfl::BuiltinOperator::CONV_2D:
        return conv(op);
      case tfl::BuiltinOperator::DEPTHWISE_CONV_2D:
        return depthwise_conv(op);
      case tfl::BuiltinOperator::FULLY_CONNECTED:
        return fully_connected(op);
      case tfl::BuiltinOperator::AVERAGE_POOL_2D:
        return pool(op, false);
      case tfl::BuiltinOperator::MAX_POOL_2D:
        return pool(op, true);
      case tfl::BuiltinOperator::ADD:
        return binary(op, ir::OpKind::Add, options(op.builtin_options_as_AddOptions()).fused_activation_function());
      case tfl::BuiltinOperator::MUL:
        return binary(op, ir::OpKind::Mul, options(op.builtin_options_as_MulOptions()).fused_activation_function());
      case tfl::BuiltinOperator::RESHAPE:
        return reshape(op);
      case tfl::BuiltinOperator::SOFTMAX:
        return softmax(op);
      case tfl::BuiltinOperator::LOGISTIC:
        return unary(op, ir::OpKind::Sigmoid);
      case tfl::BuiltinOperator::TANH:
        return unary(op, ir::OpKind::Tanh);
      case tfl::BuiltinOperator::HARD_SWISH:
        return unary(op, ir::OpKind::HardSwish);
      case tfl::BuiltinOperator::CONCATENATION:
        return concatenation(op);
      case tfl::BuiltinOperator::PAD:
        return pad(op);
      case tfl::BuiltinOperator::MEAN:
        return mean(op);
      case tfl::BuiltinOperator::QUANTIZE:
        return quantize(op);
      case tfl::BuiltinOperator::DEQUANTIZE:
        return dequantize(op);
      case tfl::BuiltinOperator::RELU:
        return relu(op, Activation::RELU);
      case tfl::BuiltinOperator::RELU6:
        return relu(op, Activation::RELU6);
      case tfl::BuiltinOperator::RELU_N1_TO_1:
        return relu(op, Activation::RELU_N1_TO_1);
      case tfl::BuiltinOperator::STRIDED_SLICE:
        return strided_slice(op);
      case tfl::BuiltinOperator::TRANSPOSE:
        return transpose(op);
      default:
        break;
    }
    if (builtin_code(op) == static_cast<std::int32_t>(tfl::BuiltinOperator::CUSTOM))
      throw Error("custom operators are not supported");
    throw Error(fmt::format("operator not supported by tightfit{} (docs/import.md lists the TFLite operators it reads)",
                            others_unsupported(op)));
  }

  bool supported(std::int32_t code) const {
    using B = tfl::BuiltinOperator;
    for (B b : {B::CONV_2D,
                B::DEPTHWISE_CONV_2D,
                B::FULLY_CONNECTED,
                B::AVERAGE_POOL_2D,
                B::MAX_POOL_2D,
                B::ADD,
                B::MUL,
                B::RESHAPE,
                B::SOFTMAX,
                B::LOGISTIC,
                B::TANH,
                B::HARD_SWISH,
                B::CONCATENATION,
                B::PAD,
                B::MEAN,
                B::QUANTIZE,
                B::DEQUANTIZE,
                B::RELU,
                B::RELU6,
                B::RELU_N1_TO_1,
                B::STRIDED_SLICE,
                B::TRANSPOSE})
      if (code == static_cast<std::int32_t>(b)) return true;
    return false;
  }

  // How many other operators are unsupported: the user should see the size of the gap.
  std::string others_unsupported(const tfl::Operator& op) const {
    int count = 0;
    for (const tfl::Operator* other : *graph_->operators()) count += other != &op && !supported(builtin_code(*other));
    if (count == 0) return "";
    return fmt::format("; {} more unsupported operator{}", count, count == 1 ? "" : "s");
  }

  // Window attributes of a convolution or pool over IR input x [N, C, H, W], TFLite's padding
  // resolved into explicit pads (SAME: the odd pixel after, as ONNX's SAME_UPPER), and the
  // output's spatial size.
  ir::Attrs window(const Shape& x, std::int64_t kh, std::int64_t kw, std::int64_t sh, std::int64_t sw, std::int64_t dh,
                   std::int64_t dw, tfl::Padding padding, Shape& spatial) const {
    for (auto v : {kh, kw, sh, sw, dh, dw})
      if (v < 1 || v > 65536)
        throw Error(fmt::format("a kernel size, stride or dilation of {} is outside [1, 65536]", v));
    if (padding != tfl::Padding::SAME && padding != tfl::Padding::VALID)
      throw Error(fmt::format("padding {} is neither SAME nor VALID", static_cast<int>(padding)));
    Window win{{kh, kw}, {sh, sw}, {dh, dw}, {}, false};
    spatial = window_output(x, win, padding == tfl::Padding::SAME ? "SAME_UPPER" : "VALID");
    ir::Attrs a;
    a.kernel_shape = win.kernel;
    a.strides = win.strides;
    a.dilations = win.dilations;
    a.pads = win.pads;
    return a;
  }

  void conv(const tfl::Operator& op) {
    const auto& o = options(op.builtin_options_as_Conv2DOptions());
    const ir::TensorId x = activation(input(op, 0));
    const Shape xs = out_.tensors[x].shape;
    if (xs.size() != 4) throw Error(fmt::format("input shape {} is not 4-D", shape_text(shape_of(input(op, 0)))));
    const Shape ws = shape_of(input(op, 1));  // [O, kh, kw, I]
    if (ws.size() != 4) throw Error(fmt::format("filter shape {} is not 4-D", shape_text(ws)));
    if (ws[3] < 1 || xs[1] % ws[3] != 0 || ws[0] % (xs[1] / ws[3]) != 0)
      throw Error(fmt::format("filter {} does not fit input {}", shape_text(ws), shape_text(shape_of(input(op, 0)))));
    const ir::TensorId w = constant(input(op, 1), tfl::TensorType::INT8, {0, 3, 1, 2}, "filter");
    weight_axis_zero(w);
    Shape spatial;
    ir::Attrs attrs = window(xs, ws[1], ws[2], o.stride_h(), o.stride_w(), o.dilation_h_factor(), o.dilation_w_factor(),
                             o.padding(), spatial);
    attrs.group = xs[1] / ws[3];
    finish_conv(op, x, w, attrs, {xs[0], ws[0], spatial[0], spatial[1]}, o.fused_activation_function());
  }

  void depthwise_conv(const tfl::Operator& op) {
    const auto& o = options(op.builtin_options_as_DepthwiseConv2DOptions());
    const ir::TensorId x = activation(input(op, 0));
    const Shape xs = out_.tensors[x].shape;
    if (xs.size() != 4) throw Error(fmt::format("input shape {} is not 4-D", shape_text(shape_of(input(op, 0)))));
    const Shape ws = shape_of(input(op, 1));  // [1, kh, kw, C * multiplier]
    if (ws.size() != 4 || ws[0] != 1 || ws[3] % xs[1] != 0)
      throw Error(fmt::format("filter {} does not fit input {}", shape_text(ws), shape_text(shape_of(input(op, 0)))));
    const ir::TensorId w = constant(input(op, 1), tfl::TensorType::INT8, {3, 0, 1, 2}, "filter");  // [C*m, 1, kh, kw]
    weight_axis_zero(w);
    Shape spatial;
    ir::Attrs attrs = window(xs, ws[1], ws[2], o.stride_h(), o.stride_w(), o.dilation_h_factor(), o.dilation_w_factor(),
                             o.padding(), spatial);
    attrs.group = xs[1];
    finish_conv(op, x, w, attrs, {xs[0], ws[3], spatial[0], spatial[1]}, o.fused_activation_function());
  }

  void weight_axis_zero(ir::TensorId w) const {
    const ir::Quant& q = out_.tensors[w].quant;
    if (q.per_channel() && q.axis != 0)
      throw Error(fmt::format("filter '{}' is quantized per channel along another axis than its output channels",
                              out_.tensors[w].name));
  }

  void finish_conv(const tfl::Operator& op, ir::TensorId x, ir::TensorId w, const ir::Attrs& attrs, const Shape& y,
                   Activation act) {
    std::vector<ir::TensorId> inputs = {x, w};
    if (op.inputs()->size() > 2 && input(op, 2) >= 0)
      inputs.push_back(bias(input(op, 2), out_.tensors[x].quant, out_.tensors[w].quant, y[1]));
    const std::int32_t out_index = output_index(op);
    expect_shape(out_index, y);
    const ir::TensorId out = output(out_index);
    ir::Node& n = emit(ir::OpKind::Conv, inputs, out);
    const std::int32_t act_min = n.attrs.act_min, act_max = n.attrs.act_max;
    n.attrs = attrs;
    n.attrs.act_min = act_min, n.attrs.act_max = act_max;
    fuse(n, act);
  }

  void fully_connected(const tfl::Operator& op) {
    const auto& o = options(op.builtin_options_as_FullyConnectedOptions());
    if (o.weights_format() != tfl::FullyConnectedOptionsWeightsFormat::DEFAULT)
      throw Error("shuffled weights (weights_format SHUFFLED4x16INT8) are not supported");
    const std::int32_t x_index = input(op, 0);
    ir::TensorId x = activation(x_index);
    const Shape x_tflite = shape_of(x_index);
    const Shape ws = shape_of(input(op, 1));  // [M, K]
    if (ws.size() != 2) throw Error(fmt::format("weights shape {} is not 2-D", shape_text(ws)));
    const std::int64_t k = ws[1], count = out_.tensors[x].elements();
    if (count % k != 0) throw Error(fmt::format("input {} does not flatten into rows of {}", shape_text(x_tflite), k));
    ir::TensorId w = constant(input(op, 1), tfl::TensorType::INT8, {}, "weights");
    weight_axis_zero(w);
    const std::string name = name_of(output_index(op));
    const Shape rows = {count / k, k};
    if (out_.tensors[x].shape != rows) {
      // TFLite flattens in NHWC order. An image whose two orders differ is flattened in the IR's
      // NCHW order instead and the weight columns permuted to match, which the channels-last stage
      // undoes (the flatten then costs nothing).
      if (!orders_agree(x_tflite)) {
        if (count != k) throw Error(fmt::format("a batch of {} images is not supported", count / k));
        const Shape nhwc = {x_tflite[1], x_tflite[2], x_tflite[3]};
        ir::Tensor& wt = out_.tensors[w];
        wt.data = transpose_elements(wt.data.data(), {ws[0], nhwc[0], nhwc[1], nhwc[2]}, {0, 3, 1, 2}, 1);
      }
      const ir::TensorId flat = add_activation(name + ":rows", rows, out_.tensors[x].quant);
      emit(ir::OpKind::Reshape, {x}, flat);
      x = flat;
    }
    std::vector<ir::TensorId> inputs = {x, w};
    if (op.inputs()->size() > 2 && input(op, 2) >= 0)
      inputs.push_back(bias(input(op, 2), out_.tensors[x].quant, out_.tensors[w].quant, ws[0]));
    const std::int32_t out_index = output_index(op);
    const Shape y = {rows[0], ws[0]};
    if (checked_elements(shape_of(out_index), name) != rows[0] * ws[0])
      throw Error(fmt::format("output '{}' has shape {}; the operator computes {}", name,
                              shape_text(shape_of(out_index)), shape_text(y)));
    if (ir_shape(shape_of(out_index)) == y) {
      fuse(emit(ir::OpKind::FullyConnected, inputs, output(out_index)), o.fused_activation_function());
      return;
    }
    // keep_num_dims: the rows under the output's own shape.
    const ir::TensorId out = output(out_index);
    const ir::TensorId rows_out = add_activation(name + ":rows_out", y, out_.tensors[out].quant);
    fuse(emit(ir::OpKind::FullyConnected, inputs, rows_out), o.fused_activation_function());
    view_as(rows_out, y, shape_of(out_index), name, out);
  }

  void pool(const tfl::Operator& op, bool max) {
    const auto& o = options(op.builtin_options_as_Pool2DOptions());
    const ir::TensorId x = activation(input(op, 0));
    const Shape xs = out_.tensors[x].shape;
    if (xs.size() != 4) throw Error(fmt::format("input shape {} is not 4-D", shape_text(shape_of(input(op, 0)))));
    Shape spatial;
    const ir::Attrs attrs =
        window(xs, o.filter_height(), o.filter_width(), o.stride_h(), o.stride_w(), 1, 1, o.padding(), spatial);
    const std::int32_t out_index = output_index(op);
    expect_shape(out_index, {xs[0], xs[1], spatial[0], spatial[1]});
    const ir::TensorId out = output(out_index);
    if (max) {
      if (!same_quant(out, x)) throw Error("MAX_POOL_2D's output is quantized unlike its input");
      if (o.fused_activation_function() != Activation::NONE)
        throw Error("a fused activation on MAX_POOL_2D is not supported");
      emit(ir::OpKind::MaxPool, {x}, out).attrs = attrs;
      return;
    }
    // A window over the whole image with one output pixel is the mean of each channel: the
    // GlobalAveragePool kernel (as ONNX models spell it).
    const bool global = attrs.kernel_shape == Shape{xs[2], xs[3]} && spatial == Shape{1, 1};
    ir::Node& n = emit(global ? ir::OpKind::GlobalAveragePool : ir::OpKind::AveragePool, {x}, out);
    if (!global) n.attrs = attrs;  // TFLite divides by the pixels inside the image: count_include_pad false
    fuse(n, o.fused_activation_function());
  }

  bool same_quant(ir::TensorId a, ir::TensorId b) const {
    const ir::Quant &qa = out_.tensors[a].quant, &qb = out_.tensors[b].quant;
    return qa.scale == qb.scale && qa.zero_point == qb.zero_point;
  }

  // An operand of ADD or MUL: an activation, or an int8 constant quantized per tensor, laid out
  // like a 4-D activation when the other operand is one (TFLite broadcasts in NHWC order).
  ir::TensorId operand(std::int32_t index, std::size_t other_rank) {
    if (!is_constant(index)) return activation(index);
    const Shape shape = shape_of(index);
    ir::TensorId c;
    if (other_rank == 4 && shape.size() <= 4) {
      c = constant(index, tfl::TensorType::INT8, {}, "operand");
      ir::Tensor& t = out_.tensors[c];
      Shape nhwc = shape;
      while (nhwc.size() < 4) nhwc.insert(nhwc.begin(), 1);
      t.data = transpose_elements(t.data.data(), nhwc, {0, 3, 1, 2}, 1);
      t.shape = ir_shape(nhwc);
    } else {
      c = constant(index, tfl::TensorType::INT8, {}, "operand");
    }
    if (out_.tensors[c].quant.per_channel())
      throw Error(fmt::format("constant '{}' is quantized per channel; operands must be per tensor", name_of(index)));
    return c;
  }

  void binary(const tfl::Operator& op, ir::OpKind kind, Activation act) {
    const std::int32_t ai = input(op, 0), bi = input(op, 1);
    const Shape as = shape_of(ai), bs = shape_of(bi);
    if (is_constant(ai) && is_constant(bi)) throw Error("both operands are constants");
    if (!is_constant(ai) && !is_constant(bi) && as.size() != bs.size() && (as.size() == 4 || bs.size() == 4))
      throw Error(fmt::format("broadcasting {} against {} is not supported", shape_text(as), shape_text(bs)));
    const ir::TensorId a = operand(ai, bs.size()), b = operand(bi, as.size());
    const Shape y = broadcast(out_.tensors[a].shape, out_.tensors[b].shape);
    const std::int32_t out_index = output_index(op);
    expect_shape(out_index, y);
    fuse(emit(kind, {a, b}, output(out_index)), act);
  }

  void reshape(const tfl::Operator& op) {
    const std::int32_t x_index = input(op, 0);
    const ir::TensorId x = activation(x_index);
    const std::int32_t out_index = output_index(op);
    const Shape target = shape_of(out_index);
    if (checked_elements(target, name_of(out_index)) != out_.tensors[x].elements())
      throw Error(fmt::format("output shape {} does not hold the input's {} elements", shape_text(target),
                              out_.tensors[x].elements()));
    const ir::TensorId out = output(out_index);
    if (!same_quant(out, x)) throw Error("RESHAPE's output is quantized unlike its input");
    view_as(x, shape_of(x_index), target, name_of(out_index), out);
  }

  void softmax(const tfl::Operator& op) {
    const auto& o = options(op.builtin_options_as_SoftmaxOptions());
    if (o.beta() != 1.0f) throw Error(fmt::format("beta {} is not supported (1 only)", o.beta()));
    const ir::TensorId x = activation(input(op, 0));
    const std::int32_t out_index = output_index(op);
    expect_shape(out_index, out_.tensors[x].shape);
    ir::Node& n = emit(ir::OpKind::Softmax, {x}, output(out_index));
    const std::size_t rank = out_.tensors[x].shape.size();
    n.attrs.axis = rank == 4 ? 1 : static_cast<std::int64_t>(rank) - 1;  // TFLite's last axis: the channels
    // Under --numerics ort: the integer rounding and saturation of ONNX Runtime's QLinearSoftmax,
    // the operator ONNX conversions of TFLite models use (TFLite's own rule is the default).
    n.attrs.softmax_integer_rule = true;
  }

  void unary(const tfl::Operator& op, ir::OpKind kind) {
    const ir::TensorId x = activation(input(op, 0));
    const std::int32_t out_index = output_index(op);
    expect_shape(out_index, out_.tensors[x].shape);
    emit(kind, {x}, output(out_index));
  }

  // A standalone RELU, RELU6 or RELU_N1_TO_1: a clamp, after a requantization when the output's
  // quantization differs from the input's.
  void relu(const tfl::Operator& op, Activation act) {
    const ir::TensorId x = activation(input(op, 0));
    const std::int32_t out_index = output_index(op);
    expect_shape(out_index, out_.tensors[x].shape);
    const ir::TensorId out = output(out_index);
    fuse(emit(same_quant(out, x) ? ir::OpKind::Clamp : ir::OpKind::Requantize, {x}, out), act);
  }

  void concatenation(const tfl::Operator& op) {
    const auto& o = options(op.builtin_options_as_ConcatenationOptions());
    if (o.fused_activation_function() != Activation::NONE)
      throw Error("a fused activation on CONCATENATION is not supported");
    std::vector<ir::TensorId> inputs;
    std::vector<Shape> shapes;
    for (std::size_t i = 0; i < op.inputs()->size(); ++i) {
      inputs.push_back(activation(input(op, i)));
      shapes.push_back(out_.tensors[inputs.back()].shape);
    }
    if (inputs.empty()) throw Error("no inputs");
    const std::size_t rank = shapes[0].size();
    std::int64_t axis = normalize_axis(o.axis(), rank);
    if (rank == 4) axis = kIrAxisOfTflite[static_cast<std::size_t>(axis)];
    const Shape y = import::concat(shapes, axis);
    const std::int32_t out_index = output_index(op);
    expect_shape(out_index, y);
    emit(ir::OpKind::Concat, inputs, output(out_index)).attrs.axis = axis;
  }

  // TFLite axis `axis` of a tensor of `rank` as the IR axis.
  static std::int64_t ir_axis(std::int64_t axis, std::size_t rank) {
    return rank == 4 ? kIrAxisOfTflite[static_cast<std::size_t>(axis)] : axis;
  }

  void pad(const tfl::Operator& op) {
    const std::int32_t x_index = input(op, 0);
    const ir::TensorId x = activation(x_index);
    const std::size_t rank = shape_of(x_index).size();
    const std::vector<std::int64_t> paddings = int_constant(input(op, 1));  // [rank, 2]: before, after
    if (paddings.size() != 2 * rank)
      throw Error(fmt::format("{} paddings for a tensor of rank {}", paddings.size(), rank));
    std::vector<std::int64_t> pads(2 * rank);
    for (std::size_t axis = 0; axis < rank; ++axis) {
      const auto i = static_cast<std::size_t>(ir_axis(static_cast<std::int64_t>(axis), rank));
      for (std::size_t side = 0; side < 2; ++side) {
        const std::int64_t p = paddings[2 * axis + side];
        if (p < 0 || p > 65536) throw Error(fmt::format("padding {} is outside [0, 65536]", p));
        pads[side * rank + i] = p;
      }
    }
    const std::int32_t out_index = output_index(op);
    expect_shape(out_index, import::pad(out_.tensors[x].shape, pads));
    const ir::TensorId out = output(out_index);
    if (!same_quant(out, x)) throw Error("PAD's output is quantized unlike its input");
    emit(ir::OpKind::Pad, {x}, out).attrs.pads = pads;
  }

  void mean(const tfl::Operator& op) {
    const auto& o = options(op.builtin_options_as_ReducerOptions());
    const std::int32_t x_index = input(op, 0);
    const ir::TensorId x = activation(x_index);
    const Shape xs = out_.tensors[x].shape;
    std::vector<std::int64_t> axes;
    for (std::int64_t a : int_constant(input(op, 1))) axes.push_back(ir_axis(normalize_axis(a, xs.size()), xs.size()));
    std::sort(axes.begin(), axes.end());
    axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
    Shape y;
    for (std::size_t d = 0; d < xs.size(); ++d) {
      const bool reduced = std::count(axes.begin(), axes.end(), static_cast<std::int64_t>(d)) > 0;
      if (!reduced || o.keep_dims()) y.push_back(reduced ? 1 : xs[d]);
    }
    const std::int32_t out_index = output_index(op);
    expect_shape(out_index, y);
    const ir::TensorId out = output(out_index);
    // Over any axes, H and W too: TFLite's MEAN rounds otherwise than its AVERAGE_POOL_2D
    // (tflite_kernels.hpp, reduce_mean_tflite), so it is no GlobalAveragePool.
    emit(ir::OpKind::ReduceMean, {x}, out).attrs.axes = axes;
  }

  // QUANTIZE of a float32 graph input (a float interface) or a requantization of an int8 tensor.
  void quantize(const tfl::Operator& op) {
    const std::int32_t x_index = input(op, 0);
    tensor(x_index);
    const ir::TensorId known = ir_of_[static_cast<std::size_t>(x_index)];
    const bool float_input = known != ir::kNoTensor && out_.tensors[known].dtype == ir::DType::Float32;
    const ir::TensorId x = float_input ? known : activation(x_index);
    const std::int32_t out_index = output_index(op);
    expect_shape(out_index, out_.tensors[x].shape);
    emit(float_input ? ir::OpKind::Quantize : ir::OpKind::Requantize, {x}, output(out_index));
  }

  // DEQUANTIZE of an int8 activation into a float32 graph output (a float interface).
  void dequantize(const tfl::Operator& op) {
    const ir::TensorId x = activation(input(op, 0));
    const std::int32_t out_index = output_index(op);
    const tfl::Tensor& y = tensor(out_index);
    if (y.type() != tfl::TensorType::FLOAT32)
      throw Error(fmt::format("output '{}' is {}, not float32", name_of(out_index), lower(type_name(y.type()))));
    const auto* outputs = graph_->outputs();
    if (std::find(outputs->begin(), outputs->end(), out_index) == outputs->end())
      throw Error(fmt::format("output '{}' is read by operators in float; tightfit dequantizes graph outputs only",
                              name_of(out_index)));
    expect_shape(out_index, out_.tensors[x].shape);
    if (ir_of_.at(static_cast<std::size_t>(out_index)) != ir::kNoTensor) throw Error("output is written twice");
    ir::Tensor f;
    f.name = name_of(out_index);
    f.dtype = ir::DType::Float32;
    f.shape = out_.tensors[x].shape;
    const ir::TensorId out = add_tensor(std::move(f));
    ir_of_[static_cast<std::size_t>(out_index)] = out;
    emit(ir::OpKind::Dequantize, {x}, out);
  }

  void strided_slice(const tfl::Operator& op) {
    const auto& o = options(op.builtin_options_as_StridedSliceOptions());
    if (o.ellipsis_mask() != 0 || o.new_axis_mask() != 0 || o.offset())
      throw Error("ellipsis_mask, new_axis_mask and offset are not supported");
    const std::int32_t x_index = input(op, 0);
    const ir::TensorId x = activation(x_index);
    const Shape xs = shape_of(x_index);
    const std::vector<std::int64_t> begin = int_constant(input(op, 1)), end = int_constant(input(op, 2)),
                                    strides = int_constant(input(op, 3));
    if (begin.size() != xs.size() || end.size() != xs.size() || strides.size() != xs.size())
      throw Error(fmt::format("begin, end and strides must have {} values each", xs.size()));
    Shape starts(xs.size()), box(xs.size()), kept;
    for (std::size_t d = 0; d < xs.size(); ++d) {
      if (strides[d] != 1) throw Error(fmt::format("stride {} is not supported (1 only)", strides[d]));
      auto at = [&](std::int64_t v) { return std::clamp<std::int64_t>(v < 0 ? v + xs[d] : v, 0, xs[d]); };
      const bool shrink = (o.shrink_axis_mask() >> d) & 1;
      const std::int64_t b = (o.begin_mask() >> d) & 1 ? 0 : at(begin[d]);
      const std::int64_t e = shrink ? b + 1 : (o.end_mask() >> d) & 1 ? xs[d] : at(end[d]);
      if (e <= b || e > xs[d]) throw Error(fmt::format("dimension {} is sliced to nothing", d));
      starts[d] = b;
      box[d] = e - b;
      if (!shrink) kept.push_back(box[d]);
    }
    const std::int32_t out_index = output_index(op);
    if (shape_of(out_index) != kept)
      throw Error(fmt::format("output '{}' has shape {}; the operator computes {}", name_of(out_index),
                              shape_text(shape_of(out_index)), shape_text(kept)));
    const ir::TensorId out = output(out_index);
    if (!same_quant(out, x)) throw Error("STRIDED_SLICE's output is quantized unlike its input");
    Shape ir_starts = starts;
    if (xs.size() == 4)
      for (std::size_t i = 0; i < 4; ++i) ir_starts[i] = starts[static_cast<std::size_t>(kTfliteAxisOfIr[i])];
    if (box == kept) {
      emit(ir::OpKind::Slice, {x}, out).attrs.starts = ir_starts;
      return;
    }
    const ir::TensorId sliced = add_activation(name_of(out_index) + ":box", ir_shape(box), out_.tensors[out].quant);
    emit(ir::OpKind::Slice, {x}, sliced).attrs.starts = ir_starts;
    view_as(sliced, box, kept, name_of(out_index), out);
  }

  void transpose(const tfl::Operator& op) {
    const std::int32_t x_index = input(op, 0);
    const ir::TensorId x = activation(x_index);
    const std::size_t rank = shape_of(x_index).size();
    const std::vector<std::int64_t> perm = int_constant(input(op, 1));
    std::vector<std::int64_t> sorted = perm;
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t i = 0; i < sorted.size(); ++i)
      if (sorted.size() != rank || sorted[i] != static_cast<std::int64_t>(i))
        throw Error(fmt::format("perm is not a permutation of {} axes", rank));
    // Output IR axis j is output TFLite axis to[j], which is input TFLite axis perm[to[j]], which
    // is input IR axis from[perm[to[j]]].
    auto tflite_axis = [&](std::size_t j) { return rank == 4 ? kTfliteAxisOfIr[j] : static_cast<std::int64_t>(j); };
    std::vector<std::int64_t> ir_perm(rank);
    for (std::size_t j = 0; j < rank; ++j) ir_perm[j] = ir_axis(perm[static_cast<std::size_t>(tflite_axis(j))], rank);
    const Shape y = import::transpose(out_.tensors[x].shape, ir_perm);
    const std::int32_t out_index = output_index(op);
    expect_shape(out_index, y);
    const ir::TensorId out = output(out_index);
    if (!same_quant(out, x)) throw Error("TRANSPOSE's output is quantized unlike its input");
    emit(ir::OpKind::Transpose, {x}, out).attrs.perm = ir_perm;
  }

  std::string path_;
  const tfl::Model& model_;
  const tfl::SubGraph* graph_ = nullptr;
  ir::Graph out_;
  std::vector<ir::TensorId> ir_of_;  // per TFLite tensor: its IR tensor once made
  std::set<std::string> node_names_;
  std::string op_label_;  // the operator being translated, as nodes record it
};

}  // namespace

bool is_tflite_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char head[8] = {};
  if (in.read(head, sizeof head) && std::memcmp(head + 4, tfl::ModelIdentifier(), 4) == 0) return true;
  return fs::path(path).extension() == ".tflite";
}

ir::Graph import_tflite(const std::string& path) {
  const std::string bytes = read_bytes(path);
  const auto* data = reinterpret_cast<const std::uint8_t*>(bytes.data());
  if (bytes.size() < 8 || !flatbuffers::BufferHasIdentifier(data, tfl::ModelIdentifier()))
    throw Error(path + ": not a TFLite model (no \"TFL3\" file identifier)");
  flatbuffers::Verifier verifier(data, bytes.size(), kMaxVerifierDepth, kMaxVerifierTables);
  if (!tfl::VerifyModelBuffer(verifier))
    throw Error(path + ": the TFLite flatbuffer is truncated or corrupt (flatbuffers' Verifier refuses it)");
  return Importer(path, *tfl::GetModel(data)).run();
}

}  // namespace tightfit::import
