/* ARM MPS2 with the AN500 FPGA image: Cortex-M7 with double-precision FPU; same memory map and
 * CMSDK peripherals as the AN385/AN386 (QEMU: mps2-an500). */
#ifndef TIGHTFIT_BOARD_MPS2_AN500_H
#define TIGHTFIT_BOARD_MPS2_AN500_H

#define TF_UART0_BASE 0x40004000u
#define TF_DUALTIMER_BASE 0x40002000u
/* 25 MHz SYSCLK, 1 ns per instruction under -icount shift=0: 40 instructions per tick. */
/* The instruction counter reads the dual timer's first counter (VALUE, counting down). */
#define TF_COUNTER_VALUE (TF_DUALTIMER_BASE + 0x04u)
#define TF_COUNTER_COUNTS_DOWN 1
#define TF_COUNTER_READS 40
#define TF_COUNTER_TICKS_PER_READS 1
#define TF_IRQ_COUNT 32

#endif
