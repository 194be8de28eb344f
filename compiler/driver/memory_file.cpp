#include "driver/memory_file.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string_view>

#include "emit/emit_cpp.hpp"
#include "error.hpp"
#include "util/size.hpp"

namespace tightfit::driver {
namespace {

using nlohmann::json;

std::uint64_t size_field(const json& j, const std::string& file, const std::string& what) {
  if (j.is_number_unsigned()) return j.get<std::uint64_t>();
  if (j.is_string()) {
    if (auto bytes = parse_size(j.get<std::string>())) return *bytes;
  }
  throw Error(file + ": " + what + " is not a size (write 65536 or \"64K\")");
}

}  // namespace

void check_section_name(const std::string& section, const std::string& context) {
  // It is written into the generated code as __attribute__((section("..."))): nothing that could
  // end the string. Linker section names are letters, digits and . _ $ - + @.
  const bool ok = !section.empty() && std::all_of(section.begin(), section.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("._$-+@").find(c) != std::string_view::npos;
  });
  if (!ok)
    throw Error(context + ": section '" + section + "' is not a linker section name (letters, digits, . _ $ - + @)");
}

// The --memory file: {"regions": [{"name": "DTCM", "size": "128K", "section": ".dtcm"}, ...],
//                     "pins": [{"tensor": "x", "region": "DTCM", "offset": 0}]}
// A region may give "cycles_per_byte" (its bandwidth cost, docs/planner.md, "Slow regions").
void read_memory_file(const std::string& path, std::vector<RegionSpec>& regions, std::vector<PinSpec>& pins) {
  std::ifstream in(path);
  if (!in) throw Error(path + ": cannot open the memory description");
  json doc;
  try {
    doc = json::parse(in);
  } catch (const json::exception& e) {
    throw Error(path + ": not valid JSON (" + std::string(e.what()) + ")");
  }
  if (!doc.is_object() || !doc.contains("regions") || !doc["regions"].is_array() || doc["regions"].empty())
    throw Error(path + ": needs a non-empty \"regions\" list, fastest region first");
  const std::size_t first = regions.size();
  for (const json& r : doc["regions"]) {
    if (!r.is_object() || !r.contains("name") || !r["name"].is_string() || !r.contains("size"))
      throw Error(path + ": every region needs a \"name\" and a \"size\"");
    RegionSpec spec;
    spec.name = r["name"].get<std::string>();
    spec.capacity = size_field(r["size"], path, "region '" + spec.name + "' size");
    if (r.contains("section")) {
      if (!r["section"].is_string()) throw Error(path + ": region '" + spec.name + "': \"section\" is not a string");
      spec.section = r["section"].get<std::string>();
      check_section_name(spec.section, path + ": region '" + spec.name + "'");
    }
    if (r.contains("cycles_per_byte")) {
      const json& c = r["cycles_per_byte"];
      if (!c.is_number() || !(c.get<double>() >= 0) || c.get<double>() > 1e6)
        throw Error(path + ": region '" + spec.name + "': \"cycles_per_byte\" is not a number from 0 to 1e6");
      spec.cycles_per_byte = c.get<double>();
    }
    regions.push_back(spec);
  }
  // Each region becomes an array named after it in the generated code: the names must differ there.
  const std::size_t count = regions.size() - first;
  for (std::size_t i = first; i < regions.size(); ++i)
    for (std::size_t j = first; j < i; ++j)
      if (emit::arena_name(count, regions[i].name) == emit::arena_name(count, regions[j].name))
        throw Error(path + ": regions '" + regions[j].name + "' and '" + regions[i].name +
                    "' have the same name in C++ (" + emit::arena_name(count, regions[i].name) + ")");
  if (doc.contains("pins")) {
    if (!doc["pins"].is_array()) throw Error(path + ": \"pins\" is not a list");
    for (const json& p : doc["pins"]) {
      if (!p.is_object() || !p.contains("tensor") || !p["tensor"].is_string() || !p.contains("region") ||
          !p["region"].is_string())
        throw Error(path + ": every pin needs a \"tensor\" and a \"region\" (strings)");
      pins.push_back({p["tensor"].get<std::string>(), p["region"].get<std::string>(),
                      p.contains("offset") ? size_field(p["offset"], path, "pin offset") : 0});
    }
  }
}

}  // namespace tightfit::driver
