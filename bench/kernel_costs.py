#!/usr/bin/python3
"""Measures what each kernel call costs in instructions on each core, and writes the table the
compiler ranks tiling plans of equal MACs by (compiler/cost/kernel_costs.json; docs/tiling.md,
"How the cap chooses").

Every QOperator model of models/ runs on each board in QEMU with exact instruction counts
(`tightfit run --target BOARD --profile`: the instructions of every kernel call), untiled and,
for the models with a tiling level, under their least one (row bands and tiles: small calls,
Slices and Concats). Each call is a sample (kernel, MACs, bytes read, bytes written: the report's
steps); per kernel, a least-squares fit with no negative coefficient gives

    instructions = call + mac * MACs + input_byte * bytes read + output_byte * bytes written
                   + pixel * output pixels + window_read * a pool's window reads

and "default", the same fit over every call, stands for a kernel the runs did not meet. The
error of the fit is stated per kernel (the median and the largest relative error of a call) and
per run (the whole plan's estimate against its measured total).

  bench/kernel_costs.py [--build BUILD] [--boards a,b] [--work DIR] [--out FILE] [--jobs N]
"""
import argparse
import concurrent.futures
import glob
import itertools
import json
import os
import subprocess
import sys

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
sys.path.insert(0, os.path.join(ROOT, 'firmware', 'tools'))
import boards  # noqa: E402

FEATURES = ('call', 'mac', 'input_byte', 'output_byte', 'pixel', 'window_read')
# The Arm boards of `tightfit run --target`: `tightfit compile --target` takes their cores, so a
# table of theirs can be used (RV32 has no compile target; `tightfit run --target rv32imc` ranks by
# the default core's table).
CORES = {name: b.core for name, b in boards.run_targets().items() if b.architecture == 'arm'}


def inputs_of(name):
    return sorted(p for p in glob.glob(os.path.join(ROOT, 'models', f'{name}.input_*.npy')))


