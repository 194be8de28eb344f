#!/usr/bin/python3
"""The If test models: a data-dependent If whose branches both compute, and a constant one.

usage: /usr/bin/python3 models/if_branches.py   (writes models/if_branches.* and prints the figures)

Float network (opset 13, batch 1): input [1, 16] -> Gemm 16 (+bias) -> h; m = ReduceMean(h) over
the last axis; c = h - m. Then y = If(Cast(GreaterOrEqual(m, 0), to bool)): the then branch
computes c * c * 0.5 (Mul, Mul), the else branch c / sqrt(c * c + 1) (Mul, Add, Sqrt, Div); both
read c and m from the graph by name. And z = If(a constant true): then c * 3, else c + 1, which
the compiler folds at import (the then branch inlined). Output y + z, [1, 16] float.

Quantized by quantize_qdq.py (ORT's quantize_static, QDQ): the Gemm becomes integer, ReduceMean
and Sub stay float (a float island), the branches stay float (the quantizer leaves them alone), the
final Add is integer: its input y is quantized after the If, and the model's output is the
Add's, dequantized (so the firmware takes it too: an integer tensor in its arena).

Files: if_branches.qdq.onnx; if_branches.input_0.npy (its mean above 0: the then branch) and
if_branches.sample1.input_0.npy (below: the else branch), chosen among seeded normal inputs by
what the quantized model's m is; ORT's outputs on them (graph optimizations disabled):
if_branches.qdq.output_0.npy and .sample1.output_0.npy.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import quantize_qdq  # noqa: E402

NAME = 'if_branches'
N = 16


def float_model(rng):
    f32 = np.float32
    w = (rng.standard_normal((N, N)) * np.sqrt(2.0 / N)).astype(f32)
    b = (rng.standard_normal(N) * 0.1).astype(f32)
    inits = [numpy_helper.from_array(w, 'w'), numpy_helper.from_array(b, 'b'),
             numpy_helper.from_array(np.array(0.0, f32), 'zero'),
             numpy_helper.from_array(np.array(True), 'always')]

    def const(name, value):
        return helper.make_node('Constant', [], [name], value=numpy_helper.from_array(np.array(value, f32), name + '_value'))

    def branch(name, nodes, out):
        return helper.make_graph(nodes, name, [], [helper.make_tensor_value_info(out, TensorProto.FLOAT, [1, N])])

    then_y = branch('then_y', [helper.make_node('Mul', ['c', 'c'], ['sq_t']), const('half', 0.5),
                               helper.make_node('Mul', ['sq_t', 'half'], ['y_then'])], 'y_then')
    else_y = branch('else_y', [helper.make_node('Mul', ['c', 'c'], ['sq_e']), const('one', 1.0),
                               helper.make_node('Add', ['sq_e', 'one'], ['sq1']),
                               helper.make_node('Sqrt', ['sq1'], ['norm']),
                               helper.make_node('Div', ['c', 'norm'], ['y_else'])], 'y_else')
    then_z = branch('then_z', [const('three', 3.0), helper.make_node('Mul', ['c', 'three'], ['z_then'])], 'z_then')
    else_z = branch('else_z', [const('one_z', 1.0), helper.make_node('Add', ['c', 'one_z'], ['z_else'])], 'z_else')
    nodes = [
        helper.make_node('Gemm', ['input', 'w', 'b'], ['h'], name='fc', transB=1),
        helper.make_node('ReduceMean', ['h'], ['m'], name='mean', axes=[-1], keepdims=1),
        helper.make_node('Sub', ['h', 'm'], ['c'], name='center'),
        helper.make_node('GreaterOrEqual', ['m', 'zero'], ['ge'], name='compare'),
        helper.make_node('Cast', ['ge'], ['cond'], name='cast', to=TensorProto.BOOL),
        helper.make_node('If', ['cond'], ['y'], name='choose', then_branch=then_y, else_branch=else_y),
        helper.make_node('If', ['always'], ['z'], name='constant_if', then_branch=then_z, else_branch=else_z),
        helper.make_node('Add', ['y', 'z'], ['output'], name='sum'),
    ]
    g = helper.make_graph(nodes, NAME, [helper.make_tensor_value_info('input', TensorProto.FLOAT, [1, N])],
                          [helper.make_tensor_value_info('output', TensorProto.FLOAT, [1, N])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)])
    m.ir_version = 7
    onnx.checker.check_model(m, full_check=True)
    return m


def ort_outputs(model, inputs, tmp):
    os.makedirs(tmp, exist_ok=True)
    subprocess.run(['node', os.path.join(HERE, 'dump.mjs'), model, tmp] + inputs, check=True, cwd=HERE)
    return np.load(os.path.join(tmp, 'output.npy'))


def main():
    rng = np.random.default_rng(2028)
    model = float_model(rng)
    calib = np.stack([rng.standard_normal((1, N)).astype(np.float32) for _ in range(32)])
    qdq = os.path.join(HERE, f'{NAME}.qdq.onnx')
    with tempfile.TemporaryDirectory() as tmp:
        fpath = os.path.join(tmp, 'float.onnx')
        onnx.save(model, fpath)
        cpath = os.path.join(tmp, 'calib.npy')
        np.save(cpath, calib)
        quantize_qdq.quantize(fpath, [cpath], qdq)
        # The quantized model's m decides the branch: its probe adds m as an output.
        probe = onnx.load(qdq)
        probe.graph.output.append(helper.make_tensor_value_info('m', TensorProto.FLOAT, [1, 1]))
        ppath = os.path.join(tmp, 'probe.onnx')
        onnx.save(probe, ppath)
        chosen = {}
        for k in range(64):
            x = rng.standard_normal((1, N)).astype(np.float32)
            p = os.path.join(tmp, f'x{k}.npy')
            np.save(p, x)
            out = os.path.join(tmp, f'o{k}')
            os.makedirs(out)
            subprocess.run(['node', os.path.join(HERE, 'dump.mjs'), ppath, out, p], check=True, cwd=HERE)
            taken = 'then' if np.load(os.path.join(out, 'm.npy')).item() >= 0 else 'else'
            chosen.setdefault(taken, x)
            if len(chosen) == 2:
                break
        figures = {}
        for tag, taken in (('', 'then'), ('sample1.', 'else')):
            p = os.path.join(HERE, f'{NAME}.{tag}input_0.npy')
            np.save(p, chosen[taken])
            out = ort_outputs(qdq, [p], os.path.join(tmp, taken))
            np.save(os.path.join(HERE, f'{NAME}.qdq.{tag}output_0.npy'), out)
            figures[taken] = out.ravel()[:4].tolist()
    print(figures)


if __name__ == '__main__':
    main()
