// A validator for the part of JSON Schema (draft 2020-12) that docs/report.schema.json uses:
// type, const, enum, required, properties, items, minItems, minimum, minLength, and local
// "$ref": "#/$defs/NAME". A keyword outside that list is an error in the schema (reported, not
// ignored), so the schema can never say more than this code checks.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace tightfit::report {

// The text of docs/report.schema.json, compiled in (schema_text.cpp.in).
const char* report_schema_text();

// One line per violation, each starting with the JSON path of the offending value.
std::vector<std::string> validate_against_schema(const nlohmann::json& instance, const nlohmann::json& schema);

}  // namespace tightfit::report
