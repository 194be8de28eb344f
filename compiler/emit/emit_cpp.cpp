#include "emit/emit_cpp.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <set>

#include <tightfit/host.hpp>
#include <tightfit/kernels.hpp>

#include "error.hpp"
#include "ops/emission.hpp"
#include "ops/operator.hpp"
#include "schedule/lifetimes.hpp"
#include "util/model_text.hpp"

#ifndef TIGHTFIT_VERSION
#error "TIGHTFIT_VERSION must be defined by the build"
#endif
namespace tightfit::emit {
namespace {

// The runtime function set_input_N quantizes a float with: TFLite's QUANTIZE rounds a tie away
// from zero, ORT's QuantizeLinear to even (numerics.hpp).
const char* quantize_function(const ir::Graph& g) {
  return g.numerics == ir::Numerics::Tflite ? "quantize_tflite" : "quantize_linear";
}

class Emitter : public Emission {
 public:
  Emitter(EmissionState& state, const schedule::Lifetimes& lifetimes) : Emission(state), lt_(lifetimes) {}

  EmittedCode run() {
    for (std::size_t i = 0; i < state_.g_.nodes.size(); ++i) {
      enter_branch(state_.g_.nodes[i].guard);
      emit_node(static_cast<int>(i), state_.g_.nodes[i]);
    }
    enter_branch(ir::Guard{});
    EmittedCode code;
    code.header = header();
    code.source = source();
    code.weights_bytes = state_.weights_bytes_;
    code.schedule_bytes = state_.schedule_bytes_;
    code.code_estimate_bytes = code_estimate();
    return code;
  }

 private:
  const schedule::Lifetimes& lt_;

  // Whether the plan puts the output of step `index` above the input it overlaps: then its
  // kernel runs backwards (the up distance of kernels.hpp).
  bool runs_backwards(int index) const {
    for (std::size_t k = 0; k < lt_.problem.overlaps.size(); ++k) {
      if (lt_.overlap_step[k] != index) continue;
      const plan::Overlap& o = lt_.problem.overlaps[k];
      return plan::output_above_input(lt_.problem, o, state_.plan_.placements[o.output],
                                      state_.plan_.placements[o.input]);
    }
    return false;
  }

  // An If's branches (ir::Guard): `if (condition) {` before the then branch's first step,
  // `} else {` between the branches, `}` after the else branch's last; what lies inside is
  // indented once more.
  void enter_branch(const ir::Guard& guard) {
    const bool same = guard.condition == branch_.condition && guard.then_branch == branch_.then_branch;
    if (same) return;
    if (branch_.guarded()) {
      indent_since(state_.body_, body_mark_);
      indent_since(state_.profiled_body_, profiled_mark_);
    }
    std::string line;
    if (branch_.guarded() && guard.excludes(branch_)) {
      line = "  } else {\n";
    } else {
      if (branch_.guarded()) line = "  }\n";
      if (guard.guarded()) line += fmt::format("  if ({}[0]) {{\n", pointer(guard.condition));
    }
    state_.body_ += line;
    state_.profiled_body_ += line;
    body_mark_ = state_.body_.size();
    profiled_mark_ = state_.profiled_body_.size();
    branch_ = guard;
  }

  static void indent_since(std::string& text, std::size_t mark) {
    std::string indented;
    std::size_t line_start = mark;
    while (line_start < text.size()) {
      const std::size_t end = text.find('\n', line_start);
      indented += "  " + text.substr(line_start, end == std::string::npos ? std::string::npos : end + 1 - line_start);
      if (end == std::string::npos) break;
      line_start = end + 1;
    }
    text.resize(mark);
    text += indented;
  }

  void emit_node(int index, const Node& n) {
    state_.backward_ = runs_backwards(index);
    const ops::Operator& op = ops::of(n.op);
    if (op.emit) op.emit(state_, fmt::format("n{}", index), n);
  }

  ir::Guard branch_;                               // the branch whose steps are being written
  std::size_t body_mark_ = 0, profiled_mark_ = 0;  // where its text begins

  // ----- the files ----------------------------------------------------------------------------

  std::uint64_t code_estimate() const {
    // A rough figure until a firmware build measures it: ~600 bytes of Thumb-2 per distinct
    // kernel, ~24 bytes per call site. `tightfit run --target` reports the real size.
    return state_.kernels_used_.size() * 600 + state_.calls_ * 24;
  }

