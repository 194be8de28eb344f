#!/usr/bin/env bash
# The planner on every model in models/: each model's buffers (as `tightfit compile` lays them
# out) written as a MiniMalloc CSV, then planner_bench over them beside greedy-by-size.
#   bench/models.sh [BUILD_DIR]      (default: build)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
csv_dir=$(mktemp -d)
trap 'rm -rf "$csv_dir"' EXIT
for model in "$root"/models/*.onnx; do
  name=$(basename "$model" .onnx)
  extra=()
  case "$name" in *symbatch*) extra=(--pin-batch) ;; esac
  "$build/compiler/tightfit" compile "$model" -o "$csv_dir/out" --quiet --plan-csv "$csv_dir/$name.csv" "${extra[@]}"
done
rm -rf "$csv_dir/out"
"$build/bench/planner_bench" "$csv_dir"
