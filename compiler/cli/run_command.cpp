// `tightfit run MODEL.onnx --input x.npy --output-dir DIR`: compiles the model, builds the generated
// code with the host C++ compiler against runtime/, runs it on the inputs and writes the outputs as
// .npy, in the order of the model's outputs. This is how a user checks a compiled model before
// flashing it. With --target BOARD the same model runs as firmware on an emulated Cortex-M or RV32 core in
// QEMU instead: the measured flash, RAM and instructions are printed and added to the
// report, which is written beside the outputs.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>

#include "cli/commands.hpp"
#include "cli/compile_options.hpp"
#include "cli/target.hpp"
#include "driver/pipeline.hpp"
#include "emit/emit_cpp.hpp"
#include "emit/harness.hpp"
#include "error.hpp"
#include "util/model_text.hpp"
#include "report/report.hpp"
#include "util/firmware_lines.hpp"
#include "util/interrupt.hpp"
#include "util/npy.hpp"
#include "util/write_files.hpp"

#include <tightfit/numerics.hpp>

#ifndef TIGHTFIT_SOURCE_DIR
#error "TIGHTFIT_SOURCE_DIR must be defined by the build"
#endif

namespace tightfit {
namespace {

namespace fs = std::filesystem;

struct RunOptions {
  CompileCommandOptions compile;
  std::vector<std::string> inputs;
  std::string output_dir;
  std::string build_dir;  // empty: a temporary folder, removed afterwards
  std::string target;     // empty: the host; else a board of firmware/boards
  bool profile = false;   // --target: also count the instructions of every step
  int timeout_seconds = 600;
};

std::string npy_dtype(ir::DType t) {
  switch (t) {
    case ir::DType::Int8:
      return "i1";
    case ir::DType::UInt8:
      return "u1";
    case ir::DType::Int32:
      return "i4";
    case ir::DType::Float32:
      return "f4";
    case ir::DType::Bool:
      return "b1";
  }
  return "?";
}

// The memory index of each element of a tensor taken in ONNX's order.
std::vector<std::int64_t> memory_index_of_onnx_order(const ir::Tensor& t) {
  std::vector<std::int64_t> index(static_cast<std::size_t>(t.elements()));
  if (t.layout != ir::Layout::ChannelsLast) {
    for (std::size_t i = 0; i < index.size(); ++i) index[i] = static_cast<std::int64_t>(i);
    return index;
  }
  const std::int64_t N = t.shape[0], H = t.shape[1], W = t.shape[2], C = t.shape[3];
  std::size_t o = 0;
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t c = 0; c < C; ++c)
      for (std::int64_t h = 0; h < H; ++h)
        for (std::int64_t w = 0; w < W; ++w) index[o++] = ((n * H + h) * W + w) * C + c;
  return index;
}

std::vector<std::uint8_t> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path.string() + ": the generated program wrote no output");
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string as_text(const std::vector<std::uint8_t>& bytes) { return {bytes.begin(), bytes.end()}; }

// A TFLite model gives its images in NHWC order: the channels-last memory order itself. An ONNX
// model gives them in ONNX's order (NCHW). The .npy files of `run` are in the model's order.
bool model_order_is_memory_order(const driver::CompiledModel& m) {
  return m.graph.source_format == ir::Graph::SourceFormat::TFLite;
}

std::vector<std::int64_t> model_shape(const driver::CompiledModel& m, const ir::Tensor& t) {
  return model_order_is_memory_order(m) ? t.shape : t.onnx_shape();
}

// Elements of `size` bytes moved from ONNX's order to the model's (`to_model`) or back: a
// permutation only for a channels-last image of a TFLite model.
std::vector<std::uint8_t> between_onnx_and_model_order(const driver::CompiledModel& m, const ir::Tensor& t,
                                                       const std::vector<std::uint8_t>& data, std::size_t size,
                                                       bool to_model) {
  if (!model_order_is_memory_order(m) || t.layout != ir::Layout::ChannelsLast) return data;
  const auto index = memory_index_of_onnx_order(t);  // ONNX index -> memory (= model) index
  std::vector<std::uint8_t> out(data.size());
  for (std::size_t o = 0; o < index.size(); ++o) {
    const std::size_t model = static_cast<std::size_t>(index[o]) * size;
    if (to_model)
      std::memcpy(&out[model], &data[o * size], size);
    else
      std::memcpy(&out[o * size], &data[model], size);
  }
  return out;
}

