#!/usr/bin/env python3
"""The report's flash figure against the firmware's link: the report (linked for a core by
`tightfit compile --target`) must be within a tolerance of the flash the firmware's link map gives
to the model, that is everything in flash but the board support, main() and the built-in test
inputs (the C library functions the model calls count to it, as they do in the report's link).

  check_flash_figure.py --report NAME.report.json --map tightfit_run.map --core cortex-m4 [--tolerance 0.10]

Prints both figures; exit 0 when they agree within the tolerance, else 1 naming the difference.
"""
import argparse
import json
import re
import sys

# Output sections that occupy flash (.data for its initial values); .tightfit_inputs is the test's.
FLASH = {".vectors", ".text", ".rodata", ".tightfit_weights", ".ARM.extab", ".ARM.exidx", ".data"}
# Objects of the firmware rather than the model: board support, main(), the embedded inputs.
FIRMWARE = re.compile(r"firmware/src/|/main\.cpp\.obj$|tightfit_npy/")


def flash_by_origin(map_text):
    """(model bytes, firmware bytes) of the input sections in flash, from a GNU ld map."""
    body = map_text[map_text.index("Linker script and memory map"):]
    model = firmware = 0
    output = None
    # An input section: " .name" then address, size and object, on the same line or the next.
    entry = re.compile(r"^ (\S+)(?:\n)?\s+0x[0-9a-f]+\s+0x([0-9a-f]+)\s+(\S.*)$", re.M)
    heading = re.compile(r"^(\.\S+)(?:\s|$)", re.M)
    events = sorted([(m.start(), "out", m.group(1)) for m in heading.finditer(body)] +
                    [(m.start(), "in", m) for m in entry.finditer(body)], key=lambda e: e[0])
    for _, kind, value in events:
        if kind == "out":
            output = value
            continue
        if output not in FLASH or value.group(1).startswith("*"):
            continue
        size = int(value.group(2), 16)
        if FIRMWARE.search(value.group(3).strip()):
            firmware += size
        else:
            model += size
    return model, firmware


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--report", required=True)
    parser.add_argument("--map", required=True)
    parser.add_argument("--core", required=True)
    parser.add_argument("--tolerance", type=float, default=0.10)
    args = parser.parse_args()
    report = json.load(open(args.report))
    linked = report["flash"].get("linked")
    if not linked:
        print("FAIL: the report's flash is an estimate: no flash.linked")
        return 1
    if linked["core"] != args.core:
        print(f"FAIL: the report's flash is linked for {linked['core']}, the firmware for {args.core}")
        return 1
    reported = linked["text_bytes"] + linked["rodata_bytes"] + linked["data_bytes"] + linked["weights_bytes"]
    model, firmware = flash_by_origin(open(args.map).read())
    off = (reported - model) / model
    print(f"{report['name']} on {args.core}: report {reported} B (code {linked['text_bytes']}, constants "
          f"{linked['rodata_bytes']}, .data {linked['data_bytes']}, weights {linked['weights_bytes']}); "
          f"firmware link: model {model} B, board support and main {firmware} B; {100 * off:+.1f}%")
    if abs(off) > args.tolerance:
        print(f"FAIL: the report's flash is {100 * off:+.1f}% off the link (tolerance {100 * args.tolerance:.0f}%)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
