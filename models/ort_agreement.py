"""How a QDQ model's output from tightfit stands against ONNX Runtime's two paths (docs/numerics.md).

ORT with graph optimizations 'all' fuses the QDQ pattern into integer kernels: tightfit must equal
it. With 'disabled' it runs in float between each DequantizeLinear and QuantizeLinear: tightfit
may lie no further from that float path than ORT's fused path does, or 1 LSB where that is 0 (a
float sum on a rounding tie goes either way and is carried on through a deep network).

Read by bench/seed_boards.sh, tests/torch/export_matches_ort.sh and tests/openwakeword/run.
"""
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import numpy_helper

# Ops that only move or reshape values: one of them after the last DequantizeLinear keeps its scale.
FLOAT_VIEWS = {'Flatten', 'Reshape', 'Squeeze', 'Unsqueeze', 'Transpose', 'Identity'}


def output_scale(model_path):
    """Scale of the DequantizeLinear behind graph output 0, through any float views after it."""
    graph = onnx.load(model_path, load_external_data=False).graph
    constants = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    constants.update({n.output[0]: numpy_helper.to_array(n.attribute[0].t)
                      for n in graph.node if n.op_type == 'Constant'})
    producer = {o: n for n in graph.node for o in n.output}
    node = producer.get(graph.output[0].name)
    while node is not None and node.op_type in FLOAT_VIEWS:
        node = producer.get(node.input[0])
    if node is None or node.op_type != 'DequantizeLinear' or node.input[1] not in constants:
        raise ValueError(f'{model_path}: output 0 is not written by a DequantizeLinear of a constant scale')
    return float(constants[node.input[1]].max())


@dataclass
class Agreement:
    equal_to_fused: bool  # bit for bit the output of ORT's fused integer path
    ours_lsb: float  # the largest distance from ORT's float path, in output LSB
    fused_lsb: float  # the same for ORT's fused path

    def within_bound(self):
        return self.ours_lsb <= max(1, self.fused_lsb)

    def ok(self):
        return self.equal_to_fused and self.within_bound()


def agreement(ours, fused, float_path, scale):
    """Compares tightfit's output with ORT's fused and float paths' outputs (numpy arrays)."""
    ours, fused, float_path = (np.asarray(a) for a in (ours, fused, float_path))
    if not ours.shape == fused.shape == float_path.shape:
        return Agreement(False, np.inf, np.inf)
    reference = float_path.astype(np.float64)
    return Agreement(equal_to_fused=bool((ours == fused).all()),
                     ours_lsb=float(np.abs(ours.astype(np.float64) - reference).max() / scale),
                     fused_lsb=float(np.abs(fused.astype(np.float64) - reference).max() / scale))
