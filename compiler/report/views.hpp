// What the views share inside the library.
#pragma once

#include <string>

#include "report/document.hpp"

namespace tightfit::report {

// The memory map as an <svg> element, without an XML prolog, so that the HTML view can inline it.
std::string memory_map_svg(const Document& d);

// The colour of a buffer: the hue says the region (in regions' order), the shade the kind.
std::string buffer_fill(std::size_t region_index, const std::string& kind, std::size_t buffer_index);

}  // namespace tightfit::report
