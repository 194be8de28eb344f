"""Random quantized ONNX graphs for differential testing against ONNX Runtime.

A Net is a random DAG of quantized layers (every tensor int8 or uint8 with its own scale and
zero point). It is written in two forms with identical integers and parameters:

  qop(net)  QLinear* operators (ONNX + com.microsoft), integer data movement;
  qdq(net)  float operators between DequantizeLinear and QuantizeLinear.

What ONNX Runtime computes on the QOperator form with its integer kernels is what tightfit must
produce, bit for bit, from either form. bound(net) is the largest difference in output LSBs
that ONNX Runtime's float path on the QDQ form may show against the integer result: every
requantizing layer may round one LSB the other way (float rounding near a .5), and an earlier
difference grows by the layer's gain. docs/hardening.md documents the distributions below.
"""
import math
import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'models'))
import make_models  # noqa: E402  (the test models' graph writer)

MS = 'com.microsoft'
QRANGE = {'int8': (-128, 127), 'uint8': (0, 255)}
NP_OF = {'int8': np.int8, 'uint8': np.uint8}
ONNX_OF = {'int8': TensorProto.INT8, 'uint8': TensorProto.UINT8}

# Operator -> relative frequency when a layer is drawn (docs/hardening.md lists them).
OPS = {
    'conv': 14, 'dwconv': 5, 'gemm': 5, 'matmul': 4, 'add': 7, 'mul': 5, 'maxpool': 4, 'avgpool': 4,
    'gap': 3, 'leakyrelu': 3, 'sigmoid': 3, 'tanh': 3, 'softmax': 3, 'concat': 6, 'reshape': 3,
    'flatten': 2, 'squeeze': 1, 'unsqueeze': 1, 'transpose': 3, 'pad': 3, 'resize': 3, 'relu': 2,
    'clip': 2, 'requantize': 2, 'convinteger': 2, 'matmulinteger': 2, 'reducemean': 3, 'sub': 4, 'div': 2,
    'slice': 3, 'split': 2, 'convtranspose': 3, 'shuffle': 2,
}
# ConvInteger / MatMulInteger: an int32 accumulator, requantized by DequantizeLinear (scale
# x_scale * w_scale, zero point 0) and QuantizeLinear, the same in both forms.
INTEGER_LAYERS = {'convinteger': 'ConvInteger', 'matmulinteger': 'MatMulInteger'}
# Layers that only move or select integers: the output keeps the input's quantization.
DATA_MOVEMENT = {'maxpool', 'reshape', 'flatten', 'squeeze', 'unsqueeze', 'transpose', 'pad', 'resize', 'slice', 'split',
                 'shuffle'}
# More layers ONNX Runtime has no QLinear kernel for (as Tanh): float between DequantizeLinear and
# QuantizeLinear in both forms (ORT's float path is then the exact target).
FLOAT_ONLY = {'reducemean', 'sub', 'div'}
# Layers ONNX Runtime has no QLinear kernel for and whose float path tightfit does not follow
# operation for operation: the QDQ form only; the QOperator twin computes the same integers with
# ORT's integer kernels some other way (qop_conv_transpose), which tightfit does not read.
QDQ_ONLY = {'convtranspose'}
MAX_ELEMENTS = 4096  # per tensor, so that a model runs in milliseconds


def f32(x):
    return np.asarray(x, dtype=np.float32)


class Tensor:
    def __init__(self, shape, scale, zp):
        self.shape = [int(d) for d in shape]
        self.scale = float(np.float32(scale))
        self.zp = int(zp)


class Net:
    """Layers in topological order; every layer writes one tensor named by `out`."""

    def __init__(self, dtype, seed):
        self.dtype = dtype
        self.seed = seed
        self.wmax = 127 if dtype == 'int8' else 63  # uint8 x int8 without VNNI: 7-bit weights
        self.per_channel = False  # Conv and Gemm weights scaled per output channel
        self.tensors = {}
        self.layers = []
        self.inputs = []   # (name, 'float' | 'int')
        self.outputs = []  # (name, 'float' | 'int')

    def qmin(self):
        return QRANGE[self.dtype][0]

    def qmax(self):
        return QRANGE[self.dtype][1]


# ----------------------------------------------------------------------------
# Random choices
# ----------------------------------------------------------------------------
class Draw:
    def __init__(self, rng, dtype):
        self.rng = rng
        self.dtype = dtype

    def chance(self, p):
        return self.rng.random() < p

    def pick(self, items, weights=None):
        if weights is not None:
            w = np.asarray(weights, float)
            return items[int(self.rng.choice(len(items), p=w / w.sum()))]
        return items[int(self.rng.integers(len(items)))]

    def int(self, lo, hi):
        return int(self.rng.integers(lo, hi + 1))

    def zero_point(self):
        lo, hi = QRANGE[self.dtype]
        r = self.rng.random()
        if r < 0.1:
            return lo
        if r < 0.2:
            return hi
        if r < 0.4:
            return 0 if self.dtype == 'int8' else 128
        return self.int(lo, hi)

    def scale(self, typical):
        """A scale near `typical` (the range to cover / 255): a power of two 20% of the time (exact
        .5 ties after rescaling), else a random factor; 5% far off either way (saturation, or a few
        levels only)."""
        r = self.rng.random()
        if r < 0.05:
            typical *= 2.0 ** self.rng.uniform(-12, -3)
        elif r < 0.1:
            typical *= 2.0 ** self.rng.uniform(3, 10)
        else:
            typical *= 2.0 ** self.rng.uniform(-1.5, 1.5)
        typical = min(max(typical, 1e-6), 1e4)
        if self.chance(0.2):
            return float(2.0 ** np.round(np.log2(typical)))
        return float(np.float32(typical))

    def channels(self):
        return self.pick([1, 2, 3, 4, 5, 7, 8, 9, 12, 16, 17, 24, 32], [2, 3, 4, 3, 2, 2, 3, 1, 1, 2, 1, 1, 1])

    def spatial(self):
        return self.pick([1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 16], [3, 2, 2, 3, 2, 1, 2, 3, 1, 1, 1, 1])


def elements(shape):
    return int(np.prod(shape)) if shape else 1


def real_range(net, t):
    """The largest |real value| tensor t can hold."""
    T = net.tensors[t]
    return max(abs(net.qmin() - T.zp), abs(net.qmax() - T.zp)) * T.scale



# ----------------------------------------------------------------------------
# Generation
# ----------------------------------------------------------------------------
def generate(seed, ops=None, min_layers=1, max_layers=30, float_images=False):
    """A random Net from `seed`; `ops` limits the layers drawn (default: every kind of OPS);
    float_images: every 4-D graph input is float (the firmware of `tightfit run --target` takes an
    integer input only in ONNX's layout, and tightfit keeps images channels-last)."""
    rng = np.random.default_rng(seed)
    dtype = 'int8' if rng.random() < 0.5 else 'uint8'
    net = Net(dtype, seed)
    d = Draw(rng, dtype)
    net.per_channel = d.chance(0.5)
    kinds = [k for k in OPS if ops is None or k in ops]
    weights = [OPS[k] for k in kinds]
    pool = []  # tensor names that layers may read
    for i in range(d.pick([1, 2, 3], [6, 3, 1])):
        add_input(net, d, pool, i, float_images)
    target = d.int(min_layers, max_layers)
    attempts = 0
    while len(net.layers) < target and attempts < target * 40:
        attempts += 1
        op = d.pick(kinds, weights)
        x = pick_input(net, d, pool)
        out = GENERATORS[op](net, d, x, pool)
        if out is not None:
            pool.append(out)
    # Outputs: every tensor nothing reads (so that no layer is dead), at least one.
    read = {t for L in net.layers for t in L['ins']}
    leaves = [L['out'] for L in net.layers if L['out'] not in read]
    if not leaves:
        leaves = [net.inputs[0][0]]
    for t in leaves:
        net.outputs.append((t, 'float' if d.chance(0.6) else 'int'))
    # An unread graph input would be refused by nothing but tested by nothing: read it.
    for name, _ in net.inputs:
        if name not in read and name not in [o for o, _ in net.outputs]:
            net.outputs.append((name, 'int'))
    return net


