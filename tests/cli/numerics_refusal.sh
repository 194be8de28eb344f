#!/usr/bin/env bash
# Under --numerics tflite a node whose TFLite arithmetic the kernels do not reproduce (a
# QLinearSigmoid) is refused: one line naming the node and the option, exit status 1, no output
# written. TFLite Micro's micro_speech (as ONNX) compiles under both numerics, and the multipliers the
# generated code holds differ: float under ort, fixed point under tflite.
#   numerics_refusal.sh TIGHTFIT SIGMOID_MODEL.onnx MICRO_SPEECH_MODEL.onnx
set -u
tightfit=$1 sigmoid=$2 conv=$3
fail() { echo "FAIL: $*"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$tightfit" compile "$sigmoid" --numerics tflite --target none -o "$work/o" >"$work/out" 2>"$work/err"
rc=$?
[ $rc -eq 1 ] || fail "exit $rc, expected 1: $(cat "$work/err")"
[ "$(wc -l <"$work/err")" -eq 1 ] || fail "expected one line, got: $(cat "$work/err")"
grep -q -- "QLinearSigmoid.*TFLite numerics.*--numerics ort" "$work/err" || fail "node or option not named: $(cat "$work/err")"
[ -z "$(ls -A "$work/o" 2>/dev/null)" ] || fail "wrote files"
"$tightfit" compile "$sigmoid" --numerics ort --target none -o "$work/o" --quiet >/dev/null 2>&1 || fail "ort refused it"

for numerics in ort tflite; do
  "$tightfit" compile "$conv" --numerics $numerics --target none --name conv -o "$work/$numerics" --quiet \
    >/dev/null 2>"$work/err" || fail "conv under $numerics: $(cat "$work/err")"
done
grep -q "constexpr float .*_multipliers" "$work/ort/conv.cpp" || fail "ort: no float multipliers"
grep -q "constexpr tightfit::QuantizedMultiplier .*_multipliers" "$work/tflite/conv.cpp" || fail "tflite: no fixed-point multipliers"
echo ok
