#!/usr/bin/python3
"""tightfit's float Exp, Log, Erf and Softmax against ONNX Runtime (models/float_math/).

usage: float_math_check.py TIGHTFIT WORK_DIR [--target BOARD ...] [--model NAME ...]
Runs each model of models/float_math/manifest.json with `tightfit run` on the host and compares
its output with ORT's: the largest distance in units in the last place (float32 outputs; NaN must
meet NaN, infinities equal; with "absolute_below" B, outputs where ORT's is below B in magnitude
within B instead) or in LSB (integer outputs) must be at most the manifest's bound.
--target BOARD also runs each in QEMU, whose output must equal the host's bit for bit.
Prints one line per model with the distance measured; exit 1 when one exceeds its bound.
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DIR = os.path.join(ROOT, "models", "float_math")


def ordered(x):
    """float32 bits as integers in the order of the floats (so that a difference counts ulps)."""
    i = x.view(np.int32).astype(np.int64)
    return np.where(i < 0, -(i & 0x7fffffff), i)


def distance(got, want, absolute_below=None):
    if want.dtype != np.float32:
        return int(np.abs(got.astype(np.int64) - want.astype(np.int64)).max())
    if absolute_below is not None:
        tiny = np.abs(want) < absolute_below
        if (np.abs(got[tiny] - want[tiny]) > absolute_below).any():
            return float("inf")
        got, want = got[~tiny], want[~tiny]
    nan = np.isnan(want)
    if (np.isnan(got) != nan).any():
        return float("inf")
    g, w = got[~nan], want[~nan]
    if (np.isinf(g) != np.isinf(w)).any() or (g[np.isinf(w)] != w[np.isinf(w)]).any():
        return float("inf")
    finite = ~np.isinf(w)
    return int(np.abs(ordered(g[finite]) - ordered(w[finite])).max()) if finite.any() else 0


def run(tightfit, entry, out, target=None):
    inputs = sum((["--input", os.path.join(DIR, f)] for f in entry["inputs"]), [])
    command = [tightfit, "run", os.path.join(DIR, entry["model"]), *inputs, "--output-dir", out]
    r = subprocess.run(command + (["--target", target] if target else []), capture_output=True, text=True)
    if r.returncode != 0:
        print(f"FAIL: {entry['name']}{' on ' + target if target else ''}: {(r.stderr or r.stdout).strip()}")
        sys.exit(1)
    return np.load(os.path.join(out, "output_0.npy"))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("tightfit")
    parser.add_argument("work")
    parser.add_argument("--target", action="append", default=[])
    parser.add_argument("--model", action="append", default=[])
    args = parser.parse_args()
    manifest = json.load(open(os.path.join(DIR, "manifest.json")))
    failed = 0
    for entry in manifest["models"]:
        if args.model and entry["name"] not in args.model:
            continue
        want = np.load(os.path.join(DIR, entry["output"]))
        got = run(args.tightfit, entry, os.path.join(args.work, entry["name"], "host"))
        d = distance(got.reshape(want.shape), want, entry.get("absolute_below"))
        line = f"{entry['name']}: {d} {entry['unit']} from ORT (bound {entry['bound']})"
        if d > entry["bound"]:
            failed += 1
            line = "FAIL: " + line
        for target in args.target:
            on = run(args.tightfit, entry, os.path.join(args.work, entry["name"], target), target)
            same = on.tobytes() == got.tobytes()
            failed += 0 if same else 1
            line += f"; {target}: {'the same bits' if same else 'FAIL: other bits than the host'}"
        print(line)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
