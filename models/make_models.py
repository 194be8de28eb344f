#!/usr/bin/python3
"""Make tightfit's test models (run with Debian's /usr/bin/python3: onnx, numpy, sklearn).

Every network is described ONCE (float weights, layer list), calibrated by
running its float version through ONNX Runtime (calibrate.mjs, graph
optimizations disabled) on seeded sample inputs, quantized once (weights,
per-tensor activation parameters), and emitted in two forms with identical
integer weights and quantization parameters:

  NAME.qdq.onnx  QuantizeLinear / DequantizeLinear around float operators
  NAME.qop.onnx  QLinear* operators (ONNX + com.microsoft contrib ops)

It also writes two float32 sample inputs per model (NAME.input_J.npy and
NAME.sample1.input_J.npy, J = graph input) and manifest.json. reference.mjs then
writes the ONNX Runtime outputs and the measured figures. See README.md.

usage: /usr/bin/python3 make_models.py [NAME ...]   (default: every model; with
names, only those are rebuilt and the other manifest entries are kept)
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import onnxruntime_node

HERE = os.path.dirname(os.path.abspath(__file__))
MS = 'com.microsoft'
OPSETS = [helper.make_opsetid('', 13), helper.make_opsetid(MS, 1)]
NP_OF = {'int8': np.int8, 'uint8': np.uint8}
QRANGE = {'int8': (-128, 127), 'uint8': (0, 255)}
PASS_THROUGH = {'maxpool', 'reshape', 'flatten', 'transpose', 'pad', 'resize', 'squeeze', 'unsqueeze'}


def f32(x):
    return np.asarray(x, dtype=np.float32)


# ----------------------------------------------------------------------------
# Network description
# ----------------------------------------------------------------------------
class Net:
    def __init__(self, name, act, weights, seed, description):
        assert act in ('int8', 'uint8') and weights in ('per-channel', 'per-tensor')
        self.name = name
        self.act = act
        self.wmode = weights
        # uint8 activations: 7-bit weights so that ONNX Runtime's u8s8 kernels
        # cannot saturate on CPUs without VNNI (see README.md).
        self.wmax = 63 if act == 'uint8' else 127
        self.rng = np.random.default_rng(seed)
        self.seed = seed
        self.description = description
        self.layers = []
        self.shape = {}
        self.inputs = []
        self.outputs = []
        self.count = {}
        self.input_fns = []        # per input: rng -> float32 sample of the input shape
        self.calib = None          # optional fixed calibration batch
        self.extra = {}
        self.external_data = False  # weights in NAME.FORM.onnx.data beside the model
        self.symbolic_batch = False # batch dimension of inputs/outputs is 'N'
        self.fixed_range = {}       # input tensor -> (lo, hi) instead of calibration
        self.level_inputs = set()   # inputs whose samples hold every quantized level
        self.group = 'dev'
        self.concat_shares_range = False  # a Concat's inputs take its output's scale and zero point
        self.pow2_scales = False    # every scale rounded up to a power of two (ORT's float path exact)

    # -- helpers ------------------------------------------------------------
    def _fresh(self, kind):
        i = self.count.get(kind, 0)
        self.count[kind] = i + 1
        return f'{kind}{i}'

    def _add(self, op, ins, out_shape, **kw):
        out = self._fresh(op)
        self.shape[out] = [int(d) for d in out_shape]
        self.layers.append(dict(op=op, ins=list(ins), out=out, **kw))
        return out

    def he(self, shape, fan_in, gain=2.0):
        return f32(self.rng.standard_normal(shape) * np.sqrt(gain / fan_in))

    def bias(self, n, std=0.05):
        return f32(self.rng.standard_normal(n) * std)

    # -- graph building -----------------------------------------------------
    def input(self, shape, fn=None, rng_range=None, levels=False):
        """rng_range=(lo, hi): fixed quantization range, random samples uniform in it;
        levels=True: the samples hold every quantized level once (shape with 256 elements),
        in a seeded random order."""
        t = 'x' if not self.inputs else f'x{len(self.inputs)}'
        if rng_range is not None:
            self.fixed_range[t] = tuple(rng_range)
            fn = uniform(shape, *rng_range)
        if levels:
            assert int(np.prod(shape)) == 256 and rng_range is not None
            self.level_inputs.add(t)
        self.shape[t] = list(shape)
        self.inputs.append(t)
        self.input_fns.append(fn)
        return t

    def output(self, t):
        self.outputs.append(t)

    def conv(self, x, cout, k, stride=1, pad=None, group=1, act='relu', w=None, b=None, dilation=1):
        n, c, h, wd = self.shape[x]
        kh, kw = (k, k) if isinstance(k, int) else k
        sh, sw = (stride, stride) if isinstance(stride, int) else stride
        if pad is None:
            pad = [dilation * (kh // 2), dilation * (kw // 2)] * 2
        elif isinstance(pad, int):
            pad = [pad] * 4
        ho = (h + pad[0] + pad[2] - dilation * (kh - 1) - 1) // sh + 1
        wo = (wd + pad[1] + pad[3] - dilation * (kw - 1) - 1) // sw + 1
        if w is None:
            fan_in = (c // group) * kh * kw
            w = self.he((cout, c // group, kh, kw), fan_in, 2.0 if act else 1.0)
        if b is None:
            b = self.bias(cout)
        return self._add('conv', [x], [n, cout, ho, wo], w=f32(w), b=f32(b), kernel=[kh, kw],
                         strides=[sh, sw], pads=list(pad), group=group, act=act, dilation=dilation)

    def conv_transpose(self, x, cout, k=2, stride=2, act='relu'):
        """ConvTranspose, no pads: weights [C_in, C_out, k, k]."""
        n, c, h, wd = self.shape[x]
        w = self.he((c, cout, k, k), c * k * k // (stride * stride), 2.0 if act else 1.0)
        return self._add('convtranspose', [x], [n, cout, stride * (h - 1) + k, stride * (wd - 1) + k], w=f32(w),
                         b=self.bias(cout), kernel=[k, k], strides=[stride, stride], act=act)

    def dwconv(self, x, k=3, stride=1, pad=None, act='relu'):
        return self.conv(x, self.shape[x][1], k, stride, pad, group=self.shape[x][1], act=act)

    def gemm(self, x, n_out, act=None, w=None, b=None):
        n, k = self.shape[x]
        if w is None:
            w = self.he((n_out, k), k, 2.0 if act else 1.0)
        if b is None:
            b = self.bias(n_out)
        return self._add('gemm', [x], [n, n_out], w=f32(w), b=f32(b), act=act)

    def matmul(self, x, n_out, w=None):
        k = self.shape[x][-1]
        if w is None:
            w = self.he((k, n_out), k, 2.0)
        return self._add('matmul', [x], self.shape[x][:-1] + [n_out], w=f32(w))

    def addc(self, x, c, act=None):
        return self._add('addc', [x], self.shape[x], c=f32(c), act=act)

    def dense(self, x, n_out, act='relu'):
        """MatMul + Add(bias) as two quantized steps (ONNX Runtime's MatMul+Add form)."""
        m = self.matmul(x, n_out)
        return self.addc(m, self.bias(n_out, 0.1), act=act)

    def add(self, a, b, act=None):
        assert self.shape[a] == self.shape[b]
        return self._add('add', [a, b], self.shape[a], act=act)

    def mul(self, a, b):
        return self._add('mul', [a, b], np.broadcast_shapes(self.shape[a], self.shape[b]))

    def concat(self, xs, axis=1):
        s = list(self.shape[xs[0]])
        s[axis] = sum(self.shape[x][axis] for x in xs)
        return self._add('concat', xs, s, axis=axis)

    def _pool_shape(self, x, k, stride, pads):
        n, c, h, w = self.shape[x]
        return [n, c, (h + pads[0] + pads[2] - k[0]) // stride[0] + 1,
                (w + pads[1] + pads[3] - k[1]) // stride[1] + 1]

    def maxpool(self, x, k=2, stride=None, pads=(0, 0, 0, 0)):
        k = [k, k] if isinstance(k, int) else list(k)
        stride = k if stride is None else ([stride] * 2 if isinstance(stride, int) else list(stride))
        return self._add('maxpool', [x], self._pool_shape(x, k, stride, pads), kernel=k,
                         strides=stride, pads=list(pads))

    def avgpool(self, x, k=2, stride=None, pads=(0, 0, 0, 0), count_include_pad=0):
        k = [k, k] if isinstance(k, int) else list(k)
        stride = k if stride is None else ([stride] * 2 if isinstance(stride, int) else list(stride))
        return self._add('avgpool', [x], self._pool_shape(x, k, stride, pads), kernel=k,
                         strides=stride, pads=list(pads), count_include_pad=count_include_pad)

    def gap(self, x):
        n, c = self.shape[x][:2]
        return self._add('gap', [x], [n, c, 1, 1])

    def unary(self, op, x, **kw):
        return self._add(op, [x], self.shape[x], **kw)

    def sigmoid(self, x):
        return self.unary('sigmoid', x)

    def tanh(self, x):
        return self.unary('tanh', x)

    def leakyrelu(self, x, alpha=0.1):
        return self.unary('leakyrelu', x, alpha=alpha)

    def softmax(self, x, axis=-1):
        return self.unary('softmax', x, axis=axis)

    def pad(self, x, pads):
        s = list(self.shape[x])
        r = len(s)
        s = [s[i] + pads[i] + pads[i + r] for i in range(r)]
        return self._add('pad', [x], s, pads=list(pads))

    def resize(self, x, scale=2, ctm='asymmetric', nearest_mode='floor'):
        n, c, h, w = self.shape[x]
        return self._add('resize', [x], [n, c, h * scale, w * scale], scales=[1.0, 1.0, float(scale), float(scale)],
                         ctm=ctm, nearest_mode=nearest_mode)

    def transpose(self, x, perm):
        return self._add('transpose', [x], [self.shape[x][p] for p in perm], perm=list(perm))

    def reshape(self, x, shape):
        assert int(np.prod(shape)) == int(np.prod(self.shape[x]))
        return self._add('reshape', [x], shape, target=list(shape))

    def squeeze(self, x, axes):
        return self._add('squeeze', [x], [d for i, d in enumerate(self.shape[x]) if i not in axes],
                         axes=list(axes))

    def unsqueeze(self, x, axes):
        s = list(self.shape[x])
        for a in sorted(axes):
            s.insert(a, 1)
        return self._add('unsqueeze', [x], s, axes=list(axes))

    def flatten(self, x):
        s = self.shape[x]
        return self._add('flatten', [x], [s[0], int(np.prod(s[1:]))])


# ----------------------------------------------------------------------------
# Graph writer
# ----------------------------------------------------------------------------
class G:
    def __init__(self):
        self.nodes = []
        self.inits = {}

    def init(self, name, arr):
        if name not in self.inits:
            self.inits[name] = numpy_helper.from_array(np.asarray(arr), name)
        return name

    def node(self, op, ins, outs, domain=None, name=None, **attrs):
        n = helper.make_node(op, ins, outs if isinstance(outs, list) else [outs],
                             name=name or f'{op}_{len(self.nodes)}', domain=domain, **attrs)
        self.nodes.append(n)
        return n

    def model(self, name, inputs, outputs, doc):
        graph = helper.make_graph(self.nodes, name, inputs, outputs, list(self.inits.values()))
        m = helper.make_model(graph, opset_imports=OPSETS, producer_name='tightfit-models',
                              producer_version='1', doc_string=doc)
        m.ir_version = 7
        return m


def float_model(net, expose_all=True):
    """The float network (for calibration): every layer output is a graph output."""
    g = G()
    for L in net.layers:
        op, x, y = L['op'], L['ins'], L['out']
        pre = y + '__pre' if L.get('act') else y
        if op == 'conv':
            g.node('Conv', [x[0], g.init(y + '.w', L['w']), g.init(y + '.b', L['b'])], pre, **conv_attrs(L))
        elif op == 'convtranspose':
            g.node('ConvTranspose', [x[0], g.init(y + '.w', L['w']), g.init(y + '.b', L['b'])], pre,
                   kernel_shape=L['kernel'], strides=L['strides'])
        elif op == 'gemm':
            g.node('Gemm', [x[0], g.init(y + '.w', L['w']), g.init(y + '.b', L['b'])], pre, transB=1)
        elif op == 'matmul':
            g.node('MatMul', [x[0], g.init(y + '.w', L['w'])], pre)
        elif op == 'addc':
            g.node('Add', [x[0], g.init(y + '.c', L['c'])], pre)
        elif op == 'add':
            g.node('Add', x, pre)
        elif op == 'mul':
            g.node('Mul', x, pre)
        else:
            emit_plain(g, L, x, pre, float_mode=True)
        emit_act(g, L, pre, y)
    inputs = [helper.make_tensor_value_info(in_name(i), TensorProto.FLOAT, net.shape[t])
              for i, t in enumerate(net.inputs)]
    for i, t in enumerate(net.inputs):
        g.nodes.insert(i, helper.make_node('Identity', [in_name(i)], [t], name=f'input_identity_{i}'))
    outs = [L['out'] for L in net.layers] + net.inputs
    outputs = [helper.make_tensor_value_info(t, TensorProto.FLOAT, net.shape[t]) for t in outs]
    return g.model(net.name + '_float', inputs, outputs, 'float calibration model')


def conv_attrs(L):
    a = dict(kernel_shape=L['kernel'], strides=L['strides'], pads=L['pads'], group=L['group'])
    if L.get('dilation', 1) != 1:
        a['dilations'] = [L['dilation']] * 2
    return a


def emit_act(g, L, pre, y):
    act = L.get('act')
    if act == 'relu':
        g.node('Relu', [pre], y)
    elif act == 'relu6':
        g.node('Clip', [pre, g.init('clip.min', f32(0.0)), g.init('clip.max', f32(6.0))], y)
    else:
        assert act is None


def emit_plain(g, L, x, y, float_mode, zp_name=None):
    """Operators with the same ONNX form in the float/QDQ graph and on integers."""
    op = L['op']
    if op == 'maxpool':
        g.node('MaxPool', x, y, kernel_shape=L['kernel'], strides=L['strides'], pads=L['pads'])
    elif op == 'avgpool':
        g.node('AveragePool', x, y, kernel_shape=L['kernel'], strides=L['strides'], pads=L['pads'],
               count_include_pad=L['count_include_pad'])
    elif op == 'gap':
        g.node('GlobalAveragePool', x, y)
    elif op == 'sigmoid':
        g.node('Sigmoid', x, y)
    elif op == 'tanh':
        g.node('Tanh', x, y)
    elif op == 'leakyrelu':
        g.node('LeakyRelu', x, y, alpha=L['alpha'])
    elif op == 'softmax':
        g.node('Softmax', x, y, axis=L['axis'])
    elif op == 'concat':
        g.node('Concat', x, y, axis=L['axis'])
    elif op == 'transpose':
        g.node('Transpose', x, y, perm=L['perm'])
    elif op == 'reshape':
        g.node('Reshape', [x[0], g.init(L['out'] + '.shape', np.array(L['target'], np.int64))], y)
    elif op == 'flatten':
        g.node('Flatten', x, y, axis=1)
    elif op in ('squeeze', 'unsqueeze'):
        g.node(op.capitalize(), [x[0], g.init(L['out'] + '.axes', np.array(L['axes'], np.int64))], y)
    elif op == 'pad':
        pads = g.init(L['out'] + '.pads', np.array(L['pads'], np.int64))
        cval = g.init('pad.zero', f32(0.0)) if float_mode else zp_name
        g.node('Pad', [x[0], pads, cval], y, mode='constant')
    elif op == 'resize':
        g.node('Resize', [x[0], '', g.init(L['out'] + '.scales', f32(L['scales']))], y, mode='nearest',
               coordinate_transformation_mode=L['ctm'], nearest_mode=L['nearest_mode'])
    else:
        raise ValueError(op)


# ----------------------------------------------------------------------------
# Quantization
# ----------------------------------------------------------------------------
def pow2_up(scale):
    return np.float32(2.0 ** np.ceil(np.log2(float(scale))))


def act_qparams(lo, hi, dtype, pow2=False):
    lo, hi = min(float(lo), 0.0), max(float(hi), 0.0)
    qmin, qmax = QRANGE[dtype]
    scale = np.float32((hi - lo) / (qmax - qmin))
    if scale == 0:
        scale = np.float32(1.0)
    if pow2:
        scale = pow2_up(scale)
    zp = int(np.clip(np.round(qmin - lo / float(scale)), qmin, qmax))
    return scale, zp


def quant_weight(w, per_channel, wmax, pow2=False):
    """Symmetric int8 weights (zero point 0); per channel along axis 0."""
    if per_channel:
        m = np.abs(w).reshape(w.shape[0], -1).max(axis=1)
    else:
        m = np.array(np.abs(w).max())
    scale = f32(np.where(m > 0, m / wmax, 1.0))
    if pow2:
        scale = f32(2.0 ** np.ceil(np.log2(scale)))
    bs = scale.reshape((-1,) + (1,) * (w.ndim - 1)) if per_channel else scale
    q = np.clip(np.round(w / bs), -wmax, wmax).astype(np.int8)
    return q, scale


def run_node(args):
    onnxruntime_node.require('make_models')
    r = subprocess.run(['node'] + args, cwd=HERE, capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write(r.stderr)
        raise RuntimeError('node ' + ' '.join(args) + ' failed')
    return r.stdout


def sample_inputs(net):
    """two samples, each a list with one float32 array per graph input"""
    if hasattr(net, 'samples'):
        return net.samples
    if net.level_inputs and not hasattr(net, 'qp'):
        return []          # calibration: level samples need the input's quantization first
    rng = np.random.default_rng(net.seed + 2000)
    out = []
    for _ in range(2):
        sample = []
        for t, fn in zip(net.inputs, net.input_fns):
            if t in net.level_inputs:
                s, z = net.qp[t]
                lo, hi = QRANGE[net.act]
                q = rng.permutation(np.arange(lo, hi + 1))
                sample.append(f32((q - z).astype(np.float32) * np.float32(s)).reshape(net.shape[t]))
            else:
                sample.append(fn(rng))
        out.append(sample)
    return out


def calibrate(net, n_calib=32):
    """min/max of every float tensor over seeded random inputs plus the two
    sample inputs (so that the samples never saturate a tensor); the digits CNN
    is calibrated on 200 training images."""
    if net.calib is not None:
        batches = [f32(net.calib)]
    else:
        rng = np.random.default_rng(net.seed + 1000)
        sets = [[fn(rng) for fn in net.input_fns] for _ in range(n_calib)] + sample_inputs(net)
        batches = [f32(np.stack([s[i] for s in sets])) for i in range(len(net.inputs))]
    with tempfile.TemporaryDirectory() as tmp:
        mpath = os.path.join(tmp, 'float.onnx')
        onnx.save(float_model(net), mpath)
        paths = []
        for i, b in enumerate(batches):
            paths.append(os.path.join(tmp, f'samples_{i}.npy'))
            np.save(paths[-1], b)
        return json.loads(run_node(['calibrate.mjs', mpath] + paths))


def grid_out(lo, hi, bits=8):
    """Round a calibrated range outward to `bits` significant bits, so that
    last-bit differences of float kernels on another CPU do not change the
    quantization parameters (and so the files) when the models are regenerated."""
    def step(x):
        return 2.0 ** (np.floor(np.log2(abs(x))) - (bits - 1)) if x != 0 else 1.0
    lo, hi = float(lo), float(hi)
    return (np.floor(lo / step(lo)) * step(lo) if lo != 0 else 0.0,
            np.ceil(hi / step(hi)) * step(hi) if hi != 0 else 0.0)


def quantize(net, stats):
    stats = {k: grid_out(*v) for k, v in stats.items()}
    stats.update(net.fixed_range)
    if net.concat_shares_range:
        # As TFLite's converter and PyTorch's quantizers do: a Concat and its inputs share one range
        # (through the pass-through layers that keep their input's quantization).
        made_by = {L['out']: L for L in net.layers}
        def sources(t):
            while t in made_by and made_by[t]['op'] in PASS_THROUGH:
                t = made_by[t]['ins'][0]
            return t
        for L in reversed(net.layers):
            if L['op'] == 'concat':
                ts = [sources(t) for t in L['ins']] + [L['out']]
                lo, hi = min(stats[t][0] for t in ts), max(stats[t][1] for t in ts)
                for t in ts:
                    stats[t] = (lo, hi)
    dt = net.act
    qmin = QRANGE[dt][0]
    def qparams(lo, hi):
        return act_qparams(lo, hi, dt, net.pow2_scales)
    qp = {t: qparams(*stats[t]) for t in net.inputs}
    for L in net.layers:
        op, y = L['op'], L['out']
        if op in PASS_THROUGH:
            qp[y] = qp[L['ins'][0]]
        elif op in ('sigmoid', 'softmax'):
            qp[y] = (np.float32(1.0 / 256.0), qmin)
        else:
            lo, hi = stats[y]
            if L.get('act') == 'relu':
                lo = 0.0
            elif L.get('act') == 'relu6':
                lo, hi = 0.0, min(hi, 6.0)
            qp[y] = qparams(lo, hi)
        if op in ('conv', 'gemm', 'convtranspose'):
            per_channel = net.wmode == 'per-channel'
            assert not (per_channel and op == 'convtranspose')  # per tensor only here
            L['wq'], L['ws'] = quant_weight(L['w'], per_channel, net.wmax, net.pow2_scales)
            L['bs'] = f32(qp[L['ins'][0]][0] * L['ws'])
            L['bq'] = np.clip(np.round(L['b'] / L['bs']), -2**31, 2**31 - 1).astype(np.int32)
            L['per_channel'] = per_channel
        elif op == 'matmul':   # per-tensor (QLinearMatMul)
            L['wq'], L['ws'] = quant_weight(L['w'], False, net.wmax)
            L['per_channel'] = False
        elif op == 'addc':     # the constant is an activation-typed operand of QLinearAdd
            m = float(np.abs(L['c']).max()) or 1.0
            L['cs'] = np.float32(m / 127.0)
            L['cz'] = 0 if dt == 'int8' else 128
            L['cq'] = np.clip(np.round(L['c'] / L['cs']) + L['cz'], *QRANGE[dt]).astype(NP_OF[dt])
    net.qp = qp
    if net.concat_shares_range:
        for L in net.layers:
            if L['op'] == 'concat':
                assert all(qp[t] == qp[L['out']] for t in L['ins']), f'{net.name}: {L["out"]} inputs quantized apart'


# ----------------------------------------------------------------------------
# The two quantized forms
# ----------------------------------------------------------------------------
def qparam_inits(g, net, t):
    s, z = net.qp[t]
    return g.init(t + '.scale', np.float32(s)), g.init(t + '.zp', np.array(z, NP_OF[net.act]))


def weight_inits(g, L, t, four_d=False):
    """int8 weights, scale and zero point (per channel: 1-D along axis 0)."""
    w = L['wq']
    if four_d:
        w = w.reshape(w.shape + (1, 1))
    wn = g.init(t + '.w', w)
    ws = g.init(t + '.w.scale', f32(L['ws']))
    wz = g.init(t + '.w.zp', np.zeros(L['ws'].shape, np.int8))
    return wn, ws, wz


def bias_inits(g, L, t):
    bn = g.init(t + '.b', L['bq'])
    bs = g.init(t + '.b.scale', f32(L['bs']))
    bz = g.init(t + '.b.zp', np.zeros(L['bs'].shape, np.int32))
    return bn, bs, bz


def in_name(i):
    return 'input' if i == 0 else f'input_{i}'


def io_infos(net):
    def shape(t):
        return ['N'] + net.shape[t][1:] if net.symbolic_batch else net.shape[t]
    inputs = [helper.make_tensor_value_info(in_name(i), TensorProto.FLOAT, shape(t))
              for i, t in enumerate(net.inputs)]
    outputs = [helper.make_tensor_value_info(out_name(i), TensorProto.FLOAT, shape(t))
               for i, t in enumerate(net.outputs)]
    return inputs, outputs


def out_name(i):
    return 'output' if i == 0 else f'output_{i}'


def qdq_model(net):
    g = G()
    dq_cache = {}

    def dq(t):
        if t not in dq_cache:
            s, z = qparam_inits(g, net, t)
            g.node('DequantizeLinear', [t, s, z], t + '.dq')
            dq_cache[t] = t + '.dq'
        return dq_cache[t]

    def q(src, t):
        s, z = qparam_inits(g, net, t)
        g.node('QuantizeLinear', [src, s, z], t)

    for i, t in enumerate(net.inputs):
        s, z = qparam_inits(g, net, t)
        g.node('QuantizeLinear', [in_name(i), s, z], t)
    for L in net.layers:
        op, y = L['op'], L['out']
        xs = [dq(t) for t in L['ins']]
        f = y + '.f'
        pre = y + '.pre' if L.get('act') else f
        if op in ('conv', 'gemm', 'matmul'):
            wn, ws, wz = weight_inits(g, L, y)
            axis = {'axis': 0} if L['per_channel'] else {}
            g.node('DequantizeLinear', [wn, ws, wz], y + '.w.dq', **axis)
            if op == 'matmul':
                g.node('MatMul', [xs[0], y + '.w.dq'], pre)
            else:
                bn, bs, bz = bias_inits(g, L, y)
                g.node('DequantizeLinear', [bn, bs, bz], y + '.b.dq', **axis)
                if op == 'conv':
                    g.node('Conv', [xs[0], y + '.w.dq', y + '.b.dq'], pre, **conv_attrs(L))
                else:
                    g.node('Gemm', [xs[0], y + '.w.dq', y + '.b.dq'], pre, transB=1)
        elif op == 'convtranspose':
            conv_transpose_dq(g, L, y, xs[0], pre)
        elif op == 'addc':
            cn = g.init(y + '.c', L['cq'])
            cs = g.init(y + '.c.scale', np.float32(L['cs']))
            cz = g.init(y + '.c.zp', np.array(L['cz'], NP_OF[net.act]))
            g.node('DequantizeLinear', [cn, cs, cz], y + '.c.dq')
            g.node('Add', [xs[0], y + '.c.dq'], pre)
        elif op == 'add':
            g.node('Add', xs, pre)
        elif op == 'mul':
            g.node('Mul', xs, pre)
        else:
            emit_plain(g, L, xs, pre, float_mode=True)
        emit_act(g, L, pre, f)
        q(f, y)
    for i, t in enumerate(net.outputs):
        s, z = qparam_inits(g, net, t)
        g.node('DequantizeLinear', [t, s, z], out_name(i))
    return g.model(net.name, *io_infos(net), f'{net.name} (QDQ form). {net.description}')


def conv_transpose_dq(g, L, y, x_dq, dst):
    """ConvTranspose of a dequantized input by the dequantized weights and bias, into float dst."""
    wn, ws, wz = weight_inits(g, L, y)
    g.node('DequantizeLinear', [wn, ws, wz], y + '.w.dq')
    bn, bs, bz = bias_inits(g, L, y)
    g.node('DequantizeLinear', [bn, bs, bz], y + '.b.dq')
    g.node('ConvTranspose', [x_dq, y + '.w.dq', y + '.b.dq'], dst, kernel_shape=L['kernel'], strides=L['strides'])


def qop_model(net):
    g = G()
    for i, t in enumerate(net.inputs):
        s, z = qparam_inits(g, net, t)
        g.node('QuantizeLinear', [in_name(i), s, z], t)
    for L in net.layers:
        op, x, y = L['op'], L['ins'], L['out']
        if op in PASS_THROUGH:   # integer op, same quantization as its input
            zp = qparam_inits(g, net, x[0])[1] if op == 'pad' else None
            emit_plain(g, L, x, y, float_mode=False, zp_name=zp)
            continue
        ys, yz = qparam_inits(g, net, y)
        xq = [a for t in x for a in (t,) + qparam_inits(g, net, t)]
        if op == 'conv':
            wn, ws, wz = weight_inits(g, L, y)
            g.node('QLinearConv', xq + [wn, ws, wz, ys, yz, g.init(y + '.b', L['bq'])], y, **conv_attrs(L))
        elif op == 'gemm':
            # Fully connected with an int32 bias and ONE requantization, as the
            # QDQ Gemm computes: a 1x1 QLinearConv between two Reshapes.
            k = net.shape[x[0]][1]
            nout = net.shape[y][1]
            g.node('Reshape', [x[0], g.init(y + '.in4d', np.array([1, k, 1, 1], np.int64))], y + '.x4d')
            wn, ws, wz = weight_inits(g, L, y, four_d=True)
            g.node('QLinearConv', [y + '.x4d'] + xq[1:] + [wn, ws, wz, ys, yz, g.init(y + '.b', L['bq'])],
                   y + '.y4d', kernel_shape=[1, 1])
            g.node('Reshape', [y + '.y4d', g.init(y + '.out2d', np.array([1, nout], np.int64))], y)
        elif op == 'matmul':
            wn, ws, wz = weight_inits(g, L, y)
            g.node('QLinearMatMul', xq + [wn, ws, wz, ys, yz], y)
        elif op == 'addc':
            cn = g.init(y + '.c', L['cq'])
            cs = g.init(y + '.c.scale', np.float32(L['cs']))
            cz = g.init(y + '.c.zp', np.array(L['cz'], NP_OF[net.act]))
            g.node('QLinearAdd', xq + [cn, cs, cz, ys, yz], y, domain=MS)
        elif op == 'add':
            g.node('QLinearAdd', xq + [ys, yz], y, domain=MS)
        elif op == 'mul':
            g.node('QLinearMul', xq + [ys, yz], y, domain=MS)
        elif op == 'concat':
            g.node('QLinearConcat', [ys, yz] + xq, y, domain=MS, axis=L['axis'])
        elif op == 'avgpool':
            g.node('QLinearAveragePool', xq + [ys, yz], y, domain=MS, kernel_shape=L['kernel'],
                   strides=L['strides'], pads=L['pads'], count_include_pad=L['count_include_pad'])
        elif op == 'gap':
            g.node('QLinearGlobalAveragePool', xq + [ys, yz], y, domain=MS, channels_last=0)
        elif op == 'sigmoid':
            g.node('QLinearSigmoid', xq + [ys, yz], y, domain=MS)
        elif op == 'leakyrelu':
            g.node('QLinearLeakyRelu', xq + [ys, yz], y, domain=MS, alpha=L['alpha'])
        elif op == 'softmax':
            g.node('QLinearSoftmax', xq + [ys, yz], y, domain=MS, axis=L['axis'], opset=13)
        elif op == 'tanh':
            # no QLinear op in ONNX Runtime: a float island
            g.node('DequantizeLinear', xq, y + '.in.dq')
            g.node('Tanh', [y + '.in.dq'], y + '.f')
            g.node('QuantizeLinear', [y + '.f', ys, yz], y)
        elif op == 'convtranspose':
            # no QLinear op in ONNX Runtime's CPU provider: a float island (exact with pow2_scales)
            g.node('DequantizeLinear', xq, y + '.in.dq')
            conv_transpose_dq(g, L, y, y + '.in.dq', y + '.f')
            pre = y + '.f'
            if L.get('act'):
                emit_act(g, L, pre, y + '.act')
                pre = y + '.act'
            g.node('QuantizeLinear', [pre, ys, yz], y)
        else:
            raise ValueError(op)
        # Relu / Clip(0, 6) are absorbed: the output zero point is the type's minimum.
    for i, t in enumerate(net.outputs):
        s, z = qparam_inits(g, net, t)
        g.node('DequantizeLinear', [t, s, z], out_name(i))
    return g.model(net.name, *io_infos(net), f'{net.name} (QOperator form). {net.description}')


# ----------------------------------------------------------------------------
# Figures
# ----------------------------------------------------------------------------
def figures(net):
    params = macs = wbytes = 0
    for L in net.layers:
        op, y = L['op'], L['out']
        if op in ('conv', 'gemm', 'matmul', 'convtranspose'):
            params += L['w'].size
            wbytes += L['w'].size
            if 'b' in L:
                params += L['b'].size
                wbytes += 4 * L['b'].size
        if op == 'addc':
            params += L['c'].size
            wbytes += L['c'].size
        if op == 'conv':
            n, m, ho, wo = net.shape[y]
            macs += ho * wo * m * L['w'].shape[1] * L['w'].shape[2] * L['w'].shape[3]
        elif op == 'convtranspose':
            macs += int(np.prod(net.shape[L['ins'][0]])) * L['w'].shape[1] * L['w'].shape[2] * L['w'].shape[3]
        elif op == 'gemm':
            macs += L['w'].size
        elif op == 'matmul':
            macs += int(np.prod(net.shape[y])) * L['w'].shape[0]
    size = {t: int(np.prod(s)) for t, s in net.shape.items()}
    tensors = net.inputs + [L['out'] for L in net.layers]
    total = sum(size[t] for t in tensors)
    largest = max(tensors, key=lambda t: size[t])
    pair = max(sum(size[t] for t in set(L['ins'])) + size[L['out']] for L in net.layers)
    return dict(layers=len(net.layers), params=int(params), weight_bytes=int(wbytes), macs=int(macs),
                input_bytes=sum(size[t] for t in net.inputs), output_bytes=sum(size[t] for t in net.outputs),
                largest_activation_bytes=size[largest], largest_activation=largest,
                sum_activation_bytes=int(total), max_layer_io_bytes=int(pair))


# ----------------------------------------------------------------------------
# The models
# ----------------------------------------------------------------------------
def normal(shape, std=1.0):
    return lambda rng: f32(rng.standard_normal(shape) * std)


def uniform(shape, lo=0.0, hi=1.0):
    return lambda rng: f32(rng.uniform(lo, hi, shape))


def m_conv_s8():
    n = Net('conv_s8', 'int8', 'per-channel', 11,
            'Conv+Relu x3 (one stride 2), MaxPool, GlobalAveragePool, Flatten, Gemm; int8 activations, '
            'per-channel int8 weights.')
    x = n.input([1, 3, 16, 16], normal([1, 3, 16, 16]))
    x = n.conv(x, 8, 3)
    x = n.conv(x, 16, 3, stride=2)
    x = n.maxpool(x, 2)
    x = n.conv(x, 16, 3)
    x = n.gap(x)
    x = n.flatten(x)
    n.output(n.gemm(x, 10))
    return n


def m_conv_u8():
    n = Net('conv_u8', 'uint8', 'per-tensor', 12,
            'Conv+Relu, AveragePool 2x2, Conv+Relu, AveragePool 3x3 stride 2 with padding, linear 1x1 Conv, '
            'Flatten, Gemm+Relu, Gemm; uint8 activations, per-tensor 7-bit weights.')
    x = n.input([1, 3, 16, 16], uniform([1, 3, 16, 16]))
    x = n.conv(x, 8, 3)
    x = n.avgpool(x, 2)
    x = n.conv(x, 16, 3)
    x = n.avgpool(x, 3, stride=2, pads=(1, 1, 1, 1), count_include_pad=0)
    x = n.conv(x, 8, 1, act=None)
    x = n.flatten(x)
    x = n.gemm(x, 32, act='relu')
    n.output(n.gemm(x, 10))
    return n


def m_ops_s8(name='ops_s8', act='int8', weights='per-channel', seed=13):
    kind = ('int8, per-channel weights (MatMul per-tensor)' if act == 'int8' else
            'uint8, per-tensor 7-bit weights')
    n = Net(name, act, weights, seed,
            'Operator mix: residual Add+Relu, Pad, Sigmoid gate with Mul, Tanh, LeakyRelu, Concat of three '
            'tensors with different scales, MaxPool, Resize nearest (half_pixel, round_prefer_floor), '
            f'Transpose to NHWC, Reshape, MatMul, Flatten, Gemm, Softmax; {kind}.')
    x = n.input([1, 4, 8, 8], normal([1, 4, 8, 8]))
    c1 = n.conv(x, 8, 3)
    c2 = n.conv(c1, 8, 3, act=None)
    r = n.add(c1, c2, act='relu')
    p = n.pad(r, [0, 0, 1, 1, 0, 0, 1, 1])
    c3 = n.conv(p, 8, 3, pad=0, act=None)
    s = n.sigmoid(c3)
    m = n.mul(r, s)
    t = n.tanh(c2)
    lr = n.leakyrelu(c3, 0.1)
    cat = n.concat([m, t, lr], axis=1)
    mp = n.maxpool(cat, 2)
    up = n.resize(mp, 2, ctm='half_pixel', nearest_mode='round_prefer_floor')
    c4 = n.conv(up, 8, 1)
    tr = n.transpose(c4, [0, 2, 3, 1])
    rs = n.reshape(tr, [1, 64, 8])
    mm = n.matmul(rs, 4)
    f = n.flatten(mm)
    g = n.gemm(f, 10)
    n.output(n.softmax(g))
    return n


def m_ops_u8():
    return m_ops_s8('ops_u8', 'uint8', 'per-tensor', 14)


def m_multi_io():
    n = Net('multi_io', 'int8', 'per-channel', 15,
            'Two inputs and two outputs: an image branch (Conv+Relu, MaxPool) and a vector branch (Gemm+Relu) '
            'joined by Concat; output 0 = Softmax over 5 classes, output 1 = a 1x1 Conv feature map; int8, '
            'per-channel weights.')
    a = n.input([1, 3, 8, 8], normal([1, 3, 8, 8]))
    b = n.input([1, 6], uniform([1, 6], -2.0, 2.0))
    fa = n.maxpool(n.conv(a, 8, 3), 2)
    va = n.flatten(n.gap(fa))
    vb = n.gemm(b, 8, act='relu')
    cat = n.concat([va, vb], axis=1)
    n.output(n.softmax(n.gemm(cat, 5)))
    n.output(n.conv(fa, 4, 1, act=None))
    return n


def m_conv_s8_extdata():
    n = m_conv_s8()
    n.name = 'conv_s8_extdata'
    n.description = ('conv_s8 (same weights) saved with every initializer in an external data file '
                     'NAME.FORM.onnx.data beside the model.')
    n.external_data = True
    return n


def m_conv_u8_symbatch():
    n = m_conv_u8()
    n.name = 'conv_u8_symbatch'
    n.description = ('conv_u8 (same weights) whose graph input and output have a symbolic batch '
                     "dimension 'N' (to be pinned to 1); samples are batch 1.")
    n.symbolic_batch = True
    return n


def m_ops2_s8(name='ops2_s8', act='int8', weights='per-channel', seed=16):
    kind = 'int8, per-channel weights' if act == 'int8' else 'uint8, per-tensor 7-bit weights'
    n = Net(name, act, weights, seed,
            'More operator variants: grouped Conv (group 2 and 4), dilated Conv (dilation 2), a '
            'squeeze-and-excitation block (GlobalAveragePool, Squeeze, Gemm+Relu, Gemm, Sigmoid, Unsqueeze, '
            'broadcast Mul [1,C,1,1] x [1,C,H,W]), AveragePool 3x3 s2 pads 1 with count_include_pad=1, '
            f'Clip(0,6), Flatten, Gemm, Softmax; {kind}.')
    x = n.input([1, 8, 8, 8], normal([1, 8, 8, 8]))
    c1 = n.conv(x, 8, 3, group=2)
    c2 = n.conv(c1, 8, 3, dilation=2)
    s = n.squeeze(n.gap(c2), [2, 3])
    s = n.sigmoid(n.gemm(n.gemm(s, 4, act='relu'), 8))
    m = n.mul(c2, n.unsqueeze(s, [2, 3]))
    a = n.avgpool(m, 3, stride=2, pads=(1, 1, 1, 1), count_include_pad=1)
    c3 = n.conv(a, 16, 3, group=4, act='relu6')
    n.output(n.softmax(n.gemm(n.flatten(c3), 10)))
    return n


def m_ops2_u8():
    return m_ops2_s8('ops2_u8', 'uint8', 'per-tensor', 17)


def unit(op, act):
    """single-operator models; LUT-style and elementwise ops get samples with every input level"""
    sfx = 's8' if act == 'int8' else 'u8'
    seed = 100 + 2 * ['sigmoid', 'tanh', 'leakyrelu', 'softmax', 'add', 'mul', 'concat', 'avgpool',
                      'gap'].index(op) + (act == 'uint8')
    n = Net(f'unit_{op}_{sfx}', act, 'per-tensor', seed, '')
    n.group = 'unit'
    if op in ('sigmoid', 'tanh', 'leakyrelu'):
        r = {'sigmoid': (-8.0, 8.0), 'tanh': (-4.0, 4.0), 'leakyrelu': (-6.0, 6.0)}[op]
        x = n.input([1, 256], rng_range=r, levels=True)
        y = n.leakyrelu(x, 0.1) if op == 'leakyrelu' else n.unary(op, x)
        n.description = f'a single {op} on a [1,256] input; each sample holds all 256 input levels.'
    elif op == 'softmax':
        x = n.input([1, 16, 16], rng_range=(-6.0, 6.0), levels=True)
        y = n.softmax(x, axis=-1)
        n.description = 'a single Softmax over the last axis of [1,16,16]; each sample holds all 256 input levels.'
    elif op in ('add', 'mul'):
        a = n.input([1, 256], rng_range=(-3.0, 3.0), levels=True)
        b = n.input([1, 256], rng_range=(-1.0, 2.0), levels=True)
        y = n.add(a, b) if op == 'add' else n.mul(a, b)
        n.description = (f'a single {op.capitalize()} of two [1,256] inputs with different scales and zero points; '
                         'each sample holds all 256 levels of each input, paired at random.')
    elif op == 'concat':
        a = n.input([1, 2, 4, 4], rng_range=(-2.0, 2.0))
        b = n.input([1, 3, 4, 4], rng_range=(-1.0, 5.0))
        y = n.concat([a, b], axis=1)
        n.description = 'a single Concat (axis 1) of two inputs with different scales: both are requantized.'
    elif op == 'avgpool':
        x = n.input([1, 4, 8, 8], normal([1, 4, 8, 8]))
        y = n.avgpool(x, 3, stride=1, pads=(1, 1, 1, 1), count_include_pad=0)
        n.description = 'a single AveragePool 3x3 stride 1 pads 1 (count_include_pad=0) on [1,4,8,8].'
    elif op == 'gap':
        x = n.input([1, 16, 7, 7], normal([1, 16, 7, 7]))
        y = n.gap(x)
        n.description = 'a single GlobalAveragePool on [1,16,7,7].'
    n.description = f'Unit model ({act}): ' + n.description
    n.output(y)
    return n


def m_padfold(name='padfold_s8', act='int8', seed=31):
    n = Net(name, act, 'per-tensor', seed,
            'Pads that tightfit folds into the node reading them (docs/schedule.md, "Pad folding"): an asymmetric '
            'Pad before a 3x3 Conv (pad 0), a top-left Pad before a depthwise 3x3, a Pad before an AveragePool '
            '3x3 (count_include_pad=0, no pads of its own), a Pad before a MaxPool 3x3 over a Relu output; and '
            'one it keeps: a Pad before a MaxPool over a Conv with no Relu (its zero point is not the least '
            f'value); the five joined by a Concat, then a 1x1 Conv; {act}, per-tensor weights.')
    x = n.input([1, 4, 10, 10], normal([1, 4, 10, 10]))
    c1 = n.conv(x, 8, 3)
    c2 = n.conv(x, 8, 3, act=None)
    a = n.conv(n.pad(c1, [0, 0, 1, 0, 0, 0, 1, 2]), 8, 3, pad=0)
    b = n.dwconv(n.pad(c1, [0, 0, 2, 2, 0, 0, 0, 0]), 3, pad=0)
    d = n.avgpool(n.pad(c1, [0, 0, 1, 1, 0, 0, 1, 1]), 3, stride=1)
    e = n.maxpool(n.pad(c1, [0, 0, 1, 1, 0, 0, 1, 1]), 3, stride=1)
    f = n.maxpool(n.pad(c2, [0, 0, 1, 1, 0, 0, 1, 1]), 3, stride=1)
    n.output(n.conv(n.concat([a, b, d, e, f]), 8, 1, act=None))
    return n


def m_dscnn():
    n = Net('dscnn', 'int8', 'per-channel', 21,
            'MLPerf Tiny keyword spotting DS-CNN (random weights): Conv 10x4 stride 2 (same padding) to 64 '
            'channels, 4 x (depthwise 3x3 + pointwise 64, Relu), AveragePool 25x5, Gemm 12, Softmax.')
    x = n.input([1, 1, 49, 10], normal([1, 1, 49, 10]))
    x = n.conv(x, 64, (10, 4), stride=2, pad=[4, 1, 5, 1])
    for _ in range(4):
        x = n.dwconv(x, 3)
        x = n.conv(x, 64, 1)
    x = n.avgpool(x, (25, 5))
    x = n.flatten(x)
    x = n.gemm(x, 12)
    n.output(n.softmax(x))
    return n


def m_resnet8():
    n = Net('resnet8', 'uint8', 'per-channel', 22,
            'MLPerf Tiny image classification ResNet-8 for CIFAR-10 (random weights): Conv 16, three residual '
            'stacks (16, 32 stride 2, 64 stride 2; 1x1 projection shortcuts), Add+Relu, AveragePool 8x8, '
            'Gemm 10, Softmax.')
    x = n.input([1, 3, 32, 32], uniform([1, 3, 32, 32]))
    x = n.conv(x, 16, 3)
    for c, s in ((16, 1), (32, 2), (64, 2)):
        y = n.conv(x, c, 3, stride=s)
        y = n.conv(y, c, 3, act=None)
        sc = x if s == 1 else n.conv(x, c, 1, stride=s, pad=0, act=None)
        x = n.add(y, sc, act='relu')
    x = n.avgpool(x, 8)
    x = n.flatten(x)
    x = n.gemm(x, 10)
    n.output(n.softmax(x))
    return n


def m_mobilenet():
    n = Net('mobilenet_v1_025', 'int8', 'per-channel', 23,
            'MLPerf Tiny visual wake words MobileNetV1 alpha 0.25 on 96x96x3 (random weights): Conv 3x3 s2, '
            '13 depthwise separable blocks, Relu6 as Clip(0,6), TF-style asymmetric same padding on stride 2, '
            'AveragePool 3x3, Gemm 2, Softmax.')
    x = n.input([1, 3, 96, 96], uniform([1, 3, 96, 96], -1.0, 1.0))
    x = n.conv(x, 8, 3, stride=2, pad=[0, 0, 1, 1], act='relu6')
    cfg = [(16, 1), (32, 2), (32, 1), (64, 2), (64, 1), (128, 2)] + [(128, 1)] * 5 + [(256, 2), (256, 1)]
    for c, s in cfg:
        x = n.dwconv(x, 3, stride=s, pad=[0, 0, 1, 1] if s == 2 else 1, act='relu6')
        x = n.conv(x, c, 1, act='relu6')
    x = n.avgpool(x, 3)
    x = n.flatten(x)
    x = n.gemm(x, 2)
    n.output(n.softmax(x))
    return n


def m_autoencoder():
    n = Net('autoencoder', 'int8', 'per-tensor', 24,
            'MLPerf Tiny anomaly detection autoencoder (random weights): 640 -> 128x4 -> 8 -> 128x4 -> 640, '
            'each layer MatMul then Add(bias) (ONNX Runtime\'s MatMul+Add quantization: QLinearMatMul + '
            'QLinearAdd), Relu on all but the last.')
    x = n.input([1, 640], normal([1, 640]))
    for width in [128] * 4 + [8] + [128] * 4:
        x = n.dense(x, width)
    n.output(n.dense(x, 640, act=None))
    return n


def m_inception():
    n = Net('inception', 'uint8', 'per-tensor', 25,
            'Two inception blocks (1x1; 1x1->3x3; 1x1->5x5; MaxPool 3x3 s1 pad 1 -> 1x1), each joined by a '
            'Concat of four branches, after a stride 2 stem; GlobalAveragePool, Gemm 10; uint8, per-tensor '
            '7-bit weights.')
    x = n.input([1, 3, 32, 32], uniform([1, 3, 32, 32]))
    x = n.conv(x, 16, 3, stride=2)
    for widths in ((8, 8, 12, 4, 6, 6), (12, 12, 16, 4, 8, 8)):
        b1 = n.conv(x, widths[0], 1)
        b2 = n.conv(n.conv(x, widths[1], 1), widths[2], 3)
        b3 = n.conv(n.conv(x, widths[3], 1), widths[4], 5)
        b4 = n.conv(n.maxpool(x, 3, stride=1, pads=(1, 1, 1, 1)), widths[5], 1)
        x = n.concat([b1, b2, b3, b4])
    x = n.gap(x)
    x = n.flatten(x)
    n.output(n.gemm(x, 10))
    return n


def m_inception_shared():
    n = m_inception()
    n.name = 'inception_shared'
    n.concat_shares_range = True
    n.description = ('inception quantized as TFLite\'s converter and PyTorch\'s quantizers quantize a Concat: its '
                     'inputs share its scale and zero point, so it only copies (tightfit writes its inputs in place: '
                     'docs/rewrites.md). ' + n.description)
    return n


def m_unet_shared():
    n = m_unet()
    n.name = 'unet_shared'
    n.concat_shares_range = True
    n.description = ('unet quantized with each Concat and its inputs sharing one scale and zero point (as TFLite\'s '
                     'converter and PyTorch\'s quantizers do): the Resize outputs are written in place. ' +
                     n.description)
    return n


def unet_body(n, upsample):
    """The small U-Net on 1x1x32x32 of m_unet and m_unet_convt: two encoder levels (2x Conv+Relu,
    MaxPool), bottleneck, two decoder levels (upsample(t, channels) doubling H and W, Concat with
    the skip, 2x Conv+Relu), then a 1x1 Conv."""
    x = n.input([1, 1, 32, 32], uniform([1, 1, 32, 32]))
    e1 = n.conv(n.conv(x, 8, 3), 8, 3)
    e2 = n.conv(n.conv(n.maxpool(e1, 2), 16, 3), 16, 3)
    b = n.conv(n.conv(n.maxpool(e2, 2), 32, 3), 32, 3)
    d2 = n.concat([upsample(b, 16), e2])
    d2 = n.conv(n.conv(d2, 16, 3), 16, 3)
    d1 = n.concat([upsample(d2, 8), e1])
    d1 = n.conv(n.conv(d1, 8, 3), 8, 3)
    return n.conv(d1, 1, 1, act=None)


def m_unet():
    n = Net('unet', 'int8', 'per-tensor', 26,
            'Small U-Net on 1x1x32x32: two encoder levels (2x Conv+Relu, MaxPool), bottleneck, two decoder '
            'levels (Resize nearest x2 asymmetric/floor, Concat with the skip, 2x Conv+Relu), 1x1 Conv, '
            'Sigmoid; int8, per-tensor weights.')
    n.output(n.sigmoid(unet_body(n, lambda t, channels: n.resize(t, 2))))
    return n


def m_unet_convt():
    n = Net('unet_convt', 'int8', 'per-tensor', 28,
            'Small U-Net on 1x1x32x32 whose decoders upsample with ConvTranspose 2x2 stride 2 (+Relu) as '
            'PyTorch U-Nets do: two encoder levels (2x Conv+Relu, MaxPool), bottleneck, two decoder levels '
            '(ConvTranspose, Concat with the skip, 2x Conv+Relu), 1x1 Conv; int8, per-tensor weights, every '
            'scale a power of two (so that ONNX Runtime\'s float ConvTranspose, in both files, is exact).')
    n.pow2_scales = True
    n.output(unet_body(n, n.conv_transpose))
    return n


def m_chain50():
    n = Net('chain50', 'uint8', 'per-channel', 27,
            'A chain of 50 Conv+Relu layers (alternating 3x3 and 1x1, 8 channels, 8x8), then '
            'GlobalAveragePool, Flatten, Gemm 10: 53 layers; uint8, per-channel 7-bit weights.')
    x = n.input([1, 8, 8, 8], uniform([1, 8, 8, 8]))
    for i in range(50):
        x = n.conv(x, 8, 3 if i % 2 == 0 else 1)
    x = n.flatten(n.gap(x))
    n.output(n.gemm(x, 10))
    return n


# -- digits: a small CNN trained here with numpy ------------------------------
def _im2col(x):
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    cols = np.stack([xp[:, :, i:i + h, j:j + w] for i in range(3) for j in range(3)], axis=2)
    return cols.reshape(n, c * 9, h * w)


def _col2im(d, shape):
    n, c, h, w = shape
    d = d.reshape(n, c, 9, h, w)
    xp = np.zeros((n, c, h + 2, w + 2), np.float32)
    for k in range(9):
        i, j = divmod(k, 3)
        xp[:, :, i:i + h, j:j + w] += d[:, :, k]
    return xp[:, :, 1:-1, 1:-1]


def train_digits():
    from sklearn.datasets import load_digits
    d = load_digits()
    X = f32(d.images[:, None] / 16.0)
    y = d.target.astype(np.int64)
    rng = np.random.default_rng(2024)
    perm = rng.permutation(len(X))
    test, train = perm[:450], perm[450:]
    P = {'w1': f32(rng.standard_normal((8, 1, 3, 3)) * np.sqrt(2 / 9)), 'b1': np.zeros(8, np.float32),
         'w2': f32(rng.standard_normal((16, 8, 3, 3)) * np.sqrt(2 / 72)), 'b2': np.zeros(16, np.float32),
         'w3': f32(rng.standard_normal((10, 64)) * np.sqrt(1 / 64)), 'b3': np.zeros(10, np.float32)}
    V = {k: np.zeros_like(v) for k, v in P.items()}

    def pool(a):
        n, c, h, w = a.shape
        r = a.reshape(n, c, h // 2, 2, w // 2, 2)
        m = r.max(axis=(3, 5))
        mask = (r == m[:, :, :, None, :, None])
        return m, mask

    def forward(xb):
        n = xb.shape[0]
        c1 = _im2col(xb)
        a1 = np.einsum('mk,nkp->nmp', P['w1'].reshape(8, -1), c1).reshape(n, 8, 8, 8) + P['b1'][:, None, None]
        r1 = np.maximum(a1, 0)
        p1, m1 = pool(r1)
        c2 = _im2col(p1)
        a2 = np.einsum('mk,nkp->nmp', P['w2'].reshape(16, -1), c2).reshape(n, 16, 4, 4) + P['b2'][:, None, None]
        r2 = np.maximum(a2, 0)
        p2, m2 = pool(r2)
        f = p2.reshape(n, 64)
        logits = np.einsum('nk,mk->nm', f, P['w3']) + P['b3']
        return logits, (c1, a1, p1, m1, c2, a2, p2, m2, f)

    lr, bs = 0.05, 32
    for epoch in range(40):
        order = rng.permutation(train)
        for i in range(0, len(order), bs):
            idx = order[i:i + bs]
            xb, yb = X[idx], y[idx]
            n = len(idx)
            logits, (c1, a1, p1, m1, c2, a2, p2, m2, f) = forward(xb)
            e = np.exp(logits - logits.max(1, keepdims=True))
            prob = e / e.sum(1, keepdims=True)
            dl = prob
            dl[np.arange(n), yb] -= 1
            dl /= n
            G = {'w3': np.einsum('nm,nk->mk', dl, f), 'b3': dl.sum(0)}
            dp2 = np.einsum('nm,mk->nk', dl, P['w3']).reshape(n, 16, 2, 2)
            dr2 = (m2 * dp2[:, :, :, None, :, None]).reshape(n, 16, 4, 4)
            da2 = dr2 * (a2 > 0)
            G['b2'] = da2.sum((0, 2, 3))
            d2 = da2.reshape(n, 16, 16)
            G['w2'] = np.einsum('nmp,nkp->mk', d2, c2).reshape(P['w2'].shape)
            dp1 = _col2im(np.einsum('mk,nmp->nkp', P['w2'].reshape(16, -1), d2), p1.shape)
            dr1 = (m1 * dp1[:, :, :, None, :, None]).reshape(n, 8, 8, 8)
            da1 = dr1 * (a1 > 0)
            G['b1'] = da1.sum((0, 2, 3))
            G['w1'] = np.einsum('nmp,nkp->mk', da1.reshape(n, 8, 64), c1).reshape(P['w1'].shape)
            for k in P:
                V[k] = f32(0.9 * V[k] - lr * G[k])
                P[k] = f32(P[k] + V[k])
    acc = float((forward(X[test])[0].argmax(1) == y[test]).mean())
    return P, X, y, train, test, acc


def m_digits():
    P, X, y, train, test, acc = train_digits()
    n = Net('digits_cnn', 'int8', 'per-channel', 28,
            'Small CNN trained here (numpy SGD) on sklearn\'s 8x8 digits: Conv 3x3 8 + Relu, MaxPool 2, '
            'Conv 3x3 16 + Relu, MaxPool 2, Flatten, Gemm 10 (logits); int8, per-channel weights. Test set '
            'saved beside it.')
    x = n.input([1, 1, 8, 8], None)
    x = n.maxpool(n.conv(x, 8, 3, w=P['w1'], b=P['b1']), 2)
    x = n.maxpool(n.conv(x, 16, 3, w=P['w2'], b=P['b2']), 2)
    x = n.flatten(x)
    n.output(n.gemm(x, 10, w=P['w3'], b=P['b3']))
    n.calib = X[train[:200]][:, None]            # N x 1 x 1 x 8 x 8
    n.samples = [[X[test[0]][None]], [X[test[1]][None]]]
    n.test_x, n.test_y = X[test], y[test]
    n.extra['float_test_accuracy'] = round(acc, 4)
    return n


MODELS = {'conv_s8': m_conv_s8, 'conv_u8': m_conv_u8, 'ops_s8': m_ops_s8, 'ops_u8': m_ops_u8, 'ops2_s8': m_ops2_s8, 'ops2_u8': m_ops2_u8, 'multi_io': m_multi_io,
          'conv_s8_extdata': m_conv_s8_extdata, 'conv_u8_symbatch': m_conv_u8_symbatch,
          'dscnn': m_dscnn,
          'resnet8': m_resnet8, 'mobilenet_v1_025': m_mobilenet, 'autoencoder': m_autoencoder,
          'digits_cnn': m_digits, 'inception': m_inception, 'inception_shared': m_inception_shared, 'unet': m_unet,
          'unet_shared': m_unet_shared, 'unet_convt': m_unet_convt,
          'chain50': m_chain50,
          'padfold_s8': m_padfold, 'padfold_u8': lambda: m_padfold('padfold_u8', 'uint8', 32)}
for _op in ('sigmoid', 'tanh', 'leakyrelu', 'softmax', 'add', 'mul', 'concat', 'avgpool', 'gap'):
    for _act in ('int8', 'uint8'):
        MODELS[f'unit_{_op}_{"s8" if _act == "int8" else "u8"}'] = (lambda o, a: lambda: unit(o, a))(_op, _act)


# ----------------------------------------------------------------------------
def save(model, path, external=False):
    onnx.checker.check_model(model, full_check=True)
    if external:
        data = path + '.data'
        if os.path.exists(data):
            os.remove(data)   # onnx appends to an existing external data file
        onnx.save(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
                  location=os.path.basename(path) + '.data', size_threshold=128)
        onnx.checker.check_model(path, full_check=True)
    else:
        onnx.save(model, path)
    size = os.path.getsize(path)
    assert size < 1_100_000, f'{path}: {size} bytes'
    return size


def write_json_atomic(path, obj):
    tmp = path + '.tmp'
    with open(tmp, 'w') as f:
        json.dump(obj, f, indent=1)
        f.write('\n')
    os.replace(tmp, path)


GROUPS = {'dscnn': 'mlperf', 'resnet8': 'mlperf', 'mobilenet_v1_025': 'mlperf', 'autoencoder': 'mlperf',
          'digits_cnn': 'trained', 'inception': 'branchy', 'inception_shared': 'branchy', 'unet': 'branchy', 'unet_shared': 'branchy', 'unet_convt': 'branchy', 'chain50': 'deep'}


def build(fn):
    net = fn()
    net.group = GROUPS.get(net.name, net.group)
    stats = calibrate(net)
    quantize(net, stats)
    fig = figures(net)
    name = net.name
    # sample inputs
    samples = sample_inputs(net)
    sample_files = []
    for i, s in enumerate(samples):
        files = []
        for j, (t, arr) in enumerate(zip(net.inputs, s)):
            fname = f'{name}.input_{j}.npy' if i == 0 else f'{name}.sample{i}.input_{j}.npy'
            np.save(os.path.join(HERE, fname), f32(arr).reshape(net.shape[t]))
            files.append(fname)
        sample_files.append(files)
    extra = dict(net.extra)
    if hasattr(net, 'test_x'):
        np.save(os.path.join(HERE, f'{name}.test_x.npy'), f32(net.test_x))
        np.save(os.path.join(HERE, f'{name}.test_y.npy'), net.test_y.astype(np.int64))
        extra['test_set'] = {'x': f'{name}.test_x.npy', 'y': f'{name}.test_y.npy', 'count': len(net.test_y)}
    entries = []
    sizes = {}
    for form, maker in (('qdq', qdq_model), ('qop', qop_model)):
        m = maker(net)
        fname = f'{name}.{form}.onnx'
        sizes[form] = save(m, os.path.join(HERE, fname), net.external_data)
        twin = f'{name}.{"qop" if form == "qdq" else "qdq"}.onnx'
        e = {
            'name': name, 'file': fname, 'form': form, 'twin': twin,
            'activations': net.act, 'weights': net.wmode,
            'weight_bits': 7 if net.wmax == 63 else 8,
            'group': net.group,
            'description': net.description,
            'samples': [{'inputs': sf, 'expected': [
                f'{name}.{form}.output_{k}.npy' if i == 0 else f'{name}.{form}.sample{i}.output_{k}.npy'
                for k in range(len(net.outputs))]}
                for i, sf in enumerate(sample_files)],
            'inputs': [{'name': in_name(j), 'shape': net.shape[t], 'dtype': 'float32',
                        'scale': float(net.qp[t][0]), 'zero_point': int(net.qp[t][1])}
                       for j, t in enumerate(net.inputs)],
            'outputs': [{'name': out_name(i), 'shape': net.shape[t], 'dtype': 'float32',
                         'scale': float(net.qp[t][0]), 'zero_point': int(net.qp[t][1])}
                        for i, t in enumerate(net.outputs)],
            'output_scales': [float(net.qp[t][0]) for t in net.outputs],
            'figures': dict(fig, file_bytes=sizes[form]),
        }
        if net.external_data:
            e['external_data'] = [fname + '.data']
        if net.symbolic_batch:
            e['symbolic_batch'] = 'N'
        e.update(extra)
        entries.append(e)
    return net, entries


def main():
    only = set(sys.argv[1:])
    path = os.path.join(HERE, 'manifest.json')
    old = {}
    if os.path.exists(path):
        with open(path) as f:
            for e in json.load(f).get('models', []):
                old[e['file']] = e
    entries = []
    print(f'{"model":18} {"act":5} {"weights":11} {"layers":>6} {"params":>8} {"MACs":>10} '
          f'{"max act B":>9} {"qdq B":>8} {"qop B":>8}')
    unknown = only - set(MODELS)
    if unknown:
        sys.exit(f'unknown model(s): {sorted(unknown)}; known: {list(MODELS)}')
    for key, fn in MODELS.items():
        if only and key not in only:
            continue   # keep the previous entries of models not rebuilt
        net, es = build(fn)
        assert net.name == key
        f = es[0]['figures']
        print(f'{net.name:18} {net.act:5} {net.wmode:11} {f["layers"]:6d} {f["params"]:8d} {f["macs"]:10d} '
              f'{f["largest_activation_bytes"]:9d} {es[0]["figures"]["file_bytes"]:8d} '
              f'{es[1]["figures"]["file_bytes"]:8d}', flush=True)
        entries += es
    if only:
        built = {e['file'] for e in entries}
        entries = [e for e in old.values() if e['file'] not in built] + entries
        order = {k: i for i, k in enumerate(MODELS)}
        entries.sort(key=lambda e: (order.get(e['name'], 99), e['form']))
    write_json_atomic(path, {'models': entries})
    print(f'wrote {len(entries)} entries to manifest.json')


if __name__ == '__main__':
    main()
