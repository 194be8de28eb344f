#!/usr/bin/env python3
"""Run a tightfit firmware in QEMU and check what it reports.

The firmware prints lines "TIGHTFIT key=value ..." and ends with a semihosting exit whose status
becomes QEMU's. This tool runs it (under -icount, so that instruction counts are exact), echoes its
output, collects its figures (parse_lines(): the key=value pairs of the lines other than the
outputs and steps) and checks them:

  run_qemu.py --machine mps2-an386 fw.elf --expect-exit 0 --expect fpu_enabled=1 \
      --runs 2 --same mac_loop_instructions --json figures.json

The lines are read by `tightfit firmware-lines`: the program given by --tightfit, else $TIGHTFIT,
else build/compiler/tightfit of this tree.

Exit status 0 when every check holds, 1 otherwise.
"""
import argparse
import json
import os
import subprocess
import sys

import boards  # beside this file

ICOUNT = ["-icount", "shift=0,align=off,sleep=off"]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def qemu_command(qemu, machine, elf, extra=()):
    """The QEMU command line for a firmware, with its architecture's flags from the board table
    (Arm boards exit through semihosting; RISC-V ones start the image themselves and exit through
    the test device). `extra`: more QEMU options (e.g. a TCG plugin's)."""
    return [qemu, "-M", machine, "-nographic", *boards.qemu_flags(qemu), *ICOUNT, *extra, "-kernel", elf]


def tightfit_program(tightfit=None):
    """The tightfit program that reads the firmware's lines: `tightfit`, else $TIGHTFIT, else this
    tree's build/compiler/tightfit. Exits with one line when there is none there."""
    program = tightfit or os.environ.get("TIGHTFIT") or os.path.join(ROOT, "build", "compiler", "tightfit")
    if not os.access(program, os.X_OK):
        sys.exit(f"{os.path.basename(sys.argv[0])}: error: no tightfit program at {program} (build it: "
                 f"cmake -S . -B build && cmake --build build --target tightfit; or name it with --tightfit or "
                 f"$TIGHTFIT)")
    return program


def parse_lines(output, tightfit=None):
    """The firmware's "TIGHTFIT key=value ..." lines (docs/firmware.md, "What the firmware prints"),
    read by `tightfit firmware-lines` (tightfit_program(tightfit)), as `tightfit run --target` reads
    them. Returns (figures, outputs, steps): outputs maps N to {"words": the words (key -> value) of
    the "output=N" line, "values": its values as integers (quantized, in memory order; a float32's
    bits as a signed 32-bit integer)}; steps holds the words of each "step=N" line (`--profile`),
    in order; figures the words of every other line."""
    done = subprocess.run([tightfit_program(tightfit), "firmware-lines"], input=output.encode(),
                          stdout=subprocess.PIPE, check=True)
    lines = json.loads(done.stdout)
    return lines["figures"], {int(n): o for n, o in lines["outputs"].items()}, lines["steps"]


def run_once(qemu, machine, elf, timeout, extra=(), tightfit=None):
    """Returns (exit status or None on timeout, output text, figures dict of parse_lines())."""
    command = qemu_command(qemu, machine, elf, extra)
    try:
        done = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, timeout=timeout)
        status, output = done.returncode, done.stdout.decode(errors="replace")
    except subprocess.TimeoutExpired as expired:
        status, output = None, (expired.stdout or b"").decode(errors="replace")
    return status, output, parse_lines(output, tightfit)[0]


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
    parser.add_argument("--tightfit", help="the tightfit program (default: $TIGHTFIT, else build/compiler/tightfit)")
    args = parser.parse_args()
    tightfit = tightfit_program(args.tightfit)

    failures = []
    runs = []
    for index in range(args.runs):
        status, output, figures = run_once(args.qemu, args.machine, args.elf, args.timeout, tightfit=tightfit)
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
