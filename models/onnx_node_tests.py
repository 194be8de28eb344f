#!/usr/bin/python3
"""ONNX's own quantized operator tests, made ready for tightfit.

ONNX's backend node tests (Debian's libonnx-testdata, /usr/share/libonnx-testdata/data/node)
are one-operator models whose every operand is a graph input, fed from
test_data_set_0/input_N.pb. tightfit compiles weights and quantization parameters into
flash, so it needs them as constants: this script does what a user does with such a model
and turns every input that is not an activation into an initializer holding the test's value.
The activation input(s) stay graph inputs and are saved as .npy, the expected outputs too.

For each test, under models/onnx_node_tests/:
  NAME.onnx              the model with the non-activation inputs as initializers
  NAME.input_J.npy       activation input J (graph order), the test's own values and dtype
  NAME.output_K.npy      expected output K (the test's output_K.pb), its dtype (int32, uint8, float32)
  manifest.json          every test: files, which inputs were kept and why, and the status
                         tightfit must reach: "bit-exact" or "refused" (with the message part)

usage: models/onnx_node_tests.py            write the files
       models/onnx_node_tests.py --check    exit 1 if the stored files differ from what it would write
Deterministic: a rerun leaves every file byte-identical.
"""
import io
import json
import os
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

NODE_TESTS = "/usr/share/libonnx-testdata/data/node"
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "onnx_node_tests")

# Which inputs are activations (stay graph inputs, given at run time) and why. Everything else
# (weights, scales, zero points) becomes a constant.
ACT_CONV = ("x", "the image is the activation; the weight w and the zero point(s) are parameters a deployed model "
                 "fixes, so they are constants in flash")
ACT_MATMUL = ("the left operand is the activation (rows of features); the right operand is the weight matrix "
              "and the zero points/scales are parameters, so they are constants (tightfit refuses a matmul of "
              "two activations)")
ACT_Q = ("x", "the tensor being (de)quantized is the data; its scale and zero point are the quantization "
              "parameters, constants in any quantized model")

TESTS = [
    # name, activation input names, why, status, refusal text (a part of tightfit's one-line message)
    ("test_qlinearconv", ["x"], ACT_CONV[1], "bit-exact", None),
    ("test_qlinearmatmul_2D", ["a"], ACT_MATMUL, "bit-exact", None),
    ("test_qlinearmatmul_3D", ["a"], ACT_MATMUL, "bit-exact", None),
    ("test_basic_convinteger", ["x"], ACT_CONV[1], "bit-exact", None),
    ("test_convinteger_with_padding", ["x"], ACT_CONV[1], "bit-exact", None),
    ("test_convinteger_without_padding", ["x"], ACT_CONV[1], "bit-exact", None),
    ("test_matmulinteger", ["A"], ACT_MATMUL, "bit-exact", None),
    ("test_quantizelinear", ["x"], ACT_Q[1], "bit-exact", None),
    ("test_dequantizelinear", ["x"], ACT_Q[1], "bit-exact", None),
    ("test_quantizelinear_axis", ["x"], ACT_Q[1], "bit-exact", None),
    ("test_dequantizelinear_axis", ["x"], ACT_Q[1], "bit-exact", None),
    # DynamicQuantizeLinear computes its scale and zero point from the data on every run and
    # outputs them (float32 and uint8 scalars) with y: its only input is the data, nothing to make
    # constant. tightfit runs it at the graph's edges (float input, three graph outputs).
    ("test_dynamicquantizelinear", ["x"], "its only input is the float data", "bit-exact", None),
    ("test_dynamicquantizelinear_max_adjusted", ["x"], "its only input is the float data", "bit-exact", None),
    ("test_dynamicquantizelinear_min_adjusted", ["x"], "its only input is the float data", "bit-exact", None),
    # The same, expanded into float operators (ReduceMin, ReduceMax, Div, Round, ...) that compute
    # the scale and zero point a QuantizeLinear then uses: float arithmetic on the data; the float
    # input's ReduceMin and ReduceMax run as float kernels, the Min after them has none (refused).
    ("test_dynamicquantizelinear_expanded", ["x"], "its only input is the float data", "refused",
     "(Min): input 'DynamicQuantizeLinear_test_dynamicquantizelinear"),
    ("test_dynamicquantizelinear_max_adjusted_expanded", ["x"], "its only input is the float data", "refused",
     "(Min): input 'DynamicQuantizeLinear_test_dynamicquantizelinear"),
    ("test_dynamicquantizelinear_min_adjusted_expanded", ["x"], "its only input is the float data", "refused",
     "(Min): input 'DynamicQuantizeLinear_test_dynamicquantizelinear"),
]


def load_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return t


def npy_bytes(a):
    buf = io.BytesIO()
    np.save(buf, np.array(a, order="C"), allow_pickle=False)
    return buf.getvalue()


def convert(name, activations):
    """The files of one test: {file name: bytes}, and its manifest entry."""
    src = os.path.join(NODE_TESTS, name)
    model = onnx.load(os.path.join(src, "model.onnx"))
    graph = model.graph
    data = os.path.join(src, "test_data_set_0")
    files = {}
    kept, constants, inputs = [], [], []
    initializers = []
    for i, inp in enumerate(graph.input):
        value = load_pb(os.path.join(data, f"input_{i}.pb"))
        if inp.name in activations:
            kept.append(inp)
            arr = numpy_helper.to_array(value)
            fname = f"{name}.input_{len(inputs)}.npy"
            files[fname] = npy_bytes(arr)
            inputs.append({"file": fname, "name": inp.name, "dtype": str(arr.dtype), "shape": list(arr.shape)})
        else:
            value.name = inp.name
            initializers.append(value)
            constants.append(inp.name)
    assert [v.name for v in kept] == activations, (name, activations)
    del graph.input[:]
    graph.input.extend(kept)
    graph.initializer.extend(initializers)
    onnx.checker.check_model(model, full_check=True)
    files[f"{name}.onnx"] = model.SerializeToString()
    outputs = []
    for k, out in enumerate(graph.output):
        arr = numpy_helper.to_array(load_pb(os.path.join(data, f"output_{k}.pb")))
        fname = f"{name}.output_{k}.npy"
        files[fname] = npy_bytes(arr)
        outputs.append({"file": fname, "name": out.name, "dtype": str(arr.dtype), "shape": list(arr.shape)})
    ops = sorted({n.op_type for n in graph.node})
    return files, {"model": f"{name}.onnx", "operators": ops, "inputs": inputs, "constants": constants,
                   "outputs": outputs}


