#!/usr/bin/env python3
"""The Python tools' reading of the lines a firmware prints (parse_lines() and output_values() of
firmware/tools/run_qemu.py) against firmware_lines.expected.json, which firmware_lines_test.cpp
holds `tightfit run --target`'s reading to as well. Exit 0 when equal, else 1."""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "firmware", "tools"))
import run_qemu  # noqa: E402


def main():
    with open(os.path.join(HERE, "firmware_lines.txt")) as f:
        figures, outputs, steps = run_qemu.parse_lines(f.read())
    with open(os.path.join(HERE, "firmware_lines.expected.json")) as f:
        expected = json.load(f)
    got = {"figures": figures, "steps": steps,
           "outputs": {str(i): {"words": words, "values": run_qemu.output_values(words)} for i, words in outputs.items()}}
    if got != expected:
        print(f"FAIL: read {json.dumps(got, indent=1, sort_keys=True)}\nexpected {json.dumps(expected, indent=1, sort_keys=True)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
