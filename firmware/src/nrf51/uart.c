/* tf_putc() through the nRF51's UART (QEMU's microbit sends it to stdout with -nographic). */
#include <stdint.h>

#include "board.h"
#include "tightfit_board.h"

#define UART_REG(offset) (*(volatile uint32_t*)(TF_UART0_BASE + (offset)))
#define UART_TASKS_STARTTX UART_REG(0x008u)
#define UART_EVENTS_TXDRDY UART_REG(0x11Cu)
#define UART_ENABLE UART_REG(0x500u)
#define UART_TXD UART_REG(0x51Cu)
#define UART_ENABLE_ON 4u

void tf_putc(char c) {
  if (UART_ENABLE != UART_ENABLE_ON) {
    UART_ENABLE = UART_ENABLE_ON;
    UART_TASKS_STARTTX = 1u;
  }
  UART_EVENTS_TXDRDY = 0u;
  UART_TXD = (uint8_t)c;
  while (UART_EVENTS_TXDRDY == 0u) {
  }
}
