#!/usr/bin/env bash
# A bad command line (unknown flag, bad size, missing value or argument, unknown subcommand, a
# single arena's --max-ram or --arena-section beside a --memory file) gets
# exactly one line on stderr, naming what is wrong, and exit status 2; --help still prints help
# and exits 0.
#   bad_command_line.sh TIGHTFIT MODEL.onnx
set -u
tightfit=$1 model=$2
fail() { echo "FAIL: $*"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
check() {  # check WORD-EXPECTED-IN-MESSAGE ARGS...
  local expect=$1; shift
  "$tightfit" "$@" >"$work/out" 2>"$work/err"
  local rc=$?
  [ $rc -eq 2 ] || fail "tightfit $*: exit $rc, expected 2"
  [ "$(wc -l <"$work/err")" -eq 1 ] || fail "tightfit $*: expected one line, got: $(cat "$work/err")"
  grep -q -- "$expect" "$work/err" || fail "tightfit $*: '$expect' not in: $(cat "$work/err")"
  [ -z "$(ls -A "$work/o" 2>/dev/null)" ] || fail "tightfit $*: wrote files"
}
check "--bogus" compile "$model" -o "$work/o" --bogus
check "banana" compile "$model" -o "$work/o" --max-ram banana
check "output-dir" compile "$model"
check "time-limit" compile "$model" -o "$work/o" --time-limit
check "subcommand" frobnicate
check "numerics" compile "$model" -o "$work/o" --numerics tflm
echo '{"regions": [{"name": "SRAM", "size": "64K"}]}' >"$work/memory.json"
check "max-ram does not apply with --memory" compile "$model" -o "$work/o" --memory "$work/memory.json" --max-ram 32K
check "arena-section does not apply" compile "$model" -o "$work/o" --memory "$work/memory.json" --arena-section .a
"$tightfit" compile --help >"$work/out" 2>&1 || fail "compile --help exited $?"
grep -q -- "--max-ram" "$work/out" || fail "compile --help does not list --max-ram"
echo ok
