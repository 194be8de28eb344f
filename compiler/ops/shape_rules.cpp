#include "ops/shape_rules.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "error.hpp"

namespace tightfit::import {

std::string shape_text(const Shape& s) { return fmt::format("[{}]", fmt::join(s, ", ")); }

std::int64_t normalize_axis(std::int64_t axis, std::size_t rank) {
  const auto r = static_cast<std::int64_t>(rank);
  if (axis < -r || axis >= r) throw Error(fmt::format("axis {} is out of range for rank {}", axis, r));
  return axis < 0 ? axis + r : axis;
}

Shape window_output(const Shape& input, Window& w, const std::string& auto_pad) {
  if (input.size() != 4)
    throw Error(
        fmt::format("input shape {} is not 4-D (N, C, H, W); only 2-D windows are supported", shape_text(input)));
  if (w.kernel.size() != 2) throw Error(fmt::format("kernel shape {} is not 2-D", shape_text(w.kernel)));
  if (w.strides.empty()) w.strides = {1, 1};
  if (w.dilations.empty()) w.dilations = {1, 1};
  if (w.pads.empty()) w.pads = {0, 0, 0, 0};
  if (w.strides.size() != 2 || w.dilations.size() != 2 || w.pads.size() != 4)
    throw Error("strides, dilations and pads must have 2, 2 and 4 values");
  for (int i = 0; i < 2; ++i) {
    if (w.kernel[i] < 1 || w.strides[i] < 1 || w.dilations[i] < 1)
      throw Error("kernel sizes, strides and dilations must be at least 1");
    if (w.pads[i] < 0 || w.pads[i + 2] < 0) throw Error("negative pads are not supported");
    if (w.kernel[i] > 65536 || w.strides[i] > 65536 || w.dilations[i] > 65536 || w.pads[i] > 65536 ||
        w.pads[i + 2] > 65536)
      throw Error("kernel, stride, dilation or pad above 65536");
  }
  Shape out(2);
  for (int i = 0; i < 2; ++i) {
    const std::int64_t in = input[2 + i];
    const std::int64_t extent = (w.kernel[i] - 1) * w.dilations[i] + 1;  // the dilated kernel
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      out[i] = (in + w.strides[i] - 1) / w.strides[i];
      // A stride above the window can leave rows past the last window (a negative padding). From
      // two rows on, ONNX Runtime splits that negative padding too, and so skips rows at the start
      // where others (and a padding clamped at 0) read from row 0: ambiguous, so refused.
      const std::int64_t needed = (out[i] - 1) * w.strides[i] + extent - in;
      if (needed < -1)
        throw Error(
            fmt::format("auto_pad {} with stride {} over a window of {} leaves {} input {} unread, which "
                        "runtimes place differently: give explicit pads",
                        auto_pad, w.strides[i], extent, -needed, i == 0 ? "rows" : "columns"));
      const std::int64_t total = std::max<std::int64_t>(0, needed);
      const std::int64_t small = total / 2, large = total - small;
      w.pads[i] = auto_pad == "SAME_UPPER" ? small : large;
      w.pads[i + 2] = auto_pad == "SAME_UPPER" ? large : small;
      continue;
    }
    if (auto_pad == "VALID")
      w.pads[i] = w.pads[i + 2] = 0;
    else if (!auto_pad.empty() && auto_pad != "NOTSET")
      throw Error(fmt::format("auto_pad '{}' is not supported", auto_pad));
    const std::int64_t span = in + w.pads[i] + w.pads[i + 2] - extent;
    if (span < 0)
      throw Error(fmt::format("the window ({} with dilation) is larger than the padded input ({})", extent,
                              in + w.pads[i] + w.pads[i + 2]));
    out[i] = (w.ceil_mode ? (span + w.strides[i] - 1) / w.strides[i] : span / w.strides[i]) + 1;
    // With ceil_mode the last window must still start inside the input or left pad (ONNX rule).
    if (w.ceil_mode && (out[i] - 1) * w.strides[i] >= in + w.pads[i]) --out[i];
  }
  return out;
}

Shape broadcast(const Shape& a, const Shape& b) {
  const std::size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (std::size_t i = 0; i < rank; ++i) {
    const std::int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const std::int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      throw Error(fmt::format("shapes {} and {} do not broadcast", shape_text(a), shape_text(b)));
    out[i] = std::max(da, db);
  }
  return out;
}

