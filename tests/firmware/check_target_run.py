#!/usr/bin/env python3
"""`tightfit run --target BOARD` from outside, as a user runs it: its outputs must equal the host
build's exactly, and the report it writes must carry the firmware's figures.

  check_target_run.py --tightfit TIGHTFIT --board mps2-an500 --work DIR --reference-dir HOST_OUT \
      [--profile] [--rewrite TECHNIQUE] [--byte-aligned] -- MODEL.onnx [tightfit run arguments: --input x.npy ...]

HOST_OUT holds output_0.npy, ... of `tightfit run` on the host for the same model and inputs.
Checks: exit 0; every output_N.npy has the reference's dtype, shape and bytes; NAME.report.json
validates (tightfit report reads it) and its "measured" section names the board, has the arena
section equal to the planned arena and to the report's arena_bytes, a positive instruction count
and peak stack; with --profile, one count per step (null only for steps without a kernel call)
that add up to the run's instructions within 10%; with --rewrite, a rewrite of that technique in
the report (tiling: the cap made a stage run in row bands); with --byte-aligned, the cap made the
int8 buffers byte-aligned and some buffer lies off a 4-byte boundary. The RAM the firmware is linked
to use (measured.ram.linked_bytes) must be its stack, .data, .bss and arena with at most 64 B between
(alignment, and on RV32 the small-data .sbss that the linker script leaves outside .bss: the
instruction counter's 32 B). With --io-outside among the run's arguments, run() must read the inputs where
they lie in flash: the link map has no RAM buffer for them. Exit 0 when all hold, else 1 naming
the first failure.
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys

import numpy as np


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tightfit", required=True)
    parser.add_argument("--board", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--reference-dir", required=True)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--rewrite", help="a technique the report's rewrites must name (e.g. tiling)")
    parser.add_argument("--byte-aligned", action="store_true", help="the cap must have made buffers byte-aligned")
    parser.add_argument("run_arguments", nargs="+")
    args = parser.parse_args()

    out = os.path.join(args.work, "out")
    shutil.rmtree(args.work, ignore_errors=True)
    command = [args.tightfit, "run", *args.run_arguments, "--target", args.board, "--output-dir", out,
               "--build-dir", os.path.join(args.work, "build")] + (["--profile"] if args.profile else [])
    print(" ".join(command))
    run = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(run.stdout)
    if run.returncode != 0:
        fail(f"tightfit run --target exited {run.returncode}")

    references = sorted(glob.glob(os.path.join(args.reference_dir, "output_*.npy")))
    if not references:
        fail(f"no output_*.npy in {args.reference_dir}")
    for reference in references:
        name = os.path.basename(reference)
        expected, got = np.load(reference), np.load(os.path.join(out, name))
        if expected.dtype != got.dtype or expected.shape != got.shape:
            fail(f"{name}: {got.dtype} {got.shape} on {args.board}, {expected.dtype} {expected.shape} on the host")
        if expected.tobytes() != got.tobytes():
            differ = np.flatnonzero(expected.reshape(-1) != got.reshape(-1))
            fail(f"{name}: {differ.size} element(s) differ from the host's, first at {differ[0]}")
    print(f"{len(references)} output(s) equal to the host build's on {args.board}")

    reports = glob.glob(os.path.join(out, "*.report.json"))
    if len(reports) != 1:
        fail(f"expected one NAME.report.json in {out}, found {reports}")
    checked = subprocess.run([args.tightfit, "report", reports[0], "--format", "text"], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
    if checked.returncode != 0 or f"Measured on {args.board}" not in checked.stdout:
        fail(f"tightfit report does not render the measured section: {checked.stdout[:400]}")
    report = json.load(open(reports[0]))
    measured = report.get("measured")
    if measured is None:
        fail("the report has no measured section")
    if measured["board"] != args.board:
        fail(f"measured on {measured['board']}, expected {args.board}")
    ram = measured["ram"]
    if not (ram["arena_bytes"] == ram["planned_arena_bytes"] == report["arena_bytes"]):
        fail(f"arena section {ram['arena_bytes']} B, planned {ram['planned_arena_bytes']} B, "
             f"report {report['arena_bytes']} B")
    parts = ram["stack_bytes"] + ram["data_bytes"] + ram["bss_bytes"] + ram["arena_bytes"]
    if not parts <= ram["linked_bytes"] <= parts + 64:
        fail(f"{ram['linked_bytes']} B of RAM linked, its stack, .data, .bss and arena are {parts} B")
    if "--io-outside" in args.run_arguments:
        link_map = open(os.path.join(args.work, "build", "firmware", "tightfit_run.map")).read()
        if "tightfit_input_buffer" in link_map:
            fail("with --io-outside the firmware copies its inputs into RAM (tightfit_input_buffer_N in the map)")
        print(f"inputs read in flash: {measured['flash']['inputs_bytes']} B of .tightfit_inputs, none in RAM")
    for key, value in (("instructions", measured["instructions"]), ("stack_peak_bytes", ram["stack_peak_bytes"]),
                       ("weights_bytes", measured["flash"]["weights_bytes"])):
        if not isinstance(value, int) or value <= 0 and key != "weights_bytes":
            fail(f"{key} is {value!r}")
    counts = measured["step_instructions"]
    if args.profile:
        if counts is None or len(counts) != len(report["steps"]):
            fail(f"step_instructions {counts!r} for {len(report['steps'])} steps")
        called = [c for c in counts if c is not None]
        if not called or any(c <= 0 for c in called):
            fail(f"step_instructions {counts!r}")
        total = sum(called)
        if abs(total - measured["instructions"]) > 0.1 * measured["instructions"]:
            fail(f"the steps add up to {total} instructions, the run took {measured['instructions']}")
        print(f"{len(called)} kernel calls profiled, {total} instructions against {measured['instructions']}")
    elif counts is not None:
        fail("step_instructions given without --profile")
    if args.rewrite:
        applied = [r for r in report["rewrites"] if r["technique"] == args.rewrite]
        if not applied:
            fail(f"no {args.rewrite} rewrite in the report")
        print(f"{args.rewrite}: {applied[0]['detail']}")
    if args.byte_aligned:
        if report.get("alignment", {}).get("source") != "cap":
            fail(f"the report's alignment is {report.get('alignment')}, not byte-aligned for the cap")
        off = [b["tensor"] for b in report["buffers"] if b["offset"] % 4]
        if not off:
            fail("byte-aligned for the cap, but every buffer lies on a 4-byte boundary")
        print(f"byte-aligned: {len(off)} buffers off a 4-byte boundary: {', '.join(off)}")
    print(f"report: arena {ram['arena_bytes']} B as planned, {measured['instructions']} instructions, "
          f"peak stack {ram['stack_peak_bytes']} B")


if __name__ == "__main__":
    main()
