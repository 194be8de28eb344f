#!/usr/bin/env bash
# tightfit against TensorFlow Lite Micro on its own models (../shared/tflm-models) in QEMU: arena,
# flash and instructions beside TFLite Micro + CMSIS-NN's, as ratios. See bench/vs_tflm.py.
#   bench/vs_tflm.sh [--build BUILD] [--work DIR] [--boards mps2-an386,mps3-an547] [--models a,b] [--jobs N]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-python3}
[ -x /usr/bin/python3 ] && python=${PYTHON:-/usr/bin/python3}
exec "$python" "$root/bench/vs_tflm.py" "$@"
