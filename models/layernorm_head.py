#!/usr/bin/python3
"""The float-island test model: a LayerNorm MLP head, quantized as ONNX Runtime's quantize_static does.

usage: /usr/bin/python3 models/layernorm_head.py   (writes models/layernorm_head.* and prints the figures)

Float network (opset 13, batch 1): input [1, 32] -> Gemm 64 (+bias) -> LayerNorm over the last
axis written out as ONNX exports it before opset 17 (ReduceMean, Sub, Pow 2, ReduceMean, Add eps
1e-5, Sqrt, Div, Mul gamma, Add beta) -> Relu -> Gemm 10. Seeded random weights (He), gamma
around 1, beta around 0.

Quantized by quantize_qdq.py (ORT's quantize_static, QDQ, per-channel symmetric int8 weights,
uint8 asymmetric activations, MinMax calibration on 32 seeded inputs and the two samples). ORT's
operator set quantizes Gemm, Add, Mul and Relu but not ReduceMean, Sub, Pow, Sqrt or Div: they stay
float between DequantizeLinear and QuantizeLinear (two float islands: ReduceMean, Sub, Pow,
ReduceMean before the quantized Add of eps; Sqrt, Div before the quantized Mul of gamma; the Sub's
output crosses from the first to the second).

Files: layernorm_head.qdq.onnx, layernorm_head.input_0.npy and .sample1.input_0.npy (standard
normal), and ONNX Runtime's outputs on them: layernorm_head.qdq.output_0.npy and
.sample1.output_0.npy (graph optimizations disabled: the float path, the reference), and
layernorm_head.qdq.all.output_0.npy and .all.sample1.output_0.npy (level 'all'). The probe,
layernorm_head_probe.qdq.onnx: the same model with the islands' float values as graph outputs 1..6
(mean, centered, squared, variance, std, normed), and ORT's outputs of it (disabled) on 64 more
seeded inputs, layernorm_head.extra_inputs.npy ([64, 1, 32], normal times 0.1 to 10):
layernorm_head_probe.qdq.extra.output_K.npy, stacked [64, ...]. The output scale and the figures
(level 'all' against 'disabled' included) go to layernorm_head.json.
"""
import json
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

NAME = 'layernorm_head'
IN, HID, OUT = 32, 64, 10


def float_model(rng):
    f32 = np.float32
    w1 = (rng.standard_normal((HID, IN)) * np.sqrt(2.0 / IN)).astype(f32)
    b1 = (rng.standard_normal(HID) * 0.1).astype(f32)
    gamma = (1.0 + 0.1 * rng.standard_normal(HID)).astype(f32)
    beta = (0.1 * rng.standard_normal(HID)).astype(f32)
    w2 = (rng.standard_normal((OUT, HID)) * np.sqrt(2.0 / HID)).astype(f32)
    b2 = (rng.standard_normal(OUT) * 0.1).astype(f32)
    inits = [numpy_helper.from_array(a, n) for a, n in [
        (w1, 'w1'), (b1, 'b1'), (gamma, 'gamma'), (beta, 'beta'), (w2, 'w2'), (b2, 'b2'),
        (np.array(2.0, f32), 'two'), (np.array(1e-5, f32), 'eps')]]
    nodes = [
        helper.make_node('Gemm', ['input', 'w1', 'b1'], ['h'], name='fc1', transB=1),
        helper.make_node('ReduceMean', ['h'], ['mean'], name='ln_mean', axes=[-1], keepdims=1),
        helper.make_node('Sub', ['h', 'mean'], ['centered'], name='ln_sub'),
        helper.make_node('Pow', ['centered', 'two'], ['squared'], name='ln_pow'),
        helper.make_node('ReduceMean', ['squared'], ['variance'], name='ln_var', axes=[-1], keepdims=1),
        helper.make_node('Add', ['variance', 'eps'], ['variance_eps'], name='ln_add_eps'),
        helper.make_node('Sqrt', ['variance_eps'], ['std'], name='ln_sqrt'),
        helper.make_node('Div', ['centered', 'std'], ['normed'], name='ln_div'),
        helper.make_node('Mul', ['normed', 'gamma'], ['scaled'], name='ln_gamma'),
        helper.make_node('Add', ['scaled', 'beta'], ['shifted'], name='ln_beta'),
        helper.make_node('Relu', ['shifted'], ['act'], name='relu'),
        helper.make_node('Gemm', ['act', 'w2', 'b2'], ['output'], name='fc2', transB=1),
    ]
    g = helper.make_graph(nodes, NAME, [helper.make_tensor_value_info('input', TensorProto.FLOAT, [1, IN])],
                          [helper.make_tensor_value_info('output', TensorProto.FLOAT, [1, OUT])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)])
    m.ir_version = 7
    onnx.checker.check_model(m, full_check=True)
    return m


PROBES = [('mean', [1, 1]), ('centered', [1, HID]), ('squared', [1, HID]), ('variance', [1, 1]), ('std', [1, 1]),
          ('normed', [1, HID])]


