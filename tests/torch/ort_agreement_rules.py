#!/usr/bin/python3
"""models/ort_agreement.py, the check of the PyTorch exports and of bench/seed_boards.sh: it finds
the output scale through a float view, and fails an output that differs from ORT's fused path by
one value, or lies 2 LSB from ORT's float path where the fused path lies 0."""
import os
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'models'))
from ort_agreement import agreement, output_scale  # noqa: E402


def save_model(path, last_op):
    """x -> QuantizeLinear -> DequantizeLinear (scale 0.5) -> last_op -> y"""
    nodes = [helper.make_node('QuantizeLinear', ['x', 's', 'z'], ['q']),
             helper.make_node('DequantizeLinear', ['q', 's', 'z'], ['dq']),
             helper.make_node(last_op, ['dq'], ['y'])]
    graph = helper.make_graph(nodes, 'g', [helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, 4])],
                              [helper.make_tensor_value_info('y', TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(np.array(0.5, np.float32), 's'),
                               numpy_helper.from_array(np.array(0, np.int8), 'z')])
    onnx.save(helper.make_model(graph), path)


failures = []
with tempfile.TemporaryDirectory() as tmp:
    save_model(f'{tmp}/flatten.onnx', 'Flatten')
    if output_scale(f'{tmp}/flatten.onnx') != 0.5:
        failures.append('the scale behind a Flatten is not the DequantizeLinear\'s 0.5')
    save_model(f'{tmp}/sigmoid.onnx', 'Sigmoid')
    try:
        output_scale(f'{tmp}/sigmoid.onnx')
        failures.append('a float Sigmoid after the DequantizeLinear was given a scale')
    except ValueError:
        pass

fused = np.array([[-3, 0, 5, 127]], np.int8)
float_path = fused.astype(np.float32) * 0.5
if not agreement(fused.copy(), fused, float_path, 0.5).ok():
    failures.append('an output equal to the fused path is refused')
one_off = fused.copy()
one_off[0, 2] += 1
if agreement(one_off, fused, float_path, 0.5).equal_to_fused:
    failures.append('an output one value off the fused path passes as equal')
far = fused.copy()
far[0, 0] += 2
result = agreement(far, fused, fused.astype(np.float32), 1.0)
if result.within_bound() or (result.ours_lsb, result.fused_lsb) != (2, 0):
    failures.append(f'2 LSB from the float path where the fused path is 0 passes ({result})')
if agreement(fused.reshape(4), fused, float_path, 0.5).ok():
    failures.append('an output of another shape passes')

for f in failures:
    print(f'FAIL: {f}')
print('ort_agreement: ok' if not failures else f'ort_agreement: {len(failures)} failure(s)')
sys.exit(1 if failures else 0)