# ---------------------------------------------------------------------------------------------
# Extra cases in the same format, made here: forms ONNX's tests do not cover (grouped, depthwise,
# strided, dilated and padded ConvInteger with a weight zero point; batched MatMulInteger; int8
# MatMulInteger; batched int8 QLinearMatMul). Weights are initializers from the start; the
# expected outputs are computed here in numpy (exact integer sums; QLinearMatMul's
# requantization as ONNX Runtime does it: float32 multiplier a_scale * b_scale / y_scale, float32
# product, clamp, round half to even, + zero point), and onnx_node_tests_ort.mjs checks them
# against ONNX Runtime too.

def _model(name, node, x_name, x, y_type, inits, opset=13, inputs=None, outputs=("y",)):
    """A model of `node` (or a list of nodes) reading graph input x_name (or the (name, array)
    pairs of `inputs`) and writing graph outputs `outputs` of type y_type."""
    from onnx import helper, shape_inference
    inputs = inputs or [(x_name, x)]
    graph = helper.make_graph(node if isinstance(node, list) else [node], name,
                              [helper.make_tensor_value_info(k, onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[v.dtype], list(v.shape)) for k, v in inputs],
                              [helper.make_tensor_value_info(y, y_type, None) for y in outputs],
                              [numpy_helper.from_array(v, k) for k, v in inits.items()])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="onnx_node_tests.py")
    m.ir_version = 7
    for out in m.graph.output:
        out.type.tensor_type.shape.dim.add()  # a placeholder rank for the checker: inference replaces it
        out.type.tensor_type.ClearField("shape")
    inferred = shape_inference.infer_shapes(m, strict_mode=True)
    for i, out in enumerate(m.graph.output):
        out.CopyFrom(inferred.graph.output[i])
        assert len(out.type.tensor_type.shape.dim) > 0, name
    onnx.checker.check_model(m, full_check=True)
    return m


def _conv_integer(x, w, xz, wz, group, strides, dilations, pads):
    x = x.astype(np.int64) - int(xz)
    w = w.astype(np.int64) - int(wz)
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    xp = np.zeros((n, c, h + pads[0] + pads[2], wd + pads[1] + pads[3]), np.int64)
    xp[:, :, pads[0]:pads[0] + h, pads[1]:pads[1] + wd] = x
    oh = (xp.shape[2] - dilations[0] * (kh - 1) - 1) // strides[0] + 1
    ow = (xp.shape[3] - dilations[1] * (kw - 1) - 1) // strides[1] + 1
    y = np.zeros((n, m, oh, ow), np.int64)
    mg = m // group
    for oc in range(m):
        g = oc // mg
        for i in range(oh):
            for j in range(ow):
                patch = xp[:, g * cg:(g + 1) * cg, i * strides[0]:i * strides[0] + dilations[0] * (kh - 1) + 1:dilations[0],
                           j * strides[1]:j * strides[1] + dilations[1] * (kw - 1) + 1:dilations[1]]
                y[:, oc, i, j] = (patch * w[oc]).sum(axis=(1, 2, 3))
    return y.astype(np.int32)


def _qlinear_matmul(a, a_s, a_z, b, b_s, b_z, y_s, y_z, qmin, qmax, dtype):
    acc = np.matmul(a.astype(np.int64) - int(a_z), b.astype(np.int64) - int(b_z)).astype(np.int32)
    mult = np.float32(np.float32(a_s) * np.float32(b_s)) / np.float32(y_s)
    v = acc.astype(np.float32) * np.float32(mult)
    v = np.clip(v, np.float32(qmin - int(y_z)), np.float32(qmax - int(y_z)))
    return (np.rint(v).astype(np.int32) + int(y_z)).astype(dtype)


