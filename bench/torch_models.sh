#!/usr/bin/env bash
# tightfit on PyTorch exports of common microcontroller networks (models/torchvision_models.py:
# torchvision MobileNetV2-0.35, MobileNetV3-Small, SqueezeNet 1.1, ShuffleNetV2 x0.5, MNASNet 0.5
# at 96x96, a DS-CNN for keyword spotting, a small U-Net), quantized as ONNX Runtime's
# quantize_static does (models/quantize_qdq.py: QDQ, per-channel int8 weights, uint8
# activations). Per model: the operators tightfit refuses (`tightfit inspect --json`, every
# unsupported node by op type), and for those that compile the arena with the defaults, with
# --no-overlap --no-reorder, with every switch off, the report's TFLite Micro greedy figure and
# lower bound, and the largest difference of `tightfit run` on the host from ONNX Runtime's
# QDQ float path (graph optimizations disabled, models/dump.mjs) in output LSBs, on one
# input drawn like the calibration inputs but not among them; and the same model quantized with
# 7-bit weights against ONNX Runtime's fused integer path ('all'), whose u8s8 kernels saturate
# with 8-bit weights on CPUs without VNNI (models/README.md); on a CPU with VNNI (lscpu), also the
# 8-bit model against 'all', with the operators ORT's optimized graph still runs in float
# between a DequantizeLinear and a QuantizeLinear (— when it fused the whole model into integer
# kernels, where tightfit must equal it exactly); and, when qemu-system-arm and
# arm-none-eabi-g++ are installed, `tightfit run --target mps2-an386` (Cortex-M4 in QEMU) against
# the same ORT output, with its instructions per inference.
#   bench/torch_models.sh [BUILD_DIR] [OUT_DIR]   (defaults: build, BUILD_DIR/torch_models)
# Needs Debian's python3-torch and python3-torchvision (./setup installs them).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
out=${2:-$build/torch_models}
tightfit=$build/compiler/tightfit
mkdir -p "$out"
/usr/bin/python3 "$root/models/torchvision_models.py" "$out" 2>&1 | grep -v -i warning

