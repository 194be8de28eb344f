#!/bin/sh
# More seeds of the model-size monotonicity test (tests/monotone/run, docs/tiling.md "Predictable
# in the model's size"): seeds FIRST..LAST (default 2..11), COUNT models per family (default 10),
# inputs and outputs in the arena and --io-outside, buffers aligned to ALIGNMENT bytes (default
# tightfit's own, 4). Exit status 1 when any variant breaks it.
#   bench/monotone.sh [FIRST [LAST [COUNT [ALIGNMENT]]]]
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
first=${1:-2} last=${2:-11} count=${3:-10}
alignment=${4:+--alignment $4}
export TIGHTFIT="${TIGHTFIT:-$here/build/compiler/tightfit}"
status=0
seed=$first
while [ "$seed" -le "$last" ]; do
  for io in "" --io-outside; do
    echo "== seed $seed ${io:-(inputs and outputs in the arena)}"
    "$here/tests/monotone/run" --seed "$seed" --count "$count" $io $alignment || status=1
  done
  seed=$((seed + 1))
done
exit $status
