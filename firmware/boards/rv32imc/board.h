/* An RV32IMC core with the ESP32-C3's memory (4 MiB of flash, 400 KiB of SRAM), run on QEMU's
 * riscv32 `virt` machine (qemu-system-misc): its NS16550 UART and its SiFive test device (the
 * exit status); instructions from the minstret counter, which under -icount counts each retired
 * instruction. */
#ifndef TIGHTFIT_BOARD_RV32IMC_H
#define TIGHTFIT_BOARD_RV32IMC_H

#define TF_UART0_BASE 0x10000000u
#define TF_TEST_FINISHER 0x00100000u

#endif
