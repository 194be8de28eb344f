/* A QEMU TCG plugin that counts a firmware's data accesses off their natural alignment, for
 * bench/unaligned/run: how many cycles byte-aligned buffers can cost on a core that splits an
 * unaligned access (docs/tiling.md, "Byte-aligned buffers").
 *
 * Debian ships QEMU's plugin support but not its header, so the few declarations of the plugin
 * API (version 1, QEMU 7.2) that this file uses are written out here.
 *
 * At exit it prints one line, in the firmware's "TIGHTFIT key=value" form (firmware/tools/run_qemu.py
 * collects it with the firmware's own figures):
 *   TIGHTFIT loads=N stores=N word_loads_odd=N word_loads_half=N half_loads_odd=N
 *            word_stores_odd=N word_stores_half=N half_stores_odd=N
 * word_*_odd: 4-byte accesses at an address 1 or 3 modulo 4; word_*_half: at 2 modulo 4;
 * half_*_odd: 2-byte accesses at an odd address. loads and stores count every data access. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef uint64_t qemu_plugin_id_t;
typedef uint32_t qemu_plugin_meminfo_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS };
enum qemu_plugin_mem_rw { QEMU_PLUGIN_MEM_R = 1, QEMU_PLUGIN_MEM_W, QEMU_PLUGIN_MEM_RW };

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, void (*cb)(qemu_plugin_id_t, struct qemu_plugin_tb*));
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb* tb);
struct qemu_plugin_insn* qemu_plugin_tb_get_insn(const struct qemu_plugin_tb* tb, size_t idx);
void qemu_plugin_register_vcpu_mem_cb(struct qemu_plugin_insn* insn,
                                      void (*cb)(unsigned int, qemu_plugin_meminfo_t, uint64_t, void*),
                                      enum qemu_plugin_cb_flags flags, enum qemu_plugin_mem_rw rw, void* userdata);
unsigned qemu_plugin_mem_size_shift(qemu_plugin_meminfo_t info);
bool qemu_plugin_mem_is_store(qemu_plugin_meminfo_t info);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, void (*cb)(qemu_plugin_id_t, void*), void* userdata);
void qemu_plugin_outs(const char* string);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

/* [store][kind]: 0 every access, 1 word at 1 or 3 mod 4, 2 word at 2 mod 4, 3 halfword at odd. */
static uint64_t counts[2][4];

static void on_access(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void* userdata) {
  (void)vcpu;
  (void)userdata;
  uint64_t* c = counts[qemu_plugin_mem_is_store(info) ? 1 : 0];
  const unsigned shift = qemu_plugin_mem_size_shift(info);
  ++c[0];
  if (shift == 2 && (vaddr & 1) != 0) ++c[1];
  if (shift == 2 && (vaddr & 3) == 2) ++c[2];
  if (shift == 1 && (vaddr & 1) != 0) ++c[3];
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb* tb) {
  (void)id;
  const size_t n = qemu_plugin_tb_n_insns(tb);
  for (size_t i = 0; i < n; ++i)
    qemu_plugin_register_vcpu_mem_cb(qemu_plugin_tb_get_insn(tb, i), on_access, QEMU_PLUGIN_CB_NO_REGS,
                                     QEMU_PLUGIN_MEM_RW, NULL);
}

static void on_exit(qemu_plugin_id_t id, void* userdata) {
  (void)id;
  (void)userdata;
  char line[400];
  snprintf(line, sizeof line,
           "TIGHTFIT loads=%llu stores=%llu word_loads_odd=%llu word_loads_half=%llu half_loads_odd=%llu "
           "word_stores_odd=%llu word_stores_half=%llu half_stores_odd=%llu\n",
           (unsigned long long)counts[0][0], (unsigned long long)counts[1][0], (unsigned long long)counts[0][1],
           (unsigned long long)counts[0][2], (unsigned long long)counts[0][3], (unsigned long long)counts[1][1],
           (unsigned long long)counts[1][2], (unsigned long long)counts[1][3]);
  qemu_plugin_outs(line);
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id, const void* info, int argc,
                                                               char** argv) {
  (void)info;
  (void)argc;
  (void)argv;
  qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
  qemu_plugin_register_atexit_cb(id, on_exit, NULL);
  return 0;
}
