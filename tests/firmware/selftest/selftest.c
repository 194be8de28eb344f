/* Board-support self test: each check prints "TIGHTFIT <check>=1" when it holds (0 when not) and
 * main returns the number of checks that failed. tests/firmware/CMakeLists.txt turns each check
 * into a ctest test. */
#include <stdint.h>

#include "tightfit_board.h"

void tf_test_spin2(uint32_t n);
void tf_test_spin3(uint32_t n);

extern const char __tightfit_arena_start[], __tightfit_arena_end[];
extern const char __tightfit_stack_limit[], __tightfit_stack_top[];

static int failures;

static void report(const char* check, int ok) {
  tf_puts("TIGHTFIT");
  tf_figure(check, ok ? 1u : 0u);
  tf_putc('\n');
  if (!ok) ++failures;
}

/* RAM starts zeroed in QEMU, so this value is there only if the start-up code copied .data. */
static volatile uint32_t initialized = 0x600DF00Du;

static volatile int constructor_ran;
__attribute__((constructor)) static void set_constructor_flag(void) { constructor_ran = 1; }

/* Float arithmetic faults (UsageFault, exit 125) unless the start-up code enabled the FPU. */
static int float_works(void) {
  volatile float a = 1.5f, b = 2.25f;
  return a * b == 3.375f;
}

/* A stand-in for a model's arena, as the generated code declares it (not static and written
 * through volatile, so that the compiler keeps all of it). */
#define ARENA_BYTES 1234
__attribute__((section(".tightfit_arena"))) uint8_t arena[ARENA_BYTES];

static int arena_section_is_the_arena(void) {
  ((volatile uint8_t*)arena)[ARENA_BYTES - 1] = 1;
  /* Through volatile integers: the compiler may assume that two distinct objects never share an
   * address and fold the comparison away. */
  volatile uintptr_t start = (uintptr_t)__tightfit_arena_start;
  volatile uintptr_t end = (uintptr_t)__tightfit_arena_end;
  return end - start == ARENA_BYTES && start == (uintptr_t)arena;
}

/* A loop of `step` instructions per round, run for n = 1..100 rounds, must measure exactly `step`
 * more for each round: over several timer ticks (40 instructions each), so that every phase of
 * the tick is crossed. */
static int count_steps_exactly(void (*spin)(uint32_t), uint32_t step) {
  uint32_t previous = 0;
  int exact = 1;
  for (uint32_t n = 1; n <= 100; ++n) {
    tf_count_begin();
    spin(n);
    const uint32_t count = tf_count_end();
    if (n > 1 && count != previous + step) {
      tf_puts("TIGHTFIT");
      tf_figure("step", step);
      tf_figure("rounds", n);
      tf_figure("instructions", count);
      tf_figure("previous", previous);
      tf_putc('\n');
      exact = 0;
    }
    previous = count;
  }
  return exact;
}

/* A data-independent MAC loop, counted once: the host runs the firmware twice and compares. */
static int8_t mac_a[1000], mac_b[1000];
static volatile int32_t mac_sink;

static void mac_loop(void) {
  int32_t acc = 0;
  for (int i = 0; i < 1000; ++i) acc += (int32_t)mac_a[i] * mac_b[i];
  mac_sink = acc;
}

/* Touches a 4 KiB frame: the painted stack must show at least that much. */
#define KNOWN_FRAME 4096
__attribute__((noinline)) static void use_known_frame(void) {
  volatile uint8_t frame[KNOWN_FRAME];
  for (int i = 0; i < KNOWN_FRAME; i += 64) frame[i] = (uint8_t)i;
  frame[0] = frame[KNOWN_FRAME - 1];
}

int main(void) {
  report("data_copied", initialized == 0x600DF00Du);
  report("constructors_ran", constructor_ran == 1);
  report("fpu_enabled", float_works());
  report("arena_section_is_the_arena", arena_section_is_the_arena());
  report("instruction_count_exact", count_steps_exactly(tf_test_spin2, 2) && count_steps_exactly(tf_test_spin3, 3));

  for (int i = 0; i < 1000; ++i) {
    mac_a[i] = (int8_t)(i * 7);
    mac_b[i] = (int8_t)(i * 13 + 5);
  }
  tf_count_begin();
  mac_loop();
  const uint32_t mac_instructions = tf_count_end();
  tf_puts("TIGHTFIT");
  tf_figure("mac_loop_instructions", mac_instructions);
  tf_putc('\n');

  tf_stack_paint();
  use_known_frame();
  const uint32_t peak = tf_stack_peak_bytes();
  const uint32_t stack_bytes = (uint32_t)(__tightfit_stack_top - __tightfit_stack_limit);
  report("stack_peak_covers_known_frame", peak >= KNOWN_FRAME && peak < stack_bytes);

  tf_print_memory_figures();
  return failures;
}
