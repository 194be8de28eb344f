#!/usr/bin/python3
"""Check models/ against manifest.json: every listed file exists, passes
onnx.checker (full check), is under 1 MB, has the declared inputs/outputs,
every sample input and expected output exists with the right shape and dtype,
twins point at each other with the same quantization, and the measured QDQ vs
twin difference is present. Exit status 1 on any problem.
usage: /usr/bin/python3 verify.py"""
import json
import os
import sys

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
man = json.load(open(os.path.join(HERE, 'manifest.json')))
problems = []
byfile = {e['file']: e for e in man['models']}
for e in man['models']:
    def bad(msg):
        problems.append(f'{e["file"]}: {msg}')
    path = os.path.join(HERE, e['file'])
    if not os.path.exists(path):
        bad('missing')
        continue
    if os.path.getsize(path) > 1_100_000:
        bad('larger than 1 MB')
    m = onnx.load(path)
    try:
        onnx.checker.check_model(path, full_check=True)
    except Exception as ex:  # noqa: BLE001
        bad(f'checker: {ex}')
    def dims(v):
        # a symbolic dimension counts as 1 (the manifest's shapes are the pinned ones)
        return [d.dim_value if d.HasField('dim_value') else 1 for d in v.type.tensor_type.shape.dim]
    ins = [(i.name, dims(i)) for i in m.graph.input]
    outs = [(o.name, dims(o)) for o in m.graph.output]
    for f in e.get('external_data', []):
        if not os.path.exists(os.path.join(HERE, f)):
            bad(f'{f} missing')
    sym = {d.dim_param for v in list(m.graph.input) + list(m.graph.output)
           for d in v.type.tensor_type.shape.dim if d.HasField('dim_param')}
    if sym != ({e['symbolic_batch']} if e.get('symbolic_batch') else set()):
        bad(f'symbolic dimensions {sym} != manifest')
    if ins != [(i['name'], i['shape']) for i in e['inputs']]:
        bad(f'inputs {ins} != manifest')
    if outs != [(o['name'], o['shape']) for o in e['outputs']]:
        bad(f'outputs {outs} != manifest')
    if len(e['output_scales']) != len(outs):
        bad('output_scales length')
    for s in e['samples']:
        for f, spec in zip(s['inputs'], e['inputs']):
            a = np.load(os.path.join(HERE, f))
            if a.dtype != np.float32 or list(a.shape) != spec['shape']:
                bad(f'{f}: {a.dtype} {a.shape}')
        for f, spec in zip(s['expected'], e['outputs']):
            p = os.path.join(HERE, f)
            if not os.path.exists(p):
                bad(f'{f} missing (run reference.mjs)')
                continue
            a = np.load(p)
            if a.dtype != np.float32 or list(a.shape) != spec['shape']:
                bad(f'{f}: {a.dtype} {a.shape}')
    t = byfile.get(e['twin'])
    if t is None or t['twin'] != e['file']:
        bad('twin does not point back')
    elif t['inputs'] != e['inputs'] or t['outputs'] != e['outputs']:
        bad('twin quantization differs')
    if e['twin'] and 'qdq_vs_twin_max_lsb' not in e:
        bad('qdq_vs_twin_max_lsb missing (run reference.mjs)')
    if 'test_set' in e and 'test_accuracy' not in e:
        bad('test_accuracy missing')
names = sorted({e['name'] for e in man['models']})
print(f'{len(man["models"])} files, {len(names)} models: {", ".join(names)}')
for p in problems:
    print('PROBLEM', p)
sys.exit(1 if problems else 0)
