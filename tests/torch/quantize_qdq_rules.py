#!/usr/bin/python3
"""models/quantize_qdq.py follows ONNX Runtime's quantize_static rules (its docstring) on small
float models built here: Conv -> Relu -> MaxPool -> Conv -> HardSigmoid, Mul -> Flatten -> Gemm;
and Split of the graph input -> Pad by 0.5 / Pad by 0 -> Concat.
Needs python3-onnx, numpy, node and onnxruntime-node (calibration); not torch."""
import os
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')
sys.path.insert(0, os.path.join(ROOT, 'models'))
import quantize_qdq  # noqa: E402

failures = []


def check(cond, what):
    print(('ok   ' if cond else 'FAIL ') + what)
    if not cond:
        failures.append(what)


def float_model(rng):
    def init(name, a):
        return numpy_helper.from_array(np.asarray(a, np.float32), name)
    inits = [init('w1', rng.normal(0, 0.5, (4, 1, 3, 3))), init('b1', rng.normal(0, 0.1, 4)),
             init('w2', rng.normal(0, 0.3, (4, 4, 1, 1))), init('b2', rng.normal(0, 0.1, 4)),
             init('w3', rng.normal(0, 0.3, (3, 16))), init('b3', rng.normal(0, 0.1, 3))]
    nodes = [helper.make_node('Conv', ['x', 'w1', 'b1'], ['c1'], name='conv1', pads=[1, 1, 1, 1]),
             helper.make_node('Relu', ['c1'], ['r1'], name='relu1'),
             helper.make_node('MaxPool', ['r1'], ['p1'], name='pool', kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node('Conv', ['p1', 'w2', 'b2'], ['c2'], name='conv2'),
             helper.make_node('HardSigmoid', ['c2'], ['h2'], name='hsig', alpha=1 / 6, beta=0.5),
             helper.make_node('Mul', ['c2', 'h2'], ['m2'], name='mul'),
             helper.make_node('Flatten', ['m2'], ['f2'], name='flatten'),
             helper.make_node('Gemm', ['f2', 'w3', 'b3'], ['y'], name='fc', transB=1)]
    g = helper.make_graph(nodes, 'rules', [helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, 1, 4, 4])],
                          [helper.make_tensor_value_info('y', TensorProto.FLOAT, [1, 3])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)])


def split_pad_model():
    pads = numpy_helper.from_array(np.array([0, 0, 1, 0, 0, 0, 1, 0], np.int64), 'pads')
    half = numpy_helper.from_array(np.array(0.5, np.float32), 'half')
    zero = numpy_helper.from_array(np.array(0.0, np.float32), 'zero')
    nodes = [helper.make_node('Split', ['x'], ['s0', 's1'], name='split', axis=2),
             helper.make_node('Pad', ['s0', 'pads', 'half'], ['p0'], name='pad_half'),
             helper.make_node('Pad', ['s1', 'pads', 'zero'], ['p1'], name='pad_zero'),
             helper.make_node('Concat', ['p0', 'p1'], ['y'], name='concat', axis=1)]
    g = helper.make_graph(nodes, 'split_pad', [helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, 1, 4, 4])],
                          [helper.make_tensor_value_info('y', TensorProto.FLOAT, [1, 2, 4, 4])], [pads, half, zero])
    return helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)])


def quantized(tmp, samples, name='float.onnx', **kw):
    path = os.path.join(tmp, 'q.onnx')
    quantize_qdq.quantize(os.path.join(tmp, name), [samples], path, **kw)
    g = onnx.load(path).graph
    inits = {i.name: numpy_helper.to_array(i) for i in g.initializer}
    producer = {o: n for n in g.node for o in n.output}
    return g, inits, producer


def main():
    rng = np.random.default_rng(5)
    with tempfile.TemporaryDirectory() as tmp:
        onnx.save(float_model(rng), os.path.join(tmp, 'float.onnx'))
        samples = os.path.join(tmp, 'calib.npy')
        np.save(samples, rng.normal(0, 1, (8, 1, 1, 4, 4)).astype(np.float32))

        g, inits, producer = quantized(tmp, samples)
        ops = [n.op_type for n in g.node]
        check('Relu' not in ops, 'a Relu after a quantized Conv is removed (QDQRemovableActivation)')
        check(inits['r1_zero_point'].dtype == np.uint8 and int(inits['r1_zero_point']) == 0,
              'the Conv writes the Relu range: uint8 zero point 0')
        check(float(inits['p1_scale']) == float(inits['r1_scale']) and int(inits['p1_zero_point']) == 0,
              "MaxPool's output takes its input's scale and zero point (QDQDirect8BitOp)")
        hsig = next(n for n in g.node if n.op_type == 'HardSigmoid')
        check(producer[hsig.input[0]].op_type == 'DequantizeLinear' and 'h2_QuantizeLinear' in
              [n.name for n in g.node], 'HardSigmoid stays float between a DequantizeLinear and the Q of the Mul')
        flat = next(n for n in g.node if n.op_type == 'Flatten')
        check(producer[flat.input[0]].op_type == 'DequantizeLinear' and 'f2_QuantizeLinear' in
              [n.name for n in g.node], "Flatten stays float; the Gemm quantizes its input")
        w1, s1 = inits['w1_quantized'], inits['w1_scale']
        check(w1.dtype == np.int8 and s1.shape == (4,) and (np.abs(w1).reshape(4, -1).max(axis=1) == 127).all(),
              'Conv weights int8 symmetric per output channel, full range [-127, 127]')
        w3 = inits['w3_quantized']
        check(inits['w3_scale'].shape == (3,) and (np.abs(w3).max(axis=1) == 127).all(),
              'Gemm weights (transB = 1) per output channel, axis 0')
        for b, x, w in (('b1', 'x', 'w1'), ('b2', 'p1', 'w2'), ('b3', 'f2', 'w3')):
            want = (np.float32(inits[x + '_scale']) * inits[w + '_scale']).astype(np.float32)
            check(inits[b + '_quantized'].dtype == np.int32 and np.array_equal(inits[b + '_scale'], want),
                  f'bias {b}: int32 with scale x_scale * w_scale')
        dq = producer['y']
        check(dq.op_type == 'DequantizeLinear', 'the graph output keeps its name on the DequantizeLinear')

        onnx.save(split_pad_model(), os.path.join(tmp, 'split_pad.onnx'))
        g, inits, _ = quantized(tmp, samples, 'split_pad.onnx')
        check('x_scale' in inits and float(inits['s0_scale']) == float(inits['x_scale']) ==
              float(inits['s1_scale']), 'Split quantizes its graph input and its outputs take its parameters')
        check(float(inits['p1_scale']) == float(inits['s1_scale']), 'Pad by 0: the output takes the input parameters')
        check(float(inits['p0_scale']) != float(inits['s0_scale']), 'Pad by 0.5: the output gets its own range')

        g, inits, _ = quantized(tmp, samples, weight_bits=7)
        check(np.abs(inits['w1_quantized']).max() == 63, '--weight-bits 7: weights in [-63, 63]')
        g, inits, _ = quantized(tmp, samples, act='int8')
        check(inits['r1_zero_point'].dtype == np.int8 and int(inits['r1_zero_point']) == -128,
              '--activations int8: int8 zero points (the Relu range starts at -128)')
    sys.exit(1 if failures else 0)


if __name__ == '__main__':
    main()