  struct Boundary {
    std::string what;  // "input" or "output"
    std::size_t index;
    TensorId tensor;
  };

  std::vector<Boundary> boundaries() const {
    std::vector<Boundary> b;
    for (std::size_t i = 0; i < state_.g_.inputs.size(); ++i) b.push_back({"input", i, state_.g_.inputs[i]});
    for (std::size_t i = 0; i < state_.g_.outputs.size(); ++i) b.push_back({"output", i, state_.g_.outputs[i]});
    return b;
  }

  static std::string onnx_shape_text(const Tensor& t) { return fmt::format("[{}]", fmt::join(t.onnx_shape(), ", ")); }

  std::string arena_parameters(bool with_defaults) const {
    std::vector<std::string> p;
    for (std::size_t r = 0; r < state_.arenas_.size(); ++r)
      p.push_back(fmt::format("std::uint8_t* {0}{1}", arena_name(static_cast<int>(r)),
                              with_defaults && state_.options_.io_in_arena
                                  ? fmt::format(" = {}_storage", arena_name(static_cast<int>(r)))
                                  : ""));
    return fmt::format("{}", fmt::join(p, ", "));
  }

  std::string run_parameters(bool with_defaults) const {
    std::string p = arena_parameters(with_defaults);
    if (!state_.options_.io_in_arena) {
      for (std::size_t i = 0; i < state_.g_.inputs.size(); ++i)
        p += fmt::format(", const {}* input_{}", ctype(state_.g_.tensors[state_.g_.inputs[i]].dtype), i);
      for (std::size_t i = 0; i < state_.g_.outputs.size(); ++i)
        p += fmt::format(", {}* output_{}", ctype(state_.g_.tensors[state_.g_.outputs[i]].dtype), i);
    }
    return p;
  }

