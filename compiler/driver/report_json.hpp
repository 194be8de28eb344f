// The memory report's JSON (docs/report.md; report/ renders it as text, SVG and HTML): every
// buffer, step, overlap, rewrite and choice of a compiled model.
#pragma once

#include <nlohmann/json.hpp>

#include "driver/pipeline.hpp"
#include "emit/emit_cpp.hpp"
#include "plan/planner.hpp"

namespace tightfit::driver {

// The report of `model`, whose buffers `problem` states, emitted as `code`.
nlohmann::json build_report(const CompileOptions& options, const CompiledModel& model, const plan::Problem& problem,
                            const emit::EmittedCode& code);

}  // namespace tightfit::driver
