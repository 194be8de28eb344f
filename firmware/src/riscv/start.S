/* Reset entry for RV32 boards: the first bytes of the image (QEMU's virt machine starts there
 * with -bios none). Sets the stack pointer, then C does the rest (startup.c). */
    .section .vectors, "ax"
    .global Reset_Handler
    .type Reset_Handler, %function
Reset_Handler:
    la      sp, __tightfit_stack_top
    call    tf_reset
1:  j       1b
    .size Reset_Handler, . - Reset_Handler
