/* tf_count_begin()/tf_count_end() on the CMSDK dual timer's first counter, free running. */
#include <stdint.h>

#include "board.h"
#include "tightfit_board.h"

#define TIMER1_LOAD (*(volatile uint32_t *)(TF_DUALTIMER_BASE + 0x00u))
#define TIMER1_VALUE (*(volatile uint32_t *)(TF_DUALTIMER_BASE + 0x04u))
#define TIMER1_CONTROL (*(volatile uint32_t *)(TF_DUALTIMER_BASE + 0x08u))

/* Enabled, 32-bit, no prescaler, free-running mode (wraps from 0 to 0xFFFFFFFF), no interrupt. */
#define TIMER_CONTROL_32BIT 0x02u
#define TIMER_CONTROL_ENABLE 0x80u

/* icount_now.S */
uint32_t tf_icount_now(const volatile uint32_t *timer_value);

_Static_assert(TF_INSTRUCTIONS_PER_TICK == 40u, "icount_now.S assumes 40 instructions per tick");

static uint32_t begin_time;
static uint32_t overhead;
static int calibrated;

void tf_count_begin(void) {
  if (!calibrated) {
    TIMER1_LOAD = 0xFFFFFFFFu;
    TIMER1_CONTROL = TIMER_CONTROL_ENABLE | TIMER_CONTROL_32BIT;
    /* An empty region measures the counter itself; it runs the same instructions as a real one
     * because the flag is already set when the inner calls run. */
    calibrated = 1;
    tf_count_begin();
    overhead = tf_count_end();
  }
  begin_time = tf_icount_now(&TIMER1_VALUE);
}

uint32_t tf_count_end(void) {
  const uint32_t end_time = tf_icount_now(&TIMER1_VALUE);
  return end_time - begin_time - overhead;
}