// The .npy file given for input i, checked against the input: its shape in the model's order, and
// the input's type or float32 where the model quantizes the input itself (`quantize` then).
struct ModelInput {
  npy::Array array;
  bool quantize = false;
};

ModelInput load_model_input(const driver::CompiledModel& m, std::size_t i, const std::string& path) {
  const ir::Tensor& t = m.graph.tensors[m.graph.inputs[i]];
  ModelInput in{npy::load(path)};
  const npy::Array& a = in.array;
  const std::vector<std::int64_t> shape = model_shape(m, t);
  if (a.shape != shape)
    throw Error(fmt::format("{}: shape ({}) does not match input {} '{}' of shape ({})", path, fmt::join(a.shape, ", "),
                            i, t.name, fmt::join(shape, ", ")));
  in.quantize = a.dtype == "f4" && t.dtype != ir::DType::Float32;
  if (in.quantize && !t.float_at_boundary)
    throw Error(fmt::format("{}: input {} '{}' is {} in the model; give a .npy of that type", path, i, t.name,
                            ir::dtype_name(t.dtype)));
  if (!in.quantize && a.dtype != npy_dtype(t.dtype))
    throw Error(
        fmt::format("{}: dtype '{}' does not fit input {} '{}' ({}; float32 also works where the model quantizes it)",
                    path, a.dtype, i, t.name, ir::dtype_name(t.dtype)));
  return in;
}

// Writes input i for the harness: float32 in ONNX's order (the generated set_input quantizes it),
// an integer array moved into memory order.
void stage_input(const driver::CompiledModel& m, std::size_t i, const std::string& path, const fs::path& dir) {
  const ir::Tensor& t = m.graph.tensors[m.graph.inputs[i]];
  const ModelInput in = load_model_input(m, i, path);
  const npy::Array& a = in.array;
  if (in.quantize) {
    write_file((dir / fmt::format("input_{}.f32", i)).string(),
               as_text(between_onnx_and_model_order(m, t, a.data, 4, false)));
    return;
  }
  if (model_order_is_memory_order(m)) {
    write_file((dir / fmt::format("input_{}.raw", i)).string(), as_text(a.data));
    return;
  }
  const auto index = memory_index_of_onnx_order(t);
  const std::size_t es = ir::dtype_size(t.dtype);
  std::vector<std::uint8_t> memory(a.data.size());
  for (std::size_t o = 0; o < index.size(); ++o)
    std::memcpy(&memory[static_cast<std::size_t>(index[o]) * es], &a.data[o * es], es);
  write_file((dir / fmt::format("input_{}.raw", i)).string(), as_text(memory));
}

// Input i as run() reads it with --io-outside: of the model's type (floats quantized as its
// set_input_i does, with the runtime's own quantize_linear or quantize_tflite), in memory order;
// flat. What the firmware builds into flash to be read where it lies. The .npy is in the model's
// order.
npy::Array memory_order_input(const driver::CompiledModel& m, std::size_t i, const std::string& path) {
  const ir::Tensor& t = m.graph.tensors[m.graph.inputs[i]];
  const ModelInput in = load_model_input(m, i, path);
  const npy::Array& a = in.array;
  std::vector<std::int64_t> index = memory_index_of_onnx_order(t);
  if (model_order_is_memory_order(m))
    for (std::size_t o = 0; o < index.size(); ++o) index[o] = static_cast<std::int64_t>(o);
  const std::size_t es = ir::dtype_size(t.dtype);
  npy::Array memory;
  memory.dtype = npy_dtype(t.dtype);
  memory.shape = {t.elements()};
  memory.data.resize(index.size() * es);
  for (std::size_t o = 0; o < index.size(); ++o) {
    std::uint8_t* to = &memory.data[static_cast<std::size_t>(index[o]) * es];
    if (!in.quantize) {
      std::memcpy(to, &a.data[o * es], es);
      continue;
    }
    float x;
    std::memcpy(&x, &a.data[o * 4], 4);
    const float scale = t.quant.scale[0];
    const std::int32_t zero_point = t.quant.zero_point[0];
    auto quantized = [&](auto type_zero) {  // as set_input_i: TFLite's rounding or ORT's
      using T = decltype(type_zero);
      return m.graph.numerics == ir::Numerics::Tflite ? tightfit::quantize_tflite<T>(x, scale, zero_point)
                                                      : tightfit::quantize_linear<T>(x, scale, zero_point);
    };
    *to = t.dtype == ir::DType::Int8 ? static_cast<std::uint8_t>(quantized(std::int8_t{})) : quantized(std::uint8_t{});
  }
  return memory;
}

