/* Regions of known length for the instruction counter's test, for n >= 1:
 *   tf_test_spin2(n): 2n + 1 instructions (a two-instruction loop and the return),
 *   tf_test_spin3(n): 3n + 1 instructions (a three-instruction loop and the return).
 * A counter that only resolved multiples of q would still see steps of 2 exactly when q divides
 * 2; seeing steps of both 2 and 3 exactly leaves q = 1. */
    .syntax unified
    .thumb
    .text

    .global tf_test_spin2
    .type tf_test_spin2, %function
    .thumb_func
tf_test_spin2:
1:  subs    r0, r0, #1
    bne     1b
    bx      lr
    .size tf_test_spin2, . - tf_test_spin2

    .global tf_test_spin3
    .type tf_test_spin3, %function
    .thumb_func
tf_test_spin3:
1:  subs    r0, r0, #1
    nop
    bne     1b
    bx      lr
    .size tf_test_spin3, . - tf_test_spin3
