#!/usr/bin/env bash
# Under --numerics tflite a node whose TFLite arithmetic the kernels do not reproduce (a
# QLinearLeakyRelu), or whose quantization TFLite's kernel does not take (a Tanh whose output is not
# scale 1/128, zero point 0; a QLinearConcat that requantizes, outside TFLite's int8 spec), is
# refused: one line naming the node and the option, exit status 1, no output written. A QLinearSigmoid quantized as TFLite's LOGISTIC (scale 1/256, zero point
# -128) compiles, into a table (its entries: tests/runtime/tflite_activations_test.cpp), and a
# QLinearMul into TFLite's MUL (mul_tflite: tests/runtime/numerics_test.cpp). TFLite
# Micro's micro_speech (as ONNX) compiles under both numerics, and the multipliers the generated
# code holds differ: float under ort, fixed point under tflite.
#   numerics_refusal.sh TIGHTFIT MODELS_DIR MICRO_SPEECH_MODEL.onnx
set -u
tightfit=$1 models=$2 conv=$3
fail() { echo "FAIL: $*"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
refused() {  # MODEL PATTERN: refused under tflite in one line matching PATTERN, compiled under ort
  rm -rf "$work/o"
  "$tightfit" compile "$1" --numerics tflite --target none -o "$work/o" >"$work/out" 2>"$work/err"
  rc=$?
  [ $rc -eq 1 ] || fail "$1: exit $rc, expected 1: $(cat "$work/err")"
  [ "$(wc -l <"$work/err")" -eq 1 ] || fail "$1: expected one line, got: $(cat "$work/err")"
  grep -q -- "$2" "$work/err" || fail "$1: node, rule or option not named: $(cat "$work/err")"
  [ -z "$(ls -A "$work/o" 2>/dev/null)" ] || fail "$1: wrote files"
  "$tightfit" compile "$1" --numerics ort --target none -o "$work/o" --quiet >/dev/null 2>&1 ||
    fail "$1: ort refused it"
}
refused "$models/unit_leakyrelu_s8.qop.onnx" "QLinearLeakyRelu.*TFLite numerics.*--numerics ort"
refused "$models/unit_tanh_s8.qop.onnx" "Tanh.*TFLite numerics: TFLite's int8 TANH writes scale 1/128, zero point 0"
refused "$models/unit_concat_s8.qop.onnx" "QLinearConcat.*CONCATENATION needs every input quantized as its output"

for numerics in ort tflite; do
  "$tightfit" compile "$models/unit_sigmoid_s8.qop.onnx" --numerics $numerics --target none --name sigmoid \
    -o "$work/sigmoid_$numerics" --quiet >/dev/null 2>"$work/err" || fail "sigmoid under $numerics: $(cat "$work/err")"
done
grep -q "tightfit::lookup<std::int8_t>" "$work/sigmoid_tflite/sigmoid.cpp" || fail "tflite: LOGISTIC is no table"
"$tightfit" compile "$models/unit_mul_s8.qop.onnx" --numerics tflite --target none --name mul -o "$work/mul" --quiet \
  >/dev/null 2>"$work/err" || fail "mul under tflite: $(cat "$work/err")"
grep -q "tightfit::mul_tflite<std::int8_t>" "$work/mul/mul.cpp" || fail "tflite: MUL is not TFLite's"

for numerics in ort tflite; do
  "$tightfit" compile "$conv" --numerics $numerics --target none --name conv -o "$work/$numerics" --quiet \
    >/dev/null 2>"$work/err" || fail "conv under $numerics: $(cat "$work/err")"
done
grep -q "constexpr float .*_multipliers" "$work/ort/conv.cpp" || fail "ort: no float multipliers"
grep -q "constexpr tightfit::QuantizedMultiplier .*_multipliers" "$work/tflite/conv.cpp" || fail "tflite: no fixed-point multipliers"
echo ok