// Input i of a TFLite model as float32 in ONNX's order, what the firmware's set_input_N takes: a
// float32 .npy as it is, an integer one dequantized ((q - zp) * scale, in float), which set_input_N
// quantizes back to the same integers (|q - zp| <= 255, so the float error is far below half a step).
npy::Array float_input_in_onnx_order(const driver::CompiledModel& m, std::size_t i, const std::string& path) {
  const ir::Tensor& t = m.graph.tensors[m.graph.inputs[i]];
  const ModelInput in = load_model_input(m, i, path);
  const std::size_t count = static_cast<std::size_t>(t.elements());
  std::vector<std::uint8_t> floats = in.array.data;
  if (in.array.dtype != "f4") {
    floats.resize(count * 4);
    for (std::size_t o = 0; o < count; ++o) {
      const std::int32_t q = t.dtype == ir::DType::Int8 ? static_cast<std::int8_t>(in.array.data[o]) : in.array.data[o];
      const float x = static_cast<float>(q - t.quant.zero_point[0]) * t.quant.scale[0];
      std::memcpy(&floats[o * 4], &x, 4);
    }
  }
  npy::Array a;
  a.dtype = "f4";
  a.shape = t.onnx_shape();
  a.data = between_onnx_and_model_order(m, t, floats, 4, false);
  return a;
}

// Output i as the host program wrote it into `dir`, in the model's order.
npy::Array host_output(const driver::CompiledModel& m, std::size_t i, const fs::path& dir) {
  const ir::Tensor& t = m.graph.tensors[m.graph.outputs[i]];
  npy::Array a;
  a.shape = model_shape(m, t);
  if (t.float_at_boundary) {
    a.dtype = "f4";
    a.data = between_onnx_and_model_order(m, t, read_file(dir / fmt::format("output_{}.f32", i)), 4, true);
  } else {
    a.dtype = npy_dtype(t.dtype);
    const std::vector<std::uint8_t> memory = read_file(dir / fmt::format("output_{}.raw", i));
    const auto index = memory_index_of_onnx_order(t);
    const std::size_t es = ir::dtype_size(t.dtype);
    if (memory.size() != index.size() * es)
      throw Error(fmt::format("output {} '{}': the generated program wrote {} bytes", i, t.name, memory.size()));
    a.data.resize(memory.size());
    if (model_order_is_memory_order(m))
      a.data = memory;
    else
      for (std::size_t o = 0; o < index.size(); ++o)
        std::memcpy(&a.data[o * es], &memory[static_cast<std::size_t>(index[o]) * es], es);
  }
  if (a.data.size() != static_cast<std::size_t>(a.elements()) * (a.dtype == "f4" ? 4 : ir::dtype_size(t.dtype)))
    throw Error(fmt::format("output {} '{}': the generated program wrote {} bytes", i, t.name, a.data.size()));
  return a;
}

