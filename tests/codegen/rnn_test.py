#!/usr/bin/python3
"""LSTM, GRU and float Sigmoid/Tanh through `tightfit run`: every model of models/rnn (made by
models/make_rnn_models.py) against ONNX Runtime's outputs within the bounds below. A stateful
model runs 3 calls, each feeding tightfit's own state outputs back as the next call's state
inputs, and every call is compared with ORT run the same way.

The bounds: tightfit's float kernels round every product and sum (no FMA) where ORT's MLAS fuses
multiply-adds (SGEMM, and its logistic and tanh kernels on x86-64 with FMA3), so a float output
may differ from ORT's in its last bits; past a QuantizeLinear that moves a value across a rounding
boundary at most one step. BOUNDS holds, per model, the largest absolute difference allowed for
each output (float outputs, and dequantized ones, where one step is the output's scale) or in
steps (integer outputs); the figures measured when they were set are in docs/numerics.md.

Usage: rnn_test.py TIGHTFIT WORK_DIR
"""
import json
import os
import subprocess
import sys

import numpy as np

MODELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "models", "rnn")
# name: per output, the largest |tightfit - ORT| allowed (float: absolute; integer: steps)
BOUNDS = {
    "act_float_out": [1e-6, 1e-6],
    "act_float_island": [1, 1],
    "lstm_forward": [1e-6, 1, 1e-6],  # Y_h through a QuantizeLinear
    "lstm_reverse": [1e-6, 1e-6],
    "lstm_bidirectional": [1e-6, 1e-6, 1e-6],
    "gru_forward": [1e-6, 1],
    "gru_bidirectional_lbr": [1e-6, 1e-6],
    "gru_reverse_lbr": [1e-6],
    "kws_lstm": [None, 1e-6, 1e-6],  # logits: one step of its scale (see scale_bound)
    "kws_lstm_nostate": [None],
    "vad_gru": [None, 1e-6],
}


def scale_bound(want):
    """One step of a dequantized output: the smallest gap between its distinct values."""
    v = np.unique(want.astype(np.float64))
    return float(np.min(np.diff(v))) * 1.0001 if v.size > 1 else 1e-6


def main():
    tightfit, work = sys.argv[1], sys.argv[2]
    manifest = json.load(open(os.path.join(MODELS, "manifest.json")))
    failures = []
    for e in manifest["models"]:
        name = e["name"]
        inputs = [os.path.join(MODELS, f) for f in e["inputs"]]
        for call in range(e["calls"]):
            out = os.path.join(work, f"{name}.call{call}")
            cmd = [tightfit, "run", os.path.join(MODELS, e["model"])]
            for i in inputs:
                cmd += ["--input", i]
            cmd += ["--output-dir", out]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                failures.append(f"{name} call {call}: exit {r.returncode}: {r.stdout}{r.stderr}")
                break
            for k in range(e["outputs"]):
                got = np.load(os.path.join(out, f"output_{k}.npy"))
                want = np.load(os.path.join(MODELS, f"{name}.call{call}.output_{k}.npy"))
                if got.dtype != want.dtype or got.shape != want.shape:
                    failures.append(f"{name} call {call} output {k}: {got.dtype}{got.shape}, ORT {want.dtype}{want.shape}")
                    continue
                if want.dtype == np.float32:
                    diff = float(np.max(np.abs(got.astype(np.float64) - want))) if got.size else 0.0
                    bound = BOUNDS[name][k] if BOUNDS[name][k] is not None else scale_bound(want)
                    print(f"{name} call {call} output {k}: max |diff| {diff:.3g} (bound {bound:.3g})")
                else:
                    diff = int(np.max(np.abs(got.astype(np.int64) - want))) if got.size else 0
                    bound = BOUNDS[name][k]
                    print(f"{name} call {call} output {k}: max |diff| {diff} step(s) (bound {bound})")
                if not diff <= bound:
                    failures.append(f"{name} call {call} output {k}: differs from ONNX Runtime's by {diff} (bound {bound})")
            # the state a caller keeps: tightfit's own outputs, fed back
            for j, k in e["carry"].items():
                inputs[int(j)] = os.path.join(out, f"output_{k}.npy")
    for f in failures:
        print(f)
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
