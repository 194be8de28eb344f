#!/usr/bin/env python3
"""Kernel speed on the boards of `tightfit run --target`: every QOperator model of models/ built by
firmware/run for QEMU's mps2-an386 (Cortex-M4), mps2-an500 (Cortex-M7), mps3-an547 (Cortex-M55
with Helium), the Cortex-M0+ build (on mps2-an385) and the RV32IMC build (on virt), once with the
runtime's portable kernels (-DTIGHTFIT_PORTABLE_KERNELS=ON) and once with the core's fast paths
(DSP, MVE, or the scalar kernels on the M0+ and RV32IMC), run under -icount
(exact instruction counts). Prints one table per board, then DS-CNN layer by layer (per-step
counts from a profiled build) beside CMSIS-NN's figures for that core from
../shared/targets/README.md (none for the RV32IMC: there, instructions per MAC).

  bench/firmware.sh [--build BUILD] [--work DIR] [--boards mps2-an386,...] [--models a,b]
                    [--jobs N] [--timeout S] [--no-layers]

BUILD is a host build holding compiler/tightfit (default: build). Every firmware's outputs are
also checked to be the same with both kernels (they must be bit-exact). Not a test: it prints
figures; it exits 1 only when something fails to build or run, or the two variants disagree.
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "firmware", "tools"))
import boards  # noqa: E402
import run_qemu  # noqa: E402

BOARDS = boards.run_targets()  # firmware/boards/boards.json

# CMSIS-NN's DS-CNN rows per core (../shared/targets/README.md): (layer, kind, MACs per layer,
# instructions per layer), and the whole network. Cortex-M4: its DSP paths; Cortex-M55: its MVE
# paths; Cortex-M0+: its plain C. The pool's "MACs" are adds.
CMSIS_DSCNN = {
    "cortex-m4": ([
        ("conv 10x4 stride 2, 1->64", "conv", 320000, 1118217),
        ("depthwise 3x3, 64 ch, 25x5", "depthwise", 72000, 561024),
        ("pointwise 1x1 64->64, 25x5", "pointwise", 512000, 1069072),
        ("average pool 25x5x64", "pool", 8000, 50795),
        ("fully connected 64->12", "fc", 768, 2227),
    ], 7691623),
    "cortex-m55": ([
        ("conv 10x4 stride 2, 1->64", "conv", 320000, 306196),
        ("depthwise 3x3, 64 ch, 25x5", "depthwise", 72000, 168672),
        ("pointwise 1x1 64->64, 25x5", "pointwise", 512000, 202897),
        ("average pool 25x5x64", "pool", 8000, 13075),
        ("fully connected 64->12", "fc", 768, 653),
    ], 1806200),
    "cortex-m0plus": ([
        ("conv 10x4 stride 2, 1->64", "conv", 320000, 3018048),
        ("depthwise 3x3, 64 ch, 25x5", "depthwise", 72000, 2570508),
        ("pointwise 1x1 64->64, 25x5", "pointwise", 512000, 3873235),
        ("average pool 25x5x64", "pool", 8000, 165447),
        ("fully connected 64->12", "fc", 768, 5993),
    ], 28978821),
}
DSCNN_MACS = 2656768


def run(command, log):
    with open(log, "w") as out:
        done = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        raise RuntimeError(f"failed ({done.returncode}): {' '.join(command)} (log: {log})")


def models_of(names):
    manifest = json.load(open(os.path.join(ROOT, "models", "manifest.json")))
    models = []
    for entry in manifest["models"]:
        if entry.get("form") != "qop" or entry.get("group") == "unit":
            continue
        name = entry["name"]
        if names and name not in names:
            continue
        inputs = [os.path.join(ROOT, "models", p) for p in entry["samples"][0]["inputs"]]
        models.append(dict(name=name, file=os.path.join(ROOT, "models", entry["file"]), inputs=inputs))
    return models


def macs_of(tightfit, model):
    command = [tightfit, "inspect", model["file"], "--json"]
    doc = json.loads(subprocess.run(command, check=True, stdout=subprocess.PIPE).stdout)
    return doc["totals"]["macs"]


def build_and_run(args, tightfit, model, board, variant, profile=False):
    """Builds firmware/run for one model, board and kernel variant; returns (figures, outputs, steps)."""
    tag = f"{model['name']}.{board}.{variant}{'.profile' if profile else ''}"
    build = os.path.join(args.work, tag)
    options = [
        "cmake", "-S", os.path.join(ROOT, "firmware", "run"), "-B", build,
        f"-DCMAKE_TOOLCHAIN_FILE={os.path.join(ROOT, 'cmake', BOARDS[board].toolchain)}",
        f"-DTIGHTFIT_CORE={BOARDS[board].core}", f"-DTIGHTFIT_BOARD={board}",
        f"-DTIGHTFIT_MODEL={model['file']}", f"-DTIGHTFIT_INPUTS={';'.join(model['inputs'])}",
        f"-DTIGHTFIT_EXECUTABLE={tightfit}",
        f"-DTIGHTFIT_PORTABLE_KERNELS={'ON' if variant == 'portable' else 'OFF'}",
        f"-DTIGHTFIT_PROFILE={'ON' if profile else 'OFF'}",
    ]
    os.makedirs(args.work, exist_ok=True)
    run(options, build + ".configure.log")
    run(["cmake", "--build", build], build + ".build.log")
    status, output, _ = run_qemu.run_once(BOARDS[board].qemu, BOARDS[board].qemu_machine,
                                          os.path.join(build, "tightfit_run.elf"), args.timeout, tightfit=tightfit)
    with open(build + ".qemu.log", "w") as log:
        log.write(output)
    if status != 0:
        raise RuntimeError(f"{tag}: the firmware exited with {status} (log: {build}.qemu.log)")
    return run_qemu.parse_lines(output, tightfit)


def per_mac(instructions, macs):
    return f"{instructions / macs:.2f}" if macs else "-"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--work", default="/tmp/tightfit-bench-firmware")
    parser.add_argument("--boards", default=",".join(BOARDS))
    parser.add_argument("--models", default="", help="comma-separated model names (default: all QOperator models)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=900.0)
    parser.add_argument("--no-layers", action="store_true", help="skip the DS-CNN per-layer profile")
    args = parser.parse_args()
    tightfit = os.path.abspath(os.path.join(args.build, "compiler", "tightfit"))
    boards = [b for b in args.boards.split(",") if b]
    models = models_of([m for m in args.models.split(",") if m])
    macs = {m["name"]: macs_of(tightfit, m) for m in models}

    jobs = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for board in boards:
            for model in models:
                for variant in ("portable", "fast"):
                    jobs[(board, model["name"], variant)] = pool.submit(build_and_run, args, tightfit, model, board,
                                                                        variant)
        dscnn = [m for m in models if m["name"] == "dscnn"]
        layers = {}
        if dscnn and not args.no_layers:
            for board in boards:
                for variant in ("portable", "fast"):
                    layers[(board, variant)] = pool.submit(build_and_run, args, tightfit, dscnn[0], board, variant,
                                                           True)

    failed = False
    for board in boards:
        print(f"\n### {board} ({BOARDS[board].core}), QEMU 7.2 -icount shift=0, GCC 12 -O2\n")
        print("| model | MACs | flash: weights | flash: code + constants | RAM: arena | RAM: other | RAM: stack peak "
              "| instructions, portable | instructions, fast | portable/MAC | fast/MAC | portable/fast |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for model in models:
            name = model["name"]
            try:
                fp, out_p, _ = jobs[(board, name, "portable")].result()
                fd, out_d, _ = jobs[(board, name, "fast")].result()
            except RuntimeError as error:
                print(f"| {name} | failed: {error} |")
                failed = True
                continue
            if out_p != out_d:
                print(f"| {name} | OUTPUTS DIFFER between the portable and the fast build |")
                failed = True
                continue
            n_p, n_d = int(fp["instructions"]), int(fd["instructions"])
            weights = int(fd["weights_section_bytes"])
            code = int(fd["flash_bytes"]) - weights - int(fd["inputs_section_bytes"])
            other = int(fd["data_bytes"]) + int(fd["bss_bytes"])
            m = macs[name]
            print(f"| {name} | {m:,} | {weights:,} | {code:,} (portable {int(fp['flash_bytes']) - weights - int(fp['inputs_section_bytes']):,}) "
                  f"| {int(fd['arena_bytes']):,} | {other:,} | {int(fd['stack_peak_bytes']):,} (portable {int(fp['stack_peak_bytes']):,}) "
                  f"| {n_p:,} | {n_d:,} | {per_mac(n_p, m)} | {per_mac(n_d, m)} | {n_p / n_d:.2f} |")

    for board in boards if layers else []:
        core = BOARDS[board].core
        try:
            _, out_p, steps_p = layers[(board, "portable")].result()
            _, out_d, steps_d = layers[(board, "fast")].result()
        except RuntimeError as error:
            print(f"\nDS-CNN layers on {board}: failed: {error}")
            failed = True
            continue
        rows, cmsis_total = CMSIS_DSCNN.get(core, ([], None))
        print(f"\n### DS-CNN layer by layer on {board} ({core})" + (", beside CMSIS-NN\n" if rows else "\n"))
        print("| step | op | node | MACs | portable | fast | portable/MAC | fast/MAC | CMSIS-NN layer | CMSIS-NN | CMSIS-NN/MAC | fast/CMSIS-NN |")
        print("|---:|---|---|---:|---:|---:|---:|---:|---|---:|---:|---:|")
        for sp, sd in zip(steps_p, steps_d):
            m = int(sd["macs"])
            n_p, n_d = int(sp["instructions"]), int(sd["instructions"])
            op = sd["op"]
            # The CMSIS-NN row of the same layer: by its MACs (conv, depthwise, pointwise, fully
            # connected), by its operator for the pool (whose "MACs" are adds).
            row = next((r for r in rows if m and r[2] == m and r[1] != "pool"), None)
            if row is None and "Pool" in op:
                row = next((r for r in rows if r[1] == "pool"), None)
            if row:
                cmsis = f"| {row[0]} | {row[3]:,} | {row[3] / row[2]:.2f} | {n_d / row[3]:.2f} |"
            else:
                cmsis = "| | | | |"
            print(f"| {sd['step']} | {op} | {sd['node']} | {m:,} | {n_p:,} | {n_d:,} | {per_mac(n_p, m)} | "
                  f"{per_mac(n_d, m)} {cmsis}")
        total_d = sum(int(s["instructions"]) for s in steps_d)
        total_p = sum(int(s["instructions"]) for s in steps_p)
        whole = (f"whole DS-CNN | {cmsis_total:,} | {cmsis_total / DSCNN_MACS:.2f} | {total_d / cmsis_total:.2f} |"
                 if cmsis_total else "| | | |")
        print(f"| | all steps | | {DSCNN_MACS:,} | {total_p:,} | {total_d:,} | {per_mac(total_p, DSCNN_MACS)} | "
              f"{per_mac(total_d, DSCNN_MACS)} | {whole}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