// Output `t` from the values the firmware printed (quantized, or a float32's bits; memory order),
// in the model's order.
npy::Array firmware_output(const driver::CompiledModel& m, const ir::Tensor& t,
                           const std::vector<std::int32_t>& values) {
  std::vector<std::int64_t> index = memory_index_of_onnx_order(t);
  if (model_order_is_memory_order(m))
    for (std::size_t o = 0; o < index.size(); ++o) index[o] = static_cast<std::int64_t>(o);
  npy::Array a;
  a.shape = model_shape(m, t);
  if (t.dtype == ir::DType::Float32) {
    a.dtype = "f4";
    a.data.resize(index.size() * 4);
    for (std::size_t o = 0; o < index.size(); ++o)
      std::memcpy(&a.data[o * 4], &values[static_cast<std::size_t>(index[o])], 4);
  } else if (t.float_at_boundary) {
    a.dtype = "f4";
    a.data.resize(index.size() * 4);
    for (std::size_t o = 0; o < index.size(); ++o) {
      const std::int32_t q = values[static_cast<std::size_t>(index[o])];
      const float v =
          t.dtype == ir::DType::Int8
              ? tightfit::dequantize_linear(static_cast<std::int8_t>(q), t.quant.scale[0], t.quant.zero_point[0])
              : tightfit::dequantize_linear(static_cast<std::uint8_t>(q), t.quant.scale[0], t.quant.zero_point[0]);
      std::memcpy(&a.data[o * 4], &v, 4);
    }
  } else {
    a.dtype = npy_dtype(t.dtype);
    const std::size_t es = ir::dtype_size(t.dtype);
    for (std::size_t o = 0; o < index.size(); ++o) {
      const std::int32_t v = values[static_cast<std::size_t>(index[o])];
      const auto* bytes = reinterpret_cast<const std::uint8_t*>(&v);  // little-endian: the low bytes first
      a.data.insert(a.data.end(), bytes, bytes + es);
    }
  }
  return a;
}

// output_0.npy, output_1.npy, ...: the files of `tightfit run`, before any others it writes.
std::vector<std::pair<std::string, std::string>> output_files(const std::vector<npy::Array>& outputs) {
  std::vector<std::pair<std::string, std::string>> files;
  for (std::size_t i = 0; i < outputs.size(); ++i)
    files.emplace_back(fmt::format("output_{}.npy", i), npy::encode(outputs[i]));
  return files;
}

std::string shell_quoted(const std::string& s) { return "'" + s + "'"; }

// A build that failed. Its message names the build log, so the folder holding it is kept even
// when it is a temporary one.
struct BuildFailed : Error {
  using Error::Error;
};

// The line of a failed build's log that says why: the linker's own message (by how much a region
// overflowed, else its first line: an undefined reference, say) rather than collect2's "ld
// returned 1", or else the first error.
std::string failure_line(const fs::path& log) {
  const std::vector<std::uint8_t> bytes = read_file(log);
  const std::string text(bytes.begin(), bytes.end());
  std::string linker, first_error;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    const std::string line = text.substr(at, end - at);
    at = end + 1;
    if (line.find("overflowed by") != std::string::npos) return line;  // how much does not fit
    if (linker.empty() && (line.find("/ld: ") != std::string::npos || line.rfind("ld: ", 0) == 0)) linker = line;
    if (first_error.empty() && line.find("collect2") == std::string::npos &&
        (line.find("error") != std::string::npos || line.find("Error") != std::string::npos))
      first_error = line;
  }
  if (!linker.empty()) return linker;
  return first_error.empty() ? "see the log" : first_error;
}

// Runs a shell command with its output in `log`; on failure throws BuildFailed with the log's
// failure_line().
void run_logged(const std::string& command, const fs::path& log, const std::string& what) {
  if (interrupt::run_shell(command + " > " + shell_quoted(log.string()) + " 2>&1") == 0) return;
  throw BuildFailed(fmt::format("run: {} failed: {} (log: {})", what, failure_line(log), log.string()));
}

