/* uint32_t tf_icount_now(const volatile uint32_t *timer_value)
 *
 * The virtual time in instructions, exact to one instruction, from a timer that ticks only once
 * every 40 instructions. The result has an arbitrary but fixed offset: only the difference of
 * two calls means anything.
 *
 * The timer reads floor((t + c) / 40) at instruction t (counting down, so negated). Reading it at
 * 40 instants whose offsets from t cover every remainder modulo 40 once and summing gives
 * sum over k = 0..39 of floor((t + c + k) / 40) = t + c (Hermite's identity): the time itself.
 * Reads one instruction apart are impossible (each read must be added up), so the code reads
 * every other instruction for 40 instructions, skips one, and reads every other instruction for
 * another 40: offsets 1, 3, ..., 39 and 42, 44, ..., 80, one of each remainder.
 *
 * Straight-line code: no branch, so every call runs the same instructions (QEMU's -icount
 * counts each one as one tick of virtual time).
 */
    .syntax unified
    .thumb
    .text
    .global tf_icount_now
    .type tf_icount_now, %function
    .thumb_func
tf_icount_now:
    movs    r1, #0
    .rept 20
    ldr     r2, [r0]
    adds    r1, r1, r2
    .endr
    nop
    .rept 20
    ldr     r2, [r0]
    adds    r1, r1, r2
    .endr
    rsbs    r0, r1, #0
    bx      lr
    .size tf_icount_now, . - tf_icount_now
