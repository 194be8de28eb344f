/* A Cortex-M0+ with the Raspberry Pi Pico's (RP2040's) memory: an ARMv6-M image (soft float)
 * linked for 2 MiB of flash and 264 KiB of SRAM, run on QEMU's mps2-an385 (a Cortex-M3 with the
 * CMSDK peripherals of the other MPS2 boards): QEMU models no Cortex-M0+ board with that much
 * RAM. The Cortex-M3 executes the ARMv6-M instructions of the image one for one, so the
 * instruction counts are those of the Cortex-M0+ build. */
#ifndef TIGHTFIT_BOARD_CORTEX_M0PLUS_H
#define TIGHTFIT_BOARD_CORTEX_M0PLUS_H

#define TF_UART0_BASE 0x40004000u
#define TF_DUALTIMER_BASE 0x40002000u
/* The timers run from the 25 MHz SYSCLK: under -icount shift=0 (1 ns per instruction) one tick
 * is 40 instructions. The instruction counter reads the dual timer's first counter (VALUE,
 * counting down). */
#define TF_COUNTER_VALUE (TF_DUALTIMER_BASE + 0x04u)
#define TF_COUNTER_COUNTS_DOWN 1
#define TF_COUNTER_READS 40
#define TF_COUNTER_TICKS_PER_READS 1
#define TF_IRQ_COUNT 32

#endif