def extra_cases():
    from onnx import helper
    rng = np.random.default_rng(20261130)
    cases = []
    x = rng.integers(0, 256, (1, 4, 9, 8), dtype=np.uint8)
    w = rng.integers(0, 256, (6, 2, 3, 3), dtype=np.uint8)
    xz, wz = np.array(131, np.uint8), np.array(120, np.uint8)
    attrs = dict(group=2, strides=[2, 1], dilations=[1, 2], pads=[1, 2, 0, 1])
    cases.append(("extra_convinteger_grouped", "x", x,
                  _model("extra_convinteger_grouped", helper.make_node("ConvInteger", ["x", "w", "xz", "wz"], ["y"], **attrs), "x", x,
                         onnx.TensorProto.INT32, {"w": w, "xz": xz, "wz": wz}),
                  _conv_integer(x, w, xz, wz, attrs["group"], attrs["strides"], attrs["dilations"], attrs["pads"]),
                  "ConvInteger, 2 groups, strides (2, 1), dilations (1, 2), asymmetric pads, x and w zero points"))
    x = rng.integers(0, 256, (1, 3, 6, 6), dtype=np.uint8)
    w = rng.integers(0, 256, (3, 1, 3, 3), dtype=np.uint8)
    xz = np.array(7, np.uint8)
    cases.append(("extra_convinteger_depthwise", "x", x,
                  _model("extra_convinteger_depthwise", helper.make_node("ConvInteger", ["x", "w", "xz"], ["y"], group=3, pads=[1, 1, 1, 1]),
                         "x", x, onnx.TensorProto.INT32, {"w": w, "xz": xz}),
                  _conv_integer(x, w, xz, 0, 3, [1, 1], [1, 1], [1, 1, 1, 1]), "ConvInteger, depthwise 3x3, pads 1"))
    a = rng.integers(0, 256, (3, 5, 7), dtype=np.uint8)
    b = rng.integers(0, 256, (3, 7, 4), dtype=np.uint8)
    az, bz = np.array(100, np.uint8), np.array(140, np.uint8)
    cases.append(("extra_matmulinteger_batched", "a", a,
                  _model("extra_matmulinteger_batched", helper.make_node("MatMulInteger", ["a", "b", "az", "bz"], ["y"]), "a", a,
                         onnx.TensorProto.INT32, {"b": b, "az": az, "bz": bz}),
                  np.matmul(a.astype(np.int64) - 100, b.astype(np.int64) - 140).astype(np.int32),
                  "MatMulInteger, A [3, 5, 7] by a batched constant B [3, 7, 4], both zero points"))
    a = rng.integers(-128, 128, (3, 9), dtype=np.int8)
    b = rng.integers(-128, 128, (9, 4), dtype=np.int8)
    az = np.array(-3, np.int8)
    cases.append(("extra_matmulinteger_s8", "a", a,
                  _model("extra_matmulinteger_s8", helper.make_node("MatMulInteger", ["a", "b", "az"], ["y"]), "a", a,
                         onnx.TensorProto.INT32, {"b": b, "az": az}),
                  np.matmul(a.astype(np.int64) + 3, b.astype(np.int64)).astype(np.int32), "MatMulInteger, int8 A and B"))
    a = rng.integers(-128, 128, (2, 3, 16), dtype=np.int8)
    b = rng.integers(-127, 128, (2, 16, 5), dtype=np.int8)
    q = {"as": np.array(0.02, np.float32), "az": np.array(-5, np.int8), "bs": np.array(0.01, np.float32),
         "bz": np.array(0, np.int8), "ys": np.array(0.35, np.float32), "yz": np.array(3, np.int8)}
    cases.append(("extra_qlinearmatmul_batched_s8", "a", a,
                  _model("extra_qlinearmatmul_batched_s8",
                         helper.make_node("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], ["y"]), "a", a,
                         onnx.TensorProto.INT8, {"b": b, **q}),
                  _qlinear_matmul(a, q["as"], q["az"], b, q["bs"], q["bz"], q["ys"], q["yz"], -128, 127, np.int8),
                  "QLinearMatMul, int8, A [2, 3, 16] by a batched constant B [2, 16, 5]"))
    # HardSigmoid, HardSwish, Log and Exp (ONNX Runtime has no QLinear form): DequantizeLinear -> op ->
    # QuantizeLinear on every input level, computed in float32 as ONNX Runtime does.
    f = np.float32
    for name, op, attrs, dtype, q in (
            ("extra_hardsigmoid_u8", "HardSigmoid", {"alpha": float(f(1.0 / 6.0)), "beta": 0.5}, np.uint8,
             {"xs": f(0.05), "xz": 120, "ys": f(1.0 / 255.0), "yz": 0}),
            ("extra_hardswish_s8", "HardSwish", {}, np.int8, {"xs": f(0.04), "xz": -10, "ys": f(0.025), "yz": -113}),
            ("extra_log_u8", "Log", {}, np.uint8, {"xs": f(0.05), "xz": 0, "ys": f(0.025), "yz": 128}),
            ("extra_exp_s8", "Exp", {}, np.int8, {"xs": f(0.02), "xz": 0, "ys": f(0.05), "yz": -128})):
        info = np.iinfo(dtype)
        x = np.arange(info.min, info.max + 1).astype(dtype).reshape(1, 4, 8, 8)
        v = f(q["xs"]) * (x.astype(np.int32) - q["xz"]).astype(f)
        hard_sigmoid = lambda u, a, b: np.maximum(np.minimum(f(a) * u + f(b), f(1)), f(0))
        if op == "Log":
            with np.errstate(divide="ignore"):
                y = np.log(v)  # log(0) = -inf saturates to the lowest code
        elif op == "Exp":
            y = np.exp(v)
        else:
            y = v * hard_sigmoid(v, f(1.0 / 6.0), 0.5) if op == "HardSwish" else hard_sigmoid(v, attrs["alpha"], attrs["beta"])
        y = np.clip(np.rint(y.astype(f) / f(q["ys"])) + q["yz"], info.min, info.max).astype(dtype)
        nodes = [helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["xf"]), helper.make_node(op, ["xf"], ["yf"], **attrs),
                 helper.make_node("QuantizeLinear", ["yf", "ys", "yz"], ["y"])]
        inits = {"xs": np.array(q["xs"], f), "xz": np.array(q["xz"], dtype), "ys": np.array(q["ys"], f), "yz": np.array(q["yz"], dtype)}
        cases.append((name, "x", x, _model(name, nodes, "x", x, onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(dtype)], inits, opset=14),
                      y, f"{op} between DequantizeLinear and QuantizeLinear, {np.dtype(dtype).name}, every input level"))
    cases += operator_cases()
    cases += conv_transpose_cases()
    cases += channel_shuffle_cases()
    return cases


def _quantize(v, scale, zero_point, dtype):
    """ONNX Runtime's QuantizeLinear of float32 values: divide, round half to even, saturate."""
    info = np.iinfo(dtype)
    f = np.float32
    return np.clip(np.rint(v.astype(f) / f(scale)) + zero_point, info.min, info.max).astype(dtype)


def _dequantize(x, scale, zero_point):
    return (x.astype(np.int32) - zero_point).astype(np.float32) * np.float32(scale)


def _qdq(op_nodes, dtype, inputs, q, consts=None):
    """DequantizeLinear of each input (x with xs/xz, b with bs/bz), the operator nodes, QuantizeLinear
    of each float output y*f of the last node with ys/yz: the QDQ form ONNX Runtime's quantizer writes."""
    from onnx import helper
    nodes = [helper.make_node("DequantizeLinear", [k, k[0] + "s", k[0] + "z"], [k + "f"]) for k, _ in inputs]
    outs = list(op_nodes[-1].output)
    nodes += op_nodes + [helper.make_node("QuantizeLinear", [o, "ys", "yz"], [o[:-1]]) for o in outs]
    inits = {k: np.array(v, np.float32 if k.endswith("s") else dtype) for k, v in q.items()}
    inits.update(consts or {})
    return nodes, inits, [o[:-1] for o in outs]


