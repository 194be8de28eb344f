/* ARM MPS3 with the AN547 FPGA image: Cortex-M55 with FPU and Helium (MVE), SSE-300 subsystem
 * (QEMU: mps3-an547). The firmware runs in the Secure state, as the core comes out of reset, and
 * uses the Secure aliases of the peripherals. */
#ifndef TIGHTFIT_BOARD_MPS3_AN547_H
#define TIGHTFIT_BOARD_MPS3_AN547_H

#define TF_UART0_BASE 0x59303000u
/* The SSE-300 system counter (CNTCONTROL frame, then CNTREAD's low word): 64 bits counting up
 * from the 32 MHz SYSCLK. Under -icount shift=0 (1 ns per instruction) it ticks every 31.25
 * instructions, i.e. 4 ticks per 125 instructions (docs/firmware.md: how the counter still
 * resolves single instructions). */
#define TF_SSE_COUNTER_CONTROL 0x58100000u
#define TF_COUNTER_VALUE 0x58101000u
#define TF_COUNTER_COUNTS_DOWN 0
#define TF_COUNTER_READS 125
#define TF_COUNTER_TICKS_PER_READS 4
#define TF_IRQ_COUNT 96

#endif
