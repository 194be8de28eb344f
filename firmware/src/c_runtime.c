/* The C environment of a tightfit firmware, after the core-specific start-up (startup.c on Arm,
 * riscv/startup.c on RISC-V): stack painting, .data, .bss, constructors, main(), exit. */
#include <stdint.h>

#include "tightfit_board.h"

extern uint32_t __tightfit_data_load[], __tightfit_data_start[], __tightfit_data_end[];
extern uint32_t __tightfit_bss_start[], __tightfit_bss_end[];
extern void (*__tightfit_init_array_start[])(void);
extern void (*__tightfit_init_array_end[])(void);

int main(void);

__attribute__((noreturn)) void tf_run_program(void) {
  tf_stack_paint();

  const uint32_t* from = __tightfit_data_load;
  for (uint32_t* to = __tightfit_data_start; to < __tightfit_data_end;) *to++ = *from++;
  for (uint32_t* to = __tightfit_bss_start; to < __tightfit_bss_end;) *to++ = 0;

  for (void (**ctor)(void) = __tightfit_init_array_start; ctor < __tightfit_init_array_end; ++ctor) (*ctor)();

  tf_exit(main());
}
