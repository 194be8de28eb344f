#!/usr/bin/python3
"""Static QDQ quantization of a float ONNX model, as ONNX Runtime's
`quantize_static(model, reader, quant_format=QuantFormat.QDQ, per_channel=True)`
does it with its defaults (run with Debian's /usr/bin/python3: onnx, numpy;
calibration runs ONNX Runtime through calibrate.mjs).

usage: /usr/bin/python3 models/quantize_qdq.py FLOAT.onnx CALIB_0.npy [CALIB_1.npy ...] -o OUT.onnx
           [--activations uint8|int8] [--weight-bits 8|7] [--per-tensor] [--preprocess]
  CALIB_J.npy: a batch (N x input shape) of calibration samples for graph input J.

What it reproduces of ONNX Runtime's quantizer (onnxruntime/python/tools/quantization:
quantize.py, registry.py, qdq_quantizer.py, base_quantizer.py, quant_utils.py,
operators/*.py), so that a model quantized here looks like one a user gets from it:

- Which nodes: the default `op_types_to_quantize`, the union of QLinearOpsRegistry and
  QDQRegistry (QUANTIZED_OPS below). Every other operator stays float and reads the
  DequantizeLinear of its quantized inputs: the float islands of real exports (a
  HardSigmoid before the quantized Mul of a hard-swish, a ReduceMean head, ...).
- How each is quantized (the registry's handler):
  Conv, ConvTranspose (QDQConv): input and output activations; weight int8 symmetric,
  per output channel (Conv axis 0, ConvTranspose axis 1); bias int32 with scale
  x_scale * w_scale and zero point 0. Gemm (QDQGemm): the same, weight axis 0 with
  transB = 1, else 1; bias scale times beta. MatMul (QDQMatMul): a constant B per
  channel along axis 1.
  Relu, Clip (QDQRemovableActivation): with asymmetric activations, removed when
  its input is quantized, read only by it and not a graph output: the producer then
  writes the activation's output (whose calibrated range is the clamp).
  Reshape, Transpose, Squeeze, Unsqueeze, AveragePool, MaxPool (opset 12+), Resize
  (opset 11+), Slice (QDQDirect8BitOp and kin): only when the data input is already
  quantized; the output takes the input's scale and zero point. Split (QDQSplit): its
  input quantized in any case, every output like it. Pad (QDQPad): its float inputs
  quantized; the output like the input when the mode is reflect/edge/wrap or the
  constant is 0, else its own range.
  Everything else of the set (Add, Mul, Concat, Sigmoid, LeakyRelu, GlobalAveragePool,
  Softmax, ...) (QDQOperatorBase): every float input and the output, each with its
  own calibrated range; a float constant input as an activation (per tensor).
- Ranges (MinMax calibration): min and max over every sample, widened to include 0
  (compute_scale_zp); a Softmax output is [0, 1]; a Relu/Clip input read only by it
  takes the Relu/Clip output's range (adjust_tensor_ranges).
- Parameters: activations asymmetric, uint8 by default (QuantType.QUInt8), scale
  (rmax - rmin) / (qmax - qmin) (computed in float64, stored float32), zero point
  round(qmin - rmin / scale) (half to even); weights symmetric int8 in [-127, 127]
  (reduce_range=False), scale absmax / 127, zero point 0, q = round(w / scale);
  bias round(b / (x_scale * w_scale)) clipped to int32.
- Form: one QuantizeLinear -> DequantizeLinear pair per quantized activation, which
  every consumer reads; weights and biases stored quantized with a DequantizeLinear
  (no QuantizeLinear on constants); a quantized graph output keeps its name on the
  DequantizeLinear's output.

--preprocess first runs the ONNX Runtime step of quant_pre_process, which ORT asks
users to run before quantize_static: its 'basic' graph optimizations (constant
folding, Identity elimination, Conv+BatchNormalization fusion; ort_optimize.mjs).
Without it, a bias that reaches a Conv through an Identity (torch.onnx.export shares
equal initializers that way) stays float, as in ORT.

Not reproduced: quant_pre_process's symbolic shape inference, ORT's extra_options,
other calibration methods, float16 and 4/16-bit types; handlers for Gather, Where,
ArgMax and the normalizations (refused with a message).

--weight-bits 7 gives weights in [-63, 63] (scale absmax / 63): with uint8
activations, ONNX Runtime's fused u8s8 integer kernels ('all' optimizations)
saturate on x86 CPUs without VNNI unless weights use 7 bits; use it when ORT's fused
path is the reference (see models/README.md). ORT's float QDQ path ('disabled')
needs no such care.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))

# onnxruntime/python/tools/quantization/registry.py: QLinearOpsRegistry | QDQRegistry.
QLINEAR_OPS = {'ArgMax', 'Conv', 'Gemm', 'MatMul', 'Add', 'Mul', 'Relu', 'Clip', 'LeakyRelu', 'Sigmoid',
               'MaxPool', 'GlobalAveragePool', 'Split', 'Pad', 'Reshape', 'Squeeze', 'Unsqueeze', 'Resize',
               'AveragePool', 'Concat', 'Softmax', 'Where', 'Gather', 'Transpose', 'EmbedLayerNormalization'}
QDQ_OPS = {'Conv', 'ConvTranspose', 'Gemm', 'Clip', 'Relu', 'Reshape', 'Transpose', 'Squeeze', 'Unsqueeze',
           'Resize', 'MaxPool', 'AveragePool', 'Slice', 'Pad', 'MatMul', 'Split', 'Gather', 'GatherElements',
           'Where', 'InstanceNormalization', 'LayerNormalization', 'BatchNormalization'}
QUANTIZED_OPS = QLINEAR_OPS | QDQ_OPS
WEIGHTED = {'Conv', 'ConvTranspose', 'Gemm'}
REMOVABLE = {'Relu', 'Clip'}
# Data movement (QDQDirect8BitOp, QDQMaxPool, QDQResize): quantized only behind a quantized
# input; the output shares its parameters.
SAME_AS_INPUT = {'Reshape', 'Transpose', 'Squeeze', 'Unsqueeze', 'AveragePool', 'MaxPool', 'Resize', 'Slice'}
# Below these opsets QDQMaxPool and QDQResize leave the node float.
MIN_OPSET = {'MaxPool': 12, 'Resize': 11}
# Handlers this script does not reproduce: refused rather than quantized differently.
NOT_REPRODUCED = {'Gather', 'GatherElements', 'Where', 'InstanceNormalization', 'LayerNormalization',
                  'BatchNormalization', 'EmbedLayerNormalization', 'ArgMax'}
QRANGE = {'uint8': (0, 255), 'int8': (-128, 127)}
QNP = {'uint8': np.uint8, 'int8': np.int8}


def fail(msg):
    sys.exit(f'quantize_qdq: {msg}')


def scale_zero_point(lo, hi, qmin, qmax, symmetric):
    """quant_utils.compute_scale_zp."""
    lo, hi = min(float(lo), 0.0), max(float(hi), 0.0)
    if symmetric:
        lo, hi = -max(abs(lo), abs(hi)), max(abs(lo), abs(hi))
    scale = (hi - lo) / (qmax - qmin)
    if scale < np.finfo(np.float32).tiny:
        return np.float32(1.0), 0
    zp = int(np.round((qmin + qmax) / 2.0)) if symmetric else int(np.round(qmin - lo / scale))
    return np.float32(scale), zp


def quantize_weight(w, axis, wmax):
    """Symmetric int8, per channel along `axis` (None: per tensor); returns q, scales."""
    w = w.astype(np.float32)
    moved = np.moveaxis(w, axis, 0).reshape(w.shape[axis], -1) if axis is not None else w.reshape(1, -1)
    scales = np.array([scale_zero_point(c.min(), c.max(), -wmax, wmax, True)[0] for c in moved], np.float32)
    shape = [1] * w.ndim
    if axis is not None:
        shape[axis] = -1
    q = np.clip(np.round(w / scales.reshape(shape)), -wmax, wmax).astype(np.int8)
    return q, (scales if axis is not None else scales[0])


class Quantizer:
    def __init__(self, model, ranges, act, wmax, per_channel):
        self.model = model
        self.g = model.graph
        self.ranges = ranges
        self.act = act
        self.wmax = wmax
        self.per_channel = per_channel
        self.inits = {i.name: i for i in self.g.initializer}
        self.opset = next(o.version for o in model.opset_import if o.domain in ('', 'ai.onnx'))
        self.float_tensors = self._float_tensors()
        self.graph_outputs = {o.name for o in self.g.output}
        self.graph_inputs = {i.name for i in self.g.input if i.name not in self.inits}
        self.readers = {}
        for n in self.g.node:
            for t in n.input:
                self.readers.setdefault(t, []).append(n)
        self.act_params = {}    # activation tensor -> (scale, zp), in the order decided
        self.weights = {}       # weight initializer -> axis or None
        self.biases = {}        # bias initializer -> (x tensor, weight initializer, beta)
        self.removed = set()    # ids of removed Relu/Clip nodes
        self.renamed = {}       # producer output -> name it now has (a removed activation's output)

    def _float_tensors(self):
        inferred = onnx.shape_inference.infer_shapes(self.model)
        g = inferred.graph
        out = {i.name for i in g.initializer if i.data_type == TensorProto.FLOAT}
        for v in list(g.input) + list(g.value_info) + list(g.output):
            if v.type.tensor_type.elem_type == TensorProto.FLOAT:
                out.add(v.name)
        return out

    def quantizable(self, t):
        return t != '' and t in self.float_tensors

    def add_activation(self, t, params=None):
        if not self.quantizable(t) or t in self.act_params:
            return
        if t in self.inits:  # a float constant read as an activation: its own range, per tensor
            a = numpy_helper.to_array(self.inits[t])
            lo, hi = a.min(), a.max()
        else:
            if t not in self.ranges:
                fail(f'no calibrated range for tensor {t}')
            lo, hi = self.ranges[t]
        self.act_params[t] = params or scale_zero_point(lo, hi, *QRANGE[self.act], False)

    def adjust_ranges(self):
        for n in self.g.node:
            if n.op_type in REMOVABLE and len(self.readers.get(n.input[0], [])) == 1 \
                    and n.input[0] in self.ranges and n.output[0] in self.ranges:
                self.ranges[n.input[0]] = self.ranges[n.output[0]]
            elif n.op_type == 'Softmax':
                self.ranges[n.output[0]] = (0.0, 1.0)

    def decide(self):
        """Walk the nodes in order and apply each one's registry handler."""
        self.adjust_ranges()
        for n in self.g.node:
            op = n.op_type
            if op not in QUANTIZED_OPS or n.domain not in ('', 'ai.onnx'):
                continue
            if op in NOT_REPRODUCED:
                fail(f'node {n.name} ({op}): ONNX Runtime quantizes it with a handler this script does not reproduce')
            if op in WEIGHTED:
                self.add_activation(n.input[0])
                self.add_activation(n.output[0])
                axis = 0 if op == 'Conv' else 1
                if op == 'Gemm':
                    axis = 0 if any(a.name == 'transB' and a.i for a in n.attribute) else 1
                self.add_weight(n, n.input[1], axis)
                if len(n.input) > 2 and n.input[2] and n.input[2] not in self.inits:
                    # quantize_bias_tensor: "Expected ... to be a weight"; the bias stays float.
                    print(f'quantize_qdq: warning: node {n.name}: bias {n.input[2]} is not an initializer; '
                          'it stays float (as in ONNX Runtime; --preprocess folds such Identity chains)', file=sys.stderr)
                elif len(n.input) > 2 and n.input[2] and n.input[2] in self.biases:
                    # As ORT: the first node to claim a shared bias sets its scale ("has already been marked").
                    print(f'quantize_qdq: warning: node {n.name}: bias {n.input[2]} is shared; quantized for '
                          'the first node that reads it, as ONNX Runtime does', file=sys.stderr)
                elif len(n.input) > 2 and n.input[2]:
                    beta = next((a.f for a in n.attribute if a.name == 'beta'), 1.0)
                    self.biases[n.input[2]] = (n.input[0], n.input[1], beta)
            elif op == 'MatMul':
                for t in n.input:
                    if t in self.inits:
                        self.add_weight(n, t, 1)
                    else:
                        self.add_activation(t)
                self.add_activation(n.output[0])
            elif op in REMOVABLE:
                x, y = n.input[0], n.output[0]
                if x not in self.act_params:
                    continue
                if len(self.readers.get(x, [])) == 1 and x not in self.graph_outputs and x not in self.graph_inputs:
                    del self.act_params[x]
                    self.removed.add(id(n))
                    self.renamed[x] = y
                    self.add_activation(y)
                else:
                    self.add_activation(y)
            elif op in SAME_AS_INPUT:
                x = n.input[0]
                if x not in self.act_params or self.opset < MIN_OPSET.get(op, 0):
                    continue
                self.add_activation(n.output[0], self.act_params[x])
            elif op == 'Split':  # QDQSplit: the input quantized in any case, every output like it
                self.add_activation(n.input[0])
                for y in n.output:
                    self.add_activation(y, self.act_params.get(n.input[0]))
            elif op == 'Pad':  # QDQPad: the output like the input when padding adds no new value
                for t in n.input:
                    self.add_activation(t)
                mode = next((a.s for a in n.attribute if a.name == 'mode'), b'constant')
                value = n.input[2] if len(n.input) > 2 else ''
                zero = value == '' or (value in self.inits and not numpy_helper.to_array(self.inits[value]).any())
                same = mode in (b'reflect', b'edge', b'wrap') or zero
                self.add_activation(n.output[0], self.act_params.get(n.input[0]) if same else None)
            else:
                for t in list(n.input) + list(n.output):
                    self.add_activation(t)

    def add_weight(self, n, t, axis):
        if t not in self.inits:
            fail(f'node {n.name} ({n.op_type}): weight {t} is not a constant initializer')
        self.weights[t] = axis if self.per_channel else None

    # -- emission ------------------------------------------------------------
    def emit(self):
        new_nodes, new_inits = [], []
        constants = set(self.weights) | set(self.biases) | {t for t in self.act_params if t in self.inits}
        keep_inits = [i for i in self.g.initializer if i.name not in constants]
        w_params = {}
        for t, axis in self.weights.items():
            q, s = quantize_weight(numpy_helper.to_array(self.inits[t]), axis, self.wmax)
            w_params[t] = s
            zp = np.zeros(np.shape(s), np.int8)
            new_inits += [numpy_helper.from_array(q, t + '_quantized'), numpy_helper.from_array(np.asarray(s), t + '_scale'),
                          numpy_helper.from_array(zp, t + '_zero_point')]
            new_nodes.append(helper.make_node('DequantizeLinear', [t + '_quantized', t + '_scale', t + '_zero_point'],
                                              [t + '_DequantizeLinear_Output'], name=t + '_DequantizeLinear',
                                              **({'axis': axis} if axis is not None else {})))
        for t, (x, w, beta) in self.biases.items():
            b = numpy_helper.to_array(self.inits[t]).astype(np.float32)
            x_scale = self.act_params[x][0] if x in self.act_params else fail(f'bias {t}: its input {x} is not quantized')
            scale = (np.float32(x_scale) * np.asarray(w_params[w], np.float32) * np.float32(beta)).astype(np.float32)
            scale = np.broadcast_to(scale, b.shape).astype(np.float32)
            q = np.clip(np.round(b / np.where(scale == 0, 1, scale)), -2**31, 2**31 - 1).astype(np.int32)
            axis = {'axis': 0} if self.per_channel else {}
            if not self.per_channel:
                scale = np.float32(scale.flat[0])
            new_inits += [numpy_helper.from_array(q, t + '_quantized'), numpy_helper.from_array(np.asarray(scale), t + '_scale'),
                          numpy_helper.from_array(np.zeros(np.shape(scale), np.int32), t + '_zero_point')]
            new_nodes.append(helper.make_node('DequantizeLinear', [t + '_quantized', t + '_scale', t + '_zero_point'],
                                              [t + '_DequantizeLinear_Output'], name=t + '_DequantizeLinear', **axis))

        # What each consumer reads instead of the float tensor.
        read_as = {t: t + '_DequantizeLinear_Output' for t in list(self.weights) + list(self.biases)}
        read_as.update({t: t + '_DequantizeLinear_Output' for t in self.act_params})

        def qdq(t, src):
            s, z = self.act_params[t]
            new_inits.extend([numpy_helper.from_array(np.asarray(s, np.float32), t + '_scale'),
                              numpy_helper.from_array(np.asarray(z, dtype=QNP[self.act]), t + '_zero_point')])
            out = t if t in self.graph_outputs else t + '_DequantizeLinear_Output'
            new_nodes.append(helper.make_node('QuantizeLinear', [src, t + '_scale', t + '_zero_point'],
                                              [t + '_QuantizeLinear_Output'], name=t + '_QuantizeLinear'))
            new_nodes.append(helper.make_node('DequantizeLinear', [t + '_QuantizeLinear_Output', t + '_scale',
                                                                   t + '_zero_point'], [out], name=t + '_DequantizeLinear'))

        for t, (s, z) in self.act_params.items():
            if t in self.graph_inputs:
                qdq(t, t)
            elif t in self.inits:  # stored quantized, as ORT does: no QuantizeLinear on a constant
                qmin, qmax = QRANGE[self.act]
                a = numpy_helper.to_array(self.inits[t]).astype(np.float32)
                q = np.clip(np.round(a / s) + z, qmin, qmax).astype(QNP[self.act])
                new_inits.extend([numpy_helper.from_array(q, t + '_quantized'),
                                  numpy_helper.from_array(np.asarray(s, np.float32), t + '_scale'),
                                  numpy_helper.from_array(np.asarray(z, dtype=QNP[self.act]), t + '_zero_point')])
                new_nodes.append(helper.make_node('DequantizeLinear', [t + '_quantized', t + '_scale', t + '_zero_point'],
                                                  [t + '_DequantizeLinear_Output'], name=t + '_DequantizeLinear'))
        for n in self.g.node:
            if id(n) in self.removed:
                continue
            ins = [read_as.get(t, t) for t in n.input]
            outs = [self.renamed.get(t, t) for t in n.output]
            # A quantized graph output keeps its name on the DequantizeLinear; the op writes a new name.
            written = [t + '_QuantizeInput' if t in self.act_params and t in self.graph_outputs else t for t in outs]
            node = helper.make_node(n.op_type, ins, written, name=n.name, domain=n.domain)
            node.attribute.extend(n.attribute)
            new_nodes.append(node)
            for t, w in zip(outs, written):
                if t in self.act_params:
                    qdq(t, w)
        del self.g.node[:]
        self.g.node.extend(new_nodes)
        del self.g.initializer[:]
        self.g.initializer.extend(keep_inits + new_inits)
        del self.g.value_info[:]
        # Constants no longer read as float (quantized weights) leave the graph inputs too.
        kept_inputs = [i for i in self.g.input if i.name not in constants]
        del self.g.input[:]
        self.g.input.extend(kept_inputs)



