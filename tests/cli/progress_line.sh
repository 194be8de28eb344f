#!/usr/bin/env bash
# The planner's progress line: drawn on a terminal when planning takes over a second, absent when
# stderr is not a terminal and with --quiet.
#   progress_line.sh TIGHTFIT INSTANCE.csv MODEL.onnx
set -u
tightfit=$1 instance=$2 model=$3
fail() { echo "FAIL: $*"; exit 1; }
[ -f "$instance" ] || { echo "SKIPPED: no instance at $instance (../shared/dsa-benchmarks beside the project)"; exit 77; }
command -v script >/dev/null || { echo "SKIPPED: no 'script' command to make a terminal"; exit 77; }

# `script` gives the command a pseudo-terminal; the search on this instance runs the full 2 s.
on_tty=$(script -qec "'$tightfit' plan --csv '$instance' --time-limit 2" /dev/null)
grep -q "planning: best [0-9]* B, lower bound [0-9]* B" <<<"$on_tty" || fail "no progress line on a terminal: $on_tty"
grep -q "peak=[0-9]* lower_bound=" <<<"$on_tty" || fail "no result line on a terminal"

not_tty=$("$tightfit" plan --csv "$instance" --time-limit 2 2>&1 >/dev/null)
[ -z "$not_tty" ] || fail "stderr is not a terminal, yet it printed: $not_tty"

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
quiet=$(script -qec "'$tightfit' compile '$model' -o '$out' --quiet" /dev/null)
[ -z "$quiet" ] || fail "--quiet printed: $quiet"
echo "ok"