  std::string header() const {
    std::string h;
    h += fmt::format("// Generated by tightfit {} from {}. Do not edit.\n", TIGHTFIT_VERSION,
                     model_text::cpp_comment(state_.options_.model));
    h += "//\n// Use: fill the inputs (set_input_N quantizes floats given in ONNX's order), call run(),\n"
         "// read the outputs (get_output_N dequantizes into ONNX's order). The arena is the only\n"
         "// mutable state; run() allocates nothing, copies no weights and needs no initialisation.\n";
    h += "#pragma once\n\n#include <cstddef>\n#include <cstdint>\n\n";
    h += fmt::format("namespace {} {{\n\n", state_.options_.name);
    for (std::size_t r = 0; r < state_.arenas_.size(); ++r) {
      const std::string a = arena_name(static_cast<int>(r));
      h += fmt::format("// RAM region '{}': the planned peak of its buffers, in bytes.\n",
                       model_text::cpp_comment(state_.arenas_[r].region));
      h += fmt::format("constexpr std::size_t k{}Bytes = {};\n",
                       state_.arenas_.size() == 1
                           ? std::string("Arena")
                           : "Arena_" + model_text::identifier_characters(state_.arenas_[r].region),
                       state_.arenas_[r].bytes);
    }
    h += "constexpr std::size_t kArenaAlignment = 16;\n\n";
    h += "// The built-in arena(s), in .bss";
    h += state_.arenas_.size() == 1 && !state_.arenas_[0].section.empty()
             ? fmt::format(" (section {})", state_.arenas_[0].section)
             : "";
    h += ". A caller that brings its own memory passes it to run()\n"
         "// instead; unused, the built-in one is dropped by --gc-sections.\n";
    for (std::size_t r = 0; r < state_.arenas_.size(); ++r)
      h += fmt::format("extern std::uint8_t {}_storage[];\n", arena_name(static_cast<int>(r)));
    h += "\n// Runs the model once on what the inputs hold; afterwards the outputs hold its results.\n";
    h += fmt::format("void run({});\n\n", run_parameters(true));
    h += "#if defined(TIGHTFIT_PROFILE_STEPS)\n"
         "// Profiling builds only: run() again with tightfit_step_begin(i) / tightfit_step_end(i) (extern \"C\",\n"
         "// the caller defines them) around kernel call i; kSteps[i] names it. Normal builds have none of this.\n"
         "struct StepInfo {\n  const char* node;\n  const char* op;\n  std::int64_t macs;\n};\n";
    h += fmt::format("constexpr std::size_t kStepCount = {};\n", state_.steps_.size());
    h += fmt::format("constexpr StepInfo kSteps[{}] = {{\n", std::max<std::size_t>(state_.steps_.size(), 1));
    for (const std::string& step : state_.steps_) h += "    " + step + ",\n";
    if (state_.steps_.empty()) h += "    {\"\", \"\", 0},\n";
    h += "};\n";
    h += fmt::format("void run_profiled({});\n#endif\n\n", run_parameters(true));

    h += "// The model's inputs and outputs: integer tensors in memory order (4-D images channels-last,\n"
         "// [N, H, W, C]); shapes below are ONNX's.\n";
    h += "struct TensorInfo {\n  const char* name;\n  bool is_signed;       // int8 (else uint8)\n"
         "  float scale;          // real = scale * (q - zero_point)\n  std::int32_t zero_point;\n"
         "  std::size_t elements;\n  bool channels_last;   // stored [N, H, W, C]; ONNX's shape is [N, C, H, W]\n"
         "  bool float_in_model; // the ONNX model takes/gives float32 here\n};\n";
    for (const Boundary& b : boundaries()) {
      const Tensor& t = state_.g_.tensors[b.tensor];
      const std::string type = ctype(t.dtype);
      const std::string quant_text =
          t.dtype == DType::Float32                 ? std::string("as in the model")
          : !t.quantized && t.dtype == DType::Int32 ? std::string("not quantized (raw accumulators)")
          : !t.quantized          ? std::string("quantized at run time (the scale and zero point are outputs too)")
          : t.quant.per_channel() ? fmt::format("{} per-channel scales", t.quant.scale.size())
                                  : fmt::format("scale {}, zero point {}", t.quant.scale[0], t.quant.zero_point[0]);
      h += fmt::format("\n// {} {} '{}': {} {}, {}{}.\n", b.what, b.index, model_text::cpp_comment(t.name),
                       ir::dtype_name(t.dtype), onnx_shape_text(t), quant_text,
                       state_.options_.io_in_arena ? "; it lives inside the arena" : "; the caller owns its buffer");
      const std::string info = fmt::format("k{}{}", b.what == "input" ? "Input" : "Output", b.index);
      if (t.quant.per_channel()) {
        // One scale and zero point per index of ONNX axis `axis`; TensorInfo's pair is then 0.
        h += fmt::format(
            "// Quantized per channel along ONNX axis {}: {}Scales[i], {}ZeroPoints[i] for index i of that axis.\n",
            t.quant.axis, info, info);
        std::vector<std::string> scales;
        for (float f : t.quant.scale) scales.push_back(float_literal(f));
        h += fmt::format("constexpr float {}Scales[] = {{{}}};\n", info, fmt::join(scales, ", "));
        h +=
            fmt::format("constexpr std::int32_t {}ZeroPoints[] = {{{}}};\n", info, fmt::join(t.quant.zero_point, ", "));
      }
      const bool single = !t.quant.per_channel() && !t.quant.scale.empty();
      h += fmt::format("constexpr TensorInfo {} = {{\"{}\", {}, {}, {}, {}, {}, {}}};\n", info,
                       model_text::cpp_string(t.name), t.dtype == DType::Int8 ? "true" : "false",
                       float_literal(single ? t.quant.scale[0] : 0.0f), single ? t.quant.zero_point[0] : 0,
                       t.elements(), t.layout == ir::Layout::ChannelsLast ? "true" : "false",
                       t.float_at_boundary || t.dtype == DType::Float32 ? "true" : "false");
      if (state_.options_.io_in_arena) {
        const int buffer = state_.tensor_buffer_[b.tensor];
        const plan::Placement& at = state_.plan_.placements[buffer];
        const std::string a = arena_name(at.region);
        // Through void*: the buffer's offset is a multiple of its element's size (-Wcast-align).
        h += fmt::format(
            "inline {0}* {1}_{2}(std::uint8_t* {3} = {3}_storage) {{ return static_cast<{0}*>(static_cast<void*>({3} + "
            "{4})); }}\n",
            b.what == "input" ? type : "const " + type, b.what, b.index, a, at.offset);
      }
      const std::string holder = state_.options_.io_in_arena
                                     ? arena_name(state_.plan_.placements[state_.tensor_buffer_[b.tensor]].region)
                                     : "";
      if (b.what == "input")
        h += fmt::format("void set_input_{}(const float* onnx_order{});\n", b.index,
                         state_.options_.io_in_arena ? fmt::format(", std::uint8_t* {0} = {0}_storage", holder)
                                                     : fmt::format(", {}* input", type));
      else
        h += fmt::format("void get_output_{}(float* onnx_order{});\n", b.index,
                         state_.options_.io_in_arena ? fmt::format(", const std::uint8_t* {0} = {0}_storage", holder)
                                                     : fmt::format(", const {}* output", type));
    }
    h += fmt::format("\n}}  // namespace {}\n", state_.options_.name);
    return h;
  }

