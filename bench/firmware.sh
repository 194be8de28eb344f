#!/usr/bin/env bash
# Kernel speed on Cortex-M in QEMU: every QOperator model, portable vs DSP kernels, on the M4 and
# M7 boards, and DS-CNN layer by layer beside CMSIS-NN. See bench/firmware.py (options) and
# docs/firmware.md ("Kernel speed").
#   bench/firmware.sh [--build BUILD] [--work DIR] [--boards ...] [--models a,b] [--jobs N]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-python3}
[ -x /usr/bin/python3 ] && python=${PYTHON:-/usr/bin/python3}
exec "$python" "$root/bench/firmware.py" "$@"