def _reduce_mean(x, axes, keepdims, q, dtype):
    """ReduceMean between Dequantize/QuantizeLinear as ONNX Runtime computes it in float when its float
    sum is exact (the integer sum times the scale), then divided by the count and quantized."""
    f = np.float32
    acc = (x.astype(np.int64) - q["xz"]).sum(axis=tuple(axes), keepdims=bool(keepdims))
    count = int(np.prod([x.shape[a] for a in axes]))
    mean = (acc.astype(f) * f(q["xs"])) / f(count)
    return _quantize(mean, q["ys"], q["yz"], dtype)


def operator_cases():
    """ReduceMean, Sub, Div by a constant, Slice and Split: ONNX Runtime has no QLinear kernel for any
    of them, so their QDQ form runs in float in ORT; the expected outputs are computed here in
    float32 as ORT does (and onnx_node_tests_ort.mjs checks them against ORT). Scales are powers of
    two where a case must show the rounding of exact ties (half to even)."""
    from onnx import helper
    rng = np.random.default_rng(20261201)
    f = np.float32
    tt = lambda dtype: onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(dtype)]
    cases = []

    def levels(dtype, shape):  # every level of the type, in a random order, tiled to `shape`
        info = np.iinfo(dtype)
        count = int(np.prod(shape))
        v = np.resize(np.arange(info.min, info.max + 1), count)
        return rng.permutation(v).astype(dtype).reshape(shape)

    # ReduceMean: name, dtype, input shape, axes, keepdims, quantization, values, what
    for name, dtype, shape, axes, keepdims, q, lo, hi, what in (
            ("extra_reducemean_hw_s8", np.int8, (1, 32, 4, 4), [2, 3], 1, {"xs": 2.0 ** -4, "xz": 3, "ys": 2.0 ** -7, "yz": -2},
             -12, 18, "over H and W (keepdims 1: a GlobalAveragePool), scales 2^-4 -> 2^-7 so that half the means are exact ties"),
            ("extra_reducemean_hw_u8", np.uint8, (1, 16, 3, 5), [-1, -2], 0, {"xs": 0.0371, "xz": 120, "ys": 0.0123, "yz": 110},
             0, 256, "over H and W with keepdims 0 (a GlobalAveragePool and a view to [N, C]), 15 pixels"),
            ("extra_reducemean_c_u8", np.uint8, (1, 6, 5, 4), [1], 0, {"xs": 0.0253, "xz": 131, "ys": 0.0117, "yz": 125},
             0, 256, "over the channels of a 4-D tensor (innermost in tightfit's channels-last memory), keepdims 0"),
            ("extra_reducemean_w_s8", np.int8, (2, 3, 4, 2), [3], 1, {"xs": 2.0 ** -5, "xz": -1, "ys": 2.0 ** -5, "yz": 0},
             -128, 128, "over W (2 elements: every odd sum is a tie), keepdims 1, equal power-of-two scales"),
            ("extra_reducemean_axes02_s8", np.int8, (2, 5, 6), [0, 2], 0, {"xs": 0.0419, "xz": 7, "ys": 0.0093, "yz": -5},
             -128, 128, "over axes 0 and 2 of a 3-D tensor, keepdims 0")):
        x = rng.integers(lo, hi, shape).astype(dtype)
        nodes, inits, outs = _qdq([helper.make_node("ReduceMean", ["xf"], ["yf"], axes=axes, keepdims=keepdims)], dtype, [("x", x)], q)
        y = _reduce_mean(x, [a % len(shape) for a in axes], keepdims, q, dtype)
        cases.append((name, "x", x, _model(name, nodes, "x", x, tt(dtype), inits), y,
                      f"ReduceMean between DequantizeLinear and QuantizeLinear, {np.dtype(dtype).name}, {what}"))

    # Sub of two activations ([1,C,H,W] - [1,C,1,1], broadcast), and of an activation and a constant.
    q = {"xs": 0.043, "xz": -7, "bs": 0.021, "bz": 12, "ys": 0.057, "yz": 3}
    a, b = levels(np.int8, (1, 4, 8, 8)), rng.integers(-128, 128, (1, 4, 1, 1)).astype(np.int8)
    nodes, inits, outs = _qdq([helper.make_node("Sub", ["xf", "bf"], ["yf"])], np.int8, [("x", a), ("b", b)], q)
    y = _quantize(_dequantize(a, q["xs"], q["xz"]) - _dequantize(b, q["bs"], q["bz"]), q["ys"], q["yz"], np.int8)
    cases.append(("extra_sub_broadcast_s8", "x", [("x", a), ("b", b)],
                  _model("extra_sub_broadcast_s8", nodes, None, None, tt(np.int8), inits, inputs=[("x", a), ("b", b)]), y,
                  "Sub between DequantizeLinear and QuantizeLinear, int8, [1,4,8,8] - [1,4,1,1] (two activations), "
                  "every level of x, saturating"))
    q = {"xs": 0.031, "xz": 128, "bs": 0.018, "bz": 100, "ys": 0.025, "yz": 90}
    a, c = levels(np.uint8, (3, 256)), rng.integers(0, 256, (256,)).astype(np.uint8)
    nodes, inits, outs = _qdq([helper.make_node("Sub", ["xf", "bf"], ["yf"])], np.uint8, [("x", a)], q)
    nodes.insert(1, helper.make_node("DequantizeLinear", ["b", "bs", "bz"], ["bf"]))
    inits["b"] = c
    y = _quantize(_dequantize(a, q["xs"], q["xz"]) - _dequantize(c, q["bs"], q["bz"]), q["ys"], q["yz"], np.uint8)
    cases.append(("extra_sub_constant_u8", "x", a, _model("extra_sub_constant_u8", nodes, "x", a, tt(np.uint8), inits), y,
                  "Sub between DequantizeLinear and QuantizeLinear, uint8, [3,256] activation (every level on each row) "
                  "minus a dequantized constant [256]"))

    # Div by a constant: a dequantized uint8 scalar, and a float constant.
    q = {"xs": 0.047, "xz": 118, "bs": 0.013, "bz": 3, "ys": 0.061, "yz": 100}
    x = levels(np.uint8, (1, 4, 8, 8))
    nodes, inits, outs = _qdq([helper.make_node("Div", ["xf", "bf"], ["yf"])], np.uint8, [("x", x)], q)
    nodes.insert(1, helper.make_node("DequantizeLinear", ["b", "bs", "bz"], ["bf"]))
    inits["b"] = np.array(200, np.uint8)
    y = _quantize(_dequantize(x, q["xs"], q["xz"]) / _dequantize(np.array(200), q["bs"], q["bz"]), q["ys"], q["yz"], np.uint8)
    cases.append(("extra_div_u8", "x", x, _model("extra_div_u8", nodes, "x", x, tt(np.uint8), inits), y,
                  "Div between DequantizeLinear and QuantizeLinear by a dequantized uint8 scalar constant, every input level"))
    q = {"xs": 0.029, "xz": -4, "ys": 0.0213, "yz": 6}
    x = levels(np.int8, (2, 128))
    divisor = f(1.7320508)
    nodes, inits, outs = _qdq([helper.make_node("Div", ["xf", "d"], ["yf"])], np.int8, [("x", x)], q, {"d": np.array([divisor], f)})
    y = _quantize(_dequantize(x, q["xs"], q["xz"]) / divisor, q["ys"], q["yz"], np.int8)
    cases.append(("extra_div_float_s8", "x", x, _model("extra_div_float_s8", nodes, "x", x, tt(np.int8), inits), y,
                  "Div between DequantizeLinear and QuantizeLinear by a float constant [1], int8, every input level"))

    # Cast float32 -> float32 (an alias) of a dequantized value and of a float island's value, to a
    # float graph output.
    nodes = [helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["xf"]),
             helper.make_node("Cast", ["xf"], ["cf"], to=onnx.TensorProto.FLOAT),
             helper.make_node("Div", ["cf", "d"], ["df"]), helper.make_node("Cast", ["df"], ["y"], to=onnx.TensorProto.FLOAT)]
    inits = {"xs": np.array(q["xs"], f), "xz": np.array(q["xz"], np.int8), "d": np.array([divisor], f)}
    y = _dequantize(x, q["xs"], q["xz"]) / divisor
    cases.append(("extra_cast_float_s8", "x", x, _model("extra_cast_float_s8", nodes, "x", x, onnx.TensorProto.FLOAT, inits), y,
                  "Cast float32 to float32 (an alias) of a dequantized int8 value and of a Div's float32 output"))

    # ReduceMax and ReduceMin in a float island (float32 output): over one middle axis, and over all
    # axes (melspectrogram's ReduceMax, there with keepdims 0: a scalar).
    xr = levels(np.int8, (2, 8, 16))
    v = _dequantize(xr, q["xs"], q["xz"]) / divisor
    for name, op, axes, keepdims, y in (("extra_reducemax_float_s8", "ReduceMax", [1], 1, v.max(axis=1, keepdims=True)),
                                        ("extra_reducemin_float_s8", "ReduceMin", None, 1, v.min(keepdims=True))):
        attrs = {"keepdims": keepdims, **({"axes": axes} if axes else {})}
        nodes = [helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["xf"]), helper.make_node("Div", ["xf", "d"], ["df"]),
                 helper.make_node(op, ["df"], ["y"], **attrs)]
        inits = {"xs": np.array(q["xs"], f), "xz": np.array(q["xz"], np.int8), "d": np.array([divisor], f)}
        cases.append((name, "x", xr, _model(name, nodes, "x", xr, onnx.TensorProto.FLOAT, inits), y.astype(f),
                      f"{op} of a float island's value (a Div's float32 output), axes {axes or 'all'}, keepdims {keepdims}"))

    # Clip in a float island with a computed lower bound (a ReduceMax's value minus a constant, as
    # melspectrogram's tail) and a constant upper one.
    nodes = [helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["xf"]), helper.make_node("Div", ["xf", "d"], ["df"]),
             helper.make_node("ReduceMax", ["df"], ["mf"], keepdims=0), helper.make_node("Sub", ["mf", "c"], ["lf"]),
             helper.make_node("Clip", ["df", "lf", "hi"], ["y"])]
    inits = {"xs": np.array(q["xs"], f), "xz": np.array(q["xz"], np.int8), "d": np.array([divisor], f),
             "c": np.array(3.0, f), "hi": np.array(1.5, f)}
    y = np.minimum(np.maximum(v, v.max() - f(3.0)), f(1.5)).astype(f)
    cases.append(("extra_clip_float_bounds_s8", "x", xr, _model("extra_clip_float_bounds_s8", nodes, "x", xr, onnx.TensorProto.FLOAT, inits), y,
                  "Clip of a float island's value, its min computed (ReduceMax - 3), its max a constant"))

    # Slice: integer form on a 4-D tensor (channels, rows and columns; negative and clamped bounds),
    # and the QDQ form on a 3-D tensor (axes omitted). The integer forms quantize a float input on
    # the grid (scale 2^-4: exact) first, as a QOperator model does.
    def quantized_input(q):
        return [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"])], {"xs": np.array(q["xs"], f), "xz": np.array(q["xz"], np.int8)}

    q = {"xs": 2.0 ** -4, "xz": -3}
    xq = rng.integers(-128, 128, (1, 6, 5, 7)).astype(np.int8)
    x = _dequantize(xq, q["xs"], q["xz"])
    nodes, inits = quantized_input(q)
    nodes.append(helper.make_node("Slice", ["xq", "starts", "ends", "axes"], ["y"]))
    inits.update({"starts": np.array([1, -5, 0], np.int64), "ends": np.array([5, 100, -1], np.int64), "axes": np.array([1, 3, 2], np.int64)})
    cases.append(("extra_slice_s8", "x", x, _model("extra_slice_s8", nodes, "x", x, tt(np.int8), inits), xq[:, 1:5, 0:-1, -5:100],
                  "QuantizeLinear, then Slice on int8 [1,6,5,7]: channels 1:5, rows 0:-1, columns -5:100 (clamped to 7)"))
    q = {"xs": 0.05, "xz": 128, "ys": 0.05, "yz": 128}
    x = rng.integers(0, 256, (4, 6, 8)).astype(np.uint8)
    nodes, inits, outs = _qdq([helper.make_node("Slice", ["xf", "starts", "ends"], ["yf"])], np.uint8, [("x", x)], q,
                              {"starts": np.array([1, -4], np.int64), "ends": np.array([-1, 5], np.int64)})
    cases.append(("extra_slice_qdq_u8", "x", x, _model("extra_slice_qdq_u8", nodes, "x", x, tt(np.uint8), inits), x[1:-1, -4:5],
                  "Slice between DequantizeLinear and QuantizeLinear (same parameters), uint8 [4,6,8], starts [1,-4], ends [-1,5], axes omitted"))

    # Split: the channel split of ShuffleNetV2 (integer form, `split` input), and equal parts in the QDQ form.
    q = {"xs": 2.0 ** -4, "xz": 5}
    xq = rng.integers(-128, 128, (1, 6, 4, 4)).astype(np.int8)
    x = _dequantize(xq, q["xs"], q["xz"])
    nodes, inits = quantized_input(q)
    nodes.append(helper.make_node("Split", ["xq", "split"], ["y0", "y1"], axis=1))
    inits["split"] = np.array([2, 4], np.int64)
    cases.append(("extra_split_s8", "x", x, _model("extra_split_s8", nodes, "x", x, tt(np.int8), inits, outputs=("y0", "y1")),
                  [("y0", xq[:, :2]), ("y1", xq[:, 2:])],
                  "QuantizeLinear, then Split on int8 [1,6,4,4] along the channels into 2 and 4 (the split input)"))
    q = {"xs": 0.02, "xz": 7, "ys": 0.02, "yz": 7}
    x = rng.integers(0, 256, (2, 3, 9)).astype(np.uint8)
    nodes, inits, outs = _qdq([helper.make_node("Split", ["xf"], ["y0f", "y1f", "y2f"], axis=-1)], np.uint8, [("x", x)], q)
    cases.append(("extra_split_qdq_u8", "x", x,
                  _model("extra_split_qdq_u8", nodes, "x", x, tt(np.uint8), inits, outputs=tuple(outs)),
                  [(o, x[:, :, 3 * k:3 * k + 3]) for k, o in enumerate(outs)],
                  "Split between DequantizeLinear and QuantizeLinear, uint8 [2,3,9], axis -1, three equal parts"))
    # A Relu or Clip after a pool, fused into it as a clamp of its integer output (power-of-two
    # scales: ORT's float sums are exact). Without the clamp half the outputs differ.
    q = {"xs": 2.0 ** -4, "xz": 10, "ys": 2.0 ** -6, "yz": -100}
    x = rng.integers(-128, 128, (1, 16, 4, 4)).astype(np.int8)
    nodes, inits, outs = _qdq([helper.make_node("GlobalAveragePool", ["xf"], ["m"]), helper.make_node("Relu", ["m"], ["yf"])],
                              np.int8, [("x", x)], q)
    acc = (x.astype(np.int64) - q["xz"]).sum(axis=(2, 3), keepdims=True)
    y = _quantize(np.maximum((acc.astype(f) * f(q["xs"])) / f(16), f(0)), q["ys"], q["yz"], np.int8)
    cases.append(("extra_gap_relu_s8", "x", x, _model("extra_gap_relu_s8", nodes, "x", x, tt(np.int8), inits), y,
                  "GlobalAveragePool then Relu between DequantizeLinear and QuantizeLinear (the Relu fused as a clamp), int8"))
    q = {"xs": 2.0 ** -5, "xz": 120, "ys": 2.0 ** -8, "yz": 0}
    x = rng.integers(0, 256, (1, 3, 6, 6)).astype(np.uint8)
    nodes, inits, outs = _qdq([helper.make_node("AveragePool", ["xf"], ["m"], kernel_shape=[2, 2], strides=[2, 2]),
                               helper.make_node("Clip", ["m", "lo", "hi"], ["yf"])], np.uint8, [("x", x)], q,
                              {"lo": np.array(0.0, f), "hi": np.array(0.5, f)})
    v = _dequantize(x, q["xs"], q["xz"]).reshape(1, 3, 3, 2, 3, 2)
    mean = (v[:, :, :, 0, :, 0] + v[:, :, :, 0, :, 1] + v[:, :, :, 1, :, 0] + v[:, :, :, 1, :, 1]) / f(4)
    y = _quantize(np.clip(mean, f(0), f(0.5)), q["ys"], q["yz"], np.uint8)
    cases.append(("extra_avgpool_clip_u8", "x", x, _model("extra_avgpool_clip_u8", nodes, "x", x, tt(np.uint8), inits), y,
                  "AveragePool 2x2 stride 2 then Clip(0, 0.5) between DequantizeLinear and QuantizeLinear (the Clip fused), uint8"))
    return cases


def _conv_transpose(x, w, b, q, wscale, strides, pads, output_padding, dilations, dtype, relu=False):
    """ConvTranspose between DequantizeLinear and QuantizeLinear with power-of-two scales, where ONNX
    Runtime's float path is exact: every (x - xz) * (w - wz) product scattered to output
    (iy * stride - pad_begin + k * dilation), summed in integers, plus the bias, times
    x_scale * w_scale[oc], then (Relu and) QuantizeLinear."""
    f = np.float32
    n, cin, h, wd = x.shape
    cout, kh, kw = w.shape[1], w.shape[2], w.shape[3]
    full_h = strides[0] * (h - 1) + output_padding[0] + (kh - 1) * dilations[0] + 1
    full_w = strides[1] * (wd - 1) + output_padding[1] + (kw - 1) * dilations[1] + 1
    acc = np.zeros((n, cout, full_h, full_w), np.int64)
    xi, wi = x.astype(np.int64) - q["xz"], w.astype(np.int64) - q["wz"]
    for iy in range(h):
        for ix in range(wd):
            for ky in range(kh):
                for kx in range(kw):
                    acc[:, :, iy * strides[0] + ky * dilations[0], ix * strides[1] + kx * dilations[1]] += \
                        np.einsum("ni,io->no", xi[:, :, iy, ix], wi[:, :, ky, kx])
    acc = acc[:, :, pads[0]:full_h - pads[2], pads[1]:full_w - pads[3]]
    if b is not None:
        acc = acc + b.astype(np.int64).reshape(1, -1, 1, 1)
    v = acc.astype(f) * (f(q["xs"]) * np.asarray(wscale, f)).reshape(1, -1, 1, 1)
    if relu:
        v = np.maximum(v, f(0))
    return _quantize(v, q["ys"], q["yz"], dtype)


def conv_transpose_cases():
    """ConvTranspose between DequantizeLinear and QuantizeLinear (ONNX Runtime has no QLinear kernel for
    it on the CPU): a U-Net decoder's 2x2 stride 2 with per-channel weights and a bias (int8); 3x3
    stride 2 with pads and output_padding and a fused Relu (uint8, 7-bit weights: no VNNI, see
    docs/numerics.md); asymmetric kernel, strides, pads and a dilation, batch 2 (int8, 4-bit weights
    and a multiplier of 1/32: 10 of its 360 sums are exact .5 ties). Power-of-two scales: ORT's float
    sums are exact, so ties are rounded half to even as the integer kernel must."""
    from onnx import helper
    rng = np.random.default_rng(20261202)
    tt = lambda dtype: onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(dtype)]
    cases = []
    for name, dtype, xshape, wshape, attrs, q, wmax, per_channel, bias, relu in (
            ("extra_convtranspose_2x2_s8", np.int8, (1, 4, 5, 5), (4, 6, 2, 2), {"strides": [2, 2]},
             {"xs": 2.0 ** -4, "xz": -3, "ws": 2.0 ** -6, "wz": 0, "ys": 2.0 ** -2, "yz": 5}, 127, True, True, False),
            ("extra_convtranspose_3x3_u8", np.uint8, (1, 3, 4, 5), (3, 5, 3, 3),
             {"strides": [2, 2], "pads": [1, 1, 1, 1], "output_padding": [1, 1]},
             {"xs": 2.0 ** -5, "xz": 131, "ws": 2.0 ** -6, "wz": 0, "ys": 2.0 ** -3, "yz": 100}, 63, False, True, True),
            ("extra_convtranspose_mixed_s8", np.int8, (2, 5, 3, 4), (5, 3, 3, 2),
             {"strides": [1, 3], "pads": [0, 1, 2, 0], "dilations": [2, 1], "output_padding": [0, 2]},
             {"xs": 2.0 ** -3, "xz": 0, "ws": 2.0 ** -7, "wz": 0, "ys": 2.0 ** -5, "yz": -20}, 7, False, False, False)):
        info = np.iinfo(dtype)
        x = rng.integers(info.min, info.max + 1, xshape).astype(dtype)
        w = rng.integers(-wmax, wmax + 1, wshape).astype(np.int8)
        wscale = [q["ws"] * 2.0 ** -int(rng.integers(0, 3)) for _ in range(wshape[1])] if per_channel else [q["ws"]]
        b = rng.integers(-3000, 3001, wshape[1]).astype(np.int32) if bias else None
        consts = {"w": w, "wsc": np.array(wscale if per_channel else wscale[0], np.float32),
                  "wzp": np.zeros(wshape[1], np.int8) if per_channel else np.array(0, np.int8)}
        nodes = [helper.make_node("DequantizeLinear", ["w", "wsc", "wzp"], ["wf"], **({"axis": 1} if per_channel else {}))]
        ins = ["xf", "wf"]
        if bias:
            consts.update({"b": b, "bsc": np.array([q["xs"] * s for s in wscale] if per_channel else q["xs"] * wscale[0], np.float32),
                           "bzp": np.zeros(wshape[1], np.int32) if per_channel else np.array(0, np.int32)})
            nodes.append(helper.make_node("DequantizeLinear", ["b", "bsc", "bzp"], ["bf"], **({"axis": 0} if per_channel else {})))
            ins.append("bf")
        nodes.append(helper.make_node("ConvTranspose", ins, ["cf" if relu else "yf"], **attrs))
        if relu:
            nodes.append(helper.make_node("Relu", ["cf"], ["yf"]))
        nodes, inits, _ = _qdq(nodes, dtype, [("x", x)], {k: q[k] for k in ("xs", "xz", "ys", "yz")}, consts)
        y = _conv_transpose(x, w, b, q, wscale if per_channel else wscale * wshape[1], attrs["strides"],
                            attrs.get("pads", [0, 0, 0, 0]), attrs.get("output_padding", [0, 0]),
                            attrs.get("dilations", [1, 1]), dtype, relu)
        what = (f"ConvTranspose {wshape[2]}x{wshape[3]} {attrs} between DequantizeLinear and QuantizeLinear, "
                f"{np.dtype(dtype).name}, {'per-channel' if per_channel else 'per-tensor'} int8 weights"
                f"{', int32 bias' if bias else ''}{', Relu fused' if relu else ''}")
        cases.append((name, "x", x, _model(name, nodes, "x", x, tt(dtype), inits), y, what))
    return cases


