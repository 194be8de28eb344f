#!/usr/bin/env bash
# `tightfit run` whose build of the generated code fails (here a stand-in compiler that fails as
# the linker does when the weights do not fit the flash): one line naming the linker's reason, not
# collect2's "ld returned 1"; the build log it names is kept (in the temporary folder); a non-zero
# exit and no outputs.
#   failed_build.sh TIGHTFIT MODEL.onnx INPUT.npy
set -u
tightfit=$1 model=$2 input=$3
fail() { echo "FAIL: $*"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export TMPDIR="$work/tmp"
mkdir -p "$TMPDIR"
cat >"$work/cxx" <<'SH'
#!/bin/sh
echo "/usr/bin/ld: model section \`.tightfit_weights' will not fit in region \`FLASH'"
echo "/usr/bin/ld: region \`FLASH' overflowed by 180448 bytes"
echo "collect2: error: ld returned 1 exit status"
exit 1
SH
chmod +x "$work/cxx"

CXX="$work/cxx" "$tightfit" run "$model" --input "$input" --output-dir "$work/out" >/dev/null 2>"$work/err"
rc=$?
[ $rc -ne 0 ] || fail "a failed build exited 0"
[ "$(wc -l <"$work/err")" -eq 1 ] || fail "not one line: $(cat "$work/err")"
grep -q "overflowed by 180448 bytes" "$work/err" || fail "the linker's reason is not in: $(cat "$work/err")"
log=$(sed -n 's/.*(log: \(.*\))$/\1/p' "$work/err")
[ -n "$log" ] && [ -f "$log" ] || fail "the log it names is not there: $(cat "$work/err")"
grep -q "collect2" "$log" || fail "the log does not hold the build's output"
[ -z "$(ls -A "$work/out" 2>/dev/null)" ] || fail "outputs written: $(ls -A "$work/out")"
echo "ok: $(cat "$work/err")"
