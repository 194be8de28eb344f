/* tf_putc() through the CMSDK APB UART 0 (text.c builds the rest of the text output on it). */
#include <stdint.h>

#include "board.h"
#include "tightfit_board.h"

#define UART_DATA (*(volatile uint32_t*)(TF_UART0_BASE + 0x00u))
#define UART_STATE (*(volatile uint32_t*)(TF_UART0_BASE + 0x04u))
#define UART_CTRL (*(volatile uint32_t*)(TF_UART0_BASE + 0x08u))
#define UART_BAUDDIV (*(volatile uint32_t*)(TF_UART0_BASE + 0x10u))

#define UART_STATE_TX_FULL 0x1u
#define UART_CTRL_TX_ENABLE 0x1u
/* The smallest divider the UART accepts; QEMU ignores the rate, real boards want their own. */
#define UART_MIN_BAUDDIV 16u

void tf_putc(char c) {
  if (!(UART_CTRL & UART_CTRL_TX_ENABLE)) {
    UART_BAUDDIV = UART_MIN_BAUDDIV;
    UART_CTRL = UART_CTRL_TX_ENABLE;
  }
  while (UART_STATE & UART_STATE_TX_FULL) {
  }
  UART_DATA = (uint8_t)c;
}
