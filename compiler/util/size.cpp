#include "util/size.hpp"

#include <cctype>
#include <limits>
#include <string>

namespace tightfit {

std::optional<std::uint64_t> parse_size(std::string_view text) {
  std::size_t i = 0;
  std::uint64_t value = 0;
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    const std::uint64_t digit = static_cast<std::uint64_t>(text[i] - '0');
    if (value > (kMax - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
    ++i;
  }
  if (i == 0) return std::nullopt;

  std::string unit;
  for (; i < text.size(); ++i) unit += static_cast<char>(std::toupper(static_cast<unsigned char>(text[i])));
  std::uint64_t multiplier = 1;
  if (unit.empty() || unit == "B") {
    multiplier = 1;
  } else if (unit == "K" || unit == "KB" || unit == "KIB") {
    multiplier = 1ull << 10;
  } else if (unit == "M" || unit == "MB" || unit == "MIB") {
    multiplier = 1ull << 20;
  } else if (unit == "G" || unit == "GB" || unit == "GIB") {
    multiplier = 1ull << 30;
  } else {
    return std::nullopt;
  }
  if (value > kMax / multiplier) return std::nullopt;
  return value * multiplier;
}

}  // namespace tightfit