def calibrate(model, samples):
    """min/max of every float tensor (calibrate.mjs on a copy exposing all of them)
    and of every graph input (from the samples)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    inferred = onnx.shape_inference.infer_shapes(m)
    known = {o.name for o in m.graph.output}
    floats = {v.name for v in inferred.graph.value_info if v.type.tensor_type.elem_type == TensorProto.FLOAT}
    for n in m.graph.node:
        for t in n.output:
            if t and t not in known and t in floats:
                m.graph.output.append(helper.make_tensor_value_info(t, TensorProto.FLOAT, None))
                known.add(t)
    inputs = [i for i in m.graph.input if i.name not in {x.name for x in m.graph.initializer}]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, 'float.onnx')
        onnx.save(m, path)
        r = subprocess.run(['node', os.path.join(HERE, 'calibrate.mjs'), path] + samples,
                           capture_output=True, text=True, cwd=HERE)
        if r.returncode != 0:
            fail(f'calibration of {model.graph.name} under ONNX Runtime failed: {r.stderr.strip()}')
    ranges = {k: tuple(v) for k, v in json.loads(r.stdout).items()}
    for i, p in zip(inputs, samples):
        a = np.load(p)
        ranges[i.name] = (float(a.min()), float(a.max()))
    return ranges


def preprocess(float_path, tmp):
    """The ONNX Runtime step of quant_pre_process: 'basic' graph optimizations."""
    out = os.path.join(tmp, 'preprocessed.onnx')
    r = subprocess.run(['node', os.path.join(HERE, 'ort_optimize.mjs'), os.path.abspath(float_path), out],
                       capture_output=True, text=True, cwd=HERE)
    if r.returncode != 0:
        fail(f'ONNX Runtime could not optimize {float_path}: {r.stderr.strip()}')
    model = onnx.load(out)
    # ORT lists every domain it knows; keep those the graph uses.
    used = {n.domain for n in model.graph.node} | {''}
    kept = [o for o in model.opset_import if o.domain in used or o.domain == 'ai.onnx']
    del model.opset_import[:]
    model.opset_import.extend(kept)
    return model


def quantize(float_path, samples, out_path, act='uint8', weight_bits=8, per_channel=True, pre=False):
    if pre:
        with tempfile.TemporaryDirectory() as tmp:
            model = preprocess(float_path, tmp)
    else:
        model = onnx.load(float_path)
    ranges = calibrate(model, samples)
    q = Quantizer(model, ranges, act, 127 if weight_bits == 8 else 63, per_channel)
    q.decide()
    q.emit()
    onnx.checker.check_model(model)
    onnx.save(model, out_path)
    return q


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('model')
    ap.add_argument('samples', nargs='+', help='one .npy batch per graph input')
    ap.add_argument('-o', '--output', required=True)
    ap.add_argument('--activations', choices=['uint8', 'int8'], default='uint8')
    ap.add_argument('--weight-bits', type=int, choices=[8, 7], default=8)
    ap.add_argument('--per-tensor', action='store_true', help='per-tensor weights (per_channel=False)')
    ap.add_argument('--preprocess', action='store_true',
                    help="first run ONNX Runtime's 'basic' optimizations, as quant_pre_process does")
    a = ap.parse_args()
    # calibrate.mjs runs in this script's folder: hand it absolute paths
    quantize(a.model, [os.path.abspath(s) for s in a.samples], a.output, a.activations, a.weight_bits, not a.per_tensor, a.preprocess)


if __name__ == '__main__':
    main()