def channel_shuffle_cases():
    """ShuffleNetV2's channel shuffle as PyTorch exports it: Reshape [N, C, H, W] -> [N, g, C/g, H, W],
    Transpose [0, 2, 1, 3, 4], Reshape back. Integer form (int8 after a QuantizeLinear, 2 groups) and
    the QDQ form ONNX Runtime's quantizer writes (uint8, a DequantizeLinear/QuantizeLinear pair with
    the same parameters around each of the three, 3 groups, batch 2)."""
    from onnx import helper
    rng = np.random.default_rng(20261203)
    f = np.float32
    tt = lambda dtype: onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(dtype)]
    shuffle = lambda a, g: a.reshape(a.shape[0], g, a.shape[1] // g, *a.shape[2:]).transpose(0, 2, 1, 3, 4).reshape(a.shape)
    cases = []
    q = {"xs": 2.0 ** -4, "xz": -7}
    xq = rng.integers(-128, 128, (1, 8, 3, 5)).astype(np.int8)
    x = _dequantize(xq, q["xs"], q["xz"])
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             helper.make_node("Reshape", ["xq", "shape5"], ["x5"]),
             helper.make_node("Transpose", ["x5"], ["t5"], perm=[0, 2, 1, 3, 4]),
             helper.make_node("Reshape", ["t5", "shape4"], ["y"])]
    inits = {"xs": np.array(q["xs"], f), "xz": np.array(q["xz"], np.int8),
             "shape5": np.array([1, 2, 4, 3, 5], np.int64), "shape4": np.array([1, 8, 3, 5], np.int64)}
    cases.append(("extra_shuffle_s8", "x", x, _model("extra_shuffle_s8", nodes, "x", x, tt(np.int8), inits), shuffle(xq, 2),
                  "QuantizeLinear, then the channel shuffle on int8 [1,8,3,5], 2 groups (Reshape to 5-D, Transpose [0,2,1,3,4], Reshape back)"))
    x = rng.integers(0, 256, (2, 12, 2, 3)).astype(np.uint8)
    nodes = [helper.make_node("DequantizeLinear", ["x", "s", "z"], ["xf"]),
             helper.make_node("Reshape", ["xf", "shape5"], ["r5f"]),
             helper.make_node("QuantizeLinear", ["r5f", "s", "z"], ["r5"]),
             helper.make_node("DequantizeLinear", ["r5", "s", "z"], ["r5d"]),
             helper.make_node("Transpose", ["r5d"], ["t5f"], perm=[0, 2, 1, 3, 4]),
             helper.make_node("QuantizeLinear", ["t5f", "s", "z"], ["t5"]),
             helper.make_node("DequantizeLinear", ["t5", "s", "z"], ["t5d"]),
             helper.make_node("Reshape", ["t5d", "shape4"], ["yf"]),
             helper.make_node("QuantizeLinear", ["yf", "s", "z"], ["y"])]
    inits = {"s": np.array(0.0372, f), "z": np.array(131, np.uint8),
             "shape5": np.array([2, 3, 4, 2, 3], np.int64), "shape4": np.array([2, 12, 2, 3], np.int64)}
    cases.append(("extra_shuffle_qdq_u8", "x", x, _model("extra_shuffle_qdq_u8", nodes, "x", x, tt(np.uint8), inits), shuffle(x, 3),
                  "the channel shuffle in the QDQ form (a DequantizeLinear/QuantizeLinear pair around each of Reshape, "
                  "Transpose, Reshape), uint8 [2,12,2,3], 3 groups"))
    return cases


