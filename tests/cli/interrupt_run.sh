#!/usr/bin/env bash
# `tightfit run` stopped by SIGINT or SIGTERM at moments spread over a whole run (compile, build of
# the generated code, run of the program), the signal sent to tightfit alone, as `kill` does:
#  - it exits 128 + the signal, saying "tightfit: interrupted", or 0 when it had finished;
#  - the programs it started are gone (none is left running with its build folder);
#  - its temporary build folder is removed;
#  - the output folder holds either the whole set of outputs, equal to an uninterrupted run's, or
#    nothing, and no temporary file.
#   interrupt_run.sh TIGHTFIT MODEL.onnx INPUT.npy
set -u
set -m  # background jobs get their own process group and keep SIGINT (a script's '&' ignores it)
tightfit=$1 model=$2 input=$3
fail() { echo "FAIL: $*"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export TMPDIR="$work/tmp"  # where tightfit run makes its build folder
mkdir -p "$TMPDIR"

t0=$(date +%s%N)
"$tightfit" run "$model" --input "$input" --output-dir "$work/ref" >/dev/null || fail "the reference run failed"
duration_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ -z "$(ls -A "$TMPDIR")" ] || fail "a finished run left its build folder: $(ls -A "$TMPDIR")"

for sig in INT TERM; do
  expected=$(( 128 + $(kill -l $sig) ))
  finished=0 interrupted=0
  for i in $(seq 0 5); do
    out="$work/out-$sig-$i"
    "$tightfit" run "$model" --input "$input" --output-dir "$out" >/dev/null 2>"$work/err" &
    pid=$!
    # Count the moments from when tightfit catches the signal (its handler installed: SigCgt in
    # /proc), so that the earliest tests tightfit, not a start slowed by a busy machine or the
    # sanitizers' runtime (the signal's default action would end it there without a word).
    bit=$(( 1 << ($(kill -l $sig) - 1) ))
    for _ in $(seq 1 500); do
      caught=$(awk '/^SigCgt:/ { print $2 }' /proc/$pid/status 2>/dev/null)
      [ -z "$caught" ] || [ $(( 0x$caught & bit )) -eq 0 ] || break
      kill -0 $pid 2>/dev/null || break
      sleep 0.01
    done
    sleep "$(awk -v d=$duration_ms -v i=$i 'BEGIN { printf "%.3f", d * (i + 0.5) / 6 / 1000 }')"
    kill -$sig $pid 2>/dev/null
    wait $pid
    rc=$?
    # The programs it ran got the signal from tightfit before it exited; give them a moment to end.
    for _ in $(seq 1 20); do pgrep -f "$TMPDIR" >/dev/null || break; sleep 0.1; done
    left=$(pgrep -af "$TMPDIR")
    [ -z "$left" ] || fail "SIG$sig at step $i: programs left running: $left"
    [ -z "$(ls -A "$TMPDIR")" ] || fail "SIG$sig at step $i (exit $rc): build folder left: $(ls -A "$TMPDIR")"
    [ -z "$(find "$out" -name '.*' 2>/dev/null)" ] || fail "SIG$sig at step $i: temporary files left in $out"
    if [ $rc -eq 0 ] || { [ $rc -eq $expected ] && [ -e "$out/output_0.npy" ]; }; then
      finished=$((finished + 1))
      diff -r "$out" "$work/ref" >/dev/null || fail "SIG$sig at step $i: exit $rc with outputs unlike the reference"
    elif [ $rc -eq $expected ]; then
      interrupted=$((interrupted + 1))
      grep -qx "tightfit: interrupted" "$work/err" || fail "SIG$sig at step $i: expected 'tightfit: interrupted', got: $(cat "$work/err")"
      [ -z "$(ls -A "$out" 2>/dev/null)" ] || fail "SIG$sig at step $i: interrupted, but left: $(ls -A "$out")"
    else
      fail "SIG$sig at step $i: exit status $rc, expected $expected or 0: $(cat "$work/err")"
    fi
  done
  echo "SIG$sig: $interrupted runs interrupted, $finished finished"
  [ $interrupted -gt 0 ] || fail "SIG$sig: no run was interrupted"
done
echo "ok"
