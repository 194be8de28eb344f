#!/usr/bin/env python3
"""Every NAME.memory.svg in DIR parses as XML (a real parser) and has exactly one rectangle of
class "buffer" per placed buffer of NAME.report.json, each named for its tensor."""
import json
import pathlib
import sys
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"


def main(folder):
    failures = []
    reports = sorted(pathlib.Path(folder).glob("*.report.json"))
    if not reports:
        failures.append(f"no reports in {folder}")
    for report_path in reports:
        name = report_path.name[: -len(".report.json")]
        report = json.loads(report_path.read_text())
        root = ET.parse(pathlib.Path(folder) / f"{name}.memory.svg").getroot()
        if root.tag != SVG + "svg":
            failures.append(f"{name}: the root element is {root.tag}, not svg")
        rects = [r for r in root.iter(SVG + "rect") if "buffer" in r.get("class", "").split()]
        drawn = sorted(r.get("data-tensor") for r in rects)
        placed = sorted(b["tensor"] for b in report["buffers"] if b["offset"] is not None)
        if drawn != placed:
            failures.append(f"{name}: buffer rectangles {len(drawn)} for {len(placed)} placed buffers")
        for rect in rects:
            if rect.find(SVG + "title") is None:
                failures.append(f"{name}: the rectangle of {rect.get('data-tensor')} has no <title> tooltip")
        print(f"{name}: parses; {len(rects)} buffer rectangles for {len(placed)} placed buffers")
    for failure in failures:
        print("FAIL:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
