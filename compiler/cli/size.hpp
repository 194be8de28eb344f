// Byte sizes as users write them: 65536, 64K, 64KiB, 64KB, 1M, 1MiB, 2G (K = 1024).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace CLI {
class App;
class Option;
}

namespace tightfit {

// The size in bytes, or nothing when `text` is not a size (or overflows 64 bits).
std::optional<std::uint64_t> parse_size(std::string_view text);

// For --time-limit: "" when `text` is a number of seconds above 0 and at most a year, else why
// not. (CLI11's PositiveNumber lets NaN through, and a huge limit overflows the planner's clock.)
std::string check_seconds(const std::string& text);

// Adds an option such as --max-ram that takes a size; a malformed value is a usage error
// (exit 2) that names the option and the value.
CLI::Option* add_size_option(CLI::App& app, const std::string& name, std::optional<std::uint64_t>& target,
                             const std::string& description);

}  // namespace tightfit
