#!/usr/bin/env bash
# Every QOperator model of models/ on every QEMU core: ctest runs each model on the Cortex-M4 and
# on one other core in turn (plus a few models on all of them), to keep CI's time down; this
# configures a build with -DTIGHTFIT_FIRMWARE_ALL_BOARDS=ON and runs all the per-model firmware
# tests: the M4 build, `tightfit run --target` on the M7, M55, M0+ and RV32IMC, the flash checks.
# Each model's outputs in QEMU must equal the host build's. About 20 minutes on 2 cores.
#   bench/firmware_all_boards.sh [BUILD_DIR]      (default: build-all-boards)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build-all-boards}
jobs="${TIGHTFIT_JOBS:-2}"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DTIGHTFIT_FIRMWARE_ALL_BOARDS=ON >/dev/null
cmake --build "$build" -j"$jobs" --target tightfit
ctest --test-dir "$build" -j"$jobs" --output-on-failure -R '^firmware\.model\.'
