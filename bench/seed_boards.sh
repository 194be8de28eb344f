#!/usr/bin/env bash
# The boards tightfit was asked for, each on its own model (issue #32), end to end as a user runs
# them, and the table of what they measured:
#   - Raspberry Pi Pico (RP2040: 264 KiB SRAM, 2 MiB flash): torchvision's SqueezeNet 1.1 at 224x224,
#     1000 classes (models/torchvision_models.py squeezenet1_1_224), `tightfit run --target
#     cortex-m0plus --max-ram 240K --io-outside` in QEMU: its outputs must equal the host build's
#     and ONNX Runtime's fused integer path (graph optimizations 'all') exactly, lie no further from
#     ORT's float path than ORT's fused path does (docs/numerics.md), and the RAM the firmware is
#     linked to use must fit the 264 KiB, the flash the 2 MiB;
#   - ESP32-S3 (8 MB PSRAM): the same SqueezeNet planned, not run, against examples/memory/esp32s3.json:
#     the plan the cap keeps and the other (untiled with the big buffers in PSRAM; all in SRAM, tiled);
#   - STM32N6: torchvision's MobileNetV2 0.35 at 128x128 and 224x224 and 1.0 at 224x224, 1000 classes
#     (mobilenet_v2_035_128, mobilenet_v2_035_224, mobilenet_v2_224): the arena on stm32n6.json's
#     AXISRAM3-6, untiled (--no-tiling, one arena) and at its least (the smallest --max-ram that
#     compiles), inputs and outputs inside as the vendor counts them, against STM32Cube.AI's figures;
#     each run on the Cortex-M55 (`--target mps3-an547 --max-ram 400K --io-outside`, weights in its
#     QSPI flash), its outputs equal to the host build's and ORT's fused integer path.
#   [SEED_BOARDS='pico esp32s3 stm32n6'] bench/seed_boards.sh [BUILD_DIR] [WORK_DIR]
#   (defaults: every board; build, BUILD_DIR/seed_boards)
# Needs Debian's python3-torch and python3-torchvision, qemu-system-arm and arm-none-eabi-g++.
# The Pico row takes about 25 minutes on one free core: the firmware's own compile of the model
# (the tiling search at 224x224) and 5.7e9 instructions in QEMU; the STM32N6's about 10 minutes.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
work=${2:-$build/seed_boards}
tightfit=$build/compiler/tightfit
boards=" ${SEED_BOARDS:-pico esp32s3 stm32n6} "
mkdir -p "$work"
status=0

# Raspberry Pi Pico: SqueezeNet 1.1 at 224x224.
name=squeezenet1_1_224
if [[ $boards == *" pico "* ]]; then
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

PYTHONPATH="$root/models" /usr/bin/python3 - "$pico" "$name" <<'PY' || status=1
import glob
import json
import sys

import numpy as np
from ort_agreement import agreement, output_scale

pico, name = sys.argv[1:]
RP2040_RAM, RP2040_FLASH, CLOCK_HZ = 264 * 1024, 2048 * 1024, 133e6
failures = []

qemu = np.load(f'{pico}/qemu/output_0.npy')
host = np.load(f'{pico}/host/output_0.npy')
ort = agreement(qemu, np.load(f'{pico}/ort_all/output.npy'), np.load(f'{pico}/ort/output.npy'),
                output_scale(f'{pico}/{name}.qdq.onnx'))
if qemu.dtype != host.dtype or qemu.tobytes() != host.tobytes():
    failures.append('the firmware in QEMU differs from the host build')
if not ort.equal_to_fused:
    failures.append("the firmware differs from ONNX Runtime's fused integer path")
if not ort.within_bound():
    failures.append(f"{ort.ours_lsb:.0f} LSB from ORT's float path, its fused path {ort.fused_lsb:.0f}")

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
      f'{ort.ours_lsb:.0f} LSB from ORT float (its fused {ort.fused_lsb:.0f})')
