#!/usr/bin/env bash
# usage: export_matches_ort.sh TIGHTFIT NAME [ACTIVATIONS ...]   (ACTIVATIONS: uint8, int8; default uint8)
# Exports NAME of models/torchvision_models.py, quantizes it as ORT's quantize_static (QDQ,
# per-channel int8 weights) with each activation type, runs it with `tightfit run` and with ONNX
# Runtime (models/dump.mjs) on an input drawn like the calibration inputs, and fails if tightfit
# refuses the model or
#  - its outputs differ at all from ORT's fused integer path (graph optimizations 'all'; ORT keeps
#    in float what it cannot fuse, as tightfit's float islands do). On a CPU without VNNI ORT's
#    u8s8 kernels saturate with 8-bit weights, so there the model gets 7-bit weights
#    (models/README.md);
#  - they lie further from ORT's QDQ float path (optimizations disabled) than ORT's own fused
#    path does, or by more than 1 LSB where that is 0: the float path rounds float sums, and a
#    value on a rounding tie goes either way and is carried on through a deep network
#    (docs/numerics.md).
set -euo pipefail
tightfit=$1 name=$2
shift 2
activations=("${@:-uint8}")
root=$(cd "$(dirname "$0")/../.." && pwd)
if ! /usr/bin/python3 -c 'import torch, torchvision' 2>/dev/null; then
  echo "SKIPPED: needs Debian's python3-torch and python3-torchvision (./setup installs them)"
  exit 77
fi
weight_bits=7; lscpu | grep -q vnni && weight_bits=8
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for act in "${activations[@]}"; do
  dir=$tmp/$act
  /usr/bin/python3 "$root/models/torchvision_models.py" "$dir" "$name" --activations "$act" --calib 8 \
    --weight-bits $weight_bits \
    2>&1 | grep -v -i warning
  mkdir -p "$dir/tightfit" "$dir/ort" "$dir/ort_all"
  "$tightfit" run "$dir/$name.qdq.onnx" --input "$dir/$name.input_0.npy" --output-dir "$dir/tightfit"
  node "$root/models/dump.mjs" "$dir/$name.qdq.onnx" "$dir/ort" "$dir/$name.input_0.npy"
  node "$root/models/dump.mjs" --all "$dir/$name.qdq.onnx" "$dir/ort_all" "$dir/$name.input_0.npy"
  PYTHONPATH="$root/models" /usr/bin/python3 - "$dir" "$name" "$act" "$weight_bits" <<'PY'
import sys
import numpy as np
from ort_agreement import agreement, output_scale
d, name, act, weight_bits = sys.argv[1:]
ours = np.load(f'{d}/tightfit/output_0.npy')
a = agreement(ours, np.load(f'{d}/ort_all/output.npy'), np.load(f'{d}/ort/output.npy'),
              output_scale(f'{d}/{name}.qdq.onnx'))
print(f'{name}, {act} activations, {weight_bits}-bit weights, {ours.size} outputs: '
      f'{"equal to" if a.equal_to_fused else "DIFFERENT from"} ONNX Runtime\'s fused integer path; from its float '
      f'path {a.ours_lsb:.0f} LSB (its fused path {a.fused_lsb:.0f} LSB)')
sys.exit(0 if a.ok() else 1)
PY
done
