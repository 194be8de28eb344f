// Output shapes of the operators tightfit carries, computed from static input shapes.
// Each function throws tightfit::Error with a bare reason (the translator names file and node).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tightfit::import {

using Shape = std::vector<std::int64_t>;

std::string shape_text(const Shape& s);  // "[1, 3, 32, 32]"

// A 2-D sliding window (Conv and the pools) over an NCHW input: fills in the defaults
// (strides and dilations 1, pads 0), resolves auto_pad into explicit pads and returns the
// output's spatial size [oh, ow].
struct Window {
  Shape kernel;     // [kh, kw]
  Shape strides;    // [sh, sw]
  Shape dilations;  // [dh, dw]
  Shape pads;       // [top, left, bottom, right]
  bool ceil_mode = false;
};
Shape window_output(const Shape& input, Window& w, const std::string& auto_pad);

Shape broadcast(const Shape& a, const Shape& b);
// ONNX Reshape: 0 copies the input's dimension (unless allowzero), one -1 is inferred.
Shape reshape(const Shape& input, const std::vector<std::int64_t>& target, bool allowzero);
Shape flatten(const Shape& input, std::int64_t axis);
Shape squeeze(const Shape& input, std::vector<std::int64_t> axes);  // empty axes: all 1s
Shape unsqueeze(const Shape& input, std::vector<std::int64_t> axes);
Shape transpose(const Shape& input, const std::vector<std::int64_t>& perm);
Shape concat(const std::vector<Shape>& inputs, std::int64_t axis);
Shape pad(const Shape& input, const std::vector<std::int64_t>& pads);

// An axis in [-rank, rank) made non-negative.
std::int64_t normalize_axis(std::int64_t axis, std::size_t rank);

}  // namespace tightfit::import