Shape reshape(const Shape& input, const std::vector<std::int64_t>& target, bool allowzero) {
  std::int64_t total = 1;
  for (auto d : input) total *= d;
  Shape out(target.size());
  int inferred = -1;
  std::int64_t known = 1;
  for (std::size_t i = 0; i < target.size(); ++i) {
    std::int64_t d = target[i];
    if (d == 0 && !allowzero) {
      if (i >= input.size()) throw Error(fmt::format("shape value 0 at position {} has no input dimension to copy", i));
      d = input[i];
    }
    if (d == -1) {
      if (inferred >= 0) throw Error("more than one -1 in the target shape");
      inferred = static_cast<int>(i);
      continue;
    }
    if (d <= 0) throw Error(fmt::format("target shape {} has the dimension {}", shape_text(target), d));
    if (d > total || known > total / d)
      throw Error(fmt::format("cannot reshape {} ({} elements) to {}", shape_text(input), total, shape_text(target)));
    known *= d;
    out[i] = d;
  }
  if (inferred >= 0) {
    if (known == 0 || total % known != 0)
      throw Error(fmt::format("cannot reshape {} to {}", shape_text(input), shape_text(target)));
    out[inferred] = total / known;
  } else if (known != total) {
    throw Error(fmt::format("cannot reshape {} ({} elements) to {}", shape_text(input), total, shape_text(target)));
  }
  return out;
}

Shape flatten(const Shape& input, std::int64_t axis) {
  if (axis < 0) axis += static_cast<std::int64_t>(input.size());
  if (axis < 0 || axis > static_cast<std::int64_t>(input.size()))
    throw Error(fmt::format("Flatten axis {} out of range", axis));
  std::int64_t outer = 1, inner = 1;
  for (std::size_t i = 0; i < input.size(); ++i) (static_cast<std::int64_t>(i) < axis ? outer : inner) *= input[i];
  return {outer, inner};
}

Shape squeeze(const Shape& input, std::vector<std::int64_t> axes) {
  for (auto& a : axes) a = normalize_axis(a, input.size());
  Shape out;
  for (std::size_t i = 0; i < input.size(); ++i) {
    const bool listed = std::find(axes.begin(), axes.end(), static_cast<std::int64_t>(i)) != axes.end();
    if (listed && input[i] != 1) throw Error(fmt::format("cannot squeeze axis {} of size {}", i, input[i]));
    if (listed || (axes.empty() && input[i] == 1)) continue;
    out.push_back(input[i]);
  }
  return out;
}

Shape unsqueeze(const Shape& input, std::vector<std::int64_t> axes) {
  const std::size_t rank = input.size() + axes.size();
  for (auto& a : axes) a = normalize_axis(a, rank);
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) throw Error("repeated axis in Unsqueeze");
  Shape out;
  std::size_t next = 0;
  for (std::size_t i = 0; i < rank; ++i)
    out.push_back(std::binary_search(axes.begin(), axes.end(), static_cast<std::int64_t>(i)) ? 1 : input[next++]);
  return out;
}

Shape transpose(const Shape& input, const std::vector<std::int64_t>& perm) {
  if (perm.size() != input.size())
    throw Error(fmt::format("perm has {} values for rank {}", perm.size(), input.size()));
  std::vector<bool> seen(perm.size(), false);
  Shape out;
  for (auto p : perm) {
    if (p < 0 || p >= static_cast<std::int64_t>(perm.size()) || seen[p]) throw Error("perm is not a permutation");
    seen[p] = true;
    out.push_back(input[p]);
  }
  return out;
}

Shape concat(const std::vector<Shape>& inputs, std::int64_t axis) {
  Shape out = inputs.at(0);
  const std::int64_t a = normalize_axis(axis, out.size());
  for (std::size_t k = 1; k < inputs.size(); ++k) {
    const Shape& s = inputs[k];
    if (s.size() != out.size())
      throw Error(fmt::format("inputs of ranks {} and {} cannot be concatenated", out.size(), s.size()));
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (static_cast<std::int64_t>(i) == a) continue;
      if (s[i] != out[i])
        throw Error(fmt::format("shapes {} and {} differ off the concat axis", shape_text(inputs[0]), shape_text(s)));
    }
    out[a] += s[a];
  }
  return out;
}

Shape pad(const Shape& input, const std::vector<std::int64_t>& pads) {
  if (pads.size() != 2 * input.size())
    throw Error(fmt::format("pads has {} values for rank {}", pads.size(), input.size()));
  Shape out(input);
  for (std::size_t i = 0; i < input.size(); ++i) {
    if (pads[i] < 0 || pads[i + input.size()] < 0) throw Error("negative pads (cropping) are not supported");
    if (pads[i] > 65536 || pads[i + input.size()] > 65536) throw Error("pad above 65536");
    out[i] += pads[i] + pads[i + input.size()];
  }
  return out;
}

}  // namespace tightfit::import
