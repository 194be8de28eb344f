#!/usr/bin/env python3
"""Every NAME.report.json in DIR validates against docs/report.schema.json with the jsonschema
package (an implementation independent of tightfit's own check), and a broken copy does not.
SKIPPED (exit 77) where python3-jsonschema is not installed."""
import copy
import json
import pathlib
import sys

try:
    import jsonschema
except ImportError:
    print("SKIPPED: python3-jsonschema is not installed (apt-get install python3-jsonschema)")
    sys.exit(77)


def main(folder, schema_path):
    schema = json.loads(pathlib.Path(schema_path).read_text())
    validator = jsonschema.Draft202012Validator(schema)
    jsonschema.Draft202012Validator.check_schema(schema)
    failures = []
    reports = sorted(pathlib.Path(folder).glob("*.report.json"))
    if not reports:
        failures.append(f"no reports in {folder}")
    for path in reports:
        report = json.loads(path.read_text())
        errors = [f"{'/'.join(map(str, e.path))}: {e.message}" for e in validator.iter_errors(report)]
        failures += [f"{path.name}: {e}" for e in errors]
        print(f"{path.name}: {'valid' if not errors else 'INVALID'}")
        broken = copy.deepcopy(report)
        broken["buffers"][0]["size"] = "big"
        del broken["regions"]
        if len(list(validator.iter_errors(broken))) != 2:
            failures.append(f"{path.name}: a copy with two errors is not reported with exactly two")
    for failure in failures:
        print("FAIL:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
