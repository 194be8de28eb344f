#include "cli/size.hpp"

#include <cstdlib>
#include <string>

namespace tightfit {

std::string check_seconds(const std::string& text) {
  constexpr double kYear = 365.0 * 24 * 3600;
  char* end = nullptr;
  const double seconds = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !(seconds > 0 && seconds <= kYear))
    return "'" + text + "' is not a number of seconds above 0 and at most a year";
  return "";
}

}  // namespace tightfit

#include <CLI/CLI.hpp>

namespace tightfit {

CLI::Option* add_size_option(CLI::App& app, const std::string& name, std::optional<std::uint64_t>& target,
                             const std::string& description) {
  return app
      .add_option_function<std::string>(
          name,
          [&target, name](const std::string& text) {
            const auto bytes = parse_size(text);
            if (!bytes)
              throw CLI::ValidationError(name, "'" + text + "' is not a size (write 65536, 64K, 64KiB or 1M)");
            target = *bytes;
          },
          description)
      ->type_name("SIZE");
}

}  // namespace tightfit
