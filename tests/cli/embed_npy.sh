#!/usr/bin/env bash
# `tightfit embed-npy`: the array it writes, compiled by the host C++ compiler, holds the .npy's
# very bytes (float32 with negative zero, subnormals, extremes and infinities; int8; uint8); a bad .npy, a
# NaN, a dtype it does not take, or a symbol that is not an identifier gets one line naming the
# file and a non-zero exit, and leaves no file behind.
#   embed_npy.sh TIGHTFIT
set -u
tightfit=$1
fail() { echo "FAIL: $*"; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

/usr/bin/python3 - "$out" <<'PY' || fail "cannot write the test arrays"
import sys
import numpy as np
out = sys.argv[1]
rng = np.random.default_rng(7)
special = np.array([0.0, -0.0, 1.0, -1.5, 1e-45, -1e-45, 1.17549435e-38, 3.4028235e38, -3.4028235e38, 1 / 3,
                    np.inf, -np.inf],
                   dtype=np.float32)
floats = np.concatenate([special, rng.standard_normal(3000).astype(np.float32)]).reshape(2, 1506)
np.save(f'{out}/f.npy', floats)
np.save(f'{out}/i.npy', np.arange(-128, 128, dtype=np.int8).reshape(16, 16))
np.save(f'{out}/u.npy', np.arange(0, 256, dtype=np.uint8))
np.save(f'{out}/nan.npy', np.array([1.0, np.nan], dtype=np.float32))
np.save(f'{out}/f8.npy', np.zeros(3, dtype=np.float64))
np.save(f'{out}/i4.npy', np.zeros(3, dtype=np.int32))
with open(f'{out}/f.npy', 'rb') as f:
    open(f'{out}/truncated.npy', 'wb').write(f.read()[:-5])
PY

# Each array compiled in, dumped as raw bytes by a host program, must equal the .npy's data.
for name_type in f:float i:std::int8_t u:std::uint8_t; do
  name=${name_type%%:*} type=${name_type#*:}
  "$tightfit" embed-npy "$out/$name.npy" --symbol "array_$name" --section .tightfit_inputs -o "$out/gen" ||
    fail "embed-npy $name.npy failed"
  grep -q "extern const $type array_$name\[\];" "$out/gen/array_$name.hpp" || fail "$name: no declaration of type $type"
  grep -q '__attribute__((section(".tightfit_inputs")))' "$out/gen/array_$name.cpp" || fail "$name: no section"
  cat >"$out/dump_$name.cpp" <<CPP
#include <cstdio>
#include "array_$name.hpp"
int main() { return std::fwrite(array_$name, sizeof array_$name[0], array_${name}_size, stdout) == array_${name}_size ? 0 : 1; }
CPP
  c++ -std=c++17 -Wall -Wextra -Werror -I"$out/gen" "$out/dump_$name.cpp" "$out/gen/array_$name.cpp" -o "$out/dump_$name" ||
    fail "$name: the generated array does not compile"
  "$out/dump_$name" >"$out/$name.bin" || fail "$name: the dump failed"
  /usr/bin/python3 -c "
import sys, numpy as np
a = np.load(sys.argv[1])
sys.exit(0 if open(sys.argv[2], 'rb').read() == a.tobytes() else 1)" "$out/$name.npy" "$out/$name.bin" ||
    fail "$name: the compiled array's bytes differ from the .npy's"
done

# Refused: one line that names the file, a non-zero exit, nothing written.
refused() {  # refused WHAT EXPECTED_TEXT tightfit-arguments...
  local what=$1 expected=$2
  shift 2
  rm -rf "$out/bad"
  "$tightfit" embed-npy "$@" -o "$out/bad" 2>"$out/err" && fail "$what was taken"
  [ "$(wc -l <"$out/err")" -eq 1 ] || fail "$what: not one line: $(cat "$out/err")"
  grep -q -- "$expected" "$out/err" || fail "$what: the line does not say '$expected': $(cat "$out/err")"
  [ ! -e "$out/bad" ] || [ -z "$(ls -A "$out/bad")" ] || fail "$what: left files behind: $(ls "$out/bad")"
}
refused "a truncated .npy" "truncated.npy" "$out/truncated.npy" --symbol x
refused "a NaN" "nan.npy: element 1 is NaN" "$out/nan.npy" --symbol x
refused "int32" "i4.npy: dtype 'i4' is not float32, int8 or uint8" "$out/i4.npy" --symbol x
refused "float64" "f8.npy: dtype '<f8'" "$out/f8.npy" --symbol x
refused "a missing file" "missing.npy" "$out/missing.npy" --symbol x
refused "a symbol that is not an identifier" "not a C++ identifier" "$out/f.npy" --symbol '1x;'
refused "a bad section" "not a linker section name" "$out/f.npy" --symbol x --section 'a")))'
echo "PASS"
