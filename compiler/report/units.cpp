#include "report/units.hpp"

#include <fmt/format.h>

namespace tightfit::report {

std::string human_bytes(std::uint64_t bytes) {
  if (bytes < 1024) return fmt::format("{} B", bytes);
  if (bytes < 1024 * 1024) return fmt::format("{:.1f} KiB", bytes / 1024.0);
  return fmt::format("{:.2f} MiB", bytes / (1024.0 * 1024.0));
}

std::string tick_bytes(std::uint64_t bytes) {
  auto scaled = [](std::uint64_t value, std::uint64_t unit, const char* suffix) {
    if (value % unit == 0) return fmt::format("{}{}", value / unit, suffix);
    return fmt::format("{:.1f}{}", static_cast<double>(value) / unit, suffix);
  };
  if (bytes < 1024) return fmt::format("{}", bytes);
  if (bytes < 1024 * 1024) return scaled(bytes, 1024, "K");
  return scaled(bytes, 1024 * 1024, "M");
}

std::string shape_text(const std::vector<std::uint64_t>& shape) {
  if (shape.empty()) return "-";
  return fmt::format("{}", fmt::join(shape, "x"));
}

std::string fit(std::string_view text, std::size_t width) {
  if (text.size() <= width) return std::string(text);
  if (width == 0) return "";
  std::size_t cut = width - 1;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xc0) == 0x80) --cut;
  return std::string(text.substr(0, cut)) + "~";
}

double percent_of(std::uint64_t part, std::uint64_t whole) {
  return whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole);
}

}  // namespace tightfit::report
