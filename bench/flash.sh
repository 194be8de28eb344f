#!/usr/bin/env bash
# The report's flash figure against the firmware's link, for every QOperator model of models/
# with a sample input, on mps2-an386 (Cortex-M4) and mps2-an500 (Cortex-M7): `tightfit run
# --target` builds and runs each (its report is linked for the board's core), then
# tests/firmware/check_flash_figure.py compares the report with the link map. The firmware
# tests run the same check in ctest; this prints every model's figures in one table.
#   bench/flash.sh [BUILD_DIR] [WORK_DIR]      (defaults: build, a temporary folder)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
work=${2:-$(mktemp -d)}
status=0
for board in mps2-an386:cortex-m4 mps2-an500:cortex-m7; do
  for model in "$root"/models/*.qop.onnx; do
    base=$(basename "$model" .qop.onnx)
    inputs=()
    for npy in "$root"/models/"$base".input_*.npy; do [ -e "$npy" ] && inputs+=(--input "$npy"); done
    [ ${#inputs[@]} -gt 0 ] || continue
    dir="$work/${board%%:*}/$base"
    mkdir -p "$dir"
    if ! "$build/compiler/tightfit" run "$model" "${inputs[@]}" --target "${board%%:*}" \
         --output-dir "$dir/out" --build-dir "$dir/build" > "$dir.log" 2>&1; then
      echo "$base on ${board%%:*}: tightfit run failed (log: $dir.log)"; status=1; continue
    fi
    python3 "$root/tests/firmware/check_flash_figure.py" --report "$dir/out/${base}_qop.report.json" \
      --map "$dir/build/firmware/tightfit_run.map" --core "${board#*:}" || status=1
  done
done
exit $status
