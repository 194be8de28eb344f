/* Text output on top of the board's tf_putc(): strings, numbers and "key=value" figures. */
#include <stdint.h>

#include "tightfit_board.h"

void tf_puts(const char* text) {
  while (*text) tf_putc(*text++);
}

void tf_put_u64(uint64_t value) {
  char digits[20];
  int n = 0;
  do {
    digits[n++] = (char)('0' + value % 10u);
    value /= 10u;
  } while (value != 0);
  while (n > 0) tf_putc(digits[--n]);
}

/* The instruction count needs the 64-bit printer anyway, so its division routine is linked. */
void tf_put_u32(uint32_t value) { tf_put_u64(value); }

void tf_put_i32(int32_t value) {
  if (value < 0) {
    tf_putc('-');
    /* Through unsigned, so that INT32_MIN does not overflow. */
    tf_put_u32(0u - (uint32_t)value);
  } else {
    tf_put_u32((uint32_t)value);
  }
}

void tf_figure(const char* key, uint32_t value) {
  tf_putc(' ');
  tf_puts(key);
  tf_putc('=');
  tf_put_u32(value);
}

void tf_figure_u64(const char* key, uint64_t value) {
  tf_putc(' ');
  tf_puts(key);
  tf_putc('=');
  tf_put_u64(value);
}
