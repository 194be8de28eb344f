// C++ emission: the planned, channels-last graph -> NAME.hpp and NAME.cpp.
//
// NAME.cpp holds every weight, bias, multiplier and lookup table as an alignas(16) constexpr
// array (flash, read in place), every kernel's parameters as a constexpr block, and run(): the
// schedule as a straight list of kernel calls at fixed arena offsets. NAME.hpp is the user's API.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/ir.hpp"
#include "ops/emission.hpp"
#include "plan/planner.hpp"
#include "schedule/lifetimes.hpp"

namespace tightfit::emit {

struct EmittedCode {
  std::string header;
  std::string source;
  std::uint64_t weights_bytes = 0;        // constant data: weights, biases, multipliers, tables
  std::uint64_t schedule_bytes = 0;       // the kernels' parameter blocks
  std::uint64_t code_estimate_bytes = 0;  // run() and the kernels it calls (an estimate)
};

// Bytes of scratch memory the kernel chosen for `node` needs during its step (0 for most).
std::uint64_t scratch_bytes(const ir::Graph& graph, const ir::Node& node);

// Throws tightfit::Error (naming the node) for a node no kernel runs.
EmittedCode emit_cpp(const ir::Graph& graph, const schedule::Lifetimes& lifetimes, const plan::Plan& plan,
                     const std::vector<Arena>& arenas, const EmitOptions& options);

}  // namespace tightfit::emit