def build():
    files, entries = {}, []
    for name, activations, why, status, refusal in TESTS:
        f, entry = convert(name, activations)
        files.update(f)
        entry = {"name": name, **entry, "why_these_inputs": why, "status": status}
        if refusal:
            entry["refusal"] = refusal
        entries.append(entry)
    for name, x_name, x, model, y, what in extra_cases():
        # one input and output, or lists of (name, array) pairs
        ins = x if isinstance(x, list) else [(x_name, x)]
        outs = y if isinstance(y, list) else [("y", y)]
        files[f"{name}.onnx"] = model.SerializeToString()
        for j, (_, a) in enumerate(ins):
            files[f"{name}.input_{j}.npy"] = npy_bytes(a)
        for k, (_, a) in enumerate(outs):
            files[f"{name}.output_{k}.npy"] = npy_bytes(a)
        entries.append({"name": name, "model": f"{name}.onnx", "operators": [n.op_type for n in model.graph.node],
                        "inputs": [{"file": f"{name}.input_{j}.npy", "name": k, "dtype": str(a.dtype), "shape": list(a.shape)}
                                   for j, (k, a) in enumerate(ins)],
                        "constants": [t.name for t in model.graph.initializer],
                        "outputs": [{"file": f"{name}.output_{k}.npy", "name": o, "dtype": str(a.dtype), "shape": list(a.shape)}
                                    for k, (o, a) in enumerate(outs)],
                        "source": "made by onnx_node_tests.py (not an ONNX test): " + what +
                                  "; expected output computed in numpy, equal to ONNX Runtime's",
                        "why_these_inputs": "the weights are initializers from the start", "status": "bit-exact"})
    manifest = {"source": NODE_TESTS, "made_by": "models/onnx_node_tests.py", "tests": entries}
    files["manifest.json"] = (json.dumps(manifest, indent=1) + "\n").encode()
    return files


