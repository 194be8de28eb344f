/* BBC micro:bit (nRF51822: Cortex-M0, 256 KiB flash, 16 KiB RAM; QEMU: microbit), for the
 * cortex-m0plus build of the smallest models: QEMU models this core as ARMv6-M only, so a
 * firmware that runs here to the end used no ARMv7-M instruction (one would fault: exit 125).
 * Its timers are not read for instruction counts (the cortex-m0plus board counts the same
 * instructions exactly): tf_count_end() returns 0 here. */
#ifndef TIGHTFIT_BOARD_MICROBIT_H
#define TIGHTFIT_BOARD_MICROBIT_H

#define TF_UART0_BASE 0x40002000u
#define TF_IRQ_COUNT 32

#endif
