// Byte sizes as users write them: 65536, 64K, 64KiB, 64KB, 1M, 1MiB, 2G (K = 1024). Read by the
// command line and by the --memory file alike.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace tightfit {

// The size in bytes, or nothing when `text` is not a size (or overflows 64 bits).
std::optional<std::uint64_t> parse_size(std::string_view text);

}  // namespace tightfit
