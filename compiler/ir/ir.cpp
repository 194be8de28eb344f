#include "ir/ir.hpp"

#include <limits>

namespace tightfit::ir {

DTypeRange dtype_range(DType t) {
  switch (t) {
    case DType::Int8:
      return {-128, 127};
    case DType::UInt8:
      return {0, 255};
    default:
      return {std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max()};
  }
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::Int8:
      return "int8";
    case DType::UInt8:
      return "uint8";
    case DType::Int32:
      return "int32";
    case DType::Float32:
      return "float32";
    case DType::Bool:
      return "bool";
  }
  return "?";
}

std::size_t dtype_size(DType t) {
  switch (t) {
    case DType::Int8:
    case DType::UInt8:
    case DType::Bool:
      return 1;
    case DType::Int32:
    case DType::Float32:
      return 4;
  }
  return 1;
}

const char* op_name(OpKind k) {
  switch (k) {
#define TIGHTFIT_OP(name) \
  case OpKind::name:      \
    return #name;
#include "ir/ops.def"
#undef TIGHTFIT_OP
  }
  return "?";
}

std::int64_t Tensor::elements() const {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  return n;
}

std::vector<std::int64_t> Tensor::onnx_shape() const {
  if (layout != Layout::ChannelsLast) return shape;
  return {shape[0], shape[3], shape[1], shape[2]};
}

bool Graph::has_if() const {
  for (const Node& n : nodes)
    if (n.guard.guarded()) return true;
  return false;
}

std::int64_t Graph::weight_bytes(const Node& n) const {
  std::int64_t bytes = 0;
  for (TensorId id : n.inputs)
    if (id != kNoTensor && tensors[id].is_constant) bytes += tensors[id].bytes();
  return bytes;
}

}  // namespace tightfit::ir
