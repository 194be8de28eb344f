/* Bare-metal board support for running tightfit models in QEMU (and on the MPS2 boards QEMU models).
 *
 * Everything a test firmware needs and nothing more: text output, the exit status, an exact
 * instruction counter and the memory figures. Output follows one machine-readable convention:
 * a line "TIGHTFIT key=value key=value ..." that host tools parse.
 */
#ifndef TIGHTFIT_BOARD_H
#define TIGHTFIT_BOARD_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Text output (UART 0 of the board; QEMU's -nographic sends it to stdout). */
void tf_putc(char c);
void tf_puts(const char* text);
void tf_put_u32(uint32_t value);
void tf_put_i32(int32_t value);
void tf_put_u64(uint64_t value);
/* Prints " key=value", to build a TIGHTFIT line after tf_puts("TIGHTFIT"). */
void tf_figure(const char* key, uint32_t value);
void tf_figure_u64(const char* key, uint64_t value);

/* One line: "TIGHTFIT board=... core=... flash_bytes=... text_bytes=... rodata_bytes=...
 * weights_section_bytes=... inputs_section_bytes=... data_bytes=... bss_bytes=... arena_bytes=...
 * stack_bytes=... stack_peak_bytes=... ram_bytes=..." (docs/firmware.md says what each figure means). */
void tf_print_memory_figures(void);

/* The start-up code paints the whole stack before main; tf_stack_peak_bytes() then tells how deep
 * it has ever been. tf_stack_paint() repaints what lies below the caller's frame, so that a later
 * peak covers only what ran after it (plus the caller's own frames above). */
void tf_stack_paint(void);
uint32_t tf_stack_peak_bytes(void);

/* Instructions executed between tf_count_begin() and tf_count_end(), exact under
 * `qemu-system-arm -icount shift=0`, with the counter's own cost subtracted (what remains is the
 * code between the two calls, including the call instructions of what it calls). No interrupts
 * may run in between. Counts past 2^32 are exact too (up to about 10^11 instructions, the
 * timer's own period on the Arm boards). */
void tf_count_begin(void);
uint64_t tf_count_end(void);

/* Ends the program; QEMU's exit status is `status` (semihosting SYS_EXIT_EXTENDED). */
__attribute__((noreturn)) void tf_exit(int status);

#ifdef __cplusplus
}
#endif

#endif
