// The pieces of the main() that write_main.cmake writes for a model: load an input, measure the
// inference, print an output and the figures, as "TIGHTFIT key=value" lines.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "tightfit_board.h"

// The linker script's bounds of the arena section (firmware/ld/tightfit_sections.ld).
extern "C" const char __tightfit_arena_start[], __tightfit_arena_end[];

namespace tightfit_run {

inline bool input_error(unsigned index, const char* error) {
  tf_puts("TIGHTFIT input=");
  tf_put_u32(index);
  tf_puts(" error=");
  tf_puts(error);
  tf_putc('\n');
  return false;
}

// A float input goes through the model's own quantization, or is copied where the model keeps it
// float32 (set_input_N takes ONNX's order and what holds the input: the arena, or with
// --io-outside the input's own buffer).
template <typename Info, typename Holder, typename Q>
bool load(unsigned index, const float* data, std::size_t size, const Info& info,
          void (*set_input)(const float*, Holder*), Holder* holder, Q*) {
  if (size != info.elements) return input_error(index, "size_differs_from_the_model");
  set_input(data, holder);
  return true;
}

// An integer input is copied as it is: it must have the model's type, and be in memory order,
// which is ONNX's only where the input is not channels-last.
template <typename Info, typename T, typename Holder, typename Q>
bool load(unsigned index, const T* data, std::size_t size, const Info& info, void (*)(const float*, Holder*), Holder*,
          Q* input) {
  static_assert(std::is_integral<T>::value, "inputs are float32, int8 or uint8");
  if (size != info.elements) return input_error(index, "size_differs_from_the_model");
  if (!std::is_same<T, Q>::value) return input_error(index, "integer_type_differs_from_the_model");
  if (info.channels_last) return input_error(index, "integer_input_must_be_float32_when_channels_last");
  for (std::size_t i = 0; i < size; ++i) input[i] = static_cast<Q>(data[i]);
  return true;
}

// An input that run() reads where it lies in flash (--io-outside, TIGHTFIT_INPUTS_IN_PLACE): it
// must hold the model's own type, already quantized, in memory order, as `tightfit run --target`
// stages it. A type that differs does not build.
template <typename Info, typename T, typename Q>
bool check_in_place(unsigned index, const T*, std::size_t size, const Info& info, void (*)(const float*, Q*)) {
  static_assert(std::is_same<T, Q>::value, "an input in place must have the model's element type");
  if (size != info.elements) return input_error(index, "size_differs_from_the_model");
  return true;
}

// Paints the stack, then counts the instructions of one inference.
template <typename Run>
std::uint64_t measure(Run run) {
  tf_stack_paint();
  tf_count_begin();
  run();
  return tf_count_end();
}

// The output as it lies in the arena: quantized, in memory order (channels-last for images).
template <typename Info, typename Q>
void print_output(unsigned index, const Info& info, const Q* values) {
  tf_puts("TIGHTFIT output=");
  tf_put_u32(index);
  tf_figure("elements", static_cast<std::uint32_t>(info.elements));
  tf_figure("channels_last", info.channels_last);
  tf_puts(info.is_signed ? " dtype=int8" : " dtype=uint8");
  tf_puts(" zero_point=");
  tf_put_i32(info.zero_point);
  tf_puts(" values=");
  for (std::size_t i = 0; i < info.elements; ++i) {
    if (i) tf_putc(',');
    tf_put_i32(values[i]);
  }
  tf_putc('\n');
}

// A float32 output (a float value of the model itself, in the arena): its IEEE bits, eight hex
// digits each, so that the host gets the very floats the core computed (decimals would round).
template <typename Info>
void print_output(unsigned index, const Info& info, const float* values) {
  tf_puts("TIGHTFIT output=");
  tf_put_u32(index);
  tf_figure("elements", static_cast<std::uint32_t>(info.elements));
  tf_figure("channels_last", info.channels_last);
  tf_puts(" dtype=float32 values=");
  for (std::size_t i = 0; i < info.elements; ++i) {
    if (i) tf_putc(',');
    std::uint32_t bits;
    __builtin_memcpy(&bits, &values[i], sizeof bits);
    for (int shift = 28; shift >= 0; shift -= 4) tf_putc("0123456789abcdef"[(bits >> shift) & 15u]);
  }
  tf_putc('\n');
}

// Prints the instructions and the memory figures; the exit status: 0, or 2 when the arena
// section is not the planned arena to the byte.
inline int report(std::uint64_t instructions, std::size_t planned_arena_bytes) {
  tf_puts("TIGHTFIT");
  tf_figure_u64("instructions", instructions);
  tf_figure("planned_arena_bytes", static_cast<std::uint32_t>(planned_arena_bytes));
  tf_putc('\n');
  tf_print_memory_figures();
  const auto arena_bytes = static_cast<std::size_t>(__tightfit_arena_end - __tightfit_arena_start);
  return arena_bytes == planned_arena_bytes ? 0 : 2;
}

#if defined(TIGHTFIT_PROFILE_STEPS)
// Per-step instruction counts: the generated run_profiled() calls tightfit_step_begin(i) and
// tightfit_step_end(i) (below) around kernel call i. Each count is exact for what lies between the
// two hooks (the kernel call and its argument set-up) plus the few instructions of the hooks' own
// calls and returns that the counter's calibration does not cover. main.cpp includes the model's
// header before this one and names its namespace TIGHTFIT_RUN_MODEL, so its step count is known here.
inline std::uint32_t step_instructions[TIGHTFIT_RUN_MODEL::kStepCount > 0 ? TIGHTFIT_RUN_MODEL::kStepCount : 1];

// Runs the profiled schedule once, then prints "TIGHTFIT step=i node=... op=... macs=...
// instructions=..." per step and "TIGHTFIT profiled_steps=N profiled_instructions=SUM".
template <typename Step, typename Run>
void profile(const Step* steps, std::size_t count, Run run) {
  run();
  std::uint32_t sum = 0;
  for (std::size_t i = 0; i < count; ++i) {
    tf_puts("TIGHTFIT");
    tf_figure("step", static_cast<std::uint32_t>(i));
    tf_puts(" node=");
    for (const char* c = steps[i].node; *c; ++c) tf_putc(*c == ' ' || *c == '=' ? '_' : *c);
    tf_puts(" op=");
    tf_puts(steps[i].op);
    tf_figure("macs", static_cast<std::uint32_t>(steps[i].macs));
    tf_figure("instructions", step_instructions[i]);
    tf_putc('\n');
    sum += step_instructions[i];
  }
  tf_puts("TIGHTFIT");
  tf_figure("profiled_steps", static_cast<std::uint32_t>(count));
  tf_figure("profiled_instructions", sum);
  tf_putc('\n');
}
#endif

}  // namespace tightfit_run

#if defined(TIGHTFIT_PROFILE_STEPS)
extern "C" void tightfit_step_begin(int) { tf_count_begin(); }
extern "C" void tightfit_step_end(int step) {
  const auto n = static_cast<std::uint32_t>(tf_count_end());
  if (step >= 0 && static_cast<std::size_t>(step) < TIGHTFIT_RUN_MODEL::kStepCount)
    tightfit_run::step_instructions[step] = n;
}
#endif
