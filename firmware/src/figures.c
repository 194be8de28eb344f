/* The memory figures, from the linker script's symbols and the painted stack. */
#include <stdint.h>

#include "board.h"
#include "tightfit_board.h"

extern const char __tightfit_text_start[], __tightfit_text_end[];
extern const char __tightfit_rodata_start[], __tightfit_rodata_end[];
extern const char __tightfit_weights_start[], __tightfit_weights_end[];
extern const char __tightfit_inputs_start[], __tightfit_inputs_end[];
extern const char __tightfit_flash_start[], __tightfit_flash_end[];
extern const char __tightfit_data_start[], __tightfit_data_end[];
extern const char __tightfit_bss_start[], __tightfit_bss_end[];
extern const char __tightfit_arena_start[], __tightfit_arena_end[];
extern const char __tightfit_stack_limit[], __tightfit_stack_top[];
extern const char __tightfit_ram_end[];

static uint32_t span(const char* start, const char* end) { return (uint32_t)(end - start); }

/* The firmware's flash: the FLASH region's span, plus the weights where the board keeps them in a
 * flash of their own (mps3-an547's QSPI). Compared as integers: the symbols are distinct objects
 * to the compiler. */
static uint32_t flash_bytes(void) {
  const uintptr_t weights = (uintptr_t)__tightfit_weights_start;
  const int weights_in_flash =
      weights >= (uintptr_t)__tightfit_flash_start && weights < (uintptr_t)__tightfit_flash_end;
  return span(__tightfit_flash_start, __tightfit_flash_end) +
         (weights_in_flash ? 0u : span(__tightfit_weights_start, __tightfit_weights_end));
}

void tf_print_memory_figures(void) {
  tf_puts("TIGHTFIT board=" TF_BOARD_NAME " core=" TF_CORE_NAME);
  tf_figure("flash_bytes", flash_bytes());
  tf_figure("text_bytes", span(__tightfit_text_start, __tightfit_text_end));
  tf_figure("rodata_bytes", span(__tightfit_rodata_start, __tightfit_rodata_end));
  tf_figure("weights_section_bytes", span(__tightfit_weights_start, __tightfit_weights_end));
  tf_figure("inputs_section_bytes", span(__tightfit_inputs_start, __tightfit_inputs_end));
  tf_figure("data_bytes", span(__tightfit_data_start, __tightfit_data_end));
  tf_figure("bss_bytes", span(__tightfit_bss_start, __tightfit_bss_end));
  tf_figure("arena_bytes", span(__tightfit_arena_start, __tightfit_arena_end));
  tf_figure("stack_bytes", span(__tightfit_stack_limit, __tightfit_stack_top));
  tf_figure("stack_peak_bytes", tf_stack_peak_bytes());
  /* The RAM as linked, from its start (the stack lies first) to the end of the arena. */
  tf_figure("ram_bytes", span(__tightfit_stack_limit, __tightfit_ram_end));
  tf_putc('\n');
}
