#!/usr/bin/env python3
"""Run a tightfit firmware in QEMU and check what it reports.

The firmware prints lines "TIGHTFIT key=value ..." and ends with a semihosting exit whose status
becomes QEMU's. This tool runs it (under -icount, so that instruction counts are exact), echoes its
output, collects its figures (parse_lines(): the key=value pairs of the lines other than the
outputs and steps) and checks them:

  run_qemu.py --machine mps2-an386 fw.elf --expect-exit 0 --expect fpu_enabled=1 \
      --runs 2 --same mac_loop_instructions --json figures.json

Exit status 0 when every check holds, 1 otherwise.
"""
import argparse
import json
import subprocess
import sys

import boards  # beside this file

ICOUNT = ["-icount", "shift=0,align=off,sleep=off"]


def qemu_command(qemu, machine, elf, extra=()):
    """The QEMU command line for a firmware, with its architecture's flags from the board table
    (Arm boards exit through semihosting; RISC-V ones start the image themselves and exit through
    the test device). `extra`: more QEMU options (e.g. a TCG plugin's)."""
    return [qemu, "-M", machine, "-nographic", *boards.qemu_flags(qemu), *ICOUNT, *extra, "-kernel", elf]


def parse_lines(output):
    """The firmware's "TIGHTFIT key=value ..." lines (docs/firmware.md, "What the firmware prints"),
    read as `tightfit run --target` reads them (compiler/cli/run_command.cpp). Returns (figures,
    outputs, steps): outputs maps N to the words (key -> value) of the "output=N" line; steps holds
    the words of each "step=N" line (`--profile`), in order; figures the words of every other line.
    output_values() decodes an output's values."""
    figures, outputs, steps = {}, {}, []
    for line in output.splitlines():
        words = line.strip().split()
        if not words or words[0] != "TIGHTFIT":
            continue
        pairs = dict(word.split("=", 1) for word in words[1:] if "=" in word)
        if "output" in pairs:
            outputs[int(pairs["output"])] = pairs
        elif "step" in pairs:
            steps.append(pairs)
        else:
            figures.update(pairs)
    return figures, outputs, steps


def output_values(words):
    """An output line's values as integers: quantized, in memory order; after dtype=float32 each is
    the float's IEEE bits (printed as eight hex digits)."""
    base = 16 if words.get("dtype") == "float32" else 10
    return [int(v, base) for v in words.get("values", "").split(",") if v]


def run_once(qemu, machine, elf, timeout, extra=()):
    """Returns (exit status or None on timeout, output text, figures dict of parse_lines())."""
    command = qemu_command(qemu, machine, elf, extra)
    try:
        done = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, timeout=timeout)
        status, output = done.returncode, done.stdout.decode(errors="replace")
    except subprocess.TimeoutExpired as expired:
        status, output = None, (expired.stdout or b"").decode(errors="replace")
    return status, output, parse_lines(output)[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("elf")
    parser.add_argument("--machine", required=True, help="QEMU machine, e.g. mps2-an386")
    parser.add_argument("--qemu", default="qemu-system-arm")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per run")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--expect-exit", type=int, help="required exit status")
    parser.add_argument("--expect", action="append", default=[], metavar="KEY=VALUE",
                        help="a figure that must have this value (every run)")
    parser.add_argument("--same", action="append", default=[], metavar="KEY",
                        help="a figure that must be present and identical in every run")
    parser.add_argument("--positive", action="append", default=[], metavar="KEY",
                        help="a figure that must be an integer above zero")
    parser.add_argument("--json", metavar="FILE", help="write the last run's figures here")
    args = parser.parse_args()

    failures = []
    runs = []
    for index in range(args.runs):
        status, output, figures = run_once(args.qemu, args.machine, args.elf, args.timeout)
        sys.stdout.write(output)
        label = f"run {index + 1}"
        if status is None:
            failures.append(f"{label}: no exit within {args.timeout} s")
        elif args.expect_exit is not None and status != args.expect_exit:
            failures.append(f"{label}: exit status {status}, expected {args.expect_exit}")
        for expectation in args.expect:
            key, _, value = expectation.partition("=")
            if figures.get(key) != value:
                failures.append(f"{label}: {key}={figures.get(key)}, expected {value}")
        for key in args.positive:
            value = figures.get(key, "")
            if not (value.isdigit() and int(value) > 0):
                failures.append(f"{label}: {key}={value or None}, expected a positive integer")
        runs.append(figures)

    for key in args.same:
        values = [figures.get(key) for figures in runs]
        if None in values or len(set(values)) != 1:
            failures.append(f"{key} differs between runs or is missing: {values}")

    if args.json and runs:
        with open(args.json, "w") as out:
            json.dump(runs[-1], out, indent=2, sort_keys=True)
            out.write("\n")

    for failure in failures:
        print(f"FAIL: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
