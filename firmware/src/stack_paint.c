/* Peak stack by painting: fill the unused stack with a pattern, later find the deepest word that
 * no longer holds it. */
#include <stdint.h>

#include "tightfit_board.h"

extern uint32_t __tightfit_stack_limit[], __tightfit_stack_top[];

/* Not a repeated byte, so that the compiler cannot turn the loop into a memset call (which would
 * push its own frame into the very words being painted). */
#define STACK_PAINT 0x5A7C3E1Du

void tf_stack_paint(void) {
  /* One assembly block that reads the stack pointer and paints below it without touching the
   * stack itself: C code could save registers below the value it read (GCC shrink-wraps the
   * prologue after the read for Cortex-M55) and then paint over its own return address.
   * On Arm, ARMv6-M instructions only. */
  uint32_t* word = __tightfit_stack_limit;
  uint32_t pattern = STACK_PAINT, sp;
#if defined(__riscv)
  __asm__ volatile(
      "mv %[sp], sp\n"
      "1:\n\t"
      "bgeu %[word], %[sp], 2f\n\t"
      "sw %[pattern], 0(%[word])\n\t"
      "addi %[word], %[word], 4\n\t"
      "j 1b\n"
      "2:"
      : [word] "+r"(word), [sp] "=&r"(sp)
      : [pattern] "r"(pattern)
      : "memory");
#else
  __asm__ volatile(
      /* GCC assumes divided syntax in inline assembly for ARMv6-M, and restores its own after. */
      ".syntax unified\n\t"
      "mov %[sp], sp\n"
      "1:\n\t"
      "cmp %[word], %[sp]\n\t"
      "bhs 2f\n\t"
      "str %[pattern], [%[word]]\n\t"
      "adds %[word], %[word], #4\n\t"
      "b 1b\n"
      "2:"
      : [word] "+l"(word), [sp] "=&l"(sp)
      : [pattern] "l"(pattern)
      : "cc", "memory");
#endif
}

uint32_t tf_stack_peak_bytes(void) {
  const uint32_t* word = __tightfit_stack_limit;
  while (word < __tightfit_stack_top && *word == STACK_PAINT) ++word;
  return (uint32_t)((uintptr_t)__tightfit_stack_top - (uintptr_t)word);
}
