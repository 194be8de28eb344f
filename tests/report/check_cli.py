#!/usr/bin/env python3
"""`tightfit report` renders every view from the JSON alone, identical to what the library wrote
beside it; a missing file, a file that is not JSON and a report that breaks the schema each
give one line on stderr and exit status 1."""
import json
import pathlib
import subprocess
import sys
import tempfile


def run(tightfit, *args):
    return subprocess.run([tightfit, "report", *map(str, args)], capture_output=True, text=True, timeout=60)


def main(folder, tightfit):
    folder = pathlib.Path(folder)
    failures = []

    def expect(condition, message):
        if not condition:
            failures.append(message)

    for report in sorted(folder.glob("*.report.json")):
        name = report.name[: -len(".report.json")]
        default = run(tightfit, report)
        expect(default.returncode == 0, f"{name}: exit {default.returncode}: {default.stderr.strip()}")
        expect(default.stdout == (folder / f"{name}.report.txt").read_text(), f"{name}: the default view is not the text")
        for fmt, twin in (("svg", f"{name}.memory.svg"), ("html", f"{name}.report.html")):
            out = run(tightfit, report, "--format", fmt)
            expect(out.stdout == (folder / twin).read_text(), f"{name}: --format {fmt} differs from {twin}")
        as_json = run(tightfit, report, "--format", "json")
        expect(json.loads(as_json.stdout) == json.loads(report.read_text()), f"{name}: --format json changes the report")
        with tempfile.TemporaryDirectory() as scratch:
            target = pathlib.Path(scratch) / "view.svg"
            written = run(tightfit, report, "--format", "svg", "-o", target)
            expect(written.returncode == 0 and written.stdout == "", f"{name}: -o printed or failed")
            expect(target.exists() and target.read_text() == (folder / f"{name}.memory.svg").read_text(),
                   f"{name}: -o did not write the SVG")
        print(f"{name}: text, json, svg, html and -o agree with the library's views")

    with tempfile.TemporaryDirectory() as scratch:
        scratch = pathlib.Path(scratch)
        (scratch / "not.json").write_text("{ this is not json")
        broken = json.loads((folder / "layers5.report.json").read_text())
        del broken["steps"]
        (scratch / "broken.report.json").write_text(json.dumps(broken))
        cases = {
            "a missing file": (scratch / "missing.report.json", "cannot read"),
            "a file that is not JSON": (scratch / "not.json", "is not JSON"),
            "a report without steps": (scratch / "broken.report.json", 'missing key "steps"'),
        }
        for what, (path, words) in cases.items():
            out = run(tightfit, path)
            lines = out.stderr.splitlines()
            expect(out.returncode == 1, f"{what}: exit {out.returncode}, not 1")
            expect(len(lines) == 1 and lines[0].startswith("tightfit: error: ") and words in lines[0],
                   f"{what}: stderr is not one line with {words!r}: {out.stderr!r}")
            expect(out.stdout == "", f"{what}: printed on stdout")
            print(f"{what}: {lines[0] if lines else '(nothing on stderr)'}")
    for failure in failures:
        print("FAIL:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
