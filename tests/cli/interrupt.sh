#!/usr/bin/env bash
# Ctrl-C and failures leave no partial outputs:
#  1. `tightfit plan` on a hard instance, interrupted (SIGINT) during the search: exit 130 within
#     a second, no --out file;
#  2. `tightfit compile`, interrupted at many moments from start to end: either the whole new
#     set of six files is there (exit 0, or 130 when the signal came during the renames or after)
#     or it exited 130 with the folder as it was: no new file, no temporary file; the same over
#     an earlier compile's outputs, which stay whole;
#  3. a compile that cannot replace its last file (NAME.report.html is a folder) exits 1 and
#     leaves the NAME.hpp and NAME.cpp of the earlier compile.
#   interrupt.sh TIGHTFIT MODEL.onnx
set -u
set -m  # background jobs get their own process group and keep SIGINT (a script's '&' ignores it)
tightfit=$1 model=$2
fail() { echo "FAIL: $*"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# 1. A hard instance: 300 buffers, random sizes and intervals (seeded, so always the same).
awk 'BEGIN { srand(11); print "id,lower,upper,size";
  for (i = 0; i < 300; i++) { l = int(rand() * 400); printf "%d,%d,%d,%d\n", i, l, l + 1 + int(rand() * 40), 16 * (1 + int(rand() * 4096)) } }' \
  >"$work/hard.csv"
"$tightfit" plan --csv "$work/hard.csv" --out "$work/plan.csv" --time-limit 600 >"$work/plan.out" 2>"$work/plan.err" &
pid=$!
sleep 2
kill -0 $pid 2>/dev/null || fail "plan finished within 2 s; the instance is not hard enough: $(cat "$work/plan.out")"
start=$(date +%s%N)
kill -INT $pid
wait $pid
rc=$?
elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ $rc -eq 130 ] || fail "plan: exit status $rc after SIGINT, expected 130"
[ $elapsed_ms -lt 1000 ] || fail "plan: took $elapsed_ms ms to stop after SIGINT"
[ ! -e "$work/plan.csv" ] || fail "plan: --out file written despite SIGINT"
grep -qx "tightfit: interrupted" "$work/plan.err" || fail "plan: expected 'tightfit: interrupted', got: $(cat "$work/plan.err")"

# 2. SIGINT at moments spread over a whole compile (its duration measured first).
names=(net.hpp net.cpp net.report.json net.report.txt net.memory.svg net.report.html)
t0=$(date +%s%N)
"$tightfit" compile "$model" -o "$work/ref" --name net --quiet || fail "the reference compile failed"
duration_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
for earlier in no yes; do
  finished=0 interrupted=0
  for i in $(seq 0 19); do
    out="$work/out-$earlier-$i"
    if [ $earlier = yes ]; then
      cp -r "$work/ref" "$out"
      echo "// earlier" >>"$out/net.cpp"  # tells the earlier set from a new one
    fi
    "$tightfit" compile "$model" -o "$out" --name net --quiet 2>"$work/err" &
    pid=$!
    sleep "$(awk -v d=$duration_ms -v i=$i 'BEGIN { printf "%.3f", d * i / 19 / 1000 }')"
    kill -INT $pid 2>/dev/null
    wait $pid
    rc=$?
    temps=$(find "$out" -name '.*' 2>/dev/null)
    [ -z "$temps" ] || fail "compile (earlier outputs: $earlier): temporary files left: $temps"
    complete=yes
    for f in "${names[@]}"; do cmp -s "$out/$f" "$work/ref/$f" || complete=no; done
    if [ $rc -eq 0 ]; then
      finished=$((finished + 1))
      [ $complete = yes ] || fail "compile exited 0 but its outputs differ from the reference"
    elif [ $rc -eq 130 ] && [ $complete = yes ]; then
      finished=$((finished + 1))  # the signal came during or after the renames: the new set is whole
    elif [ $rc -eq 130 ]; then
      interrupted=$((interrupted + 1))
      if [ $earlier = yes ]; then
        tail -1 "$out/net.cpp" | grep -qx "// earlier" || fail "compile interrupted: the earlier net.cpp was replaced"
        for f in "${names[@]}"; do [ -e "$out/$f" ] || fail "compile interrupted: the earlier $f is gone"; done
      else
        [ -z "$(ls -A "$out" 2>/dev/null)" ] || fail "compile interrupted: files left: $(ls -A "$out")"
      fi
    else
      fail "compile: exit status $rc after SIGINT: $(cat "$work/err")"
    fi
  done
  echo "earlier outputs $earlier: $interrupted interrupted before the renames, $finished with the whole new set"
  [ $interrupted -gt 0 ] || fail "no compile was interrupted"
done

# 3. The last file cannot be replaced: the earlier NAME.hpp and NAME.cpp stay.
out="$work/rename"
"$tightfit" compile "$model" -o "$out" --name net --quiet --alignment 16 || fail "compile failed"
cp "$out/net.hpp" "$work/old.hpp"; cp "$out/net.cpp" "$work/old.cpp"
rm "$out/net.report.html"; mkdir -p "$out/net.report.html/x"
"$tightfit" compile "$model" -o "$out" --name net --quiet --alignment 4 2>"$work/err"
rc=$?
[ $rc -eq 1 ] || fail "compile over a folder named net.report.html: exit $rc, expected 1"
[ "$(wc -l <"$work/err")" -eq 1 ] || fail "expected one line, got: $(cat "$work/err")"
cmp -s "$out/net.hpp" "$work/old.hpp" && cmp -s "$out/net.cpp" "$work/old.cpp" ||
  fail "a failed compile left a new net.hpp/net.cpp"
[ -z "$(find "$out" -name '.*')" ] || fail "temporary files left: $(find "$out" -name '.*')"
echo "ok"