def main():
    if not os.path.isdir(NODE_TESTS):
        print(f"{NODE_TESTS} is missing: install Debian's libonnx-testdata")
        sys.exit(77 if "--check" in sys.argv[1:] else 1)  # 77: ctest's "skipped"
    files = build()
    if "--check" in sys.argv[1:]:
        bad = []
        for fname, data in sorted(files.items()):
            path = os.path.join(OUT, fname)
            if not os.path.exists(path) or open(path, "rb").read() != data:
                bad.append(fname)
        stored = set(os.listdir(OUT)) if os.path.isdir(OUT) else set()
        extra = sorted(stored - set(files))
        for b in bad:
            print(f"onnx_node_tests/{b}: differs from what models/onnx_node_tests.py writes")
        for e in extra:
            print(f"onnx_node_tests/{e}: not made by models/onnx_node_tests.py")
        if bad or extra:
            sys.exit(1)
        print(f"onnx_node_tests: {len(files)} files as made by models/onnx_node_tests.py")
        return
    os.makedirs(OUT, exist_ok=True)
    for fname in os.listdir(OUT):
        if fname not in files:
            os.remove(os.path.join(OUT, fname))
    for fname, data in sorted(files.items()):
        with open(os.path.join(OUT, fname), "wb") as f:
            f.write(data)
    print(f"wrote {len(files)} files to {OUT}")


if __name__ == "__main__":
    main()
