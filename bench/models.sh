#!/usr/bin/env bash
# The planner on every model in models/: each model's buffers (as `tightfit compile` lays them
# out) written as a MiniMalloc CSV, then planner_bench over them beside TFLite Micro's greedy
# planner on the CSV rows; then, from each model's report, its arena beside the report's TFLite
# Micro figure (sizes rounded to 16 B, buffers in the order TFLM's allocator would add them:
# docs/report.md).
#   bench/models.sh [BUILD_DIR]      (default: build)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
csv_dir=$(mktemp -d)
trap 'rm -rf "$csv_dir"' EXIT
for model in "$root"/models/*.onnx; do
  name=$(basename "$model" .onnx)
  "$build/compiler/tightfit" compile "$model" -o "$csv_dir/out/$name" --name "${name//./_}" --quiet \
    --plan-csv "$csv_dir/$name.csv"
done
"$build/bench/planner_bench" "$csv_dir"
echo
python3 - "$csv_dir/out" <<'PY'
import glob, json, os, sys
print('| model | tightfit arena | TFLite Micro greedy (report) | tightfit saves |')
print('|---|---:|---:|---:|')
for path in sorted(glob.glob(os.path.join(sys.argv[1], '*', '*.report.json'))):
    r = json.load(open(path))
    arena, greedy = r['arena_bytes'], r['comparisons']['greedy_by_size_bytes']
    print(f"| {os.path.basename(os.path.dirname(path))} | {arena:,} | {greedy:,} | {100 * (greedy - arena) / greedy:.1f}% |")
PY