print(f'\nPico: stack reserved {ram["stack_bytes"]} B (peak {ram["stack_peak_bytes"]}), .data {ram["data_bytes"]}, '
      f'.bss {ram["bss_bytes"]}; flash: weights {flash["weights_bytes"]}, test image {flash["inputs_bytes"]} '
      f'(quantized, read in place), code and constants {flash["total_bytes"] - flash["weights_bytes"] - flash["inputs_bytes"]}; '
      f'{len(tiled)} tiling rewrite(s); time at one instruction per cycle (a lower bound: ARMv6-M loads take 2)')
for f in failures:
    print(f'FAIL: {f}')
sys.exit(1 if failures else 0)
PY
fi

# ESP32-S3: the same SqueezeNet planned against the S3's SRAM and PSRAM (compile only: no Xtensa board runs).
if [[ $boards == *" esp32s3 "* ]]; then
  s3=$work/esp32s3
  mkdir -p "$s3"
  [ -f "$s3/$name.qdq.onnx" ] || /usr/bin/python3 "$root/models/torchvision_models.py" "$s3" "$name" 2>&1 |
    grep -v -i warning
  "$tightfit" compile "$s3/$name.qdq.onnx" --memory "$root/examples/memory/esp32s3.json" -o "$s3/plan" \
    --target none >/dev/null
  /usr/bin/python3 - "$s3/plan/${name}_qdq.report.json" <<'PY' || status=1
import json
import sys

r = json.load(open(sys.argv[1]))
plans = r['slow_regions']
print(f'\n{"ESP32-S3 plan (SqueezeNet 1.1 224)":<46} {"SRAM B":>9} {"PSRAM B":>9} {"MACs":>12} '
      f'{"instructions (M4 est.)":>22} {"PSRAM cycles":>12}')
for key, what in (('with_slow', 'untiled, big buffers in PSRAM'), ('free_only', 'all in SRAM, tiled')):
    p = plans[key]
    if p is None:
        print(f'{what:<46} does not fit')
        continue
    kept = ' (kept)' if plans['kept'] == key else ''
    print(f'{what + kept:<46} {p["region_bytes"][0]:>9} {p["region_bytes"][1]:>9} {p["macs"]:>12} '
          f'{p["instructions"]:>22} {p["slow_cycles"]:>12}')
sys.exit(0 if r['failure'] is None else 1)
PY
fi

# STM32N6: MobileNetV2, the vendor's activation RAM (issue #32: STM32 model zoo README, STM32Cube.AI 10.0,
# inputs and outputs inside) on its MCU runtime and its NPU; 1.0 at 224 has no vendor figure there.
if [[ $boards == *" stm32n6 "* ]]; then
  n6=$work/stm32n6
  mkdir -p "$n6"
  : >"$n6/rows.txt"
  for m in mobilenet_v2_035_128 mobilenet_v2_035_224 mobilenet_v2_224; do
    [ -f "$n6/$m.qdq.onnx" ] || /usr/bin/python3 "$root/models/torchvision_models.py" "$n6" "$m" 2>&1 |
      grep -v -i warning
    d=$n6/$m
    rm -rf "$d"
    mkdir -p "$d/ort" "$d/ort_all"
    compile() { "$tightfit" compile "$n6/$m.qdq.onnx" --target none "$@" >/dev/null 2>&1; }
    arena() { /usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["arena_bytes"])' "$1"; }
    report=${m}_qdq.report.json
    compile --memory "$root/examples/memory/stm32n6.json" -o "$d/regions"
    compile -o "$d/untiled"  # one arena, no cap: nothing tiled
    # The least: the one arena's tiling search's least level, or less where byte-aligned buffers take it lower;
    # one byte under it must not compile.
    least=$(/usr/bin/python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))