def ort_batch(model, batch, level, tmp):
    """ORT's outputs of `model` on every row of `batch`, stacked, in graph output order."""
    out = os.path.join(tmp, 'batch_' + level)
    os.makedirs(out, exist_ok=True)
    rows = []
    for i, x in enumerate(batch):
        p = os.path.join(tmp, f'row{i}.npy')
        np.save(p, x)
        args = ['node', os.path.join(HERE, 'dump.mjs')] + (['--all'] if level == 'all' else []) + [model, out, p]
        subprocess.run(args, check=True, cwd=HERE)
        names = [o.name for o in onnx.load(model).graph.output]
        rows.append([np.load(os.path.join(out, n + '.npy')) for n in names])
    return [np.stack([r[k] for r in rows]) for k in range(len(rows[0]))]


def ort_outputs(model, inputs, level, tmp):
    out = os.path.join(tmp, level)
    os.makedirs(out, exist_ok=True)
    args = ['node', os.path.join(HERE, 'dump.mjs')] + (['--all'] if level == 'all' else []) + [model, out] + inputs
    subprocess.run(args, check=True, cwd=HERE)
    return np.load(os.path.join(out, 'output.npy'))


def main():
    rng = np.random.default_rng(1813)
    model = float_model(rng)
    samples = [rng.standard_normal((1, IN)).astype(np.float32) for _ in range(2)]
    calib = np.stack([rng.standard_normal((1, IN)).astype(np.float32) for _ in range(32)] + samples)
    inputs = [os.path.join(HERE, f'{NAME}.input_0.npy'), os.path.join(HERE, f'{NAME}.sample1.input_0.npy')]
    for p, s in zip(inputs, samples):
        np.save(p, s)
    qdq = os.path.join(HERE, f'{NAME}.qdq.onnx')
    with tempfile.TemporaryDirectory() as tmp:
        fpath = os.path.join(tmp, 'float.onnx')
        onnx.save(model, fpath)
        cpath = os.path.join(tmp, 'calib.npy')
        np.save(cpath, calib)
        quantize_qdq.quantize(fpath, [cpath], qdq)
        figures = {'samples': []}
        for i, p in enumerate(inputs):
            tag = '' if i == 0 else 'sample1.'
            disabled = ort_outputs(qdq, [p], 'disabled', os.path.join(tmp, str(i)))
            allopt = ort_outputs(qdq, [p], 'all', os.path.join(tmp, str(i)))
            fl = ort_outputs(fpath, [p], 'disabled', os.path.join(tmp, f'f{i}'))
            np.save(os.path.join(HERE, f'{NAME}.qdq.{tag}output_0.npy'), disabled)
            np.save(os.path.join(HERE, f'{NAME}.qdq.all.{tag}output_0.npy'), allopt)
            figures['samples'].append({'all_vs_disabled_max_abs': float(np.abs(allopt - disabled).max()),
                                       'float_vs_disabled_max_abs': float(np.abs(fl - disabled).max())})
    probe = onnx.load(qdq)
    for name, shape in PROBES:
        probe.graph.output.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, shape))
    onnx.checker.check_model(probe, full_check=True)
    probe_path = os.path.join(HERE, f'{NAME}_probe.qdq.onnx')
    onnx.save(probe, probe_path)
    extra = (rng.standard_normal((64, 1, IN)) * np.repeat(np.geomspace(0.1, 10, 8), 8)[:, None, None]).astype(np.float32)
    np.save(os.path.join(HERE, f'{NAME}.extra_inputs.npy'), extra)
    with tempfile.TemporaryDirectory() as tmp:
        disabled = ort_batch(probe_path, extra, 'disabled', tmp)
        allopt = ort_batch(probe_path, extra, 'all', tmp)
    for k, a in enumerate(disabled):
        np.save(os.path.join(HERE, f'{NAME}_probe.qdq.extra.output_{k}.npy'), a)
    figures['extra_all_vs_disabled_differing_values'] = {
        n: int((a.view(np.int32) != b.view(np.int32)).sum())
        for n, a, b in zip(['output'] + [p[0] for p in PROBES], allopt, disabled)}
    q = onnx.load(qdq)
    scale = None
    for n in q.graph.node:
        if n.op_type == 'DequantizeLinear' and n.output[0] == 'output':
            scale = float(numpy_helper.to_array(next(t for t in q.graph.initializer if t.name == n.input[1])))
    figures['output_scale'] = scale
    figures['float_ops'] = sorted({n.op_type for n in q.graph.node
                                   if n.op_type not in ('QuantizeLinear', 'DequantizeLinear')})
    for s in figures['samples']:
        s['all_vs_disabled_max_lsb'] = round(s['all_vs_disabled_max_abs'] / scale, 3)
    with open(os.path.join(HERE, f'{NAME}.json'), 'w') as f:
        json.dump(figures, f, indent=1)
        f.write('\n')
    print(json.dumps(figures, indent=1))


if __name__ == '__main__':
    main()
