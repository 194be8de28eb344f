#!/usr/bin/env bash
# The boards tightfit was asked for, each on its own model (issue #32), end to end as a user runs
# them, and the table of what they measured:
#   - Raspberry Pi Pico (RP2040: 264 KiB SRAM, 2 MiB flash): torchvision's SqueezeNet 1.1 at 224x224,
#     1000 classes (models/torchvision_models.py squeezenet1_1_224), `tightfit run --target
#     cortex-m0plus --max-ram 240K --io-outside` in QEMU: its outputs must equal the host build's
#     and ONNX Runtime's fused integer path (graph optimizations 'all') exactly, lie no further from
#     ORT's float path than ORT's fused path does (docs/numerics.md), and the RAM the firmware is
#     linked to use must fit the 264 KiB, the flash the 2 MiB;
#   - ESP32-S3 and STM32N6: TODO rows (other helpers' work: examples/memory/esp32s3.json, stm32n6.json).
#   bench/seed_boards.sh [BUILD_DIR] [WORK_DIR]   (defaults: build, BUILD_DIR/seed_boards)
# Needs Debian's python3-torch and python3-torchvision, qemu-system-arm and arm-none-eabi-g++.
# The Pico row takes about 25 minutes on one free core: the firmware's own compile of the model
# (the tiling search at 224x224) and 5.7e9 instructions in QEMU.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
work=${2:-$build/seed_boards}
tightfit=$build/compiler/tightfit
mkdir -p "$work"

# Raspberry Pi Pico: SqueezeNet 1.1 at 224x224.
name=squeezenet1_1_224
pico=$work/pico
model=$pico/$name.qdq.onnx input=$pico/$name.input_0.npy
[ -f "$model" ] || /usr/bin/python3 "$root/models/torchvision_models.py" "$pico" "$name" 2>&1 | grep -v -i warning
rm -rf "$pico/host" "$pico/qemu" "$pico/ort" "$pico/ort_all"
mkdir -p "$pico/ort" "$pico/ort_all"
"$tightfit" run "$model" --input "$input" --output-dir "$pico/host" --max-ram 240K --io-outside >/dev/null
"$tightfit" run "$model" --input "$input" --output-dir "$pico/qemu" --max-ram 240K --io-outside \
  --target cortex-m0plus --timeout 3600 >"$pico/run.txt"
node "$root/models/dump.mjs" "$model" "$pico/ort" "$input"
node "$root/models/dump.mjs" --all "$model" "$pico/ort_all" "$input"

/usr/bin/python3 - "$pico" "$name" <<'PY'
import glob
import json
import sys

import numpy as np
import onnx
from onnx import numpy_helper

pico, name = sys.argv[1:]
RP2040_RAM, RP2040_FLASH, CLOCK_HZ = 264 * 1024, 2048 * 1024, 133e6
failures = []

qemu = np.load(f'{pico}/qemu/output_0.npy')
host = np.load(f'{pico}/host/output_0.npy')
fused = np.load(f'{pico}/ort_all/output.npy')
float_path = np.load(f'{pico}/ort/output.npy')
g = onnx.load(f'{pico}/{name}.qdq.onnx').graph
inits = {i.name: numpy_helper.to_array(i) for i in g.initializer}
producer = {o: n for n in g.node for o in n.output}
n = producer[g.output[0].name]
while n.op_type != 'DequantizeLinear':  # a float Flatten may follow the last one
    n = producer[n.input[0]]
scale = float(inits[n.input[1]])
if qemu.dtype != host.dtype or qemu.tobytes() != host.tobytes():
    failures.append('the firmware in QEMU differs from the host build')
if qemu.shape != fused.shape or not (qemu == fused).all():
    failures.append("the firmware differs from ONNX Runtime's fused integer path")
ours_lsb = np.abs(qemu.astype(np.float64) - float_path).max() / scale
ort_lsb = np.abs(fused.astype(np.float64) - float_path).max() / scale
if ours_lsb > max(1, ort_lsb):
    failures.append(f"{ours_lsb:.0f} LSB from ORT's float path, its fused path {ort_lsb:.0f}")

report = json.load(open(glob.glob(f'{pico}/qemu/*.report.json')[0]))
m = report['measured']
ram, flash = m['ram'], m['flash']
linked = ram['linked_bytes']
in_use = ram['arena_bytes'] + ram['data_bytes'] + ram['bss_bytes'] + ram['stack_peak_bytes']
if ram['arena_bytes'] != report['arena_bytes']:
    failures.append(f"the arena section {ram['arena_bytes']} B is not the report's {report['arena_bytes']} B")
if linked > RP2040_RAM:
    failures.append(f'{linked} B of RAM linked, over the RP2040\'s {RP2040_RAM}')
if flash['total_bytes'] > RP2040_FLASH:
    failures.append(f"{flash['total_bytes']} B of flash, over the Pico's {RP2040_FLASH}")
tiled = [r for r in report.get('rewrites', []) if r.get('technique') == 'tiling']
print(f'{"board":<22} {"model":<28} {"arena B":>8} {"RAM linked B":>13} {"RAM in use B":>13} {"flash B":>10} '
      f'{"weights B":>10} {"instructions":>13} {"s at 133 MHz":>13}  outputs')
print(f'{"Pico (cortex-m0plus)":<22} {"SqueezeNet 1.1 224, 1000":<28} {ram["arena_bytes"]:>8} {linked:>13} {in_use:>13} '
      f'{flash["total_bytes"]:>10} {flash["weights_bytes"]:>10} {m["instructions"]:>13} '
      f'{m["instructions"] / CLOCK_HZ:>13.1f}  {"= host, = ORT fused" if not failures else "FAIL"}; '
      f'{ours_lsb:.0f} LSB from ORT float (its fused {ort_lsb:.0f})')
print(f'{"ESP32-S3":<22} {"TODO (examples/memory/esp32s3.json: SRAM tiled; PSRAM untiled)"}')
print(f'{"STM32N6 (cortex-m55)":<22} {"TODO (MobileNetV2 0.35 128/224 and 1.0 224, examples/memory/stm32n6.json)"}')
print(f'\nPico: stack reserved {ram["stack_bytes"]} B (peak {ram["stack_peak_bytes"]}), .data {ram["data_bytes"]}, '
      f'.bss {ram["bss_bytes"]}; flash: weights {flash["weights_bytes"]}, test image {flash["inputs_bytes"]} '
      f'(quantized, read in place), code and constants {flash["total_bytes"] - flash["weights_bytes"] - flash["inputs_bytes"]}; '
      f'{len(tiled)} tiling rewrite(s); time at one instruction per cycle (a lower bound: ARMv6-M loads take 2)')
for f in failures:
    print(f'FAIL: {f}')
sys.exit(1 if failures else 0)
PY
