#!/usr/bin/python3
"""1-D convolutions through `tightfit run`: every model of models/conv1d (made by
models/make_conv1d_models.py) on both samples, each output byte-identical to ONNX Runtime's
(QOperator files: ORT's integer QLinearConv and ConvInteger; QDQ files: ORT at level 'all', the same integer
kernel); a Conv over a 3-D image refused with one line naming the node.

Usage: conv1d_test.py TIGHTFIT WORK_DIR
"""
import os
import subprocess
import sys

import numpy as np

MODELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "models", "conv1d")
# Each model: its forms and how many outputs it has.
MODELS_RUN = {"conv1d_u8": (("qop", "qdq"), 1), "conv1d_s8": (("qop", "qdq"), 2), "conv1d_int": (("qop",), 1)}


def main():
    tightfit, work = sys.argv[1], sys.argv[2]
    failures = []
    for stem, (forms, count) in MODELS_RUN.items():
        for form in forms:
            for sample in (0, 1):
                out = os.path.join(work, f"{stem}.{form}.{sample}")
                cmd = [tightfit, "run", os.path.join(MODELS, f"{stem}.{form}.onnx"), "--input",
                       os.path.join(MODELS, f"{stem}.sample{sample}.input_0.npy"), "--output-dir", out]
                r = subprocess.run(cmd, capture_output=True, text=True)
                if r.returncode != 0:
                    failures.append(f"{' '.join(cmd)}: exit {r.returncode}: {r.stdout}{r.stderr}")
                    continue
                for k in range(count):
                    got = np.load(os.path.join(out, f"output_{k}.npy"))
                    want = np.load(os.path.join(MODELS, f"{stem}.{form}.sample{sample}.output_{k}.npy"))
                    if got.dtype != want.dtype or got.shape != want.shape or got.tobytes() != want.tobytes():
                        failures.append(f"{stem}.{form} sample {sample} output {k}: differs from ONNX Runtime's")
    cmd = [tightfit, "run", os.path.join(MODELS, "conv3d.qop.onnx"), "--input", os.path.join(MODELS, "conv3d.sample0.input_0.npy"),
           "--output-dir", os.path.join(work, "conv3d")]
    r = subprocess.run(cmd, capture_output=True, text=True)
    said = (r.stdout + r.stderr).strip()
    if r.returncode == 0 or "\n" in said or "conv3d (QLinearConv)" not in said:
        failures.append(f"conv3d: want a refusal in one line naming the node, got exit {r.returncode}: {said}")
    for f in failures:
        print(f)
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
