/* Text output through the CMSDK APB UART 0. */
#include <stdint.h>

#include "board.h"
#include "tightfit_board.h"

#define UART_DATA (*(volatile uint32_t *)(TF_UART0_BASE + 0x00u))
#define UART_STATE (*(volatile uint32_t *)(TF_UART0_BASE + 0x04u))
#define UART_CTRL (*(volatile uint32_t *)(TF_UART0_BASE + 0x08u))
#define UART_BAUDDIV (*(volatile uint32_t *)(TF_UART0_BASE + 0x10u))

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

void tf_puts(const char *text) {
  while (*text) tf_putc(*text++);
}

void tf_put_u32(uint32_t value) {
  char digits[10];
  int n = 0;
  do {
    digits[n++] = (char)('0' + value % 10u);
    value /= 10u;
  } while (value != 0);
  while (n > 0) tf_putc(digits[--n]);
}

void tf_put_i32(int32_t value) {
  if (value < 0) {
    tf_putc('-');
    /* Through unsigned, so that INT32_MIN does not overflow. */
    tf_put_u32(0u - (uint32_t)value);
  } else {
    tf_put_u32((uint32_t)value);
  }
}

void tf_figure(const char *key, uint32_t value) {
  tf_putc(' ');
  tf_puts(key);
  tf_putc('=');
  tf_put_u32(value);
}
