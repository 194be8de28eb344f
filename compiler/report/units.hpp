// How the views write numbers and names.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tightfit::report {

// "12.5 KiB", "1.2 MiB", "900 B": the human reading of an exact byte count.
std::string human_bytes(std::uint64_t bytes);

// Axis tick labels: "512", "4K", "1.5K", "2M" (K = 1024).
std::string tick_bytes(std::uint64_t bytes);

// "1x64x25x5"; "-" for a scalar.
std::string shape_text(const std::vector<std::uint64_t>& shape);

// `text` cut to `width` columns, ending in "~" when cut. A byte is a column (names from ONNX
// files are ASCII in practice), but the cut never falls inside a UTF-8 sequence.
std::string fit(std::string_view text, std::size_t width);

// 100 * part / whole, "0.0" when whole is 0.
double percent_of(std::uint64_t part, std::uint64_t whole);

}  // namespace tightfit::report