print(r["ram_vs_cost"][-1]["arena_bytes"])' \
      "$d/untiled/$report")
    if compile --max-ram $((least - 1)) -o "$d/least"; then least=$(arena "$d/least/$report"); fi
    compile --max-ram "$least" -o "$d/least"
    if compile --max-ram $((least - 1)) -o "$d/under"; then
      echo "FAIL: $m compiles under its least, $least B"
      status=1
    fi
    input=$n6/$m.input_0.npy
    "$tightfit" run "$n6/$m.qdq.onnx" --input "$input" --output-dir "$d/host" --max-ram 400K --io-outside >/dev/null
    "$tightfit" run "$n6/$m.qdq.onnx" --input "$input" --output-dir "$d/qemu" --max-ram 400K --io-outside \
      --target mps3-an547 --timeout 3600 >"$d/run.txt"
    node "$root/models/dump.mjs" "$n6/$m.qdq.onnx" "$d/ort" "$input" >/dev/null
    node "$root/models/dump.mjs" --all "$n6/$m.qdq.onnx" "$d/ort_all" "$input" >/dev/null
    PYTHONPATH="$root/models" /usr/bin/python3 - "$n6" "$m" "$least" >>"$n6/rows.txt" <<'PY' || status=1
import glob
import json
import sys

import numpy as np
from ort_agreement import agreement, output_scale

n6, m, least = sys.argv[1], sys.argv[2], int(sys.argv[3])
d = f'{n6}/{m}'
VENDOR = {'mobilenet_v2_035_128': ('237.32 KiB', '240 KB'), 'mobilenet_v2_035_224': ('832.64 KiB', '980 KB'),
          'mobilenet_v2_224': ('-', '-')}
MODEL = {'mobilenet_v2_035_128': 'MobileNetV2 0.35, 128', 'mobilenet_v2_035_224': 'MobileNetV2 0.35, 224',
         'mobilenet_v2_224': 'MobileNetV2 1.0, 224'}
report = lambda kind: json.load(open(glob.glob(f'{d}/{kind}/*.report.json')[0]))
regions, untiled = report('regions'), report('untiled')
qemu = np.load(f'{d}/qemu/output_0.npy')
host = np.load(f'{d}/host/output_0.npy')
ort = agreement(qemu, np.load(f'{d}/ort_all/output.npy'), np.load(f'{d}/ort/output.npy'),
                output_scale(f'{n6}/{m}.qdq.onnx'))
failures = []
if qemu.dtype != host.dtype or qemu.tobytes() != host.tobytes():
    failures.append('QEMU differs from the host build')
if not ort.equal_to_fused:
    failures.append("differs from ORT's fused path")
if not ort.within_bound():
    failures.append(f"{ort.ours_lsb:.0f} LSB from ORT's float path, its fused path {ort.fused_lsb:.0f}")
if regions['failure'] is not None or not untiled['io_in_arena'] or not regions['io_in_arena']:
    failures.append('the N6 plan failed or left the inputs and outputs out')
if any(r.get('technique') == 'tiling' for r in untiled['rewrites']):
    failures.append('the untiled plan is tiled')
measured = report('qemu')['measured']
peaks = '+'.join(str(r['peak']) for r in regions['regions'] if r['peak'])
kib = lambda b: f'{b / 1024:.2f} KiB'
print(f'{MODEL[m]:<22} {VENDOR[m][0]:>11} {VENDOR[m][1]:>8} {kib(untiled["arena_bytes"]):>12} '
      f'{kib(regions["arena_bytes"]):>11} ({peaks:<20}) {kib(least):>11} {measured["ram"]["arena_bytes"]:>9} '
      f'{measured["instructions"]:>13} {measured["flash"]["total_bytes"]:>9}  '
      + ('; '.join(f'FAIL: {f}' for f in failures) or '= host, = ORT fused')
      + f'; {ort.ours_lsb:.0f} LSB from ORT float (its fused {ort.fused_lsb:.0f})')
sys.exit(1 if failures else 0)
PY
  done
  echo
  printf '%-22s %11s %8s %12s %11s %-22s %11s %9s %13s %9s  %s\n' 'STM32N6 model' 'Cube.AI MCU' 'NPU' \
    'untiled' 'on AXISRAM' '(per region B)' 'least' 'M55 arena' 'M55 instr.' 'flash B' 'outputs'
  cat "$n6/rows.txt"
fi
exit $status
