#!/usr/bin/env bash
# The memory-aware order on every model in models/: the live-sum bound of the ONNX file order and
# of the order tightfit chose, and the planned arena in each (no cap), from each model's report.
#   bench/order.sh [BUILD_DIR]      (default: build)      prints a Markdown table
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "| model | nodes | file-order bound | reordered bound | arena, file order | arena, reordered | saved | search |"
echo "|---|---:|---:|---:|---:|---:|---:|---|"
for model in "$root"/models/*.onnx; do
  name=$(basename "$model" .onnx)
  "$build/compiler/tightfit" compile "$model" -o "$out/$name" --name report --quiet
  python3 - "$out/$name/report.report.json" "$name" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
o = r["order"]
saved = o["file_order_arena_bytes"] - r["arena_bytes"]
print(f"| {sys.argv[2]} | {len(r['steps'])} | {o['file_order_bound_bytes']} | {o['bound_bytes']} | "
      f"{o['file_order_arena_bytes']} | {r['arena_bytes']} | {saved} | {o['search']}, {o['states']} sets |")
PY
done
