#!/usr/bin/python3
"""A data-dependent If through `tightfit run`: models/if_branches.qdq.onnx (made by
models/if_branches.py) on its two samples, one taking each branch, the output byte-identical to
ONNX Runtime's; the generated run() holds one `if` / `else` (the If on a constant is folded), and the plan's
arena is its bound, proven optimal.

Usage: if_test.py TIGHTFIT WORK_DIR
"""
import glob
import json
import os
import subprocess
import sys

import numpy as np

MODELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "models")


def main():
    tightfit, work = sys.argv[1], sys.argv[2]
    failures = []
    for tag in ("", "sample1."):
        out, build = os.path.join(work, f"out.{tag}"), os.path.join(work, f"build.{tag}")
        cmd = [tightfit, "run", os.path.join(MODELS, "if_branches.qdq.onnx"), "--input",
               os.path.join(MODELS, f"if_branches.{tag}input_0.npy"), "--output-dir", out, "--build-dir", build]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            failures.append(f"{' '.join(cmd)}: exit {r.returncode}: {r.stdout}{r.stderr}")
            continue
        for k in (0,):
            got = np.load(os.path.join(out, f"output_{k}.npy"))
            want = np.load(os.path.join(MODELS, f"if_branches.qdq.{tag}output_{k}.npy"))
            if got.dtype != want.dtype or got.shape != want.shape or got.tobytes() != want.tobytes():
                failures.append(f"sample '{tag}' output {k}: differs from ONNX Runtime's")
    source = open(glob.glob(os.path.join(work, "build.", "*.cpp"))[0]).read()
    run = source[source.index("void run("):]
    run = run[:run.index("\n}\n")]
    if run.count("  if (") != 1 or run.count("} else {") != 1:
        failures.append("run() should hold one if / else (the constant If folded)")
    report = json.load(open(glob.glob(os.path.join(work, "build.", "*.report.json"))[0]))
    if report["status"] != "optimal" or report["arena_bytes"] != report["lower_bound_bytes"]:
        failures.append(f"the plan is {report['status']}: {report['arena_bytes']} B for a bound of {report['lower_bound_bytes']} B")
    for f in failures:
        print(f)
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
