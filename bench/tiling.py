#!/usr/bin/python3
"""RAM against cost, per model (bench/tiling.sh runs this; docs/tiling.md, "Measured").

For every QOperator model in models/ (but the one-operator unit_* models) and, when python3-torch
is installed, the PyTorch exports of models/torchvision_models.py (QDQ, made into WORK/torch), with
the model's input in the arena and with --io-outside, the columns are
  file order     the live-sum bound of the ONNX file's order, no technique (report
                 order.file_order_bound_bytes with --no-overlap --no-reorder --no-zero-copy-concat
                 --no-fold-pad): no plan of that schedule is smaller
  reordered      the same bound in the order tightfit picks (order.bound_bytes, reordering alone)
  overlap etc.   the arena with the free techniques, tightfit's default (arena_bytes)
  tiling         the least arena of the report's RAM-against-cost table (its least tiling level)
                 and the MACs that level adds; "yes" when `tightfit compile --max-ram` that arena
                 compiles, within the cap, with the tiling rewrite, and `tightfit run` under it
                 gives the untiled run's outputs on the host
  TFLM greedy    TFLite Micro's greedy planner on the file order (comparisons.greedy_by_size_bytes
                 of the no-technique compile)
Then the issue's targets (half of the layer-by-layer minimum: the table's "none" level, with
--io-outside) run on the host under that cap against the untiled run; and, for --qemu-models, the
instructions per inference on the Cortex-M4 (`tightfit run --target mps2-an386`, QEMU) of the
untiled plan and the tiled one under the least tiling level (inputs and outputs in the arena),
outputs compared, beside the ratio the compiler estimates from its measured kernel costs; and
every model that has a tiling level run under its least one in QEMU on each of --boards (default
the Cortex-M4 and M7), its outputs against the untiled run's on the host (with its inputs and
outputs in the arena where it has a level there, else with --io-outside).

  bench/tiling.py [--build BUILD] [--work DIR] [--models a,b] [--qemu-models a,b] [--boards a,b] [--no-torch]
                  [--no-qemu] [--jobs N]
"""
import argparse
import concurrent.futures
import glob
import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NO_TECHNIQUE = ['--no-overlap', '--no-reorder', '--no-zero-copy-concat', '--no-fold-pad', '--no-tiling']
REORDER_ONLY = ['--no-overlap', '--no-zero-copy-concat', '--no-fold-pad', '--no-tiling']
# The targets: MobileNetV1-0.25 under 27,648 B, the torchvision exports under half of
# their layer-by-layer minimum.
TARGETS = {'mobilenet_v1_025': 27648, 'mobilenet_v2_035': None, 'squeezenet1_1': None}