// firmware/run copies an integer input into the arena as it is, so in ONNX's order only where
// that is the memory order: a channels-last image of an ONNX model is refused here, not by the
// firmware in QEMU; one of a TFLite model (NHWC, its own order) goes through set_input_N as
// float32 in ONNX's order, dequantized if it is an integer one. With --io-outside, run() reads
// each input where it lies in flash, as this writes it (of the model's type, in memory order):
// no RAM holds it.
std::vector<std::string> stage_firmware_inputs(const RunOptions& options, const driver::CompileOptions& compile,
                                               const driver::CompiledModel& model, const fs::path& dir) {
  const bool in_place = !compile.io_in_arena;
  std::vector<std::string> firmware_inputs = options.inputs;
  for (std::size_t i = 0; i < options.inputs.size(); ++i) {
    const ir::Tensor& t = model.graph.tensors[model.graph.inputs[i]];
    if (in_place) {
      firmware_inputs[i] = (dir / fmt::format("input_{}.memory.npy", i)).string();
      npy::save(firmware_inputs[i], memory_order_input(model, i, options.inputs[i]));
      continue;
    }
    if (t.layout != ir::Layout::ChannelsLast) continue;
    if (model_order_is_memory_order(model)) {
      firmware_inputs[i] = (dir / fmt::format("input_{}.onnx_order.npy", i)).string();
      npy::save(firmware_inputs[i], float_input_in_onnx_order(model, i, options.inputs[i]));
      continue;
    }
    if (npy::load(options.inputs[i]).dtype == "f4") continue;
    throw Error(fmt::format("run: --target takes input {} '{}' only as float32: the model keeps it channels-last, and "
                            "the firmware reads integer inputs in ONNX's order only (the host run takes both)",
                            i, t.name),
                kExitUsage);
  }

  return firmware_inputs;
}

// Configures and builds firmware/run for `board` in `build`, compiling the model as `compile` says.
void build_firmware(const RunOptions& options, const driver::CompileOptions& compile, const Board* board,
                    const std::vector<std::string>& firmware_inputs, const fs::path& build, const fs::path& dir) {
  const bool in_place = !compile.io_in_arena;
  const fs::path root = source_dir();
  std::string inputs, extra;
  for (const std::string& input : firmware_inputs) inputs += (inputs.empty() ? "" : ",") + fs::absolute(input).string();
  if (!compile.io_in_arena) extra += "--io-outside;";
  if (!compile.overlap) extra += "--no-overlap;";
  if (!compile.fold_pad) extra += "--no-fold-pad;";
  if (!compile.zero_copy_concat) extra += "--no-zero-copy-concat;";
  if (!compile.tiling) extra += "--no-tiling;";
  if (compile.numerics) extra += fmt::format("--numerics;{};", numerics_name(*compile.numerics));
  // The firmware's own compile ranks tiling plans by the same core's costs as this one.
  if (compile.cost_core == board->core) extra += fmt::format("--target;{};", board->core);
  if (compile.alignment) extra += fmt::format("--alignment;{};", *compile.alignment);
  extra += fmt::format("--time-limit;{}", compile.time_limit_seconds);
  const std::string max_ram = compile.max_ram ? fmt::format("-DTIGHTFIT_MAX_RAM={}", *compile.max_ram) : "";
  const std::string configure = fmt::format(
      "cmake -S {} -B {} -DCMAKE_TOOLCHAIN_FILE={} -DTIGHTFIT_CORE={} -DTIGHTFIT_BOARD={} -DTIGHTFIT_MODEL={} "
      "-DTIGHTFIT_INPUTS={} -DTIGHTFIT_EXECUTABLE={} {} -DTIGHTFIT_COMPILE_OPTIONS={} -DTIGHTFIT_NAME={} "
      "-DTIGHTFIT_PROFILE={} "
      "-DTIGHTFIT_INPUTS_IN_PLACE={}",
      shell_quoted((root / "firmware" / "run").string()), shell_quoted(build.string()),
      shell_quoted((root / "cmake" / board->toolchain).string()), board->core, board->name,
      shell_quoted(fs::absolute(compile.model).string()), shell_quoted(inputs),
      shell_quoted(fs::read_symlink("/proc/self/exe").string()), max_ram, shell_quoted(extra), compile.name,
      options.profile ? "ON" : "OFF", in_place ? "ON" : "OFF");
  run_logged(configure, dir / "configure.log", "configuring the firmware");
  run_logged(fmt::format("cmake --build {} -j2", shell_quoted(build.string())), dir / "build.log",
             "building the firmware");
}

