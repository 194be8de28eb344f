/* ARM MPS2 with the AN386 FPGA image: Cortex-M4 with FPU, CMSDK peripherals (QEMU: mps2-an386). */
#ifndef TIGHTFIT_BOARD_MPS2_AN386_H
#define TIGHTFIT_BOARD_MPS2_AN386_H

#define TF_UART0_BASE 0x40004000u
#define TF_DUALTIMER_BASE 0x40002000u
/* The timers run from the 25 MHz SYSCLK: under -icount shift=0 (1 ns per instruction) one tick
 * is 40 instructions. */
/* The instruction counter reads the dual timer's first counter (VALUE, counting down). */
#define TF_COUNTER_VALUE (TF_DUALTIMER_BASE + 0x04u)
#define TF_COUNTER_COUNTS_DOWN 1
#define TF_COUNTER_READS 40
#define TF_COUNTER_TICKS_PER_READS 1
#define TF_IRQ_COUNT 32

#endif