def least_tiling_level(tightfit, model, work):
    """The least arena of the model's RAM-against-cost table when it is a tiling level, else None."""
    r = subprocess.run([tightfit, 'compile', model, '-o', work, '--name', 'm', '--target', 'none', '-q'],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return None
    with open(os.path.join(work, 'm.report.json')) as f:
        levels = json.load(f)['ram_vs_cost']
    tiled = [level['arena_bytes'] for level in levels if level['technique'] == 'tiling']
    return min(tiled) if tiled and min(tiled) < min(level['arena_bytes'] for level in levels
                                                    if level['technique'] != 'tiling') else None


def profile(tightfit, model, board, work, cap):
    """(samples, measured total) of one run: a sample per kernel call."""
    name = os.path.basename(model).split('.')[0]
    cmd = [tightfit, 'run', model, '--output-dir', os.path.join(work, 'out'), '--build-dir', os.path.join(work, 'build'),
           '--target', board, '--profile', '--name', 'm', '--input'] + inputs_of(name)
    if cap is not None:
        cmd += ['--max-ram', str(cap)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f'{model} on {board}: {r.stderr.strip()}')
    with open(os.path.join(work, 'out', 'm.report.json')) as f:
        report = json.load(f)
    samples = []
    for step, count in zip(report['steps'], report['measured']['step_instructions']):
        if count is None or not step['kernel']:
            continue
        samples.append(dict(kernel=step['kernel'], x=[1, step['macs'], step['input_bytes'], step['output_bytes'], step['output_pixels'],
                               step['window_reads']],
                            y=count, run=f"{name}{'' if cap is None else ' tiled'}"))
    return samples, report['measured']['instructions']


def fit(samples):
    """The least-squares coefficients with none negative: the best fit over every subset of the
    features (six of them: 63 subsets), each solved without the others."""
    x = np.array([s['x'] for s in samples], dtype=float)
    y = np.array([s['y'] for s in samples], dtype=float)
    # Relative error is what matters (calls range from tens to millions of instructions): weigh
    # each call by 1 / its count.
    w = 1.0 / np.maximum(y, 1.0)
    best = None
    for k in range(1, len(FEATURES) + 1):
        for subset in itertools.combinations(range(len(FEATURES)), k):
            cols = list(subset)
            coef, *_ = np.linalg.lstsq(x[:, cols] * w[:, None], y * w, rcond=None)
            if (coef < 0).any():
                continue
            full = np.zeros(len(FEATURES))
            full[cols] = coef
            err = float(np.sum(((x @ full - y) * w) ** 2))
            if best is None or err < best[0]:
                best = (err, full)
    full = best[1]
    rel = np.abs(x @ full - y) / np.maximum(y, 1.0)
    return {**{f: round(float(c), 4) for f, c in zip(FEATURES, full)}, 'calls': len(samples),
            'median_error': round(float(np.median(rel)), 4), 'max_error': round(float(np.max(rel)), 4)}


def estimate(coefficients, samples):
    total = 0.0
    for s in samples:
        c = coefficients.get(s['kernel'], coefficients['default'])
        total += sum(c[f] * v for f, v in zip(FEATURES, s['x']))
    return total


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--build', default=os.path.join(ROOT, 'build'))
    ap.add_argument('--boards', default='mps2-an386', help=f'comma-separated, of {", ".join(CORES)}')
    ap.add_argument('--work', default=None, help='default: BUILD/kernel_costs')
    ap.add_argument('--out', default=os.path.join(ROOT, 'compiler', 'cost', 'kernel_costs.json'))
    ap.add_argument('--jobs', type=int, default=2)
    args = ap.parse_args()
    for board in args.boards.split(','):
        if board not in CORES:
            ap.error(f'--boards: {board} is not one of {", ".join(CORES)}')
    tightfit = os.path.join(args.build, 'compiler', 'tightfit')
    work = os.path.abspath(args.work or os.path.join(args.build, 'kernel_costs'))
    models = sorted(glob.glob(os.path.join(ROOT, 'models', '*.qop.onnx')))

    levels = {}
    for model in models:
        name = os.path.basename(model).split('.')[0]
        levels[name] = least_tiling_level(tightfit, model, os.path.join(work, 'levels', name))

    try:
        with open(args.out) as f:
            table = json.load(f)
    except FileNotFoundError:
        table = {'cores': {}}
    table['made_by'] = 'bench/kernel_costs.py'
    for board in args.boards.split(','):
        runs = []
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            jobs = {}
            for model in models:
                name = os.path.basename(model).split('.')[0]
                for cap in [None] + ([levels[name]] if levels[name] else []):
                    tag = name + ('' if cap is None else '_tiled')
                    jobs[tag] = pool.submit(profile, tightfit, model, board, os.path.join(work, board, tag), cap)
            for tag, job in jobs.items():
                samples, measured = job.result()
                runs.append((tag, samples, measured))
        samples = [s for _, run, _ in runs for s in run]
        kernels = {'default': fit(samples)}
        for kernel in sorted({s['kernel'] for s in samples}):
            mine = [s for s in samples if s['kernel'] == kernel]
            kernels[kernel] = fit(mine)
        totals = []
        for tag, run, measured in runs:
            # The plan's total as the compiler estimates it, against QEMU's count of the whole
            # inference (which adds what lies between the calls: the run() loop, input copies).
            totals.append({'run': tag, 'measured': measured, 'estimated': round(estimate(kernels, run)),
                           'calls_measured': sum(s['y'] for s in run)})
        errors = [abs(t['estimated'] - t['calls_measured']) / t['calls_measured'] for t in totals if t['calls_measured']]
        table['cores'][CORES[board]] = {
            'board': board, 'runs': len(runs), 'calls': len(samples), 'kernels': kernels,
            'plan_error': {'median': round(float(np.median(errors)), 4), 'max': round(float(np.max(errors)), 4)},
        }
        print(f'{board} ({CORES[board]}): {len(runs)} runs, {len(samples)} calls; the estimate of a plan\'s calls '
              f'against their measured sum: median error {np.median(errors):.1%}, largest {np.max(errors):.1%}')
        for kernel, c in kernels.items():
            print(f"  {kernel:18s} {c['calls']:5d} calls  call {c['call']:9.1f}  mac {c['mac']:7.3f}  "
                  f"in {c['input_byte']:7.3f}  out {c['output_byte']:7.3f}  pixel {c['pixel']:7.1f}  window {c['window_read']:6.2f}  "
                  f"error median {c['median_error']:.1%} max {c['max_error']:.1%}")
        for t in sorted(totals, key=lambda t: t['run']):
            print(f"  {t['run']:28s} calls {t['calls_measured']:12d}  estimated {t['estimated']:12d}  "
                  f"({(t['estimated'] - t['calls_measured']) / max(1, t['calls_measured']):+.1%})")
    with open(args.out, 'w') as f:
        json.dump(table, f, indent=1, sort_keys=True)
        f.write('\n')
    print(f'wrote {args.out}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
