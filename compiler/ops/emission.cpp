#include "ops/emission.hpp"

namespace tightfit::emit {

std::string arena_name(std::size_t region_count, const std::string& region) {
  return region_count == 1 ? "arena" : "arena_" + model_text::identifier_characters(region);
}

}  // namespace tightfit::emit