def add_input(net, d, pool, i, float_images):
    name = f'in{i}'
    if d.chance(0.8):
        shape = [1 if d.chance(0.9) else 2, d.channels(), d.spatial(), d.spatial()]
    else:
        shape = [1, d.pick([1, 3, 8, 10, 16, 33, 64])]
    while elements(shape) > MAX_ELEMENTS:
        shape[-1] = max(1, shape[-1] // 2)
    net.tensors[name] = Tensor(shape, d.scale(4.0 / 255), d.zero_point())
    net.inputs.append((name, 'float' if d.chance(0.7) or (float_images and len(shape) == 4) else 'int'))
    pool.append(name)


def pick_input(net, d, pool):
    """The newest tensor most of the time (chains), an older one otherwise (branches, skips);
    tensors nothing reads yet are preferred so that few outputs remain."""
    read = {t for L in net.layers for t in L['ins']}
    if d.chance(0.6):
        return pool[-1]
    unread = [t for t in pool if t not in read]
    if unread and d.chance(0.6):
        return d.pick(unread)
    return d.pick(pool)


def new_tensor(net, shape, scale, zp):
    name = f't{len(net.layers)}'
    net.tensors[name] = Tensor(shape, scale, zp)
    return name


def layer(net, op, ins, shape, scale, zp, **attrs):
    if elements(shape) > MAX_ELEMENTS or min(shape) < 1:
        return None
    out = new_tensor(net, shape, scale, zp)
    net.layers.append(dict(op=op, ins=list(ins), out=out, **attrs))
    return out


def activation(d):
    """A Relu or Clip fused after the layer (QDQ: the float op before QuantizeLinear)."""
    r = d.rng.random()
    if r < 0.2:
        return ('relu',)
    if r < 0.3:
        lo = float(np.float32(d.rng.uniform(-2, 0.5)))
        return ('clip', lo, float(np.float32(lo + d.rng.uniform(0.1, 6))))
    return None


def weight_params(net, d, w_shape, per_channel, activation_type=False):
    """Weights (w - zero point uniform in [-wmax, wmax], or all at the two ends 20% of the time),
    their scales, and one zero point: 0 on int8 weights (70%), else (always with activation_type)
    weights of the activations' type and a zero point away from 0 (uint8: [63, 192]; int8:
    [-64, 63])."""
    w = d.rng.integers(-net.wmax, net.wmax + 1, size=w_shape)
    if d.chance(0.2):  # weights at the extremes
        w = np.where(d.rng.random(w_shape) < 0.5, net.wmax, -net.wmax)
    if per_channel:
        ws = np.array([d.scale(1.0 / 128) for _ in range(w_shape[0])], np.float32)
    else:
        ws = np.array(d.scale(1.0 / 128), np.float32)
    wtype, wz = 'int8', 0
    if d.chance(0.3) or activation_type:
        wtype = net.dtype
        wz = d.int(63, 192) if wtype == 'uint8' else d.int(-64, 63)
    lo, hi = QRANGE[wtype]
    return np.clip(w + wz, lo, hi).astype(NP_OF[wtype]), ws, wz


def acc_scale(net, x, ws, fan_in):
    """A typical output scale for an accumulation of `fan_in` products."""
    T = net.tensors[x]
    spread = (net.qmax() - net.qmin()) / 4.0
    return T.scale * float(np.max(ws)) * spread * net.wmax / 2 * np.sqrt(fan_in) / 128.0


def gen_conv(net, d, x, pool, depthwise=False, op='conv'):
    s = net.tensors[x].shape
    if len(s) != 4:
        return None
    n, c, h, w = s
    group = c if depthwise else (d.pick([g for g in range(2, c + 1) if c % g == 0]) if c > 1 and d.chance(0.15) else 1)
    cout = c * d.pick([1, 1, 2]) if depthwise else (d.channels() // group + 1) * group if group > 1 else d.channels()
    kh = d.pick([1, 2, 3, 5], [4, 1, 5, 1])
    kw = kh if d.chance(0.8) else d.pick([1, 2, 3])
    sh = d.pick([1, 2, 3, 4], [8, 4, 1, 1])
    sw = sh if d.chance(0.8) else d.pick([1, 2, 3])
    dil = d.pick([1, 2], [9, 1])
    attrs = dict(kernel_shape=[kh, kw], strides=[sh, sw], group=group)
    if dil > 1:
        attrs['dilations'] = [dil, dil]
    ekh, ekw = dil * (kh - 1) + 1, dil * (kw - 1) + 1
    if d.chance(0.15):
        # ONNX Runtime has no dilation with SAME_*
        attrs['auto_pad'] = d.pick(['SAME_UPPER', 'SAME_LOWER', 'VALID'] if dil == 1 else ['VALID'])
        if attrs['auto_pad'] == 'VALID':
            ho, wo = (h - ekh) // sh + 1, (w - ekw) // sw + 1
        else:
            ho, wo = -(-h // sh), -(-w // sw)
    else:
        pads = [d.int(0, max(0, ekh - 1)), d.int(0, max(0, ekw - 1)), d.int(0, max(0, ekh - 1)),
                d.int(0, max(0, ekw - 1))]
        if d.chance(0.4):
            pads = [ekh // 2, ekw // 2, ekh // 2, ekw // 2]
        attrs['pads'] = pads
        ho = (h + pads[0] + pads[2] - ekh) // sh + 1
        wo = (w + pads[1] + pads[3] - ekw) // sw + 1
    if ho < 1 or wo < 1:
        return None
    if op == 'convinteger' and net.dtype != 'uint8':
        return None  # ONNX Runtime's ConvInteger: uint8 only
    w_q, ws, wz = weight_params(net, d, [cout, c // group, kh, kw], net.per_channel and op == 'conv',
                                activation_type=op == 'convinteger')
    fan_in = (c // group) * kh * kw
    bias = None
    if op == 'convinteger':
        return layer(net, op, [x], [n, cout, ho, wo], d.scale(acc_scale(net, x, ws, fan_in)), d.zero_point(),
                     attrs=attrs, w=w_q, ws=ws, wz=wz, act=None)
    if d.chance(0.85):
        bias = d.rng.integers(-1, 2, size=cout) * d.rng.integers(0, 1 << d.int(0, 14), size=cout)
        bias = bias.astype(np.int32)
    return layer(net, 'conv', [x], [n, cout, ho, wo], d.scale(acc_scale(net, x, ws, fan_in)), d.zero_point(),
                 attrs=attrs, w=w_q, ws=ws, wz=wz, b=bias, act=activation(d))


def gen_convtranspose(net, d, x, pool):
    """ConvTranspose, one group: kernel 1-4 (2x2 stride 2 as U-Net decoders), strides 1-3, pads up to
    the kernel's extent - 1, output_padding below the stride, now and then a dilation of 2; weights
    [C_in, C_out, kh, kw], per channel along axis 1."""
    s = net.tensors[x].shape
    if len(s) != 4:
        return None
    n, c, h, w = s
    cout = d.channels()
    if d.chance(0.4):
        kh = kw = sh = sw = 2
    else:
        kh = d.pick([1, 2, 3, 4], [2, 3, 4, 1])
        kw = kh if d.chance(0.8) else d.pick([1, 2, 3])
        sh = d.pick([1, 2, 3], [3, 5, 1])
        sw = sh if d.chance(0.8) else d.pick([1, 2, 3])
    dil = d.pick([1, 2], [9, 1])
    ekh, ekw = dil * (kh - 1) + 1, dil * (kw - 1) + 1
    pads = [0, 0, 0, 0]
    if d.chance(0.5):
        pads = [d.int(0, ekh - 1), d.int(0, ekw - 1), d.int(0, ekh - 1), d.int(0, ekw - 1)]
    out_pad = [0, 0]
    if d.chance(0.3):
        # Below the stride. ONNX also allows it below the dilation, but there ONNX Runtime's float
        # ConvTranspose puts input-derived values in the padded rows, against the operator's
        # definition (docs/hardening.md, "ONNX Runtime off the definition"), and it is the reference.
        out_pad = [d.int(0, sh - 1), d.int(0, sw - 1)]
    ho = sh * (h - 1) + out_pad[0] + ekh - pads[0] - pads[2]
    wo = sw * (w - 1) + out_pad[1] + ekw - pads[1] - pads[3]
    if ho < 1 or wo < 1:
        return None
    attrs = dict(kernel_shape=[kh, kw], strides=[sh, sw], pads=pads)
    if dil > 1:
        attrs['dilations'] = [dil, dil]
    if out_pad != [0, 0]:
        attrs['output_padding'] = out_pad
    w_q, ws, wz = weight_params(net, d, [cout, c, kh, kw], net.per_channel)
    w_q = np.ascontiguousarray(w_q.transpose(1, 0, 2, 3))  # ONNX's [C_in, C_out, kh, kw]
    taps = max(1, -(-kh // sh)) * max(1, -(-kw // sw))  # the most taps that reach one output
    bias = None
    if d.chance(0.85):
        bias = (d.rng.integers(-1, 2, size=cout) * d.rng.integers(0, 1 << d.int(0, 14), size=cout)).astype(np.int32)
    return layer(net, 'convtranspose', [x], [n, cout, ho, wo], d.scale(acc_scale(net, x, ws, c * taps)), d.zero_point(),
                 attrs=attrs, w=w_q, ws=ws, wz=wz, b=bias, act=activation(d))


def gen_dwconv(net, d, x, pool):
    return gen_conv(net, d, x, pool, depthwise=True)


def gen_gemm(net, d, x, pool):
    s = net.tensors[x].shape
    if len(s) != 2:
        return None
    n, k = s
    m = d.pick([1, 2, 3, 5, 8, 10, 16, 31, 32])
    w_q, ws, wz = weight_params(net, d, [m, k], net.per_channel)
    bias = (d.rng.integers(-2000, 2001, size=m)).astype(np.int32) if d.chance(0.85) else None
    return layer(net, 'gemm', [x], [n, m], d.scale(acc_scale(net, x, ws, k)), d.zero_point(), w=w_q, ws=ws, wz=wz, b=bias,
                 act=activation(d))


def gen_convinteger(net, d, x, pool):
    return gen_conv(net, d, x, pool, op='convinteger')


def gen_matmul(net, d, x, pool, op='matmul'):
    s = net.tensors[x].shape
    if len(s) not in (2, 3):  # tightfit: a fully connected layer on 2-D or 3-D inputs
        return None
    k = s[-1]
    m = d.pick([1, 2, 3, 4, 7, 8, 16])
    w_q, ws, wz = weight_params(net, d, [k, m], False)
    return layer(net, op, [x], s[:-1] + [m], d.scale(acc_scale(net, x, ws, k)), d.zero_point(), w=w_q, ws=ws, wz=wz,
                 act=None)


def gen_matmulinteger(net, d, x, pool):
    return gen_matmul(net, d, x, pool, op='matmulinteger')


def broadcast_partner(net, d, x, pool):
    """Another tensor of the pool whose shape broadcasts onto x's, or x itself."""
    s = net.tensors[x].shape
    # same rank: tightfit refuses a lower-rank activation broadcast onto a 4-D one (a constant may be)
    fits = [t for t in pool if t != x and len(net.tensors[t].shape) == len(s) and
            all(a == b or a == 1 for a, b in zip(net.tensors[t].shape[::-1], s[::-1]))]
    if fits and d.chance(0.7):
        return d.pick(fits)
    return x


def const_operand(net, d, x):
    """A constant second operand: same shape, per channel [1,C,1,1], a row, or one value."""
    s = net.tensors[x].shape
    choices = [list(s), [1] * len(s), [s[-1]]]
    if len(s) == 4:
        choices.append([1, s[1], 1, 1])
    shape = d.pick(choices)
    v = d.rng.integers(net.qmin(), net.qmax() + 1, size=shape).astype(NP_OF[net.dtype])
    return dict(value=v, scale=d.scale(real_range(net, x) / 128), zp=d.zero_point())


def gen_add(net, d, x, pool, op='add'):
    s = net.tensors[x].shape
    const = None
    if d.chance(0.25):
        const = const_operand(net, d, x)
        ins = [x]
        range_b = max(abs(net.qmin() - const['zp']), abs(net.qmax() - const['zp'])) * const['scale']
    else:
        b = broadcast_partner(net, d, x, pool)
        ins = [x, b] if d.chance(0.5) else [b, x]
        range_b = real_range(net, b)
    range_a = real_range(net, x)
    span = range_a * range_b if op == 'mul' else range_a + range_b
    return layer(net, op, ins, s, d.scale(span / 255 * 1.2), d.zero_point(), const=const,
                 act=activation(d) if op in ('add', 'sub') else None)


def gen_mul(net, d, x, pool):
    return gen_add(net, d, x, pool, op='mul')


def gen_sub(net, d, x, pool):
    return gen_add(net, d, x, pool, op='sub')


def gen_div(net, d, x, pool):
    """A division by one constant: a float [1] (30%) or a dequantized scalar of the net's type, of
    magnitude about 1/4 to 8, either sign."""
    s = net.tensors[x].shape
    if d.chance(0.3):
        divisor = dict(value=float(np.float32(d.rng.uniform(0.25, 8) * d.pick([1, -1]))))
    else:
        zp = d.zero_point()
        q = zp
        while q == zp:
            q = d.int(net.qmin(), net.qmax())
        scale = float(np.float32(d.rng.uniform(0.25, 8) / abs(q - zp)))
        divisor = dict(q=q, zp=zp, scale=scale, value=float(np.float32(q - zp) * np.float32(scale)))
    return layer(net, 'div', [x], s, d.scale(real_range(net, x) / abs(divisor['value']) / 128), d.zero_point(),
                 divisor=divisor)


def gen_reducemean(net, d, x, pool):
    """ReduceMean over H and W of a 4-D tensor (half the time: tightfit's GlobalAveragePool), or
    over a random non-empty set of axes; keepdims 0 or 1."""
    s = net.tensors[x].shape
    if len(s) == 4 and d.chance(0.5):
        axes = [2, 3]
    else:
        axes = sorted(set(d.int(0, len(s) - 1) for _ in range(d.int(1, len(s)))))
    keepdims = d.pick([0, 1])
    if not keepdims and len(axes) == len(s):
        keepdims = 1  # no scalar tensors
    shape = [1 if i in axes else v for i, v in enumerate(s) if keepdims or i not in axes]
    onnx_axes = [a - len(s) if d.chance(0.3) else a for a in axes]  # negative axes too
    return layer(net, 'reducemean', [x], shape, d.scale(real_range(net, x) / 128), d.zero_point(), axes=onnx_axes,
                 keepdims=keepdims)


def gen_slice(net, d, x, pool):
    """A box of x (steps 1) on one or two axes; bounds negative, past the end (clamped) or plain."""
    s = net.tensors[x].shape
    axes = [a for a in range(len(s)) if s[a] >= 2]
    if not axes:
        return None
    if len(s) == 4 and 1 in axes and d.chance(0.5):
        chosen = [1]  # a channel slice
    else:
        chosen = sorted(set(d.pick(axes) for _ in range(d.pick([1, 2]))))
    starts, ends, shape = [], [], list(s)
    for a in chosen:
        begin = d.int(0, s[a] - 1)
        end = d.int(begin + 1, s[a])
        shape[a] = end - begin
        starts.append(begin - s[a] if d.chance(0.3) else begin)
        ends.append(end - s[a] if end < s[a] and d.chance(0.3) else (1000 if end == s[a] and d.chance(0.3) else end))
    return keep_quant(net, 'slice', x, shape, starts=starts, ends=ends, axes=chosen)


def gen_shuffle(net, d, x, pool):
    """ShuffleNet's channel shuffle: Reshape [N, C, H, W] -> [N, g, C/g, H, W], Transpose
    [0, 2, 1, 3, 4], Reshape back."""
    s = net.tensors[x].shape
    if len(s) != 4:
        return None
    groups = [g for g in range(2, s[1] + 1) if s[1] % g == 0]
    if not groups:
        return None
    return keep_quant(net, 'shuffle', x, list(s), groups=d.pick(groups))


def gen_split(net, d, x, pool):
    """Split in 2 or 3 parts (equal, or sizes given by the split input); the layer's tensor is one
    of them, the others go unread."""
    s = net.tensors[x].shape
    axis = 1 if len(s) == 4 and d.chance(0.6) else d.int(0, len(s) - 1)
    parts = d.pick([2, 3])
    if s[axis] < parts:
        return None
    if s[axis] % parts == 0 and d.chance(0.5):
        sizes = None
        size_list = [s[axis] // parts] * parts
    else:
        cuts = sorted(d.rng.choice(np.arange(1, s[axis]), size=parts - 1, replace=False).tolist())
        size_list = [b - a for a, b in zip([0] + cuts, cuts + [s[axis]])]
        sizes = size_list
    k = d.int(0, parts - 1)
    shape = list(s)
    shape[axis] = size_list[k]
    return keep_quant(net, 'split', x, shape, axis=axis, sizes=sizes, parts=parts, index=k)


def pool_attrs(d, h, w, ceil_allowed):
    kh = d.pick([1, 2, 3, 4], [1, 4, 4, 1])
    kw = kh if d.chance(0.8) else d.pick([1, 2, 3])
    sh = d.pick([1, 2, 3, 5], [3, 5, 2, 1])
    sw = sh if d.chance(0.8) else d.pick([1, 2, 3])
    pads = [d.int(0, kh - 1), d.int(0, kw - 1), d.int(0, kh - 1), d.int(0, kw - 1)] if d.chance(0.4) else [0, 0, 0, 0]
    ceil = 1 if ceil_allowed and d.chance(0.3) else 0
    dims = []
    for size, k, s, pb, pe in ((h, kh, sh, pads[0], pads[2]), (w, kw, sw, pads[1], pads[3])):
        span = size + pb + pe - k
        if span < 0:
            return None
        o = (-(-span // s) if ceil else span // s) + 1
        # ceil_mode where the last window would start in the end padding: conventions differ
        if ceil and (o - 1) * s >= size + pb:
            return None
        dims.append(o)
    attrs = dict(kernel_shape=[kh, kw], strides=[sh, sw], pads=pads)
    if ceil:
        attrs['ceil_mode'] = 1
    return attrs, dims


def gen_maxpool(net, d, x, pool, op='maxpool'):
    s = net.tensors[x].shape
    if len(s) != 4:
        return None
    got = pool_attrs(d, s[2], s[3], op == 'avgpool')
    if got is None:
        return None
    attrs, (ho, wo) = got
    T = net.tensors[x]
    if op == 'maxpool':
        return layer(net, op, [x], s[:2] + [ho, wo], T.scale, T.zp, attrs=attrs)
    attrs['count_include_pad'] = d.pick([0, 1])
    return layer(net, op, [x], s[:2] + [ho, wo], d.scale(real_range(net, x) / 128), d.zero_point(), attrs=attrs)


def gen_avgpool(net, d, x, pool):
    return gen_maxpool(net, d, x, pool, op='avgpool')


def gen_gap(net, d, x, pool):
    s = net.tensors[x].shape
    if len(s) != 4:
        return None
    return layer(net, 'gap', [x], s[:2] + [1, 1], d.scale(real_range(net, x) / 128), d.zero_point())


def gen_unary(net, d, x, op):
    s = net.tensors[x].shape
    if op == 'leakyrelu':
        return layer(net, op, [x], s, d.scale(real_range(net, x) / 128), d.zero_point(),
                     alpha=float(np.float32(d.pick([0.01, 0.1, 0.2, 0.5, d.rng.uniform(0.001, 0.99)]))))
    if op == 'tanh':
        return layer(net, op, [x], s, d.scale(1 / 128), d.zero_point())
    # sigmoid: output in (0, 1)
    if d.chance(0.6):
        scale, zp = 1 / 256, net.qmin()
    else:
        scale, zp = d.scale(1 / 256), d.zero_point()
    return layer(net, op, [x], s, scale, zp)


def gen_leakyrelu(net, d, x, pool):
    return gen_unary(net, d, x, 'leakyrelu')


def gen_sigmoid(net, d, x, pool):
    return gen_unary(net, d, x, 'sigmoid')


def gen_tanh(net, d, x, pool):
    return gen_unary(net, d, x, 'tanh')


def softmax_overflows(y_scale, row):
    """Whether e * floor(1 / y_scale) can overflow float in ORT's QLinearSoftmax over rows of `row`
    (1 % to spare for the table's rounding)."""
    f32max = np.finfo(np.float32).max
    top = math.exp(max(0.0, float(np.log(np.float32(f32max) / np.float32(row))) - 5.0))
    return top * float(np.floor(np.float32(1.0) / np.float32(y_scale))) > f32max * 0.99


def gen_softmax(net, d, x, pool):
    s = net.tensors[x].shape
    # tightfit runs softmax over the innermost axis in memory only (the last, or the channels of a
    # 4-D tensor kept channels-last); other axes are refused, so drawn rarely
    axis = (1 if len(s) == 4 else -1) if d.chance(0.8) else d.int(-len(s), len(s) - 1)
    if d.chance(0.6):
        scale, zp = 1 / 256, net.qmin()
    else:
        scale, zp = d.scale(1 / 256), d.zero_point()
    # ORT's QLinearSoftmax table leaves e^5 = 148 of headroom below FLT_MAX / row length, so with
    # floor(1 / y_scale) above about 148 x the row length a dominant element's e * floor(1 /
    # y_scale) overflows to inf and ORT's result is x86's cast of inf (the zero point, or -1),
    # which tightfit reproduces (kernel cases softmax_*_overflows*) but the QDQ form, saturating
    # a probability near 1, cannot: the QDQ model would differ from its QOperator twin, so such
    # scales are not drawn.
    row = s[axis]
    while softmax_overflows(scale, row):
        scale *= 2
    # A probability of 1.0 above the output's range on int8 (1/256, -128): ORT's QLinearSoftmax
    # wraps it to -128, the QDQ form saturates to 127 (tightfit follows each: kernel cases in
    # tests/runtime), so a QDQ model would differ from its QOperator twin by design: not drawn.
    if net.dtype == 'int8' and 1.0 / np.float32(scale) + zp > net.qmax():
        scale = 1 / 255.0 if zp == -128 else scale
        if 1.0 / np.float32(scale) + zp > net.qmax():
            zp = int(np.floor(net.qmax() - 1.0 / np.float32(scale)))
            if zp < net.qmin():
                return None
    return layer(net, 'softmax', [x], s, scale, zp, axis=axis)


def gen_concat(net, d, x, pool):
    s = net.tensors[x].shape
    axis = d.int(0, len(s) - 1) if d.chance(0.3) else (1 if len(s) > 1 else 0)
    fits = [t for t in pool if len(net.tensors[t].shape) == len(s) and
            all(a == b for i, (a, b) in enumerate(zip(net.tensors[t].shape, s)) if i != axis)]
    ins = [x] + [d.pick(fits) for _ in range(d.pick([1, 1, 2, 3]))]
    d.rng.shuffle(ins)
    shape = list(s)
    shape[axis] = sum(net.tensors[t].shape[axis] for t in ins)
    if d.chance(0.4):  # all inputs and the output share one quantization: a pure copy
        T = net.tensors[ins[0]]
        if all(net.tensors[t].scale == T.scale and net.tensors[t].zp == T.zp for t in ins):
            return layer(net, 'concat', ins, shape, T.scale, T.zp, axis=axis)
    span = max(real_range(net, t) for t in ins)
    return layer(net, 'concat', ins, shape, d.scale(span / 128), d.zero_point(), axis=axis)


def keep_quant(net, op, x, shape, **attrs):
    T = net.tensors[x]
    return layer(net, op, [x], shape, T.scale, T.zp, **attrs)


def gen_reshape(net, d, x, pool):
    s = net.tensors[x].shape
    n = elements(s)
    rank = d.pick([2, 3, 4])
    dims = [1] * rank
    rest = n
    for i in range(rank - 1):  # spread the prime factors of n over the dimensions
        divs = [k for k in range(1, rest + 1) if rest % k == 0]
        dims[i] = d.pick(divs)
        rest //= dims[i]
    dims[-1] = rest
    if d.chance(0.5):
        dims = [1] + dims[1:] if dims[0] != 1 and n % dims[0] == 0 else dims
        dims[-1] = n // elements(dims[:-1])
    if elements(dims) != n:
        return None
    target = list(dims)
    if d.chance(0.2):
        target[d.int(0, rank - 1)] = -1
    return keep_quant(net, 'reshape', x, dims, target=target)


def gen_flatten(net, d, x, pool):
    s = net.tensors[x].shape
    axis = 1 if d.chance(0.8) else d.int(0, len(s))
    return keep_quant(net, 'flatten', x, [elements(s[:axis]), elements(s[axis:])], axis=axis)


def gen_squeeze(net, d, x, pool):
    s = net.tensors[x].shape
    ones = [i for i, v in enumerate(s) if v == 1]
    if not ones or len(s) <= 1:
        return None
    axes = sorted(set(d.pick(ones) for _ in range(d.int(1, len(ones)))))
    if len(axes) == len(s):
        axes = axes[1:]
    return keep_quant(net, 'squeeze', x, [v for i, v in enumerate(s) if i not in axes], axes=axes)


def gen_unsqueeze(net, d, x, pool):
    s = net.tensors[x].shape
    if len(s) >= 4:
        return None
    axis = d.int(0, len(s))
    return keep_quant(net, 'unsqueeze', x, s[:axis] + [1] + s[axis:], axes=[axis])


def gen_transpose(net, d, x, pool):
    s = net.tensors[x].shape
    perm = list(d.rng.permutation(len(s)))
    if d.chance(0.5) and len(s) == 4:
        perm = d.pick([[0, 2, 3, 1], [0, 3, 1, 2], [0, 1, 3, 2]])
    return keep_quant(net, 'transpose', x, [s[p] for p in perm], perm=[int(p) for p in perm])


def gen_pad(net, d, x, pool):
    s = net.tensors[x].shape
    r = len(s)
    pads = [0] * (2 * r)
    for i in range(r):
        if i >= r - 2 or d.chance(0.15):
            pads[i], pads[i + r] = d.int(0, 2), d.int(0, 2)
    return keep_quant(net, 'pad', x, [s[i] + pads[i] + pads[i + r] for i in range(r)], pads=pads)


def gen_resize(net, d, x, pool):
    s = net.tensors[x].shape
    if len(s) != 4:
        return None
    fh = d.pick([1, 2, 3], [1, 4, 1])
    fw = fh if d.chance(0.8) else d.pick([1, 2, 3])
    ctm, mode = d.pick([('asymmetric', 'floor'), ('half_pixel', 'round_prefer_floor'),
                        ('half_pixel', 'round_prefer_ceil'), ('pytorch_half_pixel', 'round_prefer_floor')])
    return keep_quant(net, 'resize', x, [s[0], s[1], s[2] * fh, s[3] * fw], factors=[fh, fw], ctm=ctm,
                      nearest_mode=mode, by_sizes=d.chance(0.3))


def gen_relu(net, d, x, pool, op='relu'):
    """A Relu or Clip of its own between DequantizeLinear and QuantizeLinear (same quantization, or
    a new one: then a requantization with a clamp)."""
    T = net.tensors[x]
    same = d.chance(0.5)
    scale, zp = (T.scale, T.zp) if same else (d.scale(real_range(net, x) / 128), d.zero_point())
    if op == 'relu':
        return layer(net, 'relu', [x], T.shape, scale, zp, act=('relu',))
    # Clip bounds on the input's grid when the quantization stays (docs/operators.md: Clamp)
    lo_q, hi_q = sorted(d.int(net.qmin(), net.qmax()) for _ in range(2))
    lo, hi = (lo_q - T.zp) * T.scale, (hi_q - T.zp) * T.scale
    if not same:
        lo, hi = sorted([float(np.float32(d.rng.uniform(-3, 1))), float(np.float32(d.rng.uniform(-1, 3)))])
    return layer(net, 'clip', [x], T.shape, scale, zp, act=('clip', float(np.float32(lo)), float(np.float32(hi))))


def gen_clip(net, d, x, pool):
    return gen_relu(net, d, x, pool, op='clip')


def gen_requantize(net, d, x, pool):
    T = net.tensors[x]
    return layer(net, 'requantize', [x], T.shape, d.scale(real_range(net, x) / 128), d.zero_point())


GENERATORS = {
    'conv': gen_conv, 'dwconv': gen_dwconv, 'gemm': gen_gemm, 'matmul': gen_matmul, 'add': gen_add, 'mul': gen_mul,
    'maxpool': gen_maxpool, 'avgpool': gen_avgpool, 'gap': gen_gap, 'leakyrelu': gen_leakyrelu,
    'sigmoid': gen_sigmoid, 'tanh': gen_tanh, 'softmax': gen_softmax, 'concat': gen_concat, 'reshape': gen_reshape,
    'flatten': gen_flatten, 'squeeze': gen_squeeze, 'unsqueeze': gen_unsqueeze, 'transpose': gen_transpose,
    'pad': gen_pad, 'resize': gen_resize, 'relu': gen_relu, 'clip': gen_clip, 'requantize': gen_requantize,
    'convinteger': gen_convinteger, 'matmulinteger': gen_matmulinteger, 'reducemean': gen_reducemean,
    'sub': gen_sub, 'div': gen_div, 'slice': gen_slice, 'split': gen_split, 'convtranspose': gen_convtranspose,
    'shuffle': gen_shuffle,
}


def qdq_only(net):
    """True when tightfit is to read the net in the QDQ form only (a layer of QDQ_ONLY)."""
    return any(L['op'] in QDQ_ONLY for L in net.layers)
assert set(GENERATORS) == set(OPS)


# ----------------------------------------------------------------------------
# Inputs
# ----------------------------------------------------------------------------
def make_inputs(net, seed):
    """One array per graph input: integers uniform over the type's range (a fifth of the
    tensors all at one extreme), or floats around the quantization grid: every 8th value an exact
    .5 tie, some beyond the range (saturation)."""
    rng = np.random.default_rng(seed)
    arrays = []
    for name, kind in net.inputs:
        T = net.tensors[name]
        lo, hi = QRANGE[net.dtype]
        q = rng.integers(lo, hi + 1, size=T.shape)
        if rng.random() < 0.2:
            q = np.where(rng.random(T.shape) < 0.5, lo, hi)
        if kind == 'int':
            arrays.append(q.astype(NP_OF[net.dtype]))
            continue
        q = q + rng.integers(-3, 4, size=T.shape) * (rng.random(T.shape) < 0.05)
        frac = np.where(rng.random(T.shape) < 0.125, 0.5, rng.uniform(-0.5, 0.5, size=T.shape))
        arrays.append(f32((q - T.zp + frac) * T.scale))
    return arrays


# ----------------------------------------------------------------------------
# The two ONNX forms
# ----------------------------------------------------------------------------
class Graph(make_models.G):
    """The test models' graph writer (nodes, initializers by name) for one Net."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def qparams(self, t):
        return self.scale(t), self.zero_point(t)

    def tensor(self, t):
        return self.net.tensors[t[:-len('.pre')] if t.endswith('.pre') else t]

    def scale(self, t):
        return self.init(t + '.scale', np.float32(self.tensor(t).scale))

    def zero_point(self, t):
        return self.init(t + '.zp', np.array(self.tensor(t).zp, NP_OF[self.net.dtype]))

    def dq(self, t, out=None):
        out = out or t + '.dq'
        self.node('DequantizeLinear', [t, *self.qparams(t)], out)
        return out

    def q(self, src, t):
        self.node('QuantizeLinear', [src, *self.qparams(t)], t)

    def act(self, L, src, dst):
        """Relu / Clip of L's act on float tensor src, into dst."""
        a = L.get('act')
        if a[0] == 'relu':
            self.node('Relu', [src], dst)
        else:
            self.node('Clip', [src, self.init(L['out'] + '.lo', np.float32(a[1])),
                               self.init(L['out'] + '.hi', np.float32(a[2]))], dst)

    def weights(self, L, four_d=False):
        w = L['w'].reshape(L['w'].shape + (1, 1)) if four_d else L['w']
        ws = L['ws']
        return (self.init(L['out'] + '.w', w), self.init(L['out'] + '.w.scale', f32(ws)),
                self.init(L['out'] + '.w.zp', np.full(ws.shape, L['wz'], L['w'].dtype)))

    def bias_dq(self, L, x):
        """The int32 bias dequantized with scale x_scale * w_scale (QDQ form)."""
        y = L['out']
        bs = f32(np.float32(self.net.tensors[x].scale) * L['ws'])
        self.node('DequantizeLinear', [self.init(y + '.b', L['b']), self.init(y + '.b.scale', bs),
                                       self.init(y + '.b.zp', np.zeros(bs.shape, np.int32))], y + '.b.dq',
                  **({'axis': 0} if bs.ndim else {}))
        return y + '.b.dq'

    def model(self, doc):
        net = self.net
        ins = [helper.make_tensor_value_info(n + ('_f' if k == 'float' else ''),
                                             TensorProto.FLOAT if k == 'float' else ONNX_OF[net.dtype],
                                             net.tensors[n].shape) for n, k in net.inputs]
        outs = [helper.make_tensor_value_info(n + ('_f' if k == 'float' else '_out'),
                                              TensorProto.FLOAT if k == 'float' else ONNX_OF[net.dtype],
                                              net.tensors[n].shape) for n, k in net.outputs]
        graph = helper.make_graph(self.nodes, 'difftest', ins, outs, list(self.inits.values()))
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 13), helper.make_opsetid(MS, 1)],
                              producer_name='tightfit-difftest', doc_string=doc)
        m.ir_version = 7
        return m


def quantize_inputs(g):
    """Float graph inputs are quantized by QuantizeLinear; integer ones are read as they are."""
    for n, k in g.net.inputs:
        if k == 'float':
            g.q(n + '_f', n)


def finish_outputs(g):
    for n, k in g.net.outputs:
        if k == 'float':
            g.dq(n, n + '_f')
        else:
            g.node('Identity', [n], n + '_out')


def plain(g, L, xs, y):
    """Data movement and the ops written the same way on floats and on integers."""
    op, a = L['op'], L.get('attrs', {})
    if op == 'maxpool':
        g.node('MaxPool', xs, y, **a)
    elif op == 'reshape':
        g.node('Reshape', [xs[0], g.init(L['out'] + '.shape', np.array(L['target'], np.int64))], y)
    elif op == 'flatten':
        g.node('Flatten', xs, y, axis=L['axis'])
    elif op in ('squeeze', 'unsqueeze'):
        g.node(op.capitalize(), [xs[0], g.init(L['out'] + '.axes', np.array(L['axes'], np.int64))], y)
    elif op == 'transpose':
        g.node('Transpose', xs, y, perm=L['perm'])
    elif op == 'pad':
        return 'pad'
    elif op == 'slice':
        y0 = L['out']
        g.node('Slice', [xs[0], g.init(y0 + '.starts', np.array(L['starts'], np.int64)),
                         g.init(y0 + '.ends', np.array(L['ends'], np.int64)),
                         g.init(y0 + '.axes', np.array(L['axes'], np.int64))], y)
    elif op == 'shuffle':
        y0, (n, c, h, w) = L['out'], g.net.tensors[L['out']].shape
        k = L['groups']
        g.node('Reshape', [xs[0], g.init(y0 + '.shape5', np.array([n, k, c // k, h, w], np.int64))], y0 + '.s5')
        g.node('Transpose', [y0 + '.s5'], y0 + '.t5', perm=[0, 2, 1, 3, 4])
        g.node('Reshape', [y0 + '.t5', g.init(y0 + '.shape4', np.array([n, c, h, w], np.int64))], y)
    elif op == 'split':
        y0 = L['out']
        outs = [y if i == L['index'] else f'{y0}.part{i}' for i in range(L['parts'])]
        sizes = [g.init(y0 + '.split', np.array(L['sizes'], np.int64))] if L['sizes'] else []
        g.node('Split', [xs[0]] + sizes, outs, axis=L['axis'])
    elif op == 'resize':
        T = g.net.tensors[L['out']]
        if L['by_sizes']:
            ins = [xs[0], '', '', g.init(L['out'] + '.sizes', np.array(T.shape, np.int64))]
        else:
            ins = [xs[0], '', g.init(L['out'] + '.scales', f32([1, 1] + L['factors']))]
        g.node('Resize', ins, y, mode='nearest', coordinate_transformation_mode=L['ctm'],
               nearest_mode=L['nearest_mode'])
    else:
        raise ValueError(op)


def integer_layer(g, L):
    """ConvInteger / MatMulInteger, then DequantizeLinear of the int32 accumulator and
    QuantizeLinear: the same nodes in both forms."""
    x, y = L['ins'][0], L['out']
    w, _, wz = g.weights(L)
    g.node(INTEGER_LAYERS[L['op']], [x, w, g.zero_point(x), wz], y + '.acc', **L.get('attrs', {}))
    scale = np.float32(np.float32(g.tensor(x).scale) * L['ws'])
    g.node('DequantizeLinear', [y + '.acc', g.init(y + '.acc.scale', scale), g.init(y + '.acc.zp', np.int32(0))],
           y + '.f')
    g.q(y + '.f', y)


def qdq(net):
    g = Graph(net)
    quantize_inputs(g)
    for L in net.layers:
        op, y = L['op'], L['out']
        if op in INTEGER_LAYERS:
            integer_layer(g, L)
            continue
        xs = [g.dq(t, f'{y}.in{i}') for i, t in enumerate(L['ins'])]
        f = y + '.f'
        pre = y + '.pre' if L.get('act') else f
        a = L.get('attrs', {})
        if op == 'conv':
            wn, ws, wz = g.weights(L)
            g.node('DequantizeLinear', [wn, ws, wz], y + '.w.dq', **({'axis': 0} if L['ws'].ndim else {}))
            bias = [g.bias_dq(L, L['ins'][0])] if L['b'] is not None else []
            g.node('Conv', [xs[0], y + '.w.dq'] + bias, pre, **a)
        elif op == 'convtranspose':
            wn, ws, wz = g.weights(L)
            g.node('DequantizeLinear', [wn, ws, wz], y + '.w.dq', **({'axis': 1} if L['ws'].ndim else {}))
            bias = [g.bias_dq(L, L['ins'][0])] if L['b'] is not None else []
            g.node('ConvTranspose', [xs[0], y + '.w.dq'] + bias, pre, **a)
        elif op in ('gemm', 'matmul'):
            wn, ws, wz = g.weights(L)
            g.node('DequantizeLinear', [wn, ws, wz], y + '.w.dq', **({'axis': 0} if L['ws'].ndim else {}))
            if op == 'matmul':
                g.node('MatMul', [xs[0], y + '.w.dq'], pre)
            else:
                bias = [g.bias_dq(L, L['ins'][0])] if L['b'] is not None else []
                g.node('Gemm', [xs[0], y + '.w.dq'] + bias, pre, transB=1)
        elif op in ('add', 'mul', 'sub', 'reducemean', 'div'):
            float_op(g, L, xs, pre)
        elif op == 'avgpool':
            g.node('AveragePool', xs, pre, **a)
        elif op == 'gap':
            g.node('GlobalAveragePool', xs, pre)
        elif op in ('sigmoid', 'tanh'):
            g.node(op.capitalize(), xs, pre)
        elif op == 'leakyrelu':
            g.node('LeakyRelu', xs, pre, alpha=L['alpha'])
        elif op == 'softmax':
            g.node('Softmax', xs, pre, axis=L['axis'])
        elif op == 'concat':
            g.node('Concat', xs, pre, axis=L['axis'])
        elif op in ('relu', 'clip'):
            pre = xs[0]
        elif op == 'requantize':
            f = xs[0]
        elif op == 'pad' or plain(g, L, xs, pre) == 'pad':
            g.node('Pad', [xs[0], g.init(y + '.pads', np.array(L['pads'], np.int64)), g.init('pad.zero', f32(0))],
                   pre, mode='constant')
        if L.get('act'):
            g.act(L, pre, f)
        g.q(f, y)
    finish_outputs(g)
    return g.model('tightfit difftest model (QDQ form), seed %d' % net.seed)


def float_op(g, L, xs, dst):
    """Add, Mul, Sub, ReduceMean or Div on the dequantized inputs xs (float), into dst."""
    op, y = L['op'], L['out']
    if op == 'reducemean':
        g.node('ReduceMean', xs, dst, axes=L['axes'], keepdims=L['keepdims'])
        return
    if op == 'div':
        c = L['divisor']
        if 'q' in c:
            g.node('DequantizeLinear', [g.init(y + '.d', np.array(c['q'], NP_OF[g.net.dtype])),
                                        g.init(y + '.d.scale', np.float32(c['scale'])),
                                        g.init(y + '.d.zp', np.array(c['zp'], NP_OF[g.net.dtype]))], y + '.d.dq')
            xs = xs + [y + '.d.dq']
        else:
            xs = xs + [g.init(y + '.d', f32([c['value']]))]
    elif L['const'] is not None:
        xs = xs + [const_dq(g, L)]
    g.node(op.capitalize(), xs, dst)


def const_dq(g, L):
    c, y = L['const'], L['out']
    g.node('DequantizeLinear', [g.init(y + '.c', c['value']), g.init(y + '.c.scale', np.float32(c['scale'])),
                                g.init(y + '.c.zp', np.array(c['zp'], NP_OF[g.net.dtype]))], y + '.c.dq')
    return y + '.c.dq'


# com.microsoft operators of one quantized input: (x, x_scale, x_zp, y_scale, y_zp) -> y
CONTRIB_ONE_INPUT = dict(avgpool='QLinearAveragePool', gap='QLinearGlobalAveragePool', sigmoid='QLinearSigmoid',
                         leakyrelu='QLinearLeakyRelu', softmax='QLinearSoftmax')


def qop(net):
    g = Graph(net)
    quantize_inputs(g)
    for L in net.layers:
        op, x, y = L['op'], L['ins'], L['out']
        a = L.get('attrs', {})
        # A fused Relu/Clip: the layer writes y.pre with y's quantization, then a float island
        # DQ -> Relu/Clip -> Q (monotone, so clamping before or after rounding agrees).
        dst = y + '.pre' if L.get('act') and op not in ('relu', 'clip') else y
        if op in INTEGER_LAYERS:
            integer_layer(g, L)
            continue
        if op in DATA_MOVEMENT:
            if op == 'pad':
                g.node('Pad', [x[0], g.init(y + '.pads', np.array(L['pads'], np.int64)), g.zero_point(x[0])], y,
                       mode='constant')
            else:
                plain(g, L, x, y)
            continue
        ys, yz = g.qparams(y)
        xq = [v for t in x for v in (t, *g.qparams(t))]
        if op == 'conv':
            bias = [g.init(y + '.b', L['b'])] if L['b'] is not None else []
            g.node('QLinearConv', xq + [*g.weights(L), ys, yz] + bias, dst, **a)
        elif op == 'convtranspose':
            qop_conv_transpose(g, L, xq, ys, yz, dst)
        elif op == 'gemm':
            # FullyConnected with an int32 bias and one requantization: Reshape, 1x1 QLinearConv, Reshape
            n, k = net.tensors[x[0]].shape
            m = net.tensors[y].shape[1]
            g.node('Reshape', [x[0], g.init(y + '.in4d', np.array([n, k, 1, 1], np.int64))], y + '.x4d')
            bias = [g.init(y + '.b', L['b'])] if L['b'] is not None else []
            g.node('QLinearConv', [y + '.x4d'] + xq[1:] + [*g.weights(L, four_d=True), ys, yz] + bias, y + '.y4d',
                   kernel_shape=[1, 1])
            g.node('Reshape', [y + '.y4d', g.init(y + '.out2d', np.array([n, m], np.int64))], dst)
        elif op == 'matmul':
            g.node('QLinearMatMul', xq + [*g.weights(L), ys, yz], dst)
        elif op in ('add', 'mul'):
            if L['const'] is not None:
                c = L['const']
                xq += [g.init(y + '.c', c['value']), g.init(y + '.c.scale', np.float32(c['scale'])),
                       g.init(y + '.c.zp', np.array(c['zp'], NP_OF[net.dtype]))]
            g.node('QLinear' + op.capitalize(), xq + [ys, yz], dst, domain=MS)
        elif op == 'concat':
            same = all(net.tensors[t].scale == net.tensors[y].scale and net.tensors[t].zp == net.tensors[y].zp
                       for t in x)
            if same and net.seed % 2:
                g.node('Concat', x, dst, axis=L['axis'])
            else:
                g.node('QLinearConcat', [ys, yz] + xq, dst, domain=MS, axis=L['axis'])
        elif op in CONTRIB_ONE_INPUT:
            attrs = dict(avgpool=a, gap=dict(channels_last=0), sigmoid={}, leakyrelu=dict(alpha=L.get('alpha')),
                         softmax=dict(axis=L.get('axis'), opset=13))[op]
            g.node(CONTRIB_ONE_INPUT[op], xq + [ys, yz], dst, domain=MS, **attrs)
        elif op in FLOAT_ONLY:
            # no QLinear operator in ONNX Runtime: a float island, as in the QDQ form
            float_op(g, L, [g.dq(t, f'{y}.in{i}') for i, t in enumerate(x)], dst + '.f')
            g.q(dst + '.f', dst)
        elif op in ('tanh', 'relu', 'clip', 'requantize'):
            # no QLinear operator in ONNX Runtime: a float island, as in the QDQ form
            src = g.dq(x[0], y + '.in0')
            pre = y + '.f'
            if op == 'tanh':
                g.node('Tanh', [src], pre)
            elif op == 'requantize':
                pre = src
            else:
                g.act(L, src, pre)
            g.q(pre, y)
        else:
            raise ValueError(op)
        if dst != y:
            g.act(L, g.dq(dst, y + '.pre.dq'), y + '.f')
            g.q(y + '.f', y)
    finish_outputs(g)
    return g.model('tightfit difftest model (QOperator form), seed %d' % net.seed)


def qop_conv_transpose(g, L, xq, ys, yz, dst):
    """ConvTranspose with ONNX Runtime's integer kernels (it has no QLinearConvTranspose on the CPU):
    the input spread out with the zero point between its pixels (a 6-D Reshape and Pad, then a
    Slice), then a stride-1 QLinearConv with the kernel flipped and its channel axes swapped,
    padded by the kernel's extent - 1 less the pads (plus output_padding at the end). The same
    integer sums as the transposed convolution, requantized as QLinearConv does."""
    x, y = xq[0], L['out']
    a = L['attrs']
    n, c, h, w = g.tensor(x).shape
    (sh, sw), (kh, kw) = a['strides'], a['kernel_shape']
    dil = a.get('dilations', [1, 1])[0]
    pt, pl, pb, pr = a['pads']
    oph, opw = a.get('output_padding', [0, 0])
    src = x
    if (sh, sw) != (1, 1):
        g.node('Reshape', [x, g.init(y + '.x6d', np.array([n, c, h, 1, w, 1], np.int64))], y + '.x6')
        g.node('Pad', [y + '.x6', g.init(y + '.spread', np.array([0] * 9 + [sh - 1, 0, sw - 1], np.int64)), xq[2]],
               y + '.xs6', mode='constant')
        g.node('Reshape', [y + '.xs6', g.init(y + '.x4d', np.array([n, c, h * sh, w * sw], np.int64))], y + '.xs4')
        g.node('Slice', [y + '.xs4', g.init(y + '.spread_lo', np.array([0, 0], np.int64)),
                         g.init(y + '.spread_hi', np.array([(h - 1) * sh + 1, (w - 1) * sw + 1], np.int64)),
                         g.init(y + '.spread_axes', np.array([2, 3], np.int64))], y + '.spread_x')
        src = y + '.spread_x'
    ekh, ekw = dil * (kh - 1) + 1, dil * (kw - 1) + 1
    flipped = np.ascontiguousarray(L['w'].transpose(1, 0, 2, 3)[:, :, ::-1, ::-1])
    wz = np.full(L['ws'].shape, L['wz'], L['w'].dtype)
    weights = [g.init(y + '.wflip', flipped), g.init(y + '.w.scale', f32(L['ws'])), g.init(y + '.w.zp', wz)]
    bias = [g.init(y + '.b', L['b'])] if L['b'] is not None else []
    g.node('QLinearConv', [src, xq[1], xq[2]] + weights + [ys, yz] + bias, dst, kernel_shape=[kh, kw],
           dilations=[dil, dil], pads=[ekh - 1 - pt, ekw - 1 - pl, ekh - 1 - pb + oph, ekw - 1 - pr + opw])


# ----------------------------------------------------------------------------
# The float path's bound
# ----------------------------------------------------------------------------
def bound(net):
    """Per tensor: the largest difference, in LSBs of the tensor, between ONNX Runtime's float path
    on the QDQ form and the exact integer result. A requantizing layer adds 1 (a value within float
    rounding of a .5 may round either way) plus the float error of its accumulation, and scales
    the differences of its inputs by its gain (largest sum of |partial derivatives|, in output LSBs
    per input LSB); data movement keeps them; clamps do not grow them."""
    e = {n: 0.0 for n, _ in net.inputs}
    for L in net.layers:
        op, y = L['op'], L['out']
        sy = net.tensors[y].scale
        ins = L['ins']
        s = [net.tensors[t].scale for t in ins]
        ein = [e[t] for t in ins]
        if op in DATA_MOVEMENT:
            e[y] = ein[0]
            continue
        if op in ('conv', 'gemm', 'matmul', 'convinteger', 'matmulinteger', 'convtranspose'):
            w = np.abs(L['w'].astype(np.int64) - L['wz'])
            if op == 'convtranspose':
                w = w.transpose(1, 0, 2, 3)  # output channels first, as a Conv's
            per_out = w.sum(axis=0) if op in ('matmul', 'matmulinteger') else w.reshape(w.shape[0], -1).sum(axis=1)
            ws = np.broadcast_to(L['ws'], per_out.shape)
            gain = float(np.max(per_out * ws)) * s[0] / sy
            fan_in = int(w.size // per_out.size)
            xmax = real_range(net, ins[0])
            float_err = (fan_in + 2) * 2.0 ** -23 * float(np.max(per_out * ws)) * xmax / sy
            e[y] = gain * ein[0] + 1 + float_err
        elif op in ('add', 'sub'):
            e[y] = sum(si / sy * ei for si, ei in zip(s, ein)) + 1 + 2.0 ** -22 * 2 * max(
                real_range(net, t) for t in ins) / sy
        elif op == 'mul':
            if L['const'] is not None:
                c = L['const']
                cmax = max(abs(net.qmin() - c['zp']), abs(net.qmax() - c['zp'])) * c['scale']
                e[y] = cmax * s[0] * ein[0] / sy + 1
            else:
                amax, bmax = real_range(net, ins[0]), real_range(net, ins[1])
                da, db = ein[0] * s[0], ein[1] * s[1]
                e[y] = (amax * db + bmax * da + da * db) / sy + 1
            e[y] += 2.0 ** -22 * real_range(net, ins[0]) * (real_range(net, ins[1]) if len(ins) > 1 else 1e4) / sy
        elif op == 'div':
            e[y] = s[0] / (sy * abs(L['divisor']['value'])) * ein[0] + 1
        elif op in ('avgpool', 'gap', 'reducemean', 'concat', 'requantize', 'relu', 'clip', 'tanh'):
            e[y] = max(si / sy * ei for si, ei in zip(s, ein)) + 1
        elif op == 'leakyrelu':
            e[y] = s[0] / sy * ein[0] + 1
        elif op == 'sigmoid':
            e[y] = 0.25 * s[0] / sy * ein[0] + 1
        elif op == 'softmax':
            # ONNX Runtime's QLinearSoftmax (a table of exp, integer sums and division) is no
            # rounding of the float softmax: up to half the range apart on int8 (docs/hardening.md)
            e[y] = net.qmax() - net.qmin()
        else:
            raise ValueError(op)
        if op in ('relu', 'clip', 'requantize') and net.tensors[y].scale == s[0] and net.tensors[y].zp == net.tensors[
                ins[0]].zp:
            e[y] = ein[0]  # a clamp on the input's own grid: no rounding
        e[y] = min(e[y], net.qmax() - net.qmin())
    return e
