#!/usr/bin/env bash
# usage: dscnn_matches_ort.sh TIGHTFIT
# Exports the torch DS-CNN of models/torchvision_models.py, quantizes it as ORT's quantize_static
# (QDQ, per-channel int8 weights) once with uint8 and once with int8 activations, runs it with
# `tightfit run` and with ONNX Runtime's QDQ float path (models/dump.mjs) on an input drawn like
# the calibration inputs, and fails if any output differs by more than 1 LSB (ties of the float
# path against integer arithmetic: docs/numerics.md) or tightfit refuses the model.
set -euo pipefail
tightfit=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
if ! /usr/bin/python3 -c 'import torch, torchvision' 2>/dev/null; then
  echo "SKIPPED: needs Debian's python3-torch and python3-torchvision (./setup installs them)"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for act in uint8 int8; do
  dir=$tmp/$act
  /usr/bin/python3 "$root/models/torchvision_models.py" "$dir" dscnn_torch --activations "$act" --calib 8 \
    2>&1 | grep -v -i warning
  mkdir -p "$dir/tightfit" "$dir/ort"
  "$tightfit" run "$dir/dscnn_torch.qdq.onnx" --input "$dir/dscnn_torch.input_0.npy" --output-dir "$dir/tightfit"
  node "$root/models/dump.mjs" "$dir/dscnn_torch.qdq.onnx" "$dir/ort" "$dir/dscnn_torch.input_0.npy"
  /usr/bin/python3 - "$dir" "$act" <<'PY'
import sys
import numpy as np
import onnx
from onnx import numpy_helper
d, act = sys.argv[1], sys.argv[2]
g = onnx.load(f'{d}/dscnn_torch.qdq.onnx').graph
inits = {i.name: numpy_helper.to_array(i) for i in g.initializer}
dq = next(n for n in g.node if n.output[0] == g.output[0].name)
assert dq.op_type == 'DequantizeLinear', dq.op_type
scale = float(inits[dq.input[1]])
ours, ort = np.load(f'{d}/tightfit/output_0.npy'), np.load(f'{d}/ort/output.npy')
lsb = np.abs(ours.astype(np.float64) - ort) / scale
print(f'{act} activations: {lsb.size} outputs, largest difference from ONNX Runtime {lsb.max():.0f} LSB')
sys.exit(0 if ours.shape == ort.shape and lsb.max() <= 1 else 1)
PY
done