  // set_input_N / get_output_N: quantize or dequantize, and move between ONNX's order and
  // channels-last, in one pass.
  std::string boundary_functions() const {
    std::string s;
    for (const Boundary& b : boundaries()) {
      const Tensor& t = state_.g_.tensors[b.tensor];
      const std::string type = ctype(t.dtype);
      const bool input = b.what == "input";
      std::string target;
      if (state_.options_.io_in_arena) {
        const plan::Placement& at = state_.plan_.placements[state_.tensor_buffer_[b.tensor]];
        target = fmt::format("static_cast<{0}{1}*>(static_cast<{0}void*>({2} + {3}))", input ? "" : "const ", type,
                             arena_name(at.region), at.offset);
      } else {
        target = input ? "input" : "output";
      }
      const float scale = t.quant.scale.empty() ? 1.0f : t.quant.scale[0];
      const std::int32_t zp = t.quant.zero_point.empty() ? 0 : t.quant.zero_point[0];
      // Per channel: the element at ONNX index o belongs to channel (o / inner) % channels.
      std::string scale_text = float_literal(scale), zp_text = std::to_string(zp);
      if (t.quant.per_channel()) {
        const auto shape = t.onnx_shape();
        std::int64_t inner = 1;
        for (std::size_t d = static_cast<std::size_t>(t.quant.axis) + 1; d < shape.size(); ++d) inner *= shape[d];
        const std::string info = fmt::format("k{}{}", input ? "Input" : "Output", b.index);
        const std::string channel =
            fmt::format("(({{o}}) / {}) % {}", inner, shape[static_cast<std::size_t>(t.quant.axis)]);
        scale_text = fmt::format("{}Scales[{}]", info, channel);
        zp_text = fmt::format("{}ZeroPoints[{}]", info, channel);
      }
      const std::string holder = state_.options_.io_in_arena
                                     ? arena_name(state_.plan_.placements[state_.tensor_buffer_[b.tensor]].region)
                                     : "";
      if (input)
        s += fmt::format("\nvoid set_input_{}(const float* onnx_order, {}) {{\n  {}* q = {};\n", b.index,
                         state_.options_.io_in_arena ? "std::uint8_t* " + holder : type + "* input", type, target);
      else
        s += fmt::format("\nvoid get_output_{}(float* onnx_order, {}) {{\n  const {}* q = {};\n", b.index,
                         state_.options_.io_in_arena ? "const std::uint8_t* " + holder : "const " + type + "* output",
                         type, target);
      std::string element = input ? fmt::format("q[{{m}}] = tightfit::{}<{}>(onnx_order[{{o}}], {}, {});",
                                                quantize_function(state_.g_), type, scale_text, zp_text)
                                  : fmt::format("onnx_order[{{o}}] = tightfit::dequantize_linear(q[{{m}}], {}, {});",
                                                scale_text, zp_text);
      if (t.dtype == DType::Float32)  // a float input or output of the model itself (DynamicQuantizeLinear): a copy
        element = input ? "q[{m}] = onnx_order[{o}];" : "onnx_order[{o}] = q[{m}];";
      if (t.layout == ir::Layout::ChannelsLast) {
        s += fmt::format("  constexpr std::int32_t N = {}, H = {}, W = {}, C = {};\n", t.shape[0], t.shape[1],
                         t.shape[2], t.shape[3]);
        s += "  for (std::int32_t n = 0; n < N; ++n)\n    for (std::int32_t c = 0; c < C; ++c)\n"
             "      for (std::int32_t h = 0; h < H; ++h)\n        for (std::int32_t w = 0; w < W; ++w)\n          ";
        s += fmt::format(fmt::runtime(element), fmt::arg("m", "((n * H + h) * W + w) * C + c"),
                         fmt::arg("o", "((n * C + c) * H + h) * W + w"));
        s += "\n}\n";
      } else {
        s += fmt::format("  for (std::int32_t i = 0; i < {}; ++i) ", t.elements());
        s += fmt::format(fmt::runtime(element), fmt::arg("m", "i"), fmt::arg("o", "i"));
        s += "\n}\n";
      }
    }
    return s;
  }

