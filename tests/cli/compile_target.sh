#!/usr/bin/env bash
# `tightfit compile --target`: the report's flash linked for the board's core (the code and
# constants of the link, weights apart), an estimate that says so with `none`, a clear error for
# an unknown target, and nothing left in the temporary folder.
#   compile_target.sh TIGHTFIT MODEL.onnx
set -u
tightfit=$1 model=$2
fail() { echo "FAIL: $*"; exit 1; }
command -v arm-none-eabi-g++ >/dev/null || { echo "SKIPPED: no arm-none-eabi-g++"; exit 77; }
out=$(mktemp -d)
export TMPDIR=$out/tmp
mkdir -p "$TMPDIR"
trap 'rm -rf "$out"' EXIT

"$tightfit" compile "$model" -o "$out/m7" --name net --quiet --target mps2-an500 || fail "compile --target mps2-an500 failed"
python3 - "$out/m7/net.report.json" <<'PY' || fail "flash.linked is not the M7 link"
import json, sys
r = json.load(open(sys.argv[1]))
l = r["flash"]["linked"]
assert l["core"] == "cortex-m7", l
assert l["weights_bytes"] == r["flash"]["weights_bytes"], l
assert l["text_bytes"] > 1000 and l["method"].startswith("arm-none-eabi-g++"), l
PY
grep -q "^       linked for cortex-m7 (arm-none-eabi-g++" "$out/m7/net.report.txt" || fail "the text does not say it was linked"

"$tightfit" compile "$model" -o "$out/none" --name net --quiet --target none || fail "compile --target none failed"
grep -q '"linked"' "$out/none/net.report.json" && fail "--target none linked"
grep -q "code (estimate)" "$out/none/net.report.txt" || fail "--target none: the text does not say estimate"

"$tightfit" compile "$model" -o "$out/bad" --target cortex-m99 2>"$out/err" && fail "--target cortex-m99 was taken"
[ "$(wc -l <"$out/err")" -eq 1 ] && grep -q "cortex-m99" "$out/err" || fail "unknown target: $(cat "$out/err")"
# A toolchain that cannot link: by default the estimate, with a note; asked for, an error.
mkdir -p "$out/broken"
printf '#!/bin/sh\necho "arm-none-eabi-g++: error: no C library" >&2\nexit 1\n' >"$out/broken/arm-none-eabi-g++"
chmod +x "$out/broken/arm-none-eabi-g++"
PATH="$out/broken:$PATH" "$tightfit" compile "$model" -o "$out/default" --name net --quiet 2>"$out/err" ||
  fail "a toolchain that cannot link failed the default compile: $(cat "$out/err")"
grep -q "the report's flash is an estimate" "$out/err" || fail "no note that the flash is an estimate"
grep -q '"linked"' "$out/default/net.report.json" && fail "linked with a broken toolchain"
PATH="$out/broken:$PATH" "$tightfit" compile "$model" -o "$out/asked" --target mps2-an386 2>/dev/null &&
  fail "--target with a toolchain that cannot link succeeded"
[ -z "$(ls -A "$TMPDIR")" ] || fail "left in the temporary folder: $(ls "$TMPDIR")"
echo "ok"
