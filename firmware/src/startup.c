/* Vector table and reset handler: the C environment a tightfit firmware runs in. */
#include <stdint.h>

#include "board.h"
#include "tightfit_board.h"

extern uint32_t __tightfit_stack_top[];

/* c_runtime.c */
__attribute__((noreturn)) void tf_run_program(void);

/* Coprocessor Access Control Register: CP10 and CP11 are the FPU. */
#define SCB_CPACR (*(volatile uint32_t*)0xE000ED88u)

static void enable_fpu(void) {
#if defined(__ARM_FP)
  SCB_CPACR |= (0xFu << 20);
  /* The next instruction may be a float one: let the enable take effect first. */
  __asm__ volatile("dsb\n\tisb" ::: "memory");
#endif
}

__attribute__((noreturn)) void Reset_Handler(void) {
  /* Before anything else: memcpy and C++ constructors may use FPU registers. */
  enable_fpu();
  tf_run_program();
}

/* Any fault or unexpected interrupt ends the run with a status that no test expects. */
static void Default_Handler(void) {
  tf_puts("TIGHTFIT fault=1\n");
  tf_exit(125);
}

void NMI_Handler(void) __attribute__((weak, alias("Default_Handler")));
void HardFault_Handler(void) __attribute__((weak, alias("Default_Handler")));
void MemManage_Handler(void) __attribute__((weak, alias("Default_Handler")));
void BusFault_Handler(void) __attribute__((weak, alias("Default_Handler")));
void UsageFault_Handler(void) __attribute__((weak, alias("Default_Handler")));
void SVC_Handler(void) __attribute__((weak, alias("Default_Handler")));
void DebugMon_Handler(void) __attribute__((weak, alias("Default_Handler")));
void PendSV_Handler(void) __attribute__((weak, alias("Default_Handler")));
void SysTick_Handler(void) __attribute__((weak, alias("Default_Handler")));

typedef void (*vector_t)(void);

/* Cortex-M layout: initial stack pointer, 15 system exceptions, then the device interrupts. */
__attribute__((section(".vectors"), used)) static const vector_t vector_table[16 + TF_IRQ_COUNT] = {
    [0] = (vector_t)__tightfit_stack_top,
    [1] = Reset_Handler,
    [2] = NMI_Handler,
    [3] = HardFault_Handler,
    [4] = MemManage_Handler,
    [5] = BusFault_Handler,
    [6] = UsageFault_Handler,
    [11] = SVC_Handler,
    [12] = DebugMon_Handler,
    [14] = PendSV_Handler,
    [15] = SysTick_Handler,
    [16 ... 16 + TF_IRQ_COUNT - 1] = Default_Handler,
};
