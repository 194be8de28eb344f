#!/usr/bin/python3
"""Sanity check of the quantization: run each QOp model on its samples with every
integer activation exposed, and report per tensor the share of values at the
type's minimum / maximum and the number of distinct levels used.
usage: /usr/bin/python3 check_levels.py [NAME ...]"""
import json, os, subprocess, sys, tempfile
import numpy as np
import onnx
from onnx import helper, TensorProto

HERE = os.path.dirname(os.path.abspath(__file__))
man = json.load(open(os.path.join(HERE, 'manifest.json')))
only = set(sys.argv[1:])
for e in man['models']:
    if e['form'] != 'qop' or (only and e['name'] not in only):
        continue
    m = onnx.load(os.path.join(HERE, e['file']))
    et = TensorProto.INT8 if e['activations'] == 'int8' else TensorProto.UINT8
    qmin, qmax = (-128, 127) if e['activations'] == 'int8' else (0, 255)
    names = [n.output[0] for n in m.graph.node if n.op_type not in ('DequantizeLinear',) and '.' not in n.output[0]]
    for n in names:
        m.graph.output.append(helper.make_tensor_value_info(n, et, None))
    print(f'== {e["name"]} ({e["activations"]})')
    with tempfile.TemporaryDirectory() as tmp:
        p = os.path.join(tmp, 'm.onnx')
        onnx.save(m, p)
        acc = {}
        for s in e['samples']:
            subprocess.run(['node', 'dump.mjs', p, tmp] + [os.path.join(HERE, f) for f in s['inputs']], cwd=HERE,
                           check=True)
            for n in names:
                acc.setdefault(n, []).append(np.load(os.path.join(tmp, n + '.npy')).ravel())
        for n in names:
            v = np.concatenate(acc[n]).astype(int)
            print(f'  {n:14} n={v.size:6d} at_min={np.mean(v == qmin):5.1%} at_max={np.mean(v == qmax):5.1%} '
                  f'levels={len(np.unique(v)):3d} range=[{v.min()},{v.max()}]')
