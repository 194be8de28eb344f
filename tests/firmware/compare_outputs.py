#!/usr/bin/env python3
"""Run a firmware/run firmware in QEMU and check its outputs against reference .npy files, exactly.

  compare_outputs.py --machine mps2-an386 --elf tightfit_run.elf --header tightfit_model.hpp \
      ref_output_0.npy [ref_output_1.npy ...]

The firmware prints each output ("TIGHTFIT output=N ... values=...": quantized, in memory order),
read by `tightfit firmware-lines` ($TIGHTFIT, else build/compiler/tightfit; run_qemu.parse_lines()).
Each is brought to ONNX's order with its shape and layout from the generated header, then compared
with its reference: as integers where the reference is integer, else dequantized in float32 as
DequantizeLinear does, (q - zero_point) * scale. Exit 0 when the firmware exits 0 and every
element is equal; else 1, naming the first difference.
"""
import argparse
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "firmware", "tools"))
import run_qemu  # noqa: E402

# "// output 0 'y': int8 [1, 8, 4, 4], scale ..." then
# "constexpr TensorInfo kOutput0 = {"y", true, 0x1.8p-7f, -3, 128, true, true};"
COMMENT = re.compile(r"^// output (\d+) '[^']*': \w+ \[([0-9, ]*)\]", re.M)
INFO = re.compile(r"constexpr TensorInfo kOutput(\d+) = \{\"[^\"]*\", (\w+), ([^,]+), (-?\d+), (\d+), (\w+), (\w+)\};")


def parse_header(path):
    text = open(path).read()
    shapes = {int(m[1]): [int(d) for d in m[2].split(",") if d.strip()] for m in COMMENT.finditer(text)}
    outputs = {}
    for m in INFO.finditer(text):
        index = int(m[1])
        scale = np.float32(float.fromhex(m[3].rstrip("f")))
        outputs[index] = dict(shape=shapes[index], signed=m[2] == "true", scale=scale,
                              zero_point=int(m[4]), channels_last=m[6] == "true")
    return outputs


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--header", required=True)
    parser.add_argument("--machine", required=True)
    parser.add_argument("--elf", required=True)
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("references", nargs="+")
    args = parser.parse_args()
    tightfit = run_qemu.tightfit_program()

    status, output, _ = run_qemu.run_once("qemu-system-arm", args.machine, args.elf, args.timeout, tightfit=tightfit)
    sys.stdout.write(output)
    if status != 0:
        print(f"the firmware exited with {status}", file=sys.stderr)
        return 1
    infos = parse_header(args.header)
    printed = {i: line["values"] for i, line in run_qemu.parse_lines(output, tightfit)[1].items()}
    failed = False
    for index, reference_path in enumerate(args.references):
        info, reference = infos[index], np.load(reference_path)
        if index not in printed:
            print(f"output {index}: not printed", file=sys.stderr)
            failed = True
            continue
        q = np.array(printed[index], dtype=np.int32)
        shape = info["shape"]
        if info["channels_last"]:
            n, c, *spatial = shape
            q = q.reshape([n, *spatial, c])
            q = np.moveaxis(q, -1, 1)
        q = q.reshape(shape)
        if reference.dtype.kind == "f":
            got = (q - info["zero_point"]).astype(np.float32) * info["scale"]
        else:
            got = q.astype(reference.dtype)
        reference = reference.reshape(shape)
        if not np.array_equal(got, reference):
            where = tuple(int(i) for i in np.argwhere(got != reference)[0])
            print(f"output {index}: differs at {where}: got {got[where]}, reference {reference[where]}"
                  f" ({int(np.sum(got != reference))} of {got.size} elements differ)", file=sys.stderr)
            failed = True
        else:
            print(f"output {index}: all {got.size} elements equal the reference")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
