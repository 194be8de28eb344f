#!/usr/bin/python3
"""Builds the runtime's kernel-level reference cases from ONNX Runtime.

For every case: a one-operator ONNX model in QOperator form (or a
DequantizeLinear -> op -> QuantizeLinear chain where ORT has no QOperator
form, e.g. Tanh) with random data and varied shapes and parameters, run by
ONNX Runtime (onnxruntime-node, graph optimizations disabled) through
run_ort.js; the case (ONNX-level parameters, inputs, constants, and ORT's
output, all as integer arrays; floats as IEEE-754 bit patterns) is written to
cases/<name>.json, which tests/runtime/kernel_cases_test.cpp replays.

    /usr/bin/python3 tests/runtime/make_kernel_cases.py

Deterministic (fixed seeds); rerun after changing a case and commit cases/.
"""

import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SEARCH_LIMIT = 200  # attempts to find parameters that tell candidate formulas apart
HERE = os.path.dirname(os.path.abspath(__file__))
CASES_DIR = os.path.join(HERE, "cases")
ORT_RUNNER = os.path.join(HERE, "run_ort.js")
sys.path.insert(0, os.path.join(HERE, "..", "..", "models"))
import onnxruntime_node  # noqa: E402

NP_TYPES = {"int8": np.int8, "uint8": np.uint8, "int32": np.int32, "float32": np.float32, "int64": np.int64}
ONNX_TYPES = {
    "int8": TensorProto.INT8,
    "uint8": TensorProto.UINT8,
    "int32": TensorProto.INT32,
    "float32": TensorProto.FLOAT,
    "int64": TensorProto.INT64,
}


def f32(x):
    """A Python float holding exactly the float32 nearest to x."""
    return float(np.float32(x))


def plain(array):
    """JSON form of an array: dtype, dims, flat data (floats as bit patterns)."""
    array = np.asarray(array)
    dtype = str(array.dtype)
    if dtype == "float32":
        data = array.reshape(-1).view(np.uint32).tolist()
    else:
        data = array.reshape(-1).tolist()
    return {"type": dtype, "dims": list(array.shape), "data": data}


def qrange(dtype):
    return (-128, 127) if dtype == "int8" else (0, 255)


def random_q(rng, dtype, shape):
    lo, hi = qrange(dtype)
    return rng.integers(lo, hi + 1, size=shape).astype(NP_TYPES[dtype])


def random_zp(rng, dtype, spread=20):
    lo, hi = qrange(dtype)
    mid = (lo + hi + 1) // 2
    return int(np.clip(mid + rng.integers(-spread, spread + 1), lo, hi))


class Builder:
    """Collects cases: each has a model, its runtime inputs, and the JSON record."""

    def __init__(self):
        self.cases = []

    def add(self, name, op, dtype, nodes, inputs, initializers, output_name, output_dtype, params, consts,
            opset=13):
        graph_inputs = [helper.make_tensor_value_info(n, ONNX_TYPES[str(a.dtype)], list(a.shape)) for n, a in inputs]
        graph = helper.make_graph(
            nodes,
            name,
            graph_inputs,
            [helper.make_tensor_value_info(output_name, ONNX_TYPES[output_dtype], None)],
            [numpy_helper.from_array(np.asarray(a), n) for n, a in initializers],
        )
        model = helper.make_model(
            graph,
            opset_imports=[helper.make_opsetid("", opset), helper.make_opsetid("com.microsoft", 1)],
        )
        model.ir_version = 8
        self.cases.append(
            {
                "name": name,
                "model": model,
                "feeds": [{"name": n, **plain(a)} for n, a in inputs],
                "record": {
                    "name": name,
                    "op": op,
                    "dtype": dtype,
                    "params": params,
                    "inputs": [plain(a) for _, a in inputs],
                    "consts": {k: plain(v) if isinstance(v, np.ndarray) else v for k, v in consts.items()},
                },
            }
        )

    def run(self):
        with tempfile.TemporaryDirectory() as tmp:
            manifest = []
            for i, case in enumerate(self.cases):
                path = os.path.join(tmp, f"{i}.onnx")
                onnx.save(case["model"], path)
                manifest.append({"model": path, "inputs": case["feeds"]})
            manifest_path = os.path.join(tmp, "manifest.json")
            results_path = os.path.join(tmp, "results.json")
            with open(manifest_path, "w") as f:
                json.dump(manifest, f)
            onnxruntime_node.require("make_kernel_cases")
            subprocess.run(["node", ORT_RUNNER, manifest_path, results_path], check=True)
            with open(results_path) as f:
                results = json.load(f)
        os.makedirs(CASES_DIR, exist_ok=True)
        for old in os.listdir(CASES_DIR):
            if old.endswith(".json"):
                os.remove(os.path.join(CASES_DIR, old))
        for case, outputs in zip(self.cases, results):
            record = dict(case["record"])
            record["output"] = outputs[0]
            with open(os.path.join(CASES_DIR, case["name"] + ".json"), "w") as f:
                json.dump(record, f, separators=(",", ":"))
        print(f"wrote {len(self.cases)} cases to {CASES_DIR}")


# ---------------------------------------------------------------------------


