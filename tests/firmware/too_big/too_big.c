/* An arena of ARENA_BYTES in the arena section, as the generated code declares one. */
#include <stdint.h>

__attribute__((section(".tightfit_arena"))) uint8_t arena[ARENA_BYTES];

int main(void) {
  ((volatile uint8_t*)arena)[0] = 1;
  return arena[ARENA_BYTES - 1];
}