  // With the inputs and outputs outside the arena, an output that is a view of an input (a model
  // that is one QuantizeLinear, say) lives in the caller's output buffer: copy it there.
  std::string io_copies() const {
    if (state_.options_.io_in_arena) return "";
    std::string s;
    for (std::size_t k = 0; k < state_.g_.outputs.size(); ++k)
      for (std::size_t j = 0; j < state_.g_.inputs.size(); ++j) {
        if (state_.root_[state_.g_.outputs[k]] != state_.root_[state_.g_.inputs[j]]) continue;
        s += fmt::format("  // output {} is a view of input {}: copied into the caller's buffer\n", k, j);
        s += fmt::format("  for (std::size_t i = 0; i < {}; ++i) output_{}[i] = input_{}[i];\n",
                         state_.g_.tensors[state_.g_.outputs[k]].elements(), k, j);
        break;
      }
    return s;
  }

  std::string source() const {
    std::string s;
    s += fmt::format("// Generated by tightfit {} from {}. Do not edit.\n", TIGHTFIT_VERSION,
                     model_text::cpp_comment(state_.options_.model));
    s += "// Weights, tables and kernel parameters are constexpr: they stay in flash and are read in place.\n";
    s += fmt::format("#include \"{}.hpp\"\n\n#include <tightfit/kernels.hpp>\n\n", state_.options_.name);
    s += fmt::format("namespace {} {{\nnamespace {{\n\n", state_.options_.name);
    s += state_.constants_;
    s += "\n}  // namespace\n\n";
    for (std::size_t r = 0; r < state_.arenas_.size(); ++r) {
      const std::string section = state_.arenas_[r].section.empty()
                                      ? ""
                                      : fmt::format(" __attribute__((section(\"{}\")))", state_.arenas_[r].section);
      s += fmt::format("alignas(kArenaAlignment) std::uint8_t {}_storage[{}]{};\n", arena_name(static_cast<int>(r)),
                       std::max<std::uint64_t>(state_.arenas_[r].bytes, 1), section);
    }
    s += fmt::format("\nvoid run({}) {{\n", run_parameters(false));
    s += state_.body_;
    s += io_copies();
    if (state_.body_.empty()) s += "  // every output is a view of an input: nothing to compute\n";
    for (std::size_t r = 0; r < state_.arenas_.size(); ++r)
      s += fmt::format("  (void){};\n", arena_name(static_cast<int>(r)));
    s += "}\n";
    s += "\n#if defined(TIGHTFIT_PROFILE_STEPS)\n}  // namespace " + state_.options_.name + "\n";
    s += "extern \"C\" void tightfit_step_begin(int step);\nextern \"C\" void tightfit_step_end(int step);\n";
    s += "namespace " + state_.options_.name + " {\n";
    s += fmt::format("\nvoid run_profiled({}) {{\n", run_parameters(false));
    s += state_.profiled_body_;
    s += io_copies();
    for (std::size_t r = 0; r < state_.arenas_.size(); ++r)
      s += fmt::format("  (void){};\n", arena_name(static_cast<int>(r)));
    s += "}\n#endif\n";
    s += boundary_functions();
    s += fmt::format("\n}}  // namespace {}\n", state_.options_.name);
    return s;
  }
};

}  // namespace

std::uint64_t scratch_bytes(const ir::Graph& graph, const ir::Node& node) {
  const ops::Operator& op = ops::of(node.op);
  return op.scratch ? op.scratch(graph, node) : 0;  // most kernels work in their input and output buffers alone
}

EmittedCode emit_cpp(const ir::Graph& graph, const schedule::Lifetimes& lifetimes, const plan::Plan& plan,
                     const std::vector<Arena>& arenas, const EmitOptions& options) {
  EmissionState state(graph, lifetimes.tensor_buffer, lifetimes.node_scratch, plan, arenas, options,
                      schedule::view_roots(graph));
  return Emitter(state, lifetimes).run();
}

}  // namespace tightfit::emit
