// The lines a tightfit firmware prints, "TIGHTFIT key=value ..." (docs/firmware.md, "What the
// firmware prints"): the one reading of them, `tightfit run --target`'s and, through `tightfit
// firmware-lines` (which prints it as JSON), the Python tools'. tests/firmware/firmware_lines.txt
// and firmware_lines.expected.json hold it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tightfit::firmware_lines {

using Words = std::map<std::string, std::string>;  // a line's key=value pairs

struct Lines {
  Words figures;                 // the pairs of every line that is not an output or a step
  std::map<int, Words> outputs;  // each "output=N" line, by N
  std::vector<Words> steps;      // each "step=N" line (a profiled build's), in order
};

Lines parse(const std::string& text);

// An output line's values: quantized, in memory order; after dtype=float32 each is the float's
// IEEE bits (printed as eight hex digits).
std::vector<std::int32_t> output_values(const Words& output);

}  // namespace tightfit::firmware_lines
