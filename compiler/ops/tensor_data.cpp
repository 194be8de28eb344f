#include "ops/tensor_data.hpp"

#include <fmt/core.h>

#include <cstring>

#include "error.hpp"

namespace tightfit::import {

using onnx::TensorProto;

std::optional<ir::DType> to_dtype(int t) {
  switch (t) {
    case TensorProto::INT8:
      return ir::DType::Int8;
    case TensorProto::UINT8:
      return ir::DType::UInt8;
    case TensorProto::INT32:
      return ir::DType::Int32;
    case TensorProto::FLOAT:
      return ir::DType::Float32;
    default:
      return std::nullopt;
  }
}

int onnx_elem_type(ir::DType dtype) {
  switch (dtype) {
    case ir::DType::Int8:
      return TensorProto::INT8;
    case ir::DType::UInt8:
      return TensorProto::UINT8;
    case ir::DType::Int32:
      return TensorProto::INT32;
    case ir::DType::Float32:
      return TensorProto::FLOAT;
    case ir::DType::Bool:
      return TensorProto::BOOL;
  }
  return TensorProto::UNDEFINED;
}

std::string onnx_type_name(int t) {
  if (!TensorProto::DataType_IsValid(t)) return fmt::format("element type {}", t);
  std::string name = TensorProto::DataType_Name(static_cast<TensorProto::DataType>(t));
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

std::int64_t checked_elements(const std::vector<std::int64_t>& dims, const std::string& name) {
  std::int64_t n = 1;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] <= 0)
      throw Error(fmt::format("tensor '{}': dimension {} is {} (must be at least 1)", name, i, dims[i]));
    if (dims[i] > kMaxElements || n > kMaxElements / dims[i])
      throw Error(fmt::format("tensor '{}': more than {} elements (the supported maximum)", name, kMaxElements));
    n *= dims[i];
  }
  return n;
}

std::vector<std::int64_t> tensor_dims(const TensorProto& t) {
  return std::vector<std::int64_t>(t.dims().begin(), t.dims().end());
}

namespace {

// Bytes per element of the raw_data encoding of the types we read.
std::size_t raw_size(int type) {
  switch (type) {
    case TensorProto::INT8:
    case TensorProto::UINT8:
      return 1;
    case TensorProto::INT32:
    case TensorProto::FLOAT:
      return 4;
    case TensorProto::INT64:
      return 8;
    default:
      return 0;
  }
}

// The element count, checked against the data actually present.
std::size_t checked_count(const TensorProto& t, std::size_t present) {
  const auto n = static_cast<std::size_t>(checked_elements(tensor_dims(t), t.name()));
  if (present != n)
    throw Error(fmt::format("tensor '{}': holds {} elements but its shape needs {}", t.name(), present, n));
  return n;
}

}  // namespace

std::vector<std::int64_t> tensor_ints(const TensorProto& t) {
  const int type = t.data_type();
  const std::size_t size = raw_size(type);
  if (size == 0 || type == TensorProto::FLOAT)
    throw Error(fmt::format("tensor '{}': expected integer data, found {}", t.name(), onnx_type_name(type)));
  std::vector<std::int64_t> values;
  if (t.has_raw_data()) {
    const std::string& raw = t.raw_data();
    if (raw.size() % size != 0)
      throw Error(fmt::format("tensor '{}': raw data of {} bytes is not a whole number of {}", t.name(), raw.size(),
                              onnx_type_name(type)));
    const std::size_t n = checked_count(t, raw.size() / size);
    values.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      const char* p = raw.data() + i * size;
      switch (type) {
        case TensorProto::INT8:
          values[i] = static_cast<std::int8_t>(*p);
          break;
        case TensorProto::UINT8:
          values[i] = static_cast<std::uint8_t>(*p);
          break;
        case TensorProto::INT32: {
          std::int32_t v;
          std::memcpy(&v, p, 4);
          values[i] = v;
          break;
        }
        default: {
          std::int64_t v;
          std::memcpy(&v, p, 8);
          values[i] = v;
          break;
        }
      }
    }
    return values;
  }
  if (type == TensorProto::INT64) {
    checked_count(t, static_cast<std::size_t>(t.int64_data_size()));
    return std::vector<std::int64_t>(t.int64_data().begin(), t.int64_data().end());
  }
  // int8, uint8 and int32 are stored one per int32_data entry, where a value can lie outside
  // the element type: that is a malformed tensor, not something to wrap around.
  checked_count(t, static_cast<std::size_t>(t.int32_data_size()));
  const std::int64_t lo = type == TensorProto::INT8 ? -128 : type == TensorProto::UINT8 ? 0 : INT32_MIN;
  const std::int64_t hi = type == TensorProto::INT8 ? 127 : type == TensorProto::UINT8 ? 255 : INT32_MAX;
  for (std::int32_t v : t.int32_data()) {
    if (v < lo || v > hi)
      throw Error(fmt::format("tensor '{}': value {} is outside {}", t.name(), v, onnx_type_name(type)));
    values.push_back(v);
  }
  return values;
}

std::vector<float> tensor_floats(const TensorProto& t) {
  if (t.data_type() != TensorProto::FLOAT)
    throw Error(fmt::format("tensor '{}': expected float32 data, found {}", t.name(), onnx_type_name(t.data_type())));
  if (t.has_raw_data()) {
    const std::string& raw = t.raw_data();
    if (raw.size() % 4 != 0)
      throw Error(
          fmt::format("tensor '{}': raw data of {} bytes is not a whole number of floats", t.name(), raw.size()));
    std::vector<float> values(checked_count(t, raw.size() / 4));
    std::memcpy(values.data(), raw.data(), values.size() * 4);
    return values;
  }
  checked_count(t, static_cast<std::size_t>(t.float_data_size()));
  return std::vector<float>(t.float_data().begin(), t.float_data().end());
}

}  // namespace tightfit::import
