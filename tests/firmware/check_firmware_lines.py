#!/usr/bin/env python3
"""`tightfit firmware-lines` (the program named by $TIGHTFIT) on firmware_lines.txt must print
firmware_lines.expected.json, which firmware_lines_test.cpp holds its reading to: given the file,
and on stdin as run_qemu.parse_lines() gives it the firmware's output. Exit 0 when both equal it,
else 1."""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "firmware", "tools"))
import run_qemu  # noqa: E402


def main():
    tightfit = os.environ["TIGHTFIT"]
    fixture = os.path.join(HERE, "firmware_lines.txt")
    with open(os.path.join(HERE, "firmware_lines.expected.json")) as f:
        expected = json.load(f)
    printed = json.loads(subprocess.run([tightfit, "firmware-lines", fixture], stdout=subprocess.PIPE,
                                        check=True).stdout)
    with open(fixture) as f:
        figures, outputs, steps = run_qemu.parse_lines(f.read(), tightfit)
    piped = {"figures": figures, "outputs": {str(n): o for n, o in outputs.items()}, "steps": steps}
    failed = False
    for how, got in (("given the file", printed), ("on stdin", piped)):
        if got != expected:
            print(f"FAIL: {how}, read {json.dumps(got, indent=1, sort_keys=True)}\n"
                  f"expected {json.dumps(expected, indent=1, sort_keys=True)}")
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
