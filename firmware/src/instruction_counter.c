/* tf_count_begin()/tf_count_end() on a free-running board timer (board.h: TF_COUNTER_*). */
#include <stdint.h>

#include "board.h"
#include "tightfit_board.h"

/* icount_now.S: the sum of TF_COUNTER_READS readings of the timer, one every other instruction. */
uint32_t tf_icount_now(const volatile uint32_t *timer_value);

#define COUNTER_VALUE ((const volatile uint32_t *)TF_COUNTER_VALUE)

static uint32_t begin_time;
static uint32_t overhead;
static int calibrated;

static void start_timer(void) {
#if defined(TF_DUALTIMER_BASE)
  /* CMSDK dual timer 1: enabled, 32-bit, no prescaler, free running (wraps from 0 to
   * 0xFFFFFFFF), no interrupt. */
  *(volatile uint32_t *)(TF_DUALTIMER_BASE + 0x00u) = 0xFFFFFFFFu; /* LOAD */
  *(volatile uint32_t *)(TF_DUALTIMER_BASE + 0x08u) = 0x80u | 0x02u; /* CONTROL: ENABLE | 32BIT */
#elif defined(TF_SSE_COUNTER_CONTROL)
  *(volatile uint32_t *)TF_SSE_COUNTER_CONTROL = 1u; /* CNTCR.EN */
#else
#error "board.h names no timer for the instruction counter"
#endif
}

/* The readings sum to TF_COUNTER_TICKS_PER_READS times the time in instructions, plus a constant
 * (docs/firmware.md), with the sign of the counter's direction. */
static uint32_t now(void) {
  const uint32_t sum = tf_icount_now(COUNTER_VALUE);
  return TF_COUNTER_COUNTS_DOWN ? 0u - sum : sum;
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
  begin_time = now();
}

uint32_t tf_count_end(void) {
  const uint32_t end_time = now();
  return (end_time - begin_time) / TF_COUNTER_TICKS_PER_READS - overhead;
}
