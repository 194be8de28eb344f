// The command line's sizes and seconds: options that take them, refused with a usage error.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "util/size.hpp"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace tightfit {

// For --time-limit: "" when `text` is a number of seconds above 0 and at most a year, else why
// not. (CLI11's PositiveNumber lets NaN through, and a huge limit overflows the planner's clock.)
std::string check_seconds(const std::string& text);

// Adds an option such as --max-ram that takes a size; a malformed value is a usage error
// (exit 2) that names the option and the value.
CLI::Option* add_size_option(CLI::App& app, const std::string& name, std::optional<std::uint64_t>& target,
                             const std::string& description);

}  // namespace tightfit
