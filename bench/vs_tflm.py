#!/usr/bin/env python3
"""tightfit against TensorFlow Lite Micro on TFLite Micro's own models: ../shared/tflm-models/ holds
MLPerf Tiny's reference models and two TFLite Micro examples (int8, as ONNX with the same weights),
with TFLite Micro + CMSIS-NN's arena, code bytes and instructions measured in QEMU (-O2, exact
instruction counts). Each model's ONNX file runs through `tightfit run --target BOARD` on its
input_0 (no cap, no tiling: the untiled plan), and the table puts tightfit's figures beside TFLite
Micro's, each as a ratio (below 1: tightfit takes less). With --tflite each model is read from its
.tflite instead (model.tflite, int8 input_0.npy), under TFLite's numerics (its default), and a
column says whether the output equals TFLite Micro's (tflm_output_0.npy) bit for bit.

  bench/vs_tflm.sh [--build BUILD] [--work DIR] [--boards mps2-an386,mps3-an547] [--models a,b]
                   [--jobs N] [--tflite]

Columns, per board:
- arena: tightfit's arena (the plan's, as linked) against TFLite Micro's arena_used_bytes on that
  board (its activations plus its persistent allocations: tensors, op data, node array);
- flash: the generated code, the runtime kernels it calls and their tables, the C library
  functions they need and the weights, linked for the core (report `flash.linked`), against
  TFLite Micro's framework + kernels + CMSIS-NN (text + rodata) plus the .tflite file (the C
  library it needs is left out of its figure, so this ratio favours TFLite Micro);
- instructions per inference on input_0, against TFLite Micro + CMSIS-NN's on the same input.
TFLite Micro's figures exist for the Cortex-M4 (mps2-an386) and the Cortex-M55 (mps3-an547); on
other boards only tightfit's figures are printed. Not a test: it exits 1 only when a run fails.
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(os.path.dirname(ROOT), "shared", "tflm-models")
MODELS = ["kws", "resnet8", "vww", "ad", "person_detect", "micro_speech"]
# board -> TFLite Micro's configuration in tflm.json and its key in instructions_per_invoke
TFLM_CONFIG = {
    "mps2-an386": ("an386-cmsis", "m4", "m4_cmsis_nn"),
    "mps3-an547": ("an547-cmsis", "m55", "m55_cmsis_nn"),
}


def run_one(tightfit, work, model, board, tflite):
    out = os.path.join(work, f"{model}.{board}" + (".tflite" if tflite else ""))
    os.makedirs(out, exist_ok=True)
    source, data = ("model.tflite", "input_0.npy") if tflite else ("model.onnx", "input_0.float.npy")
    command = [tightfit, "run", os.path.join(SHARED, model, source), "--input",
               os.path.join(SHARED, model, data), "--output-dir", out, "--build-dir",
               os.path.join(out, "build"), "--name", model, "--target", board]
    with open(os.path.join(out, "run.log"), "w") as log:
        done = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        raise RuntimeError(f"{model} on {board} failed ({done.returncode}): see {out}/run.log")
    report = json.load(open(os.path.join(out, f"{model}.report.json")))
    measured, linked = report["measured"], report["flash"]["linked"]
    ram = measured["ram"]
    # The .tflite's output is TFLite's int8 tensor: comparable with TFLite Micro's as it is.
    output = np.load(os.path.join(out, "output_0.npy"))
    tflm = np.load(os.path.join(SHARED, model, "tflm_output_0.npy"))
    return {
        "equal": tflite and output.dtype == tflm.dtype and output.tobytes() == tflm.tobytes(),
        "arena": ram["arena_bytes"],
        "ram": ram["arena_bytes"] + ram["data_bytes"] + ram["bss_bytes"] + ram["stack_peak_bytes"],
        "flash": linked["text_bytes"] + linked["rodata_bytes"] + linked["data_bytes"] + linked["weights_bytes"],
        "instructions": measured["instructions"],
    }


def tflm_figures(model, board):
    if board not in TFLM_CONFIG:
        return None
    data = json.load(open(os.path.join(SHARED, model, "tflm.json")))
    config, core, key = TFLM_CONFIG[board]
    code = data["code_bytes_tflm_plus_cmsis_nn"][core]
    return {
        "arena": data["configs"][config]["arena_used_bytes"],
        "flash": code["text"] + code["rodata"] + data["model_bytes"],
        "instructions": data["instructions_per_invoke"][key],
    }


def table(board, rows, tflite):
    lines = [f"### {board}" + (" (.tflite, TFLite's numerics)" if tflite else ""), "",
             "| model | TFLM arena | tightfit arena | ratio | tightfit RAM (arena + data + bss + stack) "
             "| TFLM flash | tightfit flash | ratio | TFLM instructions | tightfit | ratio |"
             + (" output = TFLM |" if tflite else ""),
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|" + ("---|" if tflite else "")]
    for model, ours, theirs in rows:
        def pair(key):
            if theirs is None:
                return f"— | {ours[key]:,} | —"
            return f"{theirs[key]:,} | {ours[key]:,} | {ours[key] / theirs[key]:.2f}"
        equal = (" yes |" if ours["equal"] else " **no** |") if tflite else ""
        lines.append(f"| {model} | {pair('arena')} | {ours['ram']:,} | {pair('flash')} | {pair('instructions')} |"
                     + equal)
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--work", default=os.path.join(ROOT, "build", "bench-vs-tflm"))
    parser.add_argument("--boards", default="mps2-an386,mps3-an547")
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--tflite", action="store_true",
                        help="read model.tflite (TFLite's numerics) instead of model.onnx")
    args = parser.parse_args()
    tightfit = os.environ.get("TIGHTFIT", os.path.join(args.build, "compiler", "tightfit"))
    boards, models = args.boards.split(","), args.models.split(",")
    for model in models:
        if model not in MODELS:
            parser.error(f"--models: unknown model '{model}' (known: {', '.join(MODELS)})")
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {(m, b): pool.submit(run_one, tightfit, args.work, m, b, args.tflite) for b in boards for m in models}
        try:
            results = {key: f.result() for key, f in futures.items()}
        except RuntimeError as e:
            print(f"vs_tflm: {e}", file=sys.stderr)
            return 1
    for board in boards:
        print(table(board, [(m, results[(m, board)], tflm_figures(m, board)) for m in models], args.tflite))
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
