/* uint32_t tf_icount_now(const volatile uint32_t *timer_value)
 *
 * The sum of TF_COUNTER_READS readings of a timer that ticks TF_COUNTER_TICKS_PER_READS times
 * every TF_COUNTER_READS instructions (board.h): a multiple of the virtual time in instructions,
 * exact to one instruction, with an arbitrary but fixed offset (only the difference of two calls
 * means anything; instruction_counter.c divides it and takes the counter's direction into
 * account).
 *
 * With n = TF_COUNTER_READS and p = TF_COUNTER_TICKS_PER_READS (p and n coprime), the timer
 * reads floor((p t + c) / n) at instruction t. Reading it at n instants whose offsets o_k make
 * p o_k cover every remainder modulo n once, and summing, gives p t + c + a constant
 * (Hermite's identity: sum over r = 0..n-1 of floor((x + r) / n) = x for an integer x). Reads one
 * instruction apart are impossible (each read must be added up), so the code reads every other
 * instruction:
 *  - n = 40, p = 1 (a 25 MHz timer): offsets 1, 3, ..., 39, one instruction skipped, then
 *    42, 44, ..., 80: one of each remainder modulo 40;
 *  - n odd (n = 125, p = 4: a 32 MHz timer): offsets 1, 3, ..., 2n - 1 are distinct modulo n,
 *    and so are p times them.
 *
 * Straight-line code: no branch, so every call runs the same instructions (QEMU's -icount
 * counts each one as one tick of virtual time). Only ARMv6-M instructions.
 */
#include "board.h"

    .syntax unified
    .thumb
    .text
    .global tf_icount_now
    .type tf_icount_now, %function
    .thumb_func
tf_icount_now:
    movs    r1, #0
#if TF_COUNTER_READS == 40
    .rept 20
    ldr     r2, [r0]
    adds    r1, r1, r2
    .endr
    nop
    .rept 20
    ldr     r2, [r0]
    adds    r1, r1, r2
    .endr
#elif TF_COUNTER_READS % 2 == 1
    .rept TF_COUNTER_READS
    ldr     r2, [r0]
    adds    r1, r1, r2
    .endr
#else
#error "icount_now.S reads 40 times, or an odd number of times"
#endif
    mov     r0, r1
    bx      lr
    .size tf_icount_now, . - tf_icount_now
