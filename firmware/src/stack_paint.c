/* Peak stack by painting: fill the unused stack with a pattern, later find the deepest word that
 * no longer holds it. */
#include <stdint.h>

#include "tightfit_board.h"

extern uint32_t __tightfit_stack_limit[], __tightfit_stack_top[];

/* Not a repeated byte, so that the compiler cannot turn the loop into a memset call (which would
 * push its own frame into the very words being painted). */
#define STACK_PAINT 0x5A7C3E1Du

void tf_stack_paint(void) {
  uint32_t *sp;
  __asm__ volatile("mov %0, sp" : "=r"(sp));
  /* Everything below the stack pointer is free: this function keeps nothing there. */
  for (volatile uint32_t *word = __tightfit_stack_limit; word < sp; ++word) *word = STACK_PAINT;
}

uint32_t tf_stack_peak_bytes(void) {
  const uint32_t *word = __tightfit_stack_limit;
  while (word < __tightfit_stack_top && *word == STACK_PAINT) ++word;
  return (uint32_t)((uintptr_t)__tightfit_stack_top - (uintptr_t)word);
}