// The report of the code that ran (the firmware build's own compile), with what it measured.
nlohmann::json measured_report(const RunOptions& options, const driver::CompileOptions& compile, const Board* board,
                               const firmware_lines::Lines& lines, const fs::path& build, const fs::path& log) {
  const firmware_lines::Words& figures = lines.figures;
  const std::vector<firmware_lines::Words>& steps = lines.steps;
  const fs::path report_path = build / ("tightfit_" + compile.name) / (compile.name + ".report.json");
  const std::vector<std::uint8_t> report_bytes = read_file(report_path);
  nlohmann::json report = nlohmann::json::parse(report_bytes.begin(), report_bytes.end());
  const auto number = [&](const char* key) -> nlohmann::json {
    if (!figures.count(key)) return nullptr;
    const std::string& value = figures.at(key);
    if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos) return nullptr;
    return std::stoull(value);
  };
  // The profiled kernel calls, matched in order to the report's steps by node name (as the
  // firmware prints it: spaces and '=' made '_'); a step without a kernel call (a Reshape that
  // only renames its input) has none.
  nlohmann::json step_instructions = nullptr;
  if (options.profile) {
    step_instructions = nlohmann::json::array();
    std::size_t next = 0;
    for (const auto& step : report.at("steps")) {
      std::string node = step.at("node").get<std::string>();
      for (char& c : node)
        if (c == ' ' || c == '=') c = '_';
      const bool called = next < steps.size() && steps[next].count("node") && steps[next].at("node") == node;
      const std::string count = called && steps[next].count("instructions") ? steps[next].at("instructions") : "";
      if (called && (count.empty() || count.find_first_not_of("0123456789") != std::string::npos))
        throw Error(
            fmt::format("run: the firmware printed step {} without its instructions (log: {})", next, log.string()));
      step_instructions.push_back(called ? nlohmann::json(std::stoull(count)) : nlohmann::json(nullptr));
      next += called ? 1 : 0;
    }
    if (next != steps.size())
      throw Error(
          fmt::format("run: the firmware profiled {} kernel calls, {} of them match the report's steps (log: {})",
                      steps.size(), next, log.string()));
  }
  report["measured"] = {
      {"board", board->name},
      {"core", board->core},
      {"method", fmt::format("{} -icount shift=0 (exact instruction counts)", board->qemu)},
      {"instructions", number("instructions")},
      {"flash",
       {{"total_bytes", number("flash_bytes")},
        {"weights_bytes", number("weights_section_bytes")},
        {"text_bytes", number("text_bytes")},
        {"rodata_bytes", number("rodata_bytes")},
        {"inputs_bytes", number("inputs_section_bytes")}}},
      {"ram",
       {{"arena_bytes", number("arena_bytes")},
        {"planned_arena_bytes", number("planned_arena_bytes")},
        {"data_bytes", number("data_bytes")},
        {"bss_bytes", number("bss_bytes")},
        {"stack_bytes", number("stack_bytes")},
        {"stack_peak_bytes", number("stack_peak_bytes")},
        {"linked_bytes", number("ram_bytes")}}},
      {"step_instructions", step_instructions},
  };
  if (const auto problems = report::check_report(report); !problems.empty())
    throw Error("run: internal error: the measured report breaks its schema: " + problems.front());

  return report;
}

