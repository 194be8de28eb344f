// Runs conv_s8 once on its sample input (built into flash), then prints its output, the
// instructions the inference took and the memory figures, as "TIGHTFIT key=value" lines.
#include <cstddef>
#include <cstdint>

#include "conv_s8.hpp"        // the model, from tightfit_add_model()
#include "conv_s8_input.hpp"  // its sample input, from tightfit_embed_npy()
#include "tightfit_board.h"

// The linker script's bounds of the arena section (firmware/ld/tightfit_sections.ld).
extern "C" const char __tightfit_arena_start[], __tightfit_arena_end[];

namespace {

// The output as it lies in the arena: quantized, in memory order (channels-last for images).
void print_output() {
  const conv_s8::TensorInfo& info = conv_s8::kOutput0;
  tf_puts("TIGHTFIT output=0");
  tf_figure("elements", static_cast<std::uint32_t>(info.elements));
  tf_figure("channels_last", info.channels_last);
  tf_puts(info.is_signed ? " dtype=int8" : " dtype=uint8");
  tf_puts(" zero_point=");
  tf_put_i32(info.zero_point);
  tf_puts(" values=");
  const auto* values = conv_s8::output_0();
  for (std::size_t i = 0; i < info.elements; ++i) {
    if (i) tf_putc(',');
    tf_put_i32(values[i]);
  }
  tf_putc('\n');
}

}  // namespace

int main() {
  if (conv_s8_input_size != conv_s8::kInput0.elements) {
    tf_puts("TIGHTFIT error=input_size_differs_from_the_model\n");
    return 1;
  }
  conv_s8::set_input_0(conv_s8_input);

  tf_stack_paint();
  tf_count_begin();
  conv_s8::run();
  const std::uint32_t instructions = tf_count_end();

  print_output();
  tf_puts("TIGHTFIT");
  tf_figure("instructions", instructions);
  tf_figure("planned_arena_bytes", static_cast<std::uint32_t>(conv_s8::kArenaBytes));
  tf_putc('\n');
  tf_print_memory_figures();

  // The arena in RAM must be exactly what the plan predicted.
  const auto arena_bytes = static_cast<std::size_t>(__tightfit_arena_end - __tightfit_arena_start);
  return arena_bytes == conv_s8::kArenaBytes ? 0 : 2;
}