all_off=(--no-overlap --no-reorder --no-fold-pad --no-zero-copy-concat)
vnni=0; lscpu | grep -q vnni && vnni=1
compiled=()
for info in "$out"/*.json; do
  name=$(basename "$info" .json)
  case "$name" in *.*) continue ;; esac
  model=$out/$name.qdq.onnx
  "$tightfit" inspect --json "$model" >"$out/$name.inspect.json" 2>/dev/null || true
  rm -rf "$out/$name.compiled" && mkdir -p "$out/$name.compiled"
  for variant in default no-overlap-no-reorder all-off; do
    case $variant in
      default) flags=() ;;
      no-overlap-no-reorder) flags=(--no-overlap --no-reorder) ;;
      all-off) flags=("${all_off[@]}") ;;
    esac
    "$tightfit" compile "$model" -o "$out/$name.compiled/$variant" --name "$name" --target none --quiet \
      "${flags[@]}" 2>"$out/$name.compiled/$variant.err" || true
  done
  if [ -f "$out/$name.compiled/default/$name.report.json" ]; then
    rm -rf "$out/$name.run" "$out/$name.ort" && mkdir -p "$out/$name.run" "$out/$name.ort"
    "$tightfit" run "$model" --input "$out/$name.input_0.npy" --output-dir "$out/$name.run" >/dev/null
    node "$root/models/dump.mjs" "$model" "$out/$name.ort" "$out/$name.input_0.npy"
    if [ "$vnni" = 1 ]; then
      rm -rf "$out/$name.ort_all" && mkdir -p "$out/$name.ort_all"
      node "$root/models/dump.mjs" --all --save-optimized "$model" "$out/$name.ort_all" "$out/$name.input_0.npy"
    fi
    compiled+=("$name")
    if command -v qemu-system-arm >/dev/null && command -v arm-none-eabi-g++ >/dev/null; then
      rm -rf "$out/$name.m4" && mkdir -p "$out/$name.m4"
      "$tightfit" run "$model" --input "$out/$name.input_0.npy" --output-dir "$out/$name.m4" \
        --target mps2-an386 >"$out/$name.m4/log.txt" 2>"$out/$name.m4/error.txt" || true
    fi
  fi
done

# The models that compile again, with 7-bit weights, against ORT's fused integer kernels.
w7=$out/weights7
/usr/bin/python3 "$root/models/torchvision_models.py" "$w7" "${compiled[@]}" --weight-bits 7 2>&1 | grep -v -i warning
for name in "${compiled[@]}"; do
  rm -rf "$w7/$name.run" "$w7/$name.ort" && mkdir -p "$w7/$name.run" "$w7/$name.ort"
  "$tightfit" run "$w7/$name.qdq.onnx" --input "$w7/$name.input_0.npy" --output-dir "$w7/$name.run" >/dev/null
  node "$root/models/dump.mjs" --all "$w7/$name.qdq.onnx" "$w7/$name.ort" "$w7/$name.input_0.npy"
done

/usr/bin/python3 - "$out" "$root" <<'PY'
import collections, glob, json, os, re, sys
import numpy as np
import onnx
from onnx import numpy_helper

out, root = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(root, 'models'))
from quantize_qdq import QUANTIZED_OPS  # noqa: E402


def float_ops(model):
    """Operators ORT's quantizer leaves float (not in its default set), with counts."""
    c = collections.Counter(n.op_type for n in onnx.load(model).graph.node
                            if n.op_type not in QUANTIZED_OPS | {'QuantizeLinear', 'DequantizeLinear', 'Constant'})
    return ', '.join(f'{op} ({k})' for op, k in sorted(c.items())) or '—'


def left_float(optimized):
    """The operators of ORT's optimized graph that run in float: those a DequantizeLinear
    feeds, up to the next QuantizeLinear (— when ORT fused the whole model into integer
    kernels)."""
    g = onnx.load(optimized).graph
    consumers = collections.defaultdict(list)
    for n in g.node:
        for i in n.input:
            consumers[i].append(n)
    seen, work = set(), [o for n in g.node if n.op_type == 'DequantizeLinear' for o in n.output]
    c = collections.Counter()
    while work:
        for n in consumers[work.pop()]:
            if n.op_type == 'QuantizeLinear' or id(n) in seen:
                continue
            seen.add(id(n))
            c[n.op_type] += 1
            work.extend(n.output)
    return ', '.join(f'{op} ({k})' for op, k in sorted(c.items())) or '—'


def output_scale(model):
    """The scale of the last DequantizeLinear before the output (float ops such as a
    Flatten that ORT's quantizer leaves out may follow it)."""
    g = onnx.load(model).graph
    inits = {i.name: numpy_helper.to_array(i) for i in g.initializer}
    producer = {o: n for n in g.node for o in n.output}
    n = producer[g.output[0].name]
    while n.op_type != 'DequantizeLinear':
        n = producer[n.input[0]]
    return float(inits[n.input[1]])


print('| model | parameters | left float by the quantizer | refused operators (nodes) | arena | `--no-overlap --no-reorder` '
      '| all switches off | TFLite Micro greedy | lower bound | vs ORT (LSB) | 7-bit weights vs ORT fused (LSB) '
      '| ORT fused leaves float | vs ORT fused, VNNI (LSB) | Cortex-M4 (QEMU) vs ORT (LSB) | M4 instructions |')
print('|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|')
for info_path in sorted(glob.glob(os.path.join(out, '*.json'))):
    name = os.path.basename(info_path)[:-5]
    if '.' in name:
        continue
    info = json.load(open(info_path))
    insp = json.load(open(os.path.join(out, f'{name}.inspect.json')))
    refused = collections.Counter(u['op'] for u in insp.get('unsupported', []))
    cells = [name, f"{info['parameters']:,}", float_ops(os.path.join(out, name + '.qdq.onnx')),
             ', '.join(f'{op} ({k})' for op, k in sorted(refused.items())) or '—']
    reports = {}
    for variant in ('default', 'no-overlap-no-reorder', 'all-off'):
        p = os.path.join(out, f'{name}.compiled', variant, f'{name}.report.json')
        reports[variant] = json.load(open(p)) if os.path.exists(p) else None
    r = reports['default']
    if r is None and not refused:  # refused for a constraint, not an operator: the compiler's reason
        err = open(os.path.join(out, f'{name}.compiled', 'default.err')).read().strip()
        cells[3] = 'none; compile stops at ' + err.split('.qdq.onnx: ', 1)[-1]
    if r is None:
        cells += ['—'] * 11
    else:
        cells += [f"{reports[v]['arena_bytes']:,}" if reports[v] else 'fails'
                  for v in ('default', 'no-overlap-no-reorder', 'all-off')]
        cells += [f"{r['comparisons']['greedy_by_size_bytes']:,}", f"{r['lower_bound_bytes']:,}"]
        for d in (out, os.path.join(out, 'weights7')):
            ours = np.load(os.path.join(d, f'{name}.run', 'output_0.npy'))
            ort = np.load(os.path.join(d, f'{name}.ort', 'output.npy'))
            cells.append(f'{np.abs(ours - ort).max() / output_scale(os.path.join(d, name + ".qdq.onnx")):.0f}')
        fused = os.path.join(out, f'{name}.ort_all')
        if os.path.exists(os.path.join(fused, 'optimized.onnx')):
            ours = np.load(os.path.join(out, f'{name}.run', 'output_0.npy'))
            ort = np.load(os.path.join(fused, 'output.npy'))
            cells += [left_float(os.path.join(fused, 'optimized.onnx')),
                      f'{np.abs(ours - ort).max() / output_scale(os.path.join(out, name + ".qdq.onnx")):.0f}']
        else:
            cells += ['no VNNI'] * 2
        m4 = os.path.join(out, f'{name}.m4')
        if os.path.exists(os.path.join(m4, 'output_0.npy')):
            ours = np.load(os.path.join(m4, 'output_0.npy'))
            ort = np.load(os.path.join(out, f'{name}.ort', 'output.npy'))
            cells.append(f'{np.abs(ours - ort).max() / output_scale(os.path.join(out, name + ".qdq.onnx")):.0f}')
            speed = re.search(r'(\d+) instructions per inference', open(os.path.join(m4, 'log.txt')).read())
            cells.append(f'{int(speed.group(1)):,}' if speed else '?')
        elif os.path.exists(os.path.join(m4, 'error.txt')):  # did not build for the board
            why = open(os.path.join(m4, 'error.txt')).read()
            overflow = re.search(r"region `(\w+)' overflowed by (\d+) bytes", why)
            cells += [f'does not fit: {overflow.group(1)} short by {int(overflow.group(2)):,} B' if overflow
                      else why.strip().split(': ', 2)[-1], '—']
        else:
            cells += ['not run'] * 2
    print('| ' + ' | '.join(cells) + ' |')
PY
