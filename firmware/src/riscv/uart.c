/* tf_putc() through the NS16550 UART of QEMU's virt machine (-nographic: QEMU's stdout). */
#include <stdint.h>

#include "board.h"
#include "tightfit_board.h"

#define UART_THR (*(volatile uint8_t*)(TF_UART0_BASE + 0u))
#define UART_LSR (*(volatile uint8_t*)(TF_UART0_BASE + 5u))
#define UART_LSR_THR_EMPTY 0x20u

void tf_putc(char c) {
  while (!(UART_LSR & UART_LSR_THR_EMPTY)) {
  }
  UART_THR = (uint8_t)c;
}
