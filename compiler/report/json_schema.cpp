#include "report/json_schema.hpp"

#include <fmt/format.h>

#include <cmath>
#include <set>
#include <string_view>

namespace tightfit::report {
namespace {

using nlohmann::json;

// Keywords that only document the schema; they constrain nothing.
const std::set<std::string, std::less<>> kAnnotations = {"$schema", "$id", "$defs", "title", "description"};

const char* type_name(const json& value) {
  switch (value.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "integer";
    case json::value_t::number_float:
      return "number";
    case json::value_t::string:
      return "string";
    case json::value_t::array:
      return "array";
    case json::value_t::object:
      return "object";
    default:
      return "unknown";
  }
}

bool has_type(const json& value, std::string_view type) {
  if (type == "integer") {
    // JSON Schema counts 3.0 as an integer: it is about the value, not the spelling.
    return value.is_number_integer() ||
           (value.is_number_float() && std::floor(value.get<double>()) == value.get<double>());
  }
  if (type == "number") return value.is_number();
  return type == type_name(value);
}

class Validator {
 public:
  explicit Validator(const json& root) : root_(root) {}

  void check(const json& value, const json& schema, const std::string& path) {
    for (const auto& [keyword, argument] : schema.items()) {
      if (kAnnotations.count(keyword) != 0) continue;
      if (keyword == "$ref") {
        check(value, resolve(argument.get<std::string>()), path);
      } else if (keyword == "type") {
        check_type(value, argument, path);
      } else if (keyword == "const") {
        if (value != argument) fail(path, fmt::format("must be {}, not {}", argument.dump(), value.dump()));
      } else if (keyword == "enum") {
        bool listed = false;
        for (const auto& option : argument) listed = listed || value == option;
        if (!listed) fail(path, fmt::format("must be one of {}, not {}", argument.dump(), value.dump()));
      } else if (keyword == "required") {
        if (!value.is_object()) continue;
        for (const auto& key : argument) {
          if (!value.contains(key.get<std::string>()))
            fail(path, fmt::format("missing key \"{}\"", key.get<std::string>()));
        }
      } else if (keyword == "properties") {
        if (!value.is_object()) continue;
        for (const auto& [key, subschema] : argument.items()) {
          if (value.contains(key)) check(value.at(key), subschema, path + "." + key);
        }
      } else if (keyword == "items") {
        if (!value.is_array()) continue;
        for (std::size_t i = 0; i < value.size(); ++i) check(value[i], argument, fmt::format("{}[{}]", path, i));
      } else if (keyword == "minItems") {
        if (value.is_array() && value.size() < argument.get<std::size_t>()) {
          fail(path, fmt::format("needs at least {} item(s), has {}", argument.get<std::size_t>(), value.size()));
        }
      } else if (keyword == "minimum") {
        if (value.is_number() && value.get<double>() < argument.get<double>()) {
          fail(path, fmt::format("must be at least {}, not {}", argument.dump(), value.dump()));
        }
      } else if (keyword == "minLength") {
        // Counted in bytes, not code points: the schema only uses it to forbid empty strings.
        if (value.is_string() && value.get_ref<const std::string&>().size() < argument.get<std::size_t>()) {
          fail(path, fmt::format("must have at least {} character(s)", argument.get<std::size_t>()));
        }
      } else {
        fail(path, fmt::format("the schema uses keyword \"{}\", which this validator does not know", keyword));
      }
    }
  }

  std::vector<std::string> take_errors() { return std::move(errors_); }

 private:
  void check_type(const json& value, const json& allowed, const std::string& path) {
    const json types = allowed.is_array() ? allowed : json::array({allowed});
    for (const auto& type : types) {
      if (has_type(value, type.get<std::string>())) return;
    }
    std::string wanted;
    for (const auto& type : types) wanted += (wanted.empty() ? "" : " or ") + type.get<std::string>();
    fail(path, fmt::format("must be {}, not {}", wanted, type_name(value)));
  }

  const json& resolve(const std::string& ref) {
    constexpr std::string_view prefix = "#/$defs/";
    if (ref.compare(0, prefix.size(), prefix) != 0) {
      throw std::invalid_argument("unsupported $ref in the report schema: " + ref);
    }
    return root_.at("$defs").at(ref.substr(prefix.size()));
  }

  void fail(const std::string& path, const std::string& problem) { errors_.push_back(path + ": " + problem); }

  const json& root_;
  std::vector<std::string> errors_;
};

}  // namespace

std::vector<std::string> validate_against_schema(const json& instance, const json& schema) {
  Validator validator(schema);
  validator.check(instance, schema, "$");
  return validator.take_errors();
}

}  // namespace tightfit::report
