/* tf_count_begin()/tf_count_end() on minstret, the machine-mode count of retired instructions:
 * QEMU under -icount counts every instruction there, exactly (no timer, no tick resolution). */
#include <stdint.h>

#include "tightfit_board.h"

static uint32_t begin_count;
static uint32_t overhead;
static int calibrated;

static inline uint32_t instructions_retired(void) {
  uint32_t n;
  __asm__ volatile(".option push\n\t.option arch, +zicsr\n\tcsrr %0, minstret\n\t.option pop" : "=r"(n));
  return n;
}

/* Measures an empty region: the counter's own cost. Not inlined, so that the instructions
 * tf_count_begin() runs after reading the counter are the same on every call. */
__attribute__((noinline)) static void calibrate(void) {
  calibrated = 1;
  tf_count_begin();
  overhead = tf_count_end();
}

void tf_count_begin(void) {
  if (!calibrated) calibrate();
  begin_count = instructions_retired();
}

uint32_t tf_count_end(void) {
  const uint32_t end_count = instructions_retired();
  return end_count - begin_count - overhead;
}
