/* Start-up on an RV32 board, after start.S has set the stack pointer: the trap vector, then the
 * C environment (c_runtime.c). */
#include <stdint.h>

#include "board.h"
#include "tightfit_board.h"

/* c_runtime.c */
__attribute__((noreturn)) void tf_run_program(void);

/* Any trap (illegal instruction, misaligned or faulting access) ends the run with a status that
 * no test expects. Direct mode: mtvec needs 4-byte alignment. */
__attribute__((interrupt("machine"), aligned(4))) static void trap_handler(void) {
  tf_puts("TIGHTFIT fault=1\n");
  tf_exit(125);
}

__attribute__((noreturn)) void tf_reset(void) {
  /* CSR instructions are the Zicsr extension, which -march=rv32imc leaves out of the assembler's
   * view (every RV32 core has them: the ESP32-C3 too). */
  __asm__ volatile(".option push\n\t.option arch, +zicsr\n\tcsrw mtvec, %0\n\t.option pop" : : "r"(trap_handler));
  tf_run_program();
}
