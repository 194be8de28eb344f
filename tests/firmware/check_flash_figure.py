#!/usr/bin/env python3
"""The report's flash figure against the firmware's link: the report (linked for a core by
`tightfit compile --target`) must be within a tolerance of the flash the firmware's link map
(written with --cref) gives to the model: its object, and the C library members that it uses,
directly or through another such member, as the report's own link has them; plus what of the
model's object the firmware's --gc-sections dropped because main() does not call it (get_output_N:
the firmware prints the arena), since the report links every function the model exports. The rest
is the firmware's: board support, main(), the built-in test inputs and the library members only
they use.

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


def library_members_of_model(map_text):
    """The archive members the model's object uses, directly or through one another, from the
    map's cross reference table (symbol, then the defining file, then one referencing file a line)."""
    table = map_text[map_text.index("Cross Reference Table"):].splitlines()[3:]
    defined_in, users = {}, {}
    symbol = None
    for line in table:
        if not line.strip():
            continue
        if not line[0].isspace():
            symbol = line
            defined_in[symbol] = line.split()[-1]
            users[symbol] = []
        elif symbol is not None:
            users[symbol].append(line.strip())
    members = set()
    def of_model(path):
        return path in members or ("(" not in path and not FIRMWARE.search(path))
    changed = True
    while changed:
        changed = False
        for symbol, definer in defined_in.items():
            if "(" in definer and definer not in members and any(of_model(user) for user in users[symbol]):
                members.add(definer)
                changed = True
    return members


# An input section: " .name" then address, size and object, on the same line or the next.
ENTRY = re.compile(r"^ (\S+)\n?[ \t]+0x[0-9a-f]+[ \t]+0x([0-9a-f]+)[ \t]+(\S.*)$", re.M)


def of_model_object(origin):
    return "(" not in origin and not FIRMWARE.search(origin)


def dropped_from_model(map_text, name):
    """Bytes of the model's own functions (namespace `name`) that the firmware's link left out."""
    block = map_text[map_text.index("Discarded input sections"):map_text.index("Memory Configuration")]
    prefix = f".text._ZN{len(name)}{name}"
    return sum(int(m.group(2), 16) for m in ENTRY.finditer(block)
               if m.group(1).startswith(prefix) and "_GLOBAL__N_" not in m.group(1)
               and of_model_object(m.group(3).strip()))


def flash_by_origin(map_text):
    """(model bytes, firmware bytes) of the input sections in flash, from a GNU ld map."""
    members = library_members_of_model(map_text)
    body = map_text[map_text.index("Linker script and memory map"):map_text.index("Cross Reference Table")]
    model = firmware = 0
    output = None
    heading = re.compile(r"^(\.\S+)(?:\s|$)", re.M)
    events = sorted([(m.start(), "out", m.group(1)) for m in heading.finditer(body)] +
                    [(m.start(), "in", m) for m in ENTRY.finditer(body)], key=lambda e: e[0])
    for _, kind, value in events:
        if kind == "out":
            output = value
            continue
        if output not in FLASH or value.group(1).startswith("*"):
            continue
        size, origin = int(value.group(2), 16), value.group(3).strip()
        if origin in members or of_model_object(origin):
            model += size
        else:
            firmware += size
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
    map_text = open(args.map).read()
    linked_in, firmware = flash_by_origin(map_text)
    dropped = dropped_from_model(map_text, report["name"])
    model = linked_in + dropped
    off = (reported - model) / model
    print(f"{report['name']} on {args.core}: report {reported} B (code {linked['text_bytes']}, constants "
          f"{linked['rodata_bytes']}, .data {linked['data_bytes']}, weights {linked['weights_bytes']}); "
          f"firmware link: model {model} B ({dropped} B of it not called by main), board support and main "
          f"{firmware} B; {100 * off:+.1f}%")
    if abs(off) > args.tolerance:
        print(f"FAIL: the report's flash is {100 * off:+.1f}% off the link (tolerance {100 * args.tolerance:.0f}%)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