def compile_report(tightfit, model, out, flags):
    """`tightfit compile` into out; (exit status, report or None, first line of the error)."""
    shutil.rmtree(out, ignore_errors=True)
    r = subprocess.run([tightfit, 'compile', model, '-o', out, '--name', 'm', '--target', 'none', '--quiet', *flags],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    path = os.path.join(out, 'm.report.json')
    report = json.load(open(path)) if r.returncode == 0 and os.path.exists(path) else None
    return r.returncode, report, r.stdout.strip().splitlines()[0] if r.stdout.strip() else ''


def least_tiling(report):
    levels = [lv for lv in report['ram_vs_cost'] if lv['technique'] == 'tiling']
    return min(levels, key=lambda lv: lv['arena_bytes']) if levels else None


def measure(tightfit, model, inputs, work, io):
    """The row of one model in one placement of its inputs and outputs."""
    flags = ['--io-outside'] if io == 'outside' else []
    row = {}
    _, bare, err = compile_report(tightfit, model, os.path.join(work, 'bare'), NO_TECHNIQUE + flags)
    if bare is None:
        return {'error': err}
    row['file_order'] = bare['order']['file_order_bound_bytes']
    row['greedy'] = bare['comparisons']['greedy_by_size_bytes']
    _, reordered, _ = compile_report(tightfit, model, os.path.join(work, 'reordered'), REORDER_ONLY + flags)
    row['reordered'] = reordered['order']['bound_bytes']
    _, default, _ = compile_report(tightfit, model, os.path.join(work, 'default'), flags)
    row['arena'] = default['arena_bytes']
    row['none'] = default['ram_vs_cost'][0]['arena_bytes']
    row['macs'] = default['macs']
    least = least_tiling(default)
    if least:
        row['tiling'] = least['arena_bytes']
        row['extra_macs'] = least['extra_macs']
        row['extra_percent'] = least['extra_macs_percent']
        row['stage'] = f"{least['stage']['nodes'][0]} .. {least['stage']['nodes'][-1]} in {least['stage']['bands']}"
        status, capped, _ = compile_report(tightfit, model, os.path.join(work, 'capped'),
                                           flags + ['--max-ram', str(least['arena_bytes'])])
        row['verified'] = (status == 0 and capped['arena_bytes'] <= least['arena_bytes'] and
                           any(r['technique'] == 'tiling' for r in capped['rewrites']))
        # And it runs: on the host, the untiled run's outputs.
        untiled, _, _ = run_model(tightfit, model, inputs, os.path.join(work, 'run_untiled'), flags)
        tiled, _, _ = run_model(tightfit, model, inputs, os.path.join(work, 'run_tiled'),
                                flags + ['--max-ram', str(least['arena_bytes'])])
        row['verified'] = row['verified'] and untiled is not None and tiled == untiled
        row['untiled_outputs'] = untiled  # what the QEMU runs under this level are held to
    return row


def run_model(tightfit, model, inputs, out, flags, target=None):
    """`tightfit run`; (outputs as bytes, instructions per inference or None, error line)."""
    shutil.rmtree(out, ignore_errors=True)
    cmd = [tightfit, 'run', model, '--output-dir', os.path.join(out, 'out'), '--build-dir', os.path.join(out, 'build'),
           *flags]
    for x in inputs:
        cmd += ['--input', x]
    if target:
        cmd += ['--target', target]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        return None, None, (r.stdout.strip().splitlines() or [''])[-1]
    outputs = [np.load(p).tobytes() for p in sorted(glob.glob(os.path.join(out, 'out', 'output_*.npy')))]
    speed = re.search(r'(\d+) instructions per inference', r.stdout)
    return outputs, int(speed.group(1)) if speed else None, ''


def estimated_ratio(run):
    """The kept plan's instructions over the untiled plan's as the compiler estimates them (the
    report's ram_vs_cost: the chosen level's against the free one's; compiler/cost/)."""
    [path] = glob.glob(os.path.join(run, 'out', '*.report.json'))
    with open(path) as f:
        levels = json.load(f)['ram_vs_cost']
    kept = [level.get('estimated_instructions') for level in levels if level['chosen']]
    free = [level.get('estimated_instructions') for level in levels if level['technique'] == 'free']
    return f'{kept[0] / free[0]:.3f}' if kept and free and kept[0] and free[0] else '-'


def number(v):
    return f'{v:,}' if isinstance(v, int) else v


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--build', default=os.path.join(ROOT, 'build'))
    ap.add_argument('--work', default=None, help='default: BUILD/tiling_bench')
    ap.add_argument('--qemu-models', default='mobilenet_v1_025,conv_s8,mobilenet_v2_035,squeezenet1_1')
    ap.add_argument('--boards', default='mps2-an386,mps2-an500',
                    help='boards that run every tiled model under its least level')
    ap.add_argument('--models', default='', help='only these (default: all)')
    ap.add_argument('--no-torch', action='store_true')
    ap.add_argument('--no-qemu', action='store_true')
    ap.add_argument('--jobs', type=int, default=2)
    args = ap.parse_args()
    tightfit = os.path.join(os.path.abspath(args.build), 'compiler', 'tightfit')
    work = os.path.abspath(args.work or os.path.join(args.build, 'tiling_bench'))
    os.makedirs(work, exist_ok=True)

    manifest = json.load(open(os.path.join(ROOT, 'models', 'manifest.json')))
    models = {}  # name -> (file, [inputs])
    for e in manifest['models']:
        # The unit_* models are one operator each: nothing to reorder, overlap or tile.
        if e['form'] == 'qop' and (args.models or not e['name'].startswith('unit_')):
            models[e['name']] = (os.path.join(ROOT, 'models', e['file']),
                                 [os.path.join(ROOT, 'models', x) for x in e['samples'][0]['inputs']])
    torch_dir = os.path.join(work, 'torch')
    have_torch = subprocess.run(['/usr/bin/python3', '-c', 'import torch, torchvision'],
                                stderr=subprocess.DEVNULL).returncode == 0
    if have_torch and not args.no_torch:
        if not glob.glob(os.path.join(torch_dir, '*.qdq.onnx')):
            subprocess.run(['/usr/bin/python3', os.path.join(ROOT, 'models', 'torchvision_models.py'), torch_dir],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for path in sorted(glob.glob(os.path.join(torch_dir, '*.qdq.onnx'))):
            name = os.path.basename(path)[:-len('.qdq.onnx')]
            models[name] = (path, [os.path.join(torch_dir, f'{name}.input_0.npy')])

    if args.models:
        models = {n: models[n] for n in args.models.split(',') if n in models}
    jobs = {}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for name, (path, inputs) in models.items():
            for io in ('arena', 'outside'):
                jobs[name, io] = pool.submit(measure, tightfit, path, inputs, os.path.join(work, name, io), io)
    rows = {key: job.result() for key, job in jobs.items()}

    for io, title in (('arena', 'inputs and outputs in the arena'), ('outside', '`--io-outside`')):
        print(f'\n### {title}\n')
        print('| model | file order (bound) | reordered (bound) | overlap, zero-copy (arena) | least with tiling '
              '| extra MACs | runs under it | TFLM greedy, file order |')
        print('|---|---:|---:|---:|---:|---:|:-:|---:|')
        for name in models:
            r = rows[name, io]
            if 'error' in r:
                print(f"| {name} | {r['error'].split('.onnx: ', 1)[-1][:80]} |||||||")
                continue
            tiling = [number(r['tiling']), f"{r['extra_macs']:,} ({r['extra_percent']:.1f} %)",
                      'yes' if r['verified'] else 'NO'] if 'tiling' in r else ['—', '—', '—']
            print('| ' + ' | '.join([name, number(r['file_order']), number(r['reordered']), number(r['arena']), *tiling,
                                     number(r['greedy'])]) + ' |')

    print('\n### The issue\'s targets (`--io-outside`, host run under the cap against the untiled run)\n')
    print('| model | layer by layer ("none") | target | least with tiling | under the target | extra MACs | outputs |')
    print('|---|---:|---:|---:|---|---:|---|')
    caps = {}
    for name, cap in TARGETS.items():
        if name not in models or 'error' in rows[name, 'outside']:
            continue
        r = rows[name, 'outside']
        cap = cap or r['none'] // 2
        path, inputs = models[name]
        base = os.path.join(work, name, 'target')
        untiled, _, _ = run_model(tightfit, path, inputs, os.path.join(base, 'untiled'), ['--io-outside'])
        _, report, err = compile_report(tightfit, path, os.path.join(base, 'compile'), ['--io-outside', '--max-ram', str(cap)])
        if report is None:
            reason = err.split('; ')[-1]  # the exit's last clause: the least arena reachable with tiling
            print(f"| {name} | {r['none']:,} | {cap:,} | {number(r.get('tiling', '—'))} | no: {reason} | | |")
            continue
        caps[name] = cap
        tiled, _, err = run_model(tightfit, path, inputs, os.path.join(base, 'tiled'), ['--io-outside', '--max-ram', str(cap)])
        extra = report['macs'] - rows[name, 'outside']['macs']
        print(f"| {name} | {r['none']:,} | {cap:,} | {number(r.get('tiling', '—'))} | {report['arena_bytes']:,} B "
              f"| {extra:,} ({100 * extra / rows[name, 'outside']['macs']:.1f} %) "
              f"| {'equal to the untiled run' if tiled is not None and tiled == untiled else 'DIFFER ' + err} |")

    if args.no_qemu or not shutil.which('qemu-system-arm'):
        return
    # `tightfit run --target` keeps the inputs and outputs in the arena: the least tiling level there.
    print('\n### Cortex-M4 (QEMU mps2-an386, inputs and outputs in the arena): instructions per inference\n')
    print('| model | untiled arena | cap (least with tiling) | untiled | tiled | tiled / untiled | estimated | outputs |')
    print('|---|---:|---:|---:|---:|---:|---:|---|')
    m4_tiled = {}  # name -> (outputs, error line) of the tiled run on the M4, for the next table
    for name in [n for n in args.qemu_models.split(',') if n in models]:
        r = rows[name, 'arena']
        cap = r.get('tiling')
        if not cap:
            continue
        path, inputs = models[name]
        base = os.path.join(work, name, 'm4')
        untiled, slow, _ = run_model(tightfit, path, inputs, os.path.join(base, 'untiled'), [], 'mps2-an386')
        tiled, fast, err = run_model(tightfit, path, inputs, os.path.join(base, 'tiled'), ['--max-ram', str(cap)],
                                     'mps2-an386')
        m4_tiled[name] = tiled, err
        if not slow or not fast:
            print(f"| {name} | {r['arena']:,} | {cap:,} | {number(slow)} | failed: {err[:100]} | | |")
            continue
        print(f"| {name} | {r['arena']:,} | {cap:,} | {slow:,} | {fast:,} | {fast / slow:.3f} "
              f"| {estimated_ratio(os.path.join(base, 'tiled'))} | {'equal' if tiled == untiled else 'DIFFER'} |")

    # Every model with a tiling level, under its least one, on each board: the outputs in QEMU
    # against the untiled run on the host (measure()'s; the code generation tests hold it to ONNX
    # Runtime). With its inputs and outputs in the arena where it has a level there, else with
    # --io-outside (inception: with its input in the arena no level goes below the untiled
    # arena). The M4 runs of the table above are not made again.
    boards = [b for b in args.boards.split(',') if b]
    print('\n### Every tiled model in QEMU under its least tiling level\n')
    print('| model | inputs and outputs | cap (least with tiling) | ' + ' | '.join(boards) + ' |')
    print('|---|---|---:|' + '---|' * len(boards))
    placement = {name: io for name in models for io in ('outside', 'arena') if rows[name, io].get('tiling')}
    cases = [(name, board) for name in placement for board in boards]
    def on_board(name, board):
        io = placement[name]
        if board == 'mps2-an386' and io == 'arena' and name in m4_tiled:
            return m4_tiled[name]
        path, inputs = models[name]
        flags = ['--max-ram', str(rows[name, io]['tiling'])] + (['--io-outside'] if io == 'outside' else [])
        tiled, _, err = run_model(tightfit, path, inputs, os.path.join(work, name, 'qemu-' + board), flags, board)
        return tiled, err
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        runs = {case: pool.submit(on_board, *case) for case in cases}
        results = {case: job.result() for case, job in runs.items()}
    for name in models:
        if (name, boards[0]) not in results:
            continue
        io = placement[name]
        cells = []
        for board in boards:
            tiled, err = results[name, board]
            short = re.search(r"region `(\w+)' overflowed by (\d+) bytes", err)
            cells.append('equal' if tiled is not None and tiled == rows[name, io]['untiled_outputs']
                         else 'DIFFER' if tiled is not None
                         else f'does not link: {short.group(1)} {int(short.group(2)):,} B short' if short
                         else 'failed: ' + err[:80])
        where = 'in the arena' if io == 'arena' else '`--io-outside`'
        print(f"| {name} | {where} | {rows[name, io]['tiling']:,} | " + ' | '.join(cells) + ' |')


if __name__ == '__main__':
    sys.exit(main())
