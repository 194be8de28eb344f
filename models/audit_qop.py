#!/usr/bin/python3
"""Independent check of the QOperator references: run each QOp model with every
integer tensor exposed, and recompute every QLinearConv and QLinearMatMul node
from its actual integer inputs in numpy (exact int64 accumulation + int32 bias,
multiplier = x_scale * w_scale / y_scale in float32, float32(acc) * multiplier,
round half to even, + zero point, saturate). Any mismatch would mean ONNX
Runtime's integer kernels did not compute the exact result (for example the
16-bit saturation of u8 x s8 kernels on CPUs without VNNI).
usage: /usr/bin/python3 audit_qop.py [NAME ...]"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
QR = {'int8': (-128, 127), 'uint8': (0, 255)}


def attrs(node):
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def conv_acc(x, w, a):
    kh, kw = w.shape[2:]
    pt, pl, pb, pr = a.get('pads', [0, 0, 0, 0])
    sh, sw = a.get('strides', [1, 1])
    g = a.get('group', 1)
    dh, dw = a.get('dilations', [1, 1])
    n, c, h, wd = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    ho = (h + pt + pb - dh * (kh - 1) - 1) // sh + 1
    wo = (wd + pl + pr - dw * (kw - 1) - 1) // sw + 1
    cols = np.stack([xp[:, :, i * dh:i * dh + sh * (ho - 1) + 1:sh, j * dw:j * dw + sw * (wo - 1) + 1:sw]
                     for i in range(kh) for j in range(kw)], axis=2)        # n, c, k, ho, wo
    m = w.shape[0]
    cg, mg = c // g, m // g
    out = np.zeros((n, m, ho, wo), np.int64)
    for k in range(g):
        xc = cols[:, k * cg:(k + 1) * cg].reshape(n, cg * kh * kw, ho * wo)
        wk = w[k * mg:(k + 1) * mg].reshape(mg, cg * kh * kw)
        out[:, k * mg:(k + 1) * mg] = np.einsum('mk,nkp->nmp', wk, xc).reshape(n, mg, ho, wo)
    return out


def requant(acc, xs, ws, ys, yz, dt, axis_len):
    qmin, qmax = QR[dt]
    mult = (np.float32(xs) * np.asarray(ws, np.float32)) / np.float32(ys)   # float32, per channel
    mult = mult.reshape((-1,) + (1,) * axis_len) if mult.ndim else mult
    f = acc.astype(np.float32) * mult
    f = np.clip(f, np.float32(qmin - yz), np.float32(qmax - yz))
    return (np.rint(f) + yz).astype(np.int64)


def main():
    man = json.load(open(os.path.join(HERE, 'manifest.json')))
    only = set(sys.argv[1:])
    total = bad = 0
    for e in man['models']:
        if e['form'] != 'qop' or (only and e['name'] not in only):
            continue
        m = onnx.load(os.path.join(HERE, e['file']))
        if not any(n.op_type in ('QLinearConv', 'QLinearMatMul') for n in m.graph.node):
            continue
        inits = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
        et = TensorProto.INT8 if e['activations'] == 'int8' else TensorProto.UINT8
        # integer outputs: not those of the float islands (Tanh; ConvTranspose with its Relu)
        ints = [n.output[0] for n in m.graph.node
                if n.op_type not in ('DequantizeLinear', 'Tanh', 'ConvTranspose', 'Relu') and n.output[0] not in inits]
        for t in ints:
            m.graph.output.append(helper.make_tensor_value_info(t, et, None))
        checked = mism = 0
        with tempfile.TemporaryDirectory() as tmp:
            p = os.path.join(tmp, 'm.onnx')
            onnx.save(m, p)
            for s in e['samples']:
                subprocess.run(['node', 'dump.mjs', p, tmp] + [os.path.join(HERE, f) for f in s['inputs']],
                               cwd=HERE, check=True)
                val = {t: np.load(os.path.join(tmp, t + '.npy')).astype(np.int64) for t in ints}
                for node in m.graph.node:
                    if node.op_type not in ('QLinearConv', 'QLinearMatMul'):
                        continue
                    i = list(node.input)
                    x = val[i[0]] - int(inits[i[2]])
                    w = inits[i[3]].astype(np.int64) - inits[i[5]].astype(np.int64).reshape(
                        (-1,) + (1,) * (inits[i[3]].ndim - 1) if inits[i[5]].ndim else ())
                    if node.op_type == 'QLinearConv':
                        acc = conv_acc(x, w, attrs(node))
                        if len(i) > 8 and i[8]:
                            acc = acc + inits[i[8]].astype(np.int64).reshape(1, -1, 1, 1)
                        want = requant(acc, inits[i[1]], inits[i[4]], inits[i[6]], int(inits[i[7]]),
                                       e['activations'], 2)
                    else:
                        acc = np.matmul(x, w)
                        want = requant(acc, inits[i[1]], inits[i[4]], inits[i[6]], int(inits[i[7]]),
                                       e['activations'], 0)
                    got = val[node.output[0]]
                    checked += got.size
                    d = int(np.abs(got - want).max())
                    if d:
                        mism += int((got != want).sum())
                        print(f'  {e["name"]} {node.name} ({node.output[0]}): max diff {d}, '
                              f'{int((got != want).sum())} of {got.size} values differ')
        total += checked
        bad += mism
        print(f'{e["name"]:18} {checked:8d} QLinearConv/QLinearMatMul outputs recomputed, {mism} differ')
    print(f'total {total} values, {bad} differ')
    sys.exit(1 if bad else 0)


if __name__ == '__main__':
    main()