// `--target`: builds firmware/run for the board with the inputs in flash, runs it in QEMU, writes
// the outputs it prints and shows the figures it measured.
void run_on_target(const RunOptions& options, const driver::CompileOptions& compile, const driver::CompiledModel& model,
                   const fs::path& dir) {
  const Board* board = find_board(options.target);
  if (!board) {
    std::vector<std::string> names;
    for (const Board& b : run_target_boards()) names.push_back(b.name);
    throw Error(fmt::format("run: --target '{}' is not a board ({})", options.target, fmt::join(names, ", ")),
                kExitUsage);
  }
  if (model.regions.size() != 1) throw Error("run: --target runs single-region models (no --memory)", kExitUsage);
  for (const auto& ids : {model.graph.inputs, model.graph.outputs})
    for (ir::TensorId id : ids)
      if (model.graph.tensors[id].quant.per_channel() || model.graph.tensors[id].dtype == ir::DType::Int32)
        throw Error(
            "run: --target does not run models whose inputs or outputs are int32 or quantized per channel (the "
            "host run does)",
            kExitUsage);
  const std::vector<std::string> firmware_inputs = stage_firmware_inputs(options, compile, model, dir);
  const fs::path build = dir / "firmware";
  build_firmware(options, compile, board, firmware_inputs, build, dir);

  const fs::path log = dir / "qemu.log";
  const std::string qemu = fmt::format(
      "timeout {} {} -M {} -nographic {} -icount shift=0,align=off,sleep=off -kernel {}", options.timeout_seconds,
      board->qemu, board->machine, board->qemu_flags, shell_quoted((build / "tightfit_run.elf").string()));
  const int status = interrupt::run_shell(qemu + " > " + shell_quoted(log.string()) + " 2>&1");
  const std::vector<std::uint8_t> bytes = read_file(log);
  const std::string text(bytes.begin(), bytes.end());
  if (status != 0)
    throw Error(fmt::format("run: the firmware failed in QEMU on {} (exit status {}; log: {})", board->name,
                            WEXITSTATUS(status), log.string()));

  // An output line per output, then the figures; with --profile, a line per step.
  const firmware_lines::Lines lines = firmware_lines::parse(text);
  std::vector<std::vector<std::int32_t>> values(model.graph.outputs.size());
  for (const auto& [index, words] : lines.outputs)
    if (index >= 0 && index < static_cast<int>(values.size())) values[index] = firmware_lines::output_values(words);
  std::vector<npy::Array> outputs;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const ir::Tensor& t = model.graph.tensors[model.graph.outputs[i]];
    if (values[i].size() != static_cast<std::size_t>(t.elements()))
      throw Error(fmt::format("run: the firmware printed {} values for output {} '{}', expected {} (log: {})",
                              values[i].size(), i, t.name, t.elements(), log.string()));
    outputs.push_back(firmware_output(model, t, values[i]));
  }

  const nlohmann::json report = measured_report(options, compile, board, lines, build, log);
  auto files = output_files(outputs);
  const std::string& name = compile.name;
  files.emplace_back(name + ".report.json", report.dump(2) + "\n");
  files.emplace_back(name + ".report.txt", report::render_text(report));
  files.emplace_back(name + ".memory.svg", report::render_svg(report));
  files.emplace_back(name + ".report.html", report::render_html(report));
  write_files(options.output_dir, files);

  fmt::print("ran {} on {} ({}, QEMU): {} output(s) in {}\n", model_text::shown(compile.model), board->name,
             board->core, outputs.size(), options.output_dir);
  fmt::print("{}", report::render_measured_text(report));
  fmt::print("report with these figures: {0}/{1}.report.txt (.json, .html)\n", options.output_dir, name);
}

// Builds the generated code with the harness for the host, runs it and writes its outputs.
void run_on_host(const RunOptions& options, const driver::CompileOptions& compile, const driver::CompiledModel& model,
                 const fs::path& dir) {
  driver::write_outputs(model, dir.string(), compile.name);
  std::vector<std::string> regions;
  for (const driver::RegionSpec& r : model.regions) regions.push_back(r.name);
  write_file((dir / "harness.cpp").string(), emit::harness(model.graph, regions, compile.name, compile.io_in_arena));
  for (std::size_t i = 0; i < options.inputs.size(); ++i) stage_input(model, i, options.inputs[i], dir);

  const char* cxx = std::getenv("CXX");
  // TIGHTFIT_HOST_CXXFLAGS: extra flags for the host build, e.g. sanitizers (tests/sanitize).
  const char* extra_flags = std::getenv("TIGHTFIT_HOST_CXXFLAGS");
  const std::string runtime = (source_dir() / "runtime" / "include").string();
  const fs::path program = dir / "model";
  const std::string build = fmt::format(
      "{} -std=c++17 -O2 -ffp-contract=off -fno-fast-math -fno-exceptions -fno-rtti -Wall -Wextra -Werror {} "
      "-I{} -I{} {} {} -o {}",
      cxx ? cxx : "c++", extra_flags ? extra_flags : "", shell_quoted(runtime), shell_quoted(dir.string()),
      shell_quoted((dir / (compile.name + ".cpp")).string()), shell_quoted((dir / "harness.cpp").string()),
      shell_quoted(program.string()));
  run_logged(build, dir / "build.log", "building the generated code with the host compiler");
  if (interrupt::run_shell(shell_quoted(program.string()) + " " + shell_quoted(dir.string())) != 0)
    throw Error("run: the generated program failed on the host");

  std::vector<npy::Array> outputs;
  for (std::size_t i = 0; i < model.graph.outputs.size(); ++i) outputs.push_back(host_output(model, i, dir));
  write_files(options.output_dir, output_files(outputs));
  fmt::print("ran {} on the host: arena {} bytes ({}), {} output(s) in {}\n", model_text::shown(compile.model),
             model.plan.peak, plan::status_name(model.plan.status), model.graph.outputs.size(), options.output_dir);
}

