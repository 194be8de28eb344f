// MiniMalloc's CSV format: a header `id,lower,upper,size` (any order, other columns ignored),
// then one buffer per row, live from step `lower` inclusive to step `upper` exclusive.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plan/planner.hpp"

namespace tightfit::plan {

// The buffers of a CSV file, each with `alignment`. Throws tightfit::Error naming the file and
// line on anything malformed.
std::vector<Buffer> read_csv(const std::string& path, std::uint32_t alignment);

// The plan as CSV, `id,lower,upper,size,offset`, one row per buffer in problem order (the
// commands write it with util/write_files.hpp).
std::string csv_text(const std::vector<Buffer>& buffers, const Plan& plan);

}  // namespace tightfit::plan
