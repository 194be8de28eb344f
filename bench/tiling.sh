#!/usr/bin/env bash
# RAM against cost, per model: every QOperator model in models/ and, when Debian's python3-torch is
# installed, the PyTorch exports of models/torchvision_models.py (QDQ). See bench/tiling.py for the
# columns; it prints the tables of docs/tiling.md ("Measured").
#   bench/tiling.sh [--build BUILD] [--work DIR] [--models a,b] [--qemu-models a,b] [--no-torch] [--no-qemu]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
exec /usr/bin/python3 "$root/bench/tiling.py" "$@"
