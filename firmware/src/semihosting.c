/* Program exit through Arm semihosting: QEMU (with -semihosting-config enable=on) ends and hands
 * the status to its host as its own exit status. */
#include <stdint.h>

#include "tightfit_board.h"

#define SYS_EXIT_EXTENDED 0x20u
#define ADP_STOPPED_APPLICATION_EXIT 0x20026u

__attribute__((noreturn)) void tf_exit(int status) {
  /* SYS_EXIT_EXTENDED rather than SYS_EXIT: on 32-bit Arm only the extended call carries a status. */
  const uint32_t block[2] = {ADP_STOPPED_APPLICATION_EXIT, (uint32_t)status};
  register uint32_t op __asm__("r0") = SYS_EXIT_EXTENDED;
  register const uint32_t* arg __asm__("r1") = block;
  __asm__ volatile("bkpt 0xab" : : "r"(op), "r"(arg) : "memory");
  for (;;) {
  }
}

/* newlib's abort() and exit() end here. */
__attribute__((noreturn)) void _exit(int status) { tf_exit(status); }