def conv_cases(b, rng):
    # (name, x dtype, w dtype, N,C,H,W, OC, (kh,kw), (sh,sw), (pt,pl,pb,pr), (dh,dw), groups, per_channel, bias)
    configs = [
        ("conv_s8_3x3_pad1_perchannel", "int8", "int8", 1, 3, 9, 11, 8, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, True, True),
        ("conv_u8s8_3x3_stride2_asympad", "uint8", "int8", 1, 4, 8, 8, 6, (3, 3), (2, 2), (0, 1, 1, 0), (1, 1), 1, False, True),
        ("conv_u8u8_2x3_dilation2_wzp", "uint8", "uint8", 1, 5, 7, 7, 4, (2, 3), (1, 1), (0, 0, 0, 0), (2, 2), 1, False, False),
        ("conv_s8_depthwise_3x3", "int8", "int8", 1, 8, 10, 10, 8, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 8, True, True),
        ("conv_s8_depthwise_mult2_stride2", "int8", "int8", 1, 4, 9, 9, 8, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 4, True, True),
        ("conv_s8_grouped3", "int8", "int8", 1, 6, 7, 7, 9, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 3, True, True),
        ("conv_s8_pointwise", "int8", "int8", 1, 16, 6, 6, 12, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1, True, True),
        ("conv_u8s8_pointwise_batch2", "uint8", "int8", 2, 5, 4, 3, 7, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1, False, True),
        ("conv_s8_1x1_stride2", "int8", "int8", 1, 8, 7, 7, 4, (1, 1), (2, 2), (0, 0, 0, 0), (1, 1), 1, True, False),
        ("conv_u8u8_depthwise_5x5_wzp", "uint8", "uint8", 1, 6, 8, 8, 6, (5, 5), (1, 1), (2, 2, 2, 2), (1, 1), 6, False, True),
        ("conv_s8_1x5_dilation3", "int8", "int8", 1, 3, 5, 17, 5, (1, 5), (1, 1), (0, 4, 0, 4), (1, 3), 1, True, True),
        ("conv_s8_depthwise_dilation2_stride2", "int8", "int8", 1, 5, 11, 11, 5, (3, 3), (2, 2), (2, 2, 2, 2), (2, 2), 5, True, True),
        ("conv_u8s8_large_k", "uint8", "int8", 1, 32, 5, 5, 6, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1, True, True),
    ]
    for name, xt, wt, n, c, h, w, oc, (kh, kw), (sh, sw), pads, (dh, dw), g, per_channel, with_bias in configs:
        x = random_q(rng, xt, (n, c, h, w))
        x_scale = f32(rng.uniform(0.01, 0.1))
        x_zp = random_zp(rng, xt)
        if wt == "int8":
            weights = random_q(rng, "int8", (oc, c // g, kh, kw))
            w_zp = 0
        else:
            weights = random_q(rng, "uint8", (oc, c // g, kh, kw))
            w_zp = random_zp(rng, "uint8", 30)
        w_scales = (rng.uniform(0.002, 0.02, size=oc) if per_channel else rng.uniform(0.002, 0.02, size=1))
        w_scales = w_scales.astype(np.float32)
        k = (c // g) * kh * kw
        y_scale = f32(x_scale * float(np.mean(w_scales)) * math.sqrt(k) * 74 * 74 / 50)
        y_zp = random_zp(rng, xt)
        bias = rng.integers(-3000, 3000, size=oc).astype(np.int32)
        y_out_h = (h + pads[0] + pads[2] - (dh * (kh - 1) + 1)) // sh + 1
        y_out_w = (w + pads[1] + pads[3] - (dw * (kw - 1) + 1)) // sw + 1
        inits = [
            ("x_scale", np.float32(x_scale)), ("x_zp", np.array(x_zp, dtype=NP_TYPES[xt])),
            ("w", weights), ("w_scale", w_scales if per_channel else np.float32(w_scales[0])),
            ("w_zp", np.array(w_zp, dtype=NP_TYPES[wt])),
            ("y_scale", np.float32(y_scale)), ("y_zp", np.array(y_zp, dtype=NP_TYPES[xt])),
        ]
        node_inputs = ["x", "x_scale", "x_zp", "w", "w_scale", "w_zp", "y_scale", "y_zp"]
        if with_bias:
            inits.append(("bias", bias))
            node_inputs.append("bias")
        node = helper.make_node("QLinearConv", node_inputs, ["y"], kernel_shape=[kh, kw], strides=[sh, sw],
                                pads=[pads[0], pads[1], pads[2], pads[3]], dilations=[dh, dw], group=g)
        params = {"kernel": [kh, kw], "strides": [sh, sw], "pads": list(pads), "dilations": [dh, dw], "group": g,
                  "out_hw": [y_out_h, y_out_w]}
        consts = {"x_scale": x_scale, "x_zp": x_zp, "w": weights, "w_scale": [float(s) for s in w_scales],
                  "w_zp": w_zp, "y_scale": y_scale, "y_zp": y_zp,
                  "bias": bias if with_bias else np.zeros(0, np.int32)}
        b.add(name, "conv", xt, [node], [("x", x)], inits, "y", xt, params, consts)


def telling_conv_cases(b, rng):
    """1x1 convolutions whose accumulators sweep windows where x*w/y and x*(w/y) round apart."""
    for t in ("int8", "uint8"):
        lo, hi = qrange(t)
        oc = 16
        x = np.arange(lo, hi + 1).astype(NP_TYPES[t]).reshape(1, 1, 16, 16)
        x_zp = random_zp(rng, t)
        for _ in range(SEARCH_LIMIT):
            x_scale = np.float32(rng.uniform(0.01, 0.1))
            w_scales = rng.uniform(0.002, 0.02, size=oc).astype(np.float32)
            y_scale = np.float32(rng.uniform(0.5, 4.0))
            bias = np.zeros(oc, np.int32)
            telling = 0
            for c in range(oc):
                m1 = x_scale * w_scales[c] / y_scale
                m2 = x_scale * (w_scales[c] / y_scale)
                if m1 == m2:
                    continue
                accs = np.arange(-200000, 200000, dtype=np.int64)
                r1 = np.rint(accs.astype(np.float32) * m1)
                r2 = np.rint(accs.astype(np.float32) * m2)
                hits = accs[(r1 != r2) & (np.abs(r1) < 100)]
                if hits.size:
                    # weight 1 and zero point 0: acc = bias + (x - x_zp) sweeps 256 values around a hit
                    bias[c] = int(hits[rng.integers(hits.size)]) - rng.integers(0, 256) - (lo - x_zp)
                    telling += 1
            if telling >= 2:
                break
        else:
            raise RuntimeError("no telling conv multipliers found")
        weights = np.ones((oc, 1, 1, 1), np.int8)
        y_zp = random_zp(rng, t, 5)
        inits = [("x_scale", x_scale), ("x_zp", np.array(x_zp, dtype=NP_TYPES[t])), ("w", weights),
                 ("w_scale", w_scales), ("w_zp", np.array(0, np.int8)), ("y_scale", y_scale),
                 ("y_zp", np.array(y_zp, dtype=NP_TYPES[t])), ("bias", bias)]
        node = helper.make_node("QLinearConv", ["x", "x_scale", "x_zp", "w", "w_scale", "w_zp", "y_scale", "y_zp",
                                                "bias"], ["y"], kernel_shape=[1, 1])
        params = {"kernel": [1, 1], "strides": [1, 1], "pads": [0, 0, 0, 0], "dilations": [1, 1], "group": 1,
                  "out_hw": [16, 16]}
        consts = {"x_scale": float(x_scale), "x_zp": x_zp, "w": weights, "w_scale": [float(v) for v in w_scales],
                  "w_zp": 0, "y_scale": float(y_scale), "y_zp": y_zp, "bias": bias}
        b.add(f"conv_{'s8' if t == 'int8' else 'u8'}_telling_multiplier_order", "conv", t, [node], [("x", x)],
              inits, "y", t, params, consts)


def matmul_cases(b, rng):
    configs = [
        ("matmul_s8", "int8", "int8", (3, 20), 10, False),
        ("matmul_u8s8_percolumn", "uint8", "int8", (5, 33), 7, True),
        ("matmul_u8u8_3d", "uint8", "uint8", (2, 3, 16), 5, False),
    ]
    for name, at, bt, a_shape, n_out, per_column in configs:
        k = a_shape[-1]
        a = random_q(rng, at, a_shape)
        a_scale = f32(rng.uniform(0.01, 0.1))
        a_zp = random_zp(rng, at)
        weights = random_q(rng, bt, (k, n_out))
        b_zp = 0 if bt == "int8" else random_zp(rng, "uint8", 30)
        b_scales = rng.uniform(0.002, 0.02, size=n_out if per_column else 1).astype(np.float32)
        y_scale = f32(a_scale * float(np.mean(b_scales)) * math.sqrt(k) * 74 * 74 / 50)
        y_zp = random_zp(rng, at)
        if per_column:
            b_scale_init = b_scales.reshape(1, n_out)
            b_zp_init = np.full((1, n_out), b_zp, dtype=NP_TYPES[bt])
        else:
            b_scale_init = np.float32(b_scales[0])
            b_zp_init = np.array(b_zp, dtype=NP_TYPES[bt])
        inits = [("a_scale", np.float32(a_scale)), ("a_zp", np.array(a_zp, dtype=NP_TYPES[at])), ("b", weights),
                 ("b_scale", b_scale_init), ("b_zp", b_zp_init), ("y_scale", np.float32(y_scale)),
                 ("y_zp", np.array(y_zp, dtype=NP_TYPES[at]))]
        node = helper.make_node("QLinearMatMul", ["a", "a_scale", "a_zp", "b", "b_scale", "b_zp", "y_scale", "y_zp"],
                                ["y"])
        consts = {"x_scale": a_scale, "x_zp": a_zp, "w": weights, "w_scale": [float(s) for s in b_scales],
                  "w_zp": b_zp, "y_scale": y_scale, "y_zp": y_zp}
        b.add(name, "matmul", at, [node], [("a", a)], inits, "y", at, {}, consts)


def pool_out(size, k, s, p0, p1, d=1):
    return (size + p0 + p1 - (d * (k - 1) + 1)) // s + 1


def maxpool_cases(b, rng):
    configs = [
        ("maxpool_s8_3x3_stride2_pad1", "int8", (1, 5, 9, 9), (3, 3), (2, 2), (1, 1, 1, 1), (1, 1)),
        ("maxpool_u8_2x2_stride2", "uint8", (1, 3, 8, 10), (2, 2), (2, 2), (0, 0, 0, 0), (1, 1)),
        ("maxpool_s8_dilation2_pad2", "int8", (1, 4, 9, 8), (3, 3), (1, 1), (2, 2, 2, 2), (2, 2)),
        ("maxpool_u8_1x3_batch2", "uint8", (2, 3, 4, 7), (1, 3), (1, 2), (0, 1, 0, 1), (1, 1)),
    ]
    for name, t, shape, (kh, kw), (sh, sw), pads, (dh, dw) in configs:
        x = random_q(rng, t, shape)
        node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[kh, kw], strides=[sh, sw], pads=list(pads),
                                dilations=[dh, dw])
        params = {"kernel": [kh, kw], "strides": [sh, sw], "pads": list(pads), "dilations": [dh, dw],
                  "out_hw": [pool_out(shape[2], kh, sh, pads[0], pads[2], dh),
                             pool_out(shape[3], kw, sw, pads[1], pads[3], dw)]}
        b.add(name, "maxpool", t, [node], [("x", x)], [], "y", t, params, {})


def qlinear_node(op_type, **attributes):
    """A com.microsoft QLinear operator on one input quantized per tensor: x, x_scale, x_zp, y_scale, y_zp -> y."""
    return helper.make_node(op_type, ["x", "x_scale", "x_zp", "y_scale", "y_zp"], ["y"], domain="com.microsoft",
                            **attributes)


def tanh_qdq_nodes():
    """DequantizeLinear -> Tanh -> QuantizeLinear (ORT has no QLinear form of Tanh)."""
    return [helper.make_node("DequantizeLinear", ["x", "x_scale", "x_zp"], ["xf"]),
            helper.make_node("Tanh", ["xf"], ["yf"]),
            helper.make_node("QuantizeLinear", ["yf", "y_scale", "y_zp"], ["y"])]


def unary_case(b, name, op, t, nodes, x, x_scale, x_zp, y_scale, y_zp, params=None, extra_consts=None, opset=13):
    """A case of one input x and one output y of type t, each quantized per tensor."""
    inits = [("x_scale", np.float32(x_scale)), ("x_zp", np.array(x_zp, dtype=NP_TYPES[t])),
             ("y_scale", np.float32(y_scale)), ("y_zp", np.array(y_zp, dtype=NP_TYPES[t]))]
    consts = {"x_scale": x_scale, "x_zp": x_zp, "y_scale": y_scale, "y_zp": y_zp, **(extra_consts or {})}
    b.add(name, op, t, nodes, [("x", x)], inits, "y", t, params or {}, consts, opset=opset)


def avgpool_case(b, name, t, x, x_scale, x_zp, y_scale, y_zp, kernel, strides, pads, count_include_pad):
    (kh, kw), (sh, sw) = kernel, strides
    node = qlinear_node("QLinearAveragePool", kernel_shape=[kh, kw], strides=[sh, sw], pads=list(pads),
                        count_include_pad=count_include_pad)
    params = {"kernel": [kh, kw], "strides": [sh, sw], "pads": list(pads), "count_include_pad": count_include_pad,
              "out_hw": [pool_out(x.shape[2], kh, sh, pads[0], pads[2]),
                         pool_out(x.shape[3], kw, sw, pads[1], pads[3])]}
    unary_case(b, name, "avgpool", t, [node], x, x_scale, x_zp, y_scale, y_zp, params)


def avgpool_cases(b, rng):
    configs = [
        ("avgpool_s8_3x3_stride2_pad1", "int8", (1, 4, 9, 9), (3, 3), (2, 2), (1, 1, 1, 1), 0),
        ("avgpool_u8_3x3_pad1_include_pad", "uint8", (1, 3, 7, 8), (3, 3), (1, 1), (1, 1, 1, 1), 1),
        ("avgpool_s8_2x2_stride2", "int8", (2, 5, 6, 6), (2, 2), (2, 2), (0, 0, 0, 0), 0),
        ("avgpool_u8_whole_image", "uint8", (1, 6, 5, 7), (5, 7), (1, 1), (0, 0, 0, 0), 0),
        ("avgpool_s8_2x3_asympad", "int8", (1, 3, 7, 9), (2, 3), (1, 2), (0, 1, 1, 0), 0),
        ("avgpool_s8_3x3_include_pad_stride2", "int8", (1, 4, 8, 8), (3, 3), (2, 2), (1, 1, 1, 1), 1),
    ]
    for name, t, shape, kernel, strides, pads, include_pad in configs:
        x = random_q(rng, t, shape)
        x_scale, x_zp = f32(rng.uniform(0.01, 0.1)), random_zp(rng, t)
        y_scale, y_zp = f32(x_scale * rng.uniform(0.5, 1.5)), random_zp(rng, t)
        avgpool_case(b, name, t, x, x_scale, x_zp, y_scale, y_zp, kernel, strides, pads, include_pad)


def global_avgpool_cases(b, rng):
    configs = [
        ("gavgpool_s8", "int8", (1, 16, 7, 7)),
        ("gavgpool_u8_batch2", "uint8", (2, 10, 5, 6)),
        ("gavgpool_s8_1x1_image", "int8", (1, 3, 1, 1)),
        ("gavgpool_u8_large_image", "uint8", (1, 4, 20, 20)),
    ]
    for name, t, shape in configs:
        x = random_q(rng, t, shape)
        x_scale, x_zp = f32(rng.uniform(0.01, 0.1)), random_zp(rng, t)
        y_scale, y_zp = f32(x_scale * rng.uniform(0.3, 1.2)), random_zp(rng, t)
        node = qlinear_node("QLinearGlobalAveragePool", channels_last=0)
        unary_case(b, name, "gavgpool", t, [node], x, x_scale, x_zp, y_scale, y_zp)


BINARY_SHAPES = [
    ("same", (1, 8, 5, 5), (1, 8, 5, 5)),
    ("perchannel_b", (1, 8, 5, 5), (1, 8, 1, 1)),
    ("scalar_b", (1, 6, 4, 3), ()),
    ("perchannel_a", (1, 7, 1, 1), (1, 7, 3, 5)),
    ("lastdim_b", (1, 4, 5, 6), (6,)),
    ("rank2", (4, 33), (4, 33)),
    ("rank2_row_b", (5, 9), (1, 9)),
]


def fma32(x, y, z):
    """float32 fused multiply-add (exact in double for these magnitudes, rounded once)."""
    return (np.float64(x) * np.float64(y) + np.float64(z)).astype(np.float32)


def sat_round(v, t):
    lo, hi = qrange(t)
    return np.clip(np.rint(v.astype(np.float64)), lo, hi).astype(np.int64)


def add_variants(t, a, b, q):
    """QLinearAdd results under ORT's AVX2 formula and nearby ones that round differently."""
    a, b = a.astype(np.float32), b.astype(np.float32)
    ra, rb, fixed, fixed_fused_a, fixed_fused_b = q
    return [
        sat_round(fma32(a, ra, fma32(b, rb, fixed_fused_a)), t),  # ORT: B folded in first, A last
        sat_round(fma32(b, rb, fma32(a, ra, fixed_fused_a)), t),  # the operands the other way round
        sat_round(fma32(a, ra, fixed_fused_a + b * rb), t),  # B folded in without an FMA
        sat_round(a * ra + (b * rb + fixed), t),  # no fused multiply-add at all
        sat_round(a * ra + fma32(b, rb, fixed_fused_a), t),
        sat_round(fma32(a, ra, fma32(b, rb, fixed)), t),  # fixed part without an FMA
        sat_round(fma32(a, ra, fma32(b, rb, fixed_fused_b)), t),  # ... with the FMA on B's product
    ]


def mul_variants(t, a, b, q):
    ratio, other_ratio, za, zb, zc = q
    prod = ((a.astype(np.int64) - za) * (b.astype(np.int64) - zb)).astype(np.float32)
    return [
        sat_round(prod * np.float32(ratio) + np.float32(zc), t),  # SSE2 path: multiply, then add
        sat_round(fma32(prod, np.float32(ratio), np.float32(zc)), t),
        sat_round(np.rint(prod * np.float32(ratio)) + zc, t),
        sat_round(prod * np.float32(other_ratio) + np.float32(zc), t),  # A * (B / C)
    ]


def telling_grid(t, variants, q, ref, alt):
    """All (a, b) pairs whose results differ between variant `ref` and variant `alt`."""
    lo, hi = qrange(t)
    grid_a, grid_b = np.meshgrid(np.arange(lo, hi + 1), np.arange(lo, hi + 1), indexing="ij")
    grid_a, grid_b = grid_a.reshape(-1), grid_b.reshape(-1)
    results = variants(t, grid_a, grid_b, q)
    differ = np.flatnonzero(results[ref] != results[alt])
    return grid_a[differ], grid_b[differ]


def binary_model(b, op, onnx_op, t, name, a, bb, scales):
    a_scale, a_zp, b_scale, b_zp, c_scale, c_zp = scales
    inits = [("a_scale", np.float32(a_scale)), ("a_zp", np.array(a_zp, dtype=NP_TYPES[t])),
             ("b_scale", np.float32(b_scale)), ("b_zp", np.array(b_zp, dtype=NP_TYPES[t])),
             ("c_scale", np.float32(c_scale)), ("c_zp", np.array(c_zp, dtype=NP_TYPES[t]))]
    node = helper.make_node(onnx_op, ["a", "a_scale", "a_zp", "b", "b_scale", "b_zp", "c_scale", "c_zp"], ["c"],
                            domain="com.microsoft")
    consts = {"a_scale": a_scale, "a_zp": a_zp, "b_scale": b_scale, "b_zp": b_zp, "c_scale": c_scale, "c_zp": c_zp}
    b.add(name, op, t, [node], [("a", a), ("b", bb)], inits, "c", t, {}, consts)


def random_binary_scales(rng, op, t):
    a_scale, a_zp = f32(rng.uniform(0.01, 0.1)), random_zp(rng, t)
    b_scale, b_zp = f32(rng.uniform(0.01, 0.1)), random_zp(rng, t)
    if op == "add":
        c_scale = f32((a_scale + b_scale) * rng.uniform(0.6, 1.0))
    else:
        c_scale = f32(a_scale * b_scale * 128 * rng.uniform(0.5, 1.0))
    return a_scale, a_zp, b_scale, b_zp, c_scale, random_zp(rng, t)


def add_constants(scales):
    a_scale, a_zp, b_scale, b_zp, c_scale, c_zp = scales
    ra, rb = np.float32(a_scale) / np.float32(c_scale), np.float32(b_scale) / np.float32(c_scale)
    fixed = np.float32(c_zp) - (ra * np.float32(a_zp) + rb * np.float32(b_zp))
    fixed_fused_a = np.float32(c_zp) - fma32(ra, np.float32(a_zp), rb * np.float32(b_zp))
    fixed_fused_b = np.float32(c_zp) - fma32(rb, np.float32(b_zp), ra * np.float32(a_zp))
    return ra, rb, fixed, fixed_fused_a, fixed_fused_b


def binary_cases(b, rng):
    for op, onnx_op in (("add", "QLinearAdd"), ("mul", "QLinearMul")):
        for t in ("int8", "uint8"):
            sfx = "s8" if t == "int8" else "u8"
            for tag, a_shape, b_shape in BINARY_SHAPES:
                binary_model(b, op, onnx_op, t, f"{op}_{sfx}_{tag}", random_q(rng, t, a_shape),
                             random_q(rng, t, b_shape), random_binary_scales(rng, op, t))
            # Inputs chosen where the candidate float formulas round differently, so that only
            # ORT's exact sequence of operations reproduces ORT: for each alternative formula,
            # scales under which some inputs tell it apart from ORT's.
            lo, hi = qrange(t)
            variants = add_variants if op == "add" else mul_variants
            # (name, ORT's formula for this broadcast form, the shapes)
            # (ORT's formula, in terms of the searched a and b, is variant 0 for every form: for the
            # per-channel A form the model swaps the operands and ORT swaps them back.)
            forms = [("same", 0), ("perchannel_b", 0), ("perchannel_a", 0)] if op == "add" else [
                ("same", 0), ("perchannel_b", 0)]
            for form, ref in forms:
                for alt in range(len(variants(t, np.zeros(1), np.zeros(1), (1, 1, 0, 0, 0) if op == "mul" else
                                              (np.float32(1), np.float32(1), np.float32(0), np.float32(0), np.float32(0))))):
                    if alt == ref:
                        continue
                    for _ in range(SEARCH_LIMIT):
                        scales = random_binary_scales(rng, op, t)
                        if op == "add":
                            q = add_constants(scales)
                        else:
                            sa, sb, sc = np.float32(scales[0]), np.float32(scales[2]), np.float32(scales[4])
                            q = (f32(sa * sb / sc), f32(sa * (sb / sc)), scales[1], scales[3], scales[5])
                        ga, gb = telling_grid(t, variants, q, ref, alt)
                        if ga.size:
                            break
                    else:
                        print(f"{op} {t} {form}: no input tells formula {alt} from {ref}")
                        continue
                    pick = rng.permutation(ga.size)[:16]
                    name = f"{op}_{sfx}_telling_{form}_vs_{alt}"
                    if form == "same":
                        a = np.concatenate([ga[pick], rng.integers(lo, hi + 1, 64 - pick.size)])
                        bb = np.concatenate([gb[pick], rng.integers(lo, hi + 1, 64 - pick.size)])
                        binary_model(b, op, onnx_op, t, name, a.astype(NP_TYPES[t]).reshape(1, 64),
                                     bb.astype(NP_TYPES[t]).reshape(1, 64), scales)
                        continue
                    # One channel per telling pair: the per-channel operand holds b, the other a.
                    channels = 16
                    per_channel = rng.integers(lo, hi + 1, channels)
                    full = rng.integers(lo, hi + 1, (1, channels, 2, 3))
                    per_channel[:pick.size] = gb[pick]
                    full[0, :pick.size, 0, 0] = ga[pick]
                    per_channel = per_channel.astype(NP_TYPES[t]).reshape(1, channels, 1, 1)
                    full = full.astype(NP_TYPES[t])
                    if form == "perchannel_b":
                        binary_model(b, op, onnx_op, t, name, full, per_channel, scales)
                    else:  # A per channel: the same pairs with the operands' roles and scales swapped
                        swapped = (scales[2], scales[3], scales[0], scales[1], scales[4], scales[5])
                        binary_model(b, op, onnx_op, t, name, per_channel, full, swapped)


def concat_cases(b, rng):
    configs = [
        ("concat_s8_axis1_copy_and_requant", "int8", 1, [(1, 3, 4, 4), (1, 5, 4, 4), (1, 2, 4, 4)]),
        ("concat_u8_axis3", "uint8", 3, [(1, 2, 3, 4), (1, 2, 3, 1), (1, 2, 3, 5)]),
        ("concat_s8_axis2", "int8", 2, [(2, 3, 2, 4), (2, 3, 5, 4)]),
        ("concat_u8_axis0", "uint8", 0, [(1, 3, 2, 2), (2, 3, 2, 2)]),
        ("concat_s8_rank2_axis1", "int8", 1, [(3, 7), (3, 2), (3, 9)]),
    ]
    for name, t, axis, shapes in configs:
        y_scale, y_zp = f32(rng.uniform(0.02, 0.08)), random_zp(rng, t)
        inputs, inits, node_inputs, scales, zps = [], [], ["y_scale", "y_zp"], [], []
        inits += [("y_scale", np.float32(y_scale)), ("y_zp", np.array(y_zp, dtype=NP_TYPES[t]))]
        for i, shape in enumerate(shapes):
            if i == 0:
                s, z = y_scale, y_zp  # same parameters as the output: ORT copies
            else:
                s, z = f32(rng.uniform(0.01, 0.1)), random_zp(rng, t)
            inputs.append((f"x{i}", random_q(rng, t, shape)))
            inits += [(f"s{i}", np.float32(s)), (f"z{i}", np.array(z, dtype=NP_TYPES[t]))]
            node_inputs += [f"x{i}", f"s{i}", f"z{i}"]
            scales.append(s)
            zps.append(z)
        node = helper.make_node("QLinearConcat", node_inputs, ["y"], domain="com.microsoft", axis=axis)
        consts = {"scales": scales, "zps": zps, "y_scale": y_scale, "y_zp": y_zp}
        b.add(name, "concat", t, [node], inputs, inits, "y", t, {"axis": axis}, consts)


def softmax_cases(b, rng):
    configs = [
        ("softmax_s8_rows", "int8", (4, 10), -1, 13, 0.08),
        ("softmax_u8_rows", "uint8", (3, 37), -1, 13, 0.05),
        ("softmax_s8_nchw_axis1", "int8", (1, 6, 3, 3), 1, 13, 0.1),
        ("softmax_u8_opset12_flatten", "uint8", (2, 3, 4), 1, 12, 0.03),
        ("softmax_s8_wide_scale", "int8", (2, 16), -1, 13, 0.5),
    ]
    for name, t, shape, axis, opset, x_scale in configs:
        x = random_q(rng, t, shape)
        x_scale = f32(x_scale)
        x_zp = random_zp(rng, t)
        y_scale = f32(1.0 / 256.0)
        y_zp = -128 if t == "int8" else 0
        node = qlinear_node("QLinearSoftmax", axis=axis, opset=opset)
        unary_case(b, name, "softmax", t, [node], x, x_scale, x_zp, y_scale, y_zp,
                   {"axis": axis, "opset": opset, "integer_rule": 1})


def lookup_cases(b, rng):
    for t in ("int8", "uint8"):
        sfx = "s8" if t == "int8" else "u8"
        all_values = np.arange(qrange(t)[0], qrange(t)[1] + 1).astype(NP_TYPES[t]).reshape(1, 1, 16, 16)
        for i, x_scale in enumerate((0.1, 0.02, 0.25)):
            x_zp = random_zp(rng, t)
            y_scale, y_zp = f32(1.0 / 256.0), (-128 if t == "int8" else 0)
            unary_case(b, f"sigmoid_{sfx}_{i}", "sigmoid", t, [qlinear_node("QLinearSigmoid")], all_values,
                       f32(x_scale), x_zp, y_scale, y_zp)
        for i, (alpha, x_scale) in enumerate(((0.1, 0.05), (0.01, 0.2))):
            x_zp, y_zp = random_zp(rng, t), random_zp(rng, t)
            y_scale = f32(x_scale * 0.9)
            unary_case(b, f"leakyrelu_{sfx}_{i}", "leakyrelu", t, [qlinear_node("QLinearLeakyRelu", alpha=alpha)],
                       all_values, f32(x_scale), x_zp, y_scale, y_zp, extra_consts={"alpha": f32(alpha)})
        for i, x_scale in enumerate((0.03, 0.01, 0.08)):
            x_zp = random_zp(rng, t)
            y_scale, y_zp = f32(1.0 / 128.0), (0 if t == "int8" else 128)
            unary_case(b, f"tanh_qdq_{sfx}_{i}", "tanh", t, tanh_qdq_nodes(), all_values, f32(x_scale), x_zp,
                       y_scale, y_zp)


LOGISTIC = dict(lo=-18.0, hi=18.0, p=[4.37031012579801e-11, 1.15627324459942e-07, 6.08574864600143e-05,
                                      8.51377133304701e-03, 2.48287947061529e-01],
                q=[6.10247389755681e-13, 5.76102136993427e-09, 6.29106785017040e-06, 1.70198817374094e-03,
                   1.16817656904453e-01, 9.93151921023180e-01])
TANH = dict(lo=-9.0, hi=9.0, p=[-2.76076847742355e-16, 2.00018790482477e-13, -8.60467152213735e-11,
                                5.12229709037114e-08, 1.48572235717979e-05, 6.37261928875436e-04,
                                4.89352455891786e-03],
            q=[1.19825839466702e-06, 1.18534705686654e-04, 2.26843463243900e-03, 4.89352518554385e-03])


def mlas_rational(x, coeffs, fused):
    """MLAS's logistic/tanh polynomial: with FMA (the FMA3 kernels) or without (the SSE2 kernel)."""
    f = np.float32
    x = np.clip(x.astype(np.float32), f(coeffs["lo"]), f(coeffs["hi"]))
    x2 = x * x
    step = (lambda u, v, w: fma32(u, f(v), f(w))) if fused else (lambda u, v, w: u * f(v) + f(w))
    p = step(x2, coeffs["p"][0], coeffs["p"][1])
    for c in coeffs["p"][2:]:
        p = (fma32(x2, p, f(c)) if fused else x2 * p + f(c)).astype(np.float32)
    q = step(x2, coeffs["q"][0], coeffs["q"][1])
    for c in coeffs["q"][2:]:
        q = (fma32(x2, q, f(c)) if fused else x2 * q + f(c)).astype(np.float32)
    return (x * p) / q


def lut(t, fn, x_scale, x_zp, y_scale, y_zp):
    lo, hi = qrange(t)
    values = np.arange(lo, hi + 1)
    deq = np.float32(x_scale) * (values - x_zp).astype(np.float32)
    return np.clip(np.rint(fn(deq) / np.float32(y_scale)) + y_zp, lo, hi)


def telling_lookup_cases(b, rng):
    """Sigmoid/Tanh scales where MLAS with and without FMA give different 8-bit tables: such
    scales are rare (about one input in 50000), so they are searched for over many scales at once."""
    sigmoid_fused = lambda v: np.maximum(np.float32(0), mlas_rational(v, LOGISTIC, True) + np.float32(0.5))
    sigmoid_plain = lambda v: np.clip(mlas_rational(v, LOGISTIC, False) + np.float32(0.5), 0, 1)
    tanh_fused = lambda v: mlas_rational(v, TANH, True)
    tanh_plain = lambda v: mlas_rational(v, TANH, False)
    for t in ("int8", "uint8"):
        sfx = "s8" if t == "int8" else "u8"
        lo, hi = qrange(t)
        all_values = np.arange(lo, hi + 1).astype(NP_TYPES[t]).reshape(1, 1, 16, 16)
        for op, fused, plain_fn, y_scale, y_zp in (
                ("sigmoid", sigmoid_fused, sigmoid_plain, f32(1.0 / 256.0), -128 if t == "int8" else 0),
                ("tanh", tanh_fused, tanh_plain, f32(1.0 / 128.0), 0 if t == "int8" else 128)):
            steps = np.arange(-127, 128).astype(np.float32)
            found = []
            for _ in range(SEARCH_LIMIT):
                scales = rng.uniform(0.002, 0.1, size=20000).astype(np.float32)
                v = (scales[:, None] * steps[None, :]).reshape(-1)
                differ = np.rint(fused(v) / np.float32(y_scale)) != np.rint(plain_fn(v) / np.float32(y_scale))
                for hit in np.flatnonzero(differ)[:2 - len(found)]:
                    found.append((float(scales[hit // steps.size]), int(steps[hit % steps.size])))
                if len(found) == 2:
                    break
            else:
                raise RuntimeError(f"no telling {op} scale found")
            for i, (x_scale, step) in enumerate(found):
                x_zp = 0 if t == "int8" else int(np.clip(128 - step, 0, 255)) if 0 <= 128 + step <= 255 else 128
                x_zp = int(np.clip(x_zp, max(lo, lo - step), min(hi, hi - step)))
                nodes = [qlinear_node("QLinearSigmoid")] if op == "sigmoid" else tanh_qdq_nodes()
                unary_case(b, f"{op}_{sfx}_telling_fma_{i}", op, t, nodes, all_values, x_scale, x_zp, y_scale, y_zp)


def softmax_reference(t, x, x_scale, y_scale, y_zp, log_in_float, floor_scale):
    """ORT's QLinearSoftmax over the last axis for finite quotients (no overflow)."""
    d = x.shape[-1]
    if log_in_float:
        shift = float(np.log(np.float32(np.finfo(np.float32).max) / np.float32(d)))
    else:
        shift = math.log(float(np.float32(np.finfo(np.float32).max) / np.float32(d)))
    shift = max(0.0, shift - 5.0) / float(np.float32(x_scale))
    table = np.array([np.float32(math.exp((i - 255 + shift) * float(np.float32(x_scale)))) for i in range(256)],
                     np.float32)
    if t == "int8":
        table = np.roll(table, -128)  # entry of i stored at byte (i - 128)
    scale = np.float32(math.floor(np.float32(1.0) / np.float32(y_scale))) if floor_scale else (
        np.float32(1.0) / np.float32(y_scale))
    out = []
    for row in x.reshape(-1, d).astype(np.int64):
        idx = (row + (127 if t == "int8" else 255) - row.max()) & 0xFF
        total = np.float32(0)
        for v in table[idx]:
            total = np.float32(total + v)
        out.append(np.rint((table[idx] * scale) / total) + y_zp)
    return np.array(out)


def telling_softmax_cases(b, rng):
    """Softmax inputs whose outputs depend on how ORT forms the table and the output scale."""
    for t in ("int8", "uint8"):
        sfx = "s8" if t == "int8" else "u8"
        for i in range(2):
            for _ in range(SEARCH_LIMIT):
                d = int(rng.integers(3, 40))
                x = random_q(rng, t, (8, d))
                x_scale = f32(rng.uniform(0.01, 0.3))
                y_scale = f32(rng.uniform(0.7, 1.0) / 256.0)
                y_zp = -128 if t == "int8" else 0
                ref = softmax_reference(t, x, x_scale, y_scale, y_zp, False, True)
                # The output scale must be floor(1 / y_scale) (the log of the table's shift is
                # pinned by edge_softmax_cases).
                if (softmax_reference(t, x, x_scale, y_scale, y_zp, False, False) != ref).any():
                    break
            else:
                raise RuntimeError("no telling softmax input found")
            x_zp = random_zp(rng, t)
            node = qlinear_node("QLinearSoftmax", axis=-1, opset=13)
            unary_case(b, f"softmax_{sfx}_telling_{i}", "softmax", t, [node], x, x_scale, x_zp, y_scale, y_zp,
                       {"axis": -1, "opset": 13, "integer_rule": 1})


def dominant_softmax_cases(b):
    """Two-class rows where one logit dominates, output scale 1/256: the winner's exact result is
    256 + zero point. int8 (zero point -128) gets 128, which ORT 1.31's QLinearSoftmax saturates to
    127 (ORT 1.23 capped it at 255 only, so it wrapped to -128); the QDQ form (DequantizeLinear ->
    Softmax -> QuantizeLinear, run in float) saturates to 127 too. uint8 (zero point 0) gets 255."""
    for t in ("int8", "uint8"):
        sfx = "s8" if t == "int8" else "u8"
        lo, hi = qrange(t)
        mid = (lo + hi + 1) // 2
        rows = [(hi, lo), (lo, hi), (hi, mid), (hi - 10, lo + 5), (mid, mid), (mid + 3, mid)]
        x = np.array(rows, dtype=NP_TYPES[t])
        y_scale, y_zp = f32(1.0 / 256.0), (-128 if t == "int8" else 0)
        x_zp = mid
        node = qlinear_node("QLinearSoftmax", axis=-1, opset=13)
        unary_case(b, f"softmax_{sfx}_dominant", "softmax", t, [node], x, f32(0.1), x_zp, y_scale, y_zp,
                   {"axis": -1, "opset": 13, "integer_rule": 1})
        nodes = [helper.make_node("DequantizeLinear", ["x", "x_scale", "x_zp"], ["xf"]),
                 helper.make_node("Softmax", ["xf"], ["yf"], axis=-1),
                 helper.make_node("QuantizeLinear", ["yf", "y_scale", "y_zp"], ["y"])]
        unary_case(b, f"softmax_qdq_{sfx}_dominant", "softmax", t, nodes, x, f32(0.1), x_zp, y_scale, y_zp,
                   {"axis": -1, "opset": 13, "integer_rule": 0})


def edge_softmax_cases(b):
    """QLinearSoftmax where ORT's exact arithmetic shows (cases found by tests/difftest, there
    under found/softmax-*): (1) rows of equal maxima whose quotient lands on a .5 with a table
    built from logf, 1 LSB the other way with log in double; (2) rows of one value with
    floor(1 / y_scale) above e^5 = 148, where e * floor(1 / y_scale) overflows float to inf and
    ORT's cast to int32 (int8) or uint32 (uint8) gives x86's out-of-range value: the zero point
    alone for uint8 (0 + zero point); for int8, INT32_MIN + zero point saturates to -128 with a
    zero point >= 0, and to 127 with a negative one (the sum wraps to a large positive value)."""
    ties = [("softmax_s8_equal_maxima_logf", "int8", [[-41, -13, -13, -70, -13, -13, -37, -74, -34]],
             0.9654597640037537, 1.0 / 255.0, -128),
            ("softmax_s8_equal_row_logf", "int8", [[45] * 6, [-3] * 6], 1.0, 0.005828063935041428, -45)]
    for name, t, rows, x_scale, y_scale, y_zp in ties:
        x = np.array(rows, dtype=NP_TYPES[t])
        x_scale, y_scale = f32(x_scale), f32(y_scale)
        in_float = softmax_reference(t, x, x_scale, y_scale, y_zp, True, True)
        if (softmax_reference(t, x, x_scale, y_scale, y_zp, False, True) == in_float).all():
            raise RuntimeError(f"{name} no longer tells the log in float from the log in double")
        node = qlinear_node("QLinearSoftmax", axis=-1, opset=13)
        unary_case(b, name, "softmax", t, [node], x, x_scale, 0, y_scale, y_zp,
                   {"axis": -1, "opset": 13, "integer_rule": 1})
    overflows = [("softmax_u8_row_of_one_overflows", "uint8", 0.00461000669747591, 231),
                 ("softmax_s8_row_of_one_overflows_zp_positive", "int8", 1.0 / 200.0, 5),
                 ("softmax_s8_row_of_one_overflows_zp_negative", "int8", 1.0 / 200.0, -45)]
    for name, t, y_scale, y_zp in overflows:
        lo, hi = qrange(t)
        x = np.array([[lo], [0], [hi]], dtype=NP_TYPES[t])
        node = qlinear_node("QLinearSoftmax", axis=-1, opset=13)
        unary_case(b, name, "softmax", t, [node], x, f32(1.0 / 256.0), 0, f32(y_scale), y_zp,
                   {"axis": -1, "opset": 13, "integer_rule": 1})


def hard_cases(b, rng):
    """HardSigmoid (ONNX's default alpha 0.2 and PyTorch's 1/6) and HardSwish (opset 14) between
    DequantizeLinear and QuantizeLinear, on every input level: ORT has no QLinear form."""
    for t in ("int8", "uint8"):
        sfx = "s8" if t == "int8" else "u8"
        lo, hi = qrange(t)
        all_values = np.arange(lo, hi + 1).astype(NP_TYPES[t]).reshape(1, 1, 16, 16)
        for i, (alpha, beta, x_scale) in enumerate(((0.2, 0.5, 0.05), (1.0 / 6.0, 0.5, 0.04), (0.3, 0.2, 0.02))):
            alpha, beta = f32(alpha), f32(beta)
            y_scale, y_zp = f32(1.0 / 255.0), (-128 if t == "int8" else 0)
            nodes = [helper.make_node("DequantizeLinear", ["x", "x_scale", "x_zp"], ["xf"]),
                     helper.make_node("HardSigmoid", ["xf"], ["yf"], alpha=alpha, beta=beta),
                     helper.make_node("QuantizeLinear", ["yf", "y_scale", "y_zp"], ["y"])]
            unary_case(b, f"hard_sigmoid_{sfx}_{i}", "hard_sigmoid", t, nodes, all_values, f32(x_scale),
                       random_zp(rng, t), y_scale, y_zp, extra_consts={"alpha": alpha, "beta": beta})
        for i, x_scale in enumerate((0.05, 0.03, 0.1)):
            x_zp = random_zp(rng, t)
            real_lo, real_hi = x_scale * (lo - x_zp), x_scale * (hi - x_zp)
            y_lo = -0.375  # HardSwish's minimum, at x = -1.5
            y_scale = f32((real_hi - y_lo) / 255.0 * rng.uniform(0.8, 1.0))
            y_zp = int(np.clip(round(lo - y_lo / y_scale), lo, hi))
            nodes = [helper.make_node("DequantizeLinear", ["x", "x_scale", "x_zp"], ["xf"]),
                     helper.make_node("HardSwish", ["xf"], ["yf"]),
                     helper.make_node("QuantizeLinear", ["yf", "y_scale", "y_zp"], ["y"])]
            unary_case(b, f"hard_swish_{sfx}_{i}", "hard_swish", t, nodes, all_values, f32(x_scale), x_zp, y_scale,
                       y_zp, opset=14)


def avgpool_reference(t, x, x_scale, x_zp, y_scale, y_zp, variant):
    """QLinearAveragePool 3x3, stride 1, pads 1, count_include_pad 0 on NCHW x, vectorized over windows:
    taps added in row-major order as ORT does ("ort"), or with a reciprocal, or as an integer sum."""
    lo, hi = qrange(t)
    _, c, h, w = x.shape
    xs, ys = np.float32(x_scale), np.float32(y_scale)
    padded = np.zeros((c, h + 2, w + 2), np.int64)
    valid = np.zeros((c, h + 2, w + 2), bool)
    padded[:, 1:-1, 1:-1] = x[0]
    valid[:, 1:-1, 1:-1] = True
    total = np.zeros((c, h, w), np.float32)
    int_total = np.zeros((c, h, w), np.int64)
    count = np.zeros((c, h, w), np.int64)
    for dy in range(3):
        for dx in range(3):
            v = padded[:, dy:dy + h, dx:dx + w]
            m = valid[:, dy:dy + h, dx:dx + w]
            total = np.where(m, total + xs * (v - x_zp).astype(np.float32), total).astype(np.float32)
            int_total += np.where(m, v - x_zp, 0)
            count += m
    if variant == "int_sum":
        total = (xs * int_total.astype(np.float32)).astype(np.float32)
    if variant == "reciprocal":
        total = total * (np.float32(1) / count.astype(np.float32))
    else:
        total = total / count.astype(np.float32)
    return np.clip(np.rint(total.astype(np.float32) / ys + np.float32(y_zp)), lo, hi)


def telling_avgpool_search(b, rng, kind, shape, kernel, pads, tells):
    """Per type, the average pool avgpool_<type>_telling_<kind> (unit strides, padding excluded from
    the count) on the first random input of `shape` for which tells(t, x, x_scale, x_zp, y_scale,
    y_zp) holds. y_scale = x_scale puts exact averages such as k / 6 = n + 0.5 on rounding ties,
    where the order of the float operations decides the result."""
    for t in ("int8", "uint8"):
        sfx = "s8" if t == "int8" else "u8"
        for _ in range(SEARCH_LIMIT):
            x = random_q(rng, t, shape)
            x_scale, x_zp = f32(rng.uniform(0.01, 0.1)), random_zp(rng, t)
            y_scale, y_zp = x_scale, random_zp(rng, t, 3)
            if tells(t, x, x_scale, x_zp, y_scale, y_zp):
                break
        else:
            raise RuntimeError(f"no telling {kind} average pool input found")
        avgpool_case(b, f"avgpool_{sfx}_telling_{kind}", t, x, x_scale, x_zp, y_scale, y_zp, kernel, (1, 1), pads, 0)


def telling_avgpool_cases(b, rng):
    """Average pools where summing in another order or dividing by a reciprocal would round differently."""
    def tells(t, x, x_scale, x_zp, y_scale, y_zp):
        ref = avgpool_reference(t, x, x_scale, x_zp, y_scale, y_zp, "ort")
        return all((avgpool_reference(t, x, x_scale, x_zp, y_scale, y_zp, v) != ref).any()
                   for v in ("reciprocal", "int_sum"))

    telling_avgpool_search(b, rng, "float_order", (1, 4, 8, 8), (3, 3), (1, 1, 1, 1), tells)


def telling_whole_image_avgpool_cases(b, rng):
    """A pool over the whole image, where ORT's integer global-pool path and its float path differ
    (a 6-element window puts averages like k / 6 = n + 0.5 on ties)."""
    def tells(t, x, x_scale, x_zp, y_scale, y_zp):
        lo, hi = qrange(t)
        flat = x.reshape(64, 6).astype(np.int64)
        multiplier = np.float32(x_scale) / (np.float32(y_scale) * np.float32(6))
        integer = np.clip(np.rint(np.float32(1) * (flat.sum(1) - x_zp * 6).astype(np.float32) * multiplier) + y_zp,
                          lo, hi)
        total = np.zeros(64, np.float32)
        for k in range(6):
            total = (total + np.float32(x_scale) * (flat[:, k] - x_zp).astype(np.float32)).astype(np.float32)
        floating = np.clip(np.rint((total / np.float32(6)) / np.float32(y_scale) + np.float32(y_zp)), lo, hi)
        return (integer != floating).any()

    telling_avgpool_search(b, rng, "whole_image", (1, 64, 2, 3), (2, 3), (0, 0, 0, 0), tells)


def layout_cases(b, rng):
    pad_configs = [
        ("pad_s8_spatial", "int8", (1, 3, 4, 5), [0, 0, 1, 2, 0, 0, 2, 1]),
        ("pad_u8_channels_and_batch", "uint8", (1, 2, 3, 3), [1, 1, 0, 0, 0, 2, 1, 1]),
    ]
    for name, t, shape, pads in pad_configs:
        x = random_q(rng, t, shape)
        value = random_zp(rng, t)
        inits = [("pads", np.array(pads, dtype=np.int64)), ("value", np.array(value, dtype=NP_TYPES[t]))]
        node = helper.make_node("Pad", ["x", "pads", "value"], ["y"], mode="constant")
        b.add(name, "pad", t, [node], [("x", x)], inits, "y", t, {"pads": pads, "value": value}, {})

    resize_configs = [
        ("resize_s8_asymmetric_floor_x2", "int8", (1, 3, 4, 5), [1, 1, 2, 2], None, "asymmetric", "floor"),
        ("resize_u8_half_pixel_prefer_floor", "uint8", (1, 2, 6, 5), [1, 1, 1.5, 0.6], None, "half_pixel",
         "round_prefer_floor"),
        ("resize_s8_sizes_half_pixel_prefer_ceil", "int8", (1, 3, 5, 4), None, [1, 3, 7, 3], "half_pixel",
         "round_prefer_ceil"),
        ("resize_u8_align_corners", "uint8", (2, 2, 3, 4), [1, 1, 2.5, 1.75], None, "align_corners",
         "round_prefer_floor"),
        ("resize_s8_pytorch_half_pixel", "int8", (1, 2, 5, 7), None, [1, 2, 3, 11], "pytorch_half_pixel",
         "round_prefer_floor"),
        ("resize_s8_tf_half_pixel_ceil", "int8", (1, 2, 4, 4), [1, 1, 1.7, 3.0], None, "tf_half_pixel_for_nn",
         "ceil"),
    ]
    for name, t, shape, scales, sizes, coord, nearest in resize_configs:
        x = random_q(rng, t, shape)
        inits = [("roi", np.zeros(0, np.float32))]
        if scales is not None:
            scales_arr = np.array(scales, dtype=np.float32)
            inits.append(("scales", scales_arr))
            node_inputs = ["x", "roi", "scales"]
            out = [int(math.floor(d * float(s))) for d, s in zip(shape, scales_arr)]
            axis_scales = [float(s) for s in scales_arr]
        else:
            inits.append(("sizes", np.array(sizes, dtype=np.int64)))
            node_inputs = ["x", "roi", "", "sizes"]
            out = list(sizes)
            axis_scales = [f32(np.float32(o) / np.float32(i)) for o, i in zip(sizes, shape)]
        node = helper.make_node("Resize", node_inputs, ["y"], mode="nearest", coordinate_transformation_mode=coord,
                                nearest_mode=nearest)
        params = {"out_dims": out, "scales": axis_scales, "coordinate_mode": coord, "nearest_mode": nearest}
        b.add(name, "resize", t, [node], [("x", x)], inits, "y", t, params, {})

    transpose_configs = [
        ("transpose_s8_nchw_to_nhwc", "int8", (2, 3, 4, 5), [0, 2, 3, 1]),
        ("transpose_u8_rank2", "uint8", (3, 4), [1, 0]),
        ("transpose_s8_rank3", "int8", (2, 3, 4), [2, 0, 1]),
        ("transpose_u8_rank4_reverse", "uint8", (2, 3, 2, 5), [3, 2, 1, 0]),
    ]
    for name, t, shape, perm in transpose_configs:
        x = random_q(rng, t, shape)
        node = helper.make_node("Transpose", ["x"], ["y"], perm=perm)
        b.add(name, "transpose", t, [node], [("x", x)], [], "y", t, {"perm": perm}, {})


def quantize_cases(b, rng):
    for t in ("int8", "uint8"):
        sfx = "s8" if t == "int8" else "u8"
        scale, zp = f32(0.0731), random_zp(rng, t)
        ties = (np.arange(-40, 40) + 0.5).astype(np.float32) * np.float32(scale)
        wide = rng.uniform(-12, 12, size=64).astype(np.float32)
        # Values within a few ulps of the ties (n + 0.5) * scale, where x / scale and
        # x * (1 / scale) can round to different integers.
        near_ties = (np.arange(-120, 120) + 0.5).astype(np.float32) * np.float32(scale)
        candidates = near_ties.view(np.int32)[:, None] + np.arange(-4, 5, dtype=np.int32)[None, :]
        candidates = candidates.reshape(-1).view(np.float32)
        by_division = np.rint(candidates / np.float32(scale))
        by_reciprocal = np.rint(candidates * (np.float32(1) / np.float32(scale)))
        telling = candidates[by_division != by_reciprocal][:32]
        assert telling.size > 0, "no input tells x / scale from x * (1 / scale)"
        x = np.concatenate([ties, wide, telling, np.array([0.0, -0.0, 1e6, -1e6], np.float32)])
        inits = [("scale", np.float32(scale)), ("zp", np.array(zp, dtype=NP_TYPES[t]))]
        node = helper.make_node("QuantizeLinear", ["x", "scale", "zp"], ["y"])
        b.add(f"quantize_{sfx}", "quantize", t, [node], [("x", x)], inits, "y", t, {}, {"scale": scale, "zp": zp})

        q = random_q(rng, t, (97,))
        dscale, dzp = f32(rng.uniform(0.001, 0.3)), random_zp(rng, t)
        inits = [("scale", np.float32(dscale)), ("zp", np.array(dzp, dtype=NP_TYPES[t]))]
        node = helper.make_node("DequantizeLinear", ["x", "scale", "zp"], ["y"])
        b.add(f"dequantize_{sfx}", "dequantize", t, [node], [("x", q)], inits, "y", "float32", {},
              {"scale": dscale, "zp": dzp})


def main():
    rng = np.random.default_rng(20261130)
    b = Builder()
    conv_cases(b, rng)
    telling_conv_cases(b, rng)
    matmul_cases(b, rng)
    maxpool_cases(b, rng)
    avgpool_cases(b, rng)
    global_avgpool_cases(b, rng)
    binary_cases(b, rng)
    concat_cases(b, rng)
    softmax_cases(b, rng)
    lookup_cases(b, rng)
    telling_lookup_cases(b, rng)
    telling_softmax_cases(b, rng)
    telling_avgpool_cases(b, rng)
    telling_whole_image_avgpool_cases(b, rng)
    layout_cases(b, rng)
    quantize_cases(b, rng)
    dominant_softmax_cases(b)
    edge_softmax_cases(b)
    hard_cases(b, np.random.default_rng(20261201))
    b.run()


if __name__ == "__main__":
    sys.exit(main())
