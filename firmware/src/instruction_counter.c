/* tf_count_begin()/tf_count_end() on a free-running board timer (board.h: TF_COUNTER_*). */
#include <stdint.h>

#include "board.h"
#include "tightfit_board.h"

/* icount_now.S: the sum of TF_COUNTER_READS readings of the timer, one every other instruction. */
uint32_t tf_icount_now(const volatile uint32_t* timer_value);

#define COUNTER_VALUE ((const volatile uint32_t*)TF_COUNTER_VALUE)

static uint32_t begin_ticks, begin_sum;
static uint64_t overhead;
static int calibrated;

static void start_timer(void) {
#if defined(TF_DUALTIMER_BASE)
  /* CMSDK dual timer 1: enabled, 32-bit, no prescaler, free running (wraps from 0 to
   * 0xFFFFFFFF), no interrupt. */
  *(volatile uint32_t*)(TF_DUALTIMER_BASE + 0x00u) = 0xFFFFFFFFu;   /* LOAD */
  *(volatile uint32_t*)(TF_DUALTIMER_BASE + 0x08u) = 0x80u | 0x02u; /* CONTROL: ENABLE | 32BIT */
#elif defined(TF_SSE_COUNTER_CONTROL)
  *(volatile uint32_t*)TF_SSE_COUNTER_CONTROL = 1u; /* CNTCR.EN */
#else
#error "board.h names no timer for the instruction counter"
#endif
}

/* The time twice, both counting up: one reading of the timer (`ticks`: TF_COUNTER_READS
 * instructions of resolution, but 2^32 ticks before it wraps), and the readings' sum, which is
 * TF_COUNTER_TICKS_PER_READS times the time in instructions plus a constant (docs/firmware.md):
 * exact, but modulo 2^32. */
static void now(uint32_t* ticks, uint32_t* sum) {
  const uint32_t value = *COUNTER_VALUE;
  const uint32_t readings = tf_icount_now(COUNTER_VALUE);
  *ticks = TF_COUNTER_COUNTS_DOWN ? 0u - value : value;
  *sum = TF_COUNTER_COUNTS_DOWN ? 0u - readings : readings;
}

/* Starts the timer and measures an empty region: the counter's own cost. Not inlined, so that
 * the instructions tf_count_begin() runs after reading the clock are the same on the first call
 * as on every other (an inlined copy may give the first call a different epilogue). */
__attribute__((noinline)) static void calibrate(void) {
  start_timer();
  /* The inner call takes the path of every later call: the flag is already set. */
  calibrated = 1;
  tf_count_begin();
  overhead = tf_count_end();
}

void tf_count_begin(void) {
  if (!calibrated) calibrate();
  now(&begin_ticks, &begin_sum);
}

/* The sums' difference is TF_COUNTER_TICKS_PER_READS times the instructions in between, modulo
 * 2^32; the ticks' difference times TF_COUNTER_READS is the same within a few TF_COUNTER_READS, and
 * gives the multiple of 2^32 that the sums lost (a Cortex-M0+ SqueezeNet takes 5.7e9 instructions). */
uint64_t tf_count_end(void) {
  uint32_t end_ticks, end_sum;
  now(&end_ticks, &end_sum);
  const uint64_t exact_low = (uint32_t)(end_sum - begin_sum);
  const uint64_t rough = (uint64_t)(uint32_t)(end_ticks - begin_ticks) * TF_COUNTER_READS;
  const uint64_t wraps = (rough - exact_low + (UINT64_C(1) << 31)) >> 32;
  return (exact_low + (wraps << 32)) / TF_COUNTER_TICKS_PER_READS - overhead;
}
