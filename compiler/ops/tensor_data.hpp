// Reading ONNX tensors (initializers and Constant nodes) as numbers, and ONNX element types as
// IR dtypes. Every function that can fail names the tensor: "tensor '<name>': <reason>".
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/ir.hpp"

namespace tightfit::import {

// Tensors above this many elements are refused (a model for a microcontroller is far smaller;
// the limit keeps every byte count inside 64 bits and the host's memory).
constexpr std::int64_t kMaxElements = std::int64_t{1} << 31;

// The IR dtype of an ONNX element type, or nothing for types tightfit does not carry.
std::optional<ir::DType> to_dtype(int onnx_elem_type);
// The ONNX element type of an IR dtype (to_dtype's inverse).
int onnx_elem_type(ir::DType dtype);
// "float16", "int64", ... for messages.
std::string onnx_type_name(int onnx_elem_type);

// Validated dims: each at least 1 (a scalar has none) and the element count within kMaxElements.
// Throws a bare reason (the caller adds the file and tensor).
std::int64_t checked_elements(const std::vector<std::int64_t>& dims, const std::string& tensor_name);

// The elements of a constant tensor. Throws tightfit::Error without the file prefix, so the
// caller can prefix it: use through Importer::constant_* helpers.
std::vector<std::int64_t> tensor_ints(const onnx::TensorProto& t);  // int8/uint8/int32/int64
std::vector<float> tensor_floats(const onnx::TensorProto& t);       // float32 only
std::vector<std::int64_t> tensor_dims(const onnx::TensorProto& t);

}  // namespace tightfit::import