void run_model(const RunOptions& options) {
  driver::CompileOptions compile = finish_compile_options(options.compile);
  // Plans of equal MACs are ranked by the board's core's measured kernel costs, as `tightfit compile
  // --target CORE` does, for the Arm cores it takes; on the host and on RV32, the default core's.
  if (const Board* board = find_board(options.target); board && board->architecture == "arm")
    compile.cost_core = board->core;
  if (options.inputs.empty()) throw Error("run: give the model's inputs with --input FILE.npy", kExitUsage);
  if (options.profile && options.target.empty())
    throw Error("run: --profile counts instructions on a board: give --target too", kExitUsage);
  const driver::CompiledModel model = driver::compile_model(compile);
  if (options.inputs.size() != model.graph.inputs.size())
    throw Error(fmt::format("{}: the model has {} input(s), {} --input given", compile.model, model.graph.inputs.size(),
                            options.inputs.size()),
                kExitUsage);

  // From here on a signal stops the program being run and unwinds (interrupt::Deferral), so that
  // the temporary build folder is removed; it is held before the folder exists and ends after.
  interrupt::Deferral deferral;
  std::error_code ec;
  fs::path dir = options.build_dir;
  const bool temporary = dir.empty();
  if (temporary) {
    std::string pattern = (fs::temp_directory_path() / "tightfit-run-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw Error("run: cannot make a temporary folder");
    dir = pattern;
  }
  fs::create_directories(dir, ec);
  if (ec) throw Error(dir.string() + ": cannot create the build folder (" + ec.message() + ")");
  struct Cleanup {
    fs::path dir;
    bool active;
    ~Cleanup() {
      std::error_code ignored;
      if (active) fs::remove_all(dir, ignored);
    }
  } cleanup{dir, temporary};

  try {
    if (options.target.empty())
      run_on_host(options, compile, model, dir);
    else
      run_on_target(options, compile, model, dir);
  } catch (const BuildFailed&) {
    cleanup.active = false;  // its message names the build log in the folder
    throw;
  }
}

}  // namespace

fs::path source_dir() {
  const char* env = std::getenv("TIGHTFIT_SOURCE_DIR");
  const fs::path root = env ? env : TIGHTFIT_SOURCE_DIR;
  if (!fs::exists(root / "runtime" / "include" / "tightfit" / "kernels.hpp"))
    throw Error("tightfit's runtime is not in " + root.string() + " (set TIGHTFIT_SOURCE_DIR)");
  return root;
}

void add_run_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("run", "Compile a model, build it for the host and run it on .npy inputs");
  auto options = std::make_shared<RunOptions>();
  add_compile_options(*cmd, options->compile);
  cmd->add_option("--input", options->inputs,
                  "An input as .npy (float32, or the input's integer type); one per input, in order")
      ->required();
  cmd->add_option("--output-dir", options->output_dir, "Folder for output_0.npy, output_1.npy, ...")->required();
  cmd->add_option("--build-dir", options->build_dir,
                  "Keep the generated code and program here (default: a temporary folder)");
  std::vector<std::string> boards;
  for (const Board& b : run_target_boards()) boards.push_back(fmt::format("{} ({})", b.name, b.help));
  cmd->add_option("--target", options->target,
                  fmt::format("Run as firmware on an emulated board in QEMU: {}", fmt::join(boards, ", ")));
  cmd->add_flag("--profile", options->profile,
                "With --target: also print the instructions of every step (kernel call), from a second run");
  cmd->add_option("--timeout", options->timeout_seconds, "Seconds QEMU may run with --target (default 600)")
      ->check(CLI::PositiveNumber);
  cmd->callback([options] { run_model(*options); });
}

}  // namespace tightfit
