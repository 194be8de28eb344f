/* tf_count_begin()/tf_count_end() on minstret, the machine-mode count of retired instructions:
 * QEMU under -icount counts every instruction there, exactly (no timer, no tick resolution). */
#include <stdint.h>

#include "tightfit_board.h"

static uint64_t begin_count;
static uint64_t overhead;
static int calibrated;

/* minstreth:minstret, read again when the low half wrapped between the reads of the high one. */
static inline uint64_t instructions_retired(void) {
  uint32_t high, low, high_again;
  do {
    __asm__ volatile(
        ".option push\n\t.option arch, +zicsr\n\tcsrr %0, minstreth\n\tcsrr %1, minstret\n\t"
        "csrr %2, minstreth\n\t.option pop"
        : "=r"(high), "=r"(low), "=r"(high_again));
  } while (high != high_again);
  return ((uint64_t)high << 32) | low;
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

uint64_t tf_count_end(void) {
  const uint64_t end_count = instructions_retired();
  return end_count - begin_count - overhead;
}
