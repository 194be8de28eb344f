#!/usr/bin/python3
"""Fixtures for the float Exp, Log, Erf and Softmax kernels (runtime/include/tightfit/float_math.hpp).

Each model multiplies two dequantized activations, a [R, 1] and b [1, C] (a float island: the
products of R levels of a and C levels of b, up to R * C distinct values over the function's range), then
runs the function on the products and writes float32 graph output y: so the test sees the float
kernel's bits, not a quantization of them. `gelu` is PyTorch's export of GELU on one dequantized
input, x * 0.5 * (1 + Erf(x / sqrt 2)), ending in QuantizeLinear (a float island inside a model).

For each, under models/float_math/: float_NAME.onnx, .input_0.npy (a), .input_1.npy (b, where
the model has it) and manifest.json (the bound tests/codegen/float_math_check.py holds, in units in
the last place of ORT's float32 result, or in LSB for gelu; Softmax's outputs below 2^-126 within
2^-126). ORT's outputs, float_NAME.output_0.npy, are written by `node models/float_math_ort.mjs`
(ORT 1.31.1, CPU, optimizations disabled).

usage: models/float_math_models.py     write the models and inputs (deterministic), then run the .mjs
"""
import json
import os

import numpy as np
import onnx
from onnx import helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "float_math")
f = np.float32


def model(name, nodes, inputs, inits, y_shape, y_type=onnx.TensorProto.FLOAT):
    graph = helper.make_graph(nodes, name,
                              [helper.make_tensor_value_info(k, onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[v.dtype],
                                                             list(v.shape)) for k, v in inputs],
                              [helper.make_tensor_value_info("y", y_type, list(y_shape))],
                              [numpy_helper.from_array(v, k) for k, v in inits.items()])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="float_math_models.py")
    m.ir_version = 7
    onnx.checker.check_model(m, full_check=True)
    return m


def product_model(name, op_nodes, a_type, a_scale, a_zp, b_type, b_scale, b_zp, rows, cols):
    """y = op(DequantizeLinear(a) * DequantizeLinear(b)); a [rows, 1] and b [1, cols], levels from the lowest to
    the highest evenly (every level where there are 256)."""
    a = (np.arange(rows) * 255 // (rows - 1) + np.iinfo(a_type).min).astype(a_type).reshape(rows, 1)
    b = (np.arange(cols) * 255 // (cols - 1) + np.iinfo(b_type).min).astype(b_type).reshape(1, cols)
    nodes = [helper.make_node("DequantizeLinear", ["a", "as", "az"], ["af"]),
             helper.make_node("DequantizeLinear", ["b", "bs", "bz"], ["bf"]),
             helper.make_node("Mul", ["af", "bf"], ["p"])] + op_nodes
    inits = {"as": np.array(a_scale, f), "az": np.array(a_zp, a_type),
             "bs": np.array(b_scale, f), "bz": np.array(b_zp, b_type)}
    return model(name, nodes, [("a", a), ("b", b)], inits, (rows, cols)), [a, b]


def main():
    os.makedirs(OUT, exist_ok=True)
    cases = []
    # Exp over [-230, 230]: both clamps of MLAS's exp, the subnormal results and everything between.
    cases.append(("exp", *product_model("exp", [helper.make_node("Exp", ["p"], ["y"])],
                                        np.int8, 0.9, 0, np.uint8, 1 / 64, 0, 128, 128), 1,
                  "Exp of the products of 128 int8 levels (scale 0.9) and 128 uint8 levels (scale 1/64): [-230, 230]"))
    # Log from the subnormals (scale 2^-70 * 2^-70) to 4e4, and log(0).
    cases.append(("log", *product_model("log", [helper.make_node("Log", ["p"], ["y"])],
                                        np.uint8, 2.0 ** -70, 0, np.uint8, 2.0 ** -70 * 3.1, 0, 128, 128), 1,
                  "Log of the products of 128 and 128 uint8 levels, scales 2^-70 and 3.1 * 2^-70 (zero and subnormals included)"))
    cases.append(("log_wide", *product_model("log_wide", [helper.make_node("Log", ["p"], ["y"])],
                                             np.uint8, 0.37, 0, np.uint8, 1.3, 0, 128, 128), 1,
                  "Log of the products of 128 and 128 uint8 levels, scales 0.37 and 1.3: [0, 84000]"))
    cases.append(("erf", *product_model("erf", [helper.make_node("Erf", ["p"], ["y"])],
                                        np.int8, 0.04, 0, np.uint8, 1 / 255, 0, 128, 128), 2,
                  "Erf of the products of 128 int8 levels (scale 0.04) and 128 uint8 levels (scale 1/255): [-5.12, 5.08]"))
    # Softmax over rows of 37 (not a multiple of MLAS's 4 or 8 lanes) and of 256.
    cases.append(("softmax37", *product_model("softmax37", [helper.make_node("Softmax", ["p"], ["y"], axis=-1)],
                                              np.int8, 0.1, 0, np.uint8, 0.05, 100, 256, 37), 7,
                  "Softmax over the last axis of [256, 37] float products (a float island to a float graph output)"))
    cases.append(("softmax256", *product_model("softmax256", [helper.make_node("Softmax", ["p"], ["y"], axis=-1)],
                                               np.int8, 0.3, 0, np.uint8, 0.02, 128, 64, 256), 7,
                  "Softmax over the last axis of [64, 256] float products"))
    # GELU as PyTorch exports it, between DequantizeLinear and QuantizeLinear.
    x = np.arange(-128, 128, dtype=np.int8).reshape(1, 256)
    nodes = [helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["xf"]),
             helper.make_node("Div", ["xf", "sqrt2"], ["d"]), helper.make_node("Erf", ["d"], ["e"]),
             helper.make_node("Add", ["e", "one"], ["e1"]), helper.make_node("Mul", ["xf", "e1"], ["m"]),
             helper.make_node("Mul", ["m", "half"], ["g"]), helper.make_node("QuantizeLinear", ["g", "ys", "yz"], ["y"])]
    inits = {"xs": np.array(0.035, f), "xz": np.array(0, np.int8), "sqrt2": np.array(1.4142135, f),
             "one": np.array(1.0, f), "half": np.array(0.5, f), "ys": np.array(0.02, f), "yz": np.array(-100, np.int8)}
    cases.append(("gelu", model("gelu", nodes, [("x", x)], inits, x.shape, onnx.TensorProto.INT8), [x], 0,
                  "GELU as PyTorch exports it (Div, Erf, Add, Mul, Mul) between DequantizeLinear and QuantizeLinear, every int8 level"))

    # Float at both edges: a chain on the float graph input before its QuantizeLinear (Mul, Exp) and
    # one after the last DequantizeLinear (Log) to a float graph output.
    x = np.linspace(-9.0, 9.0, 256, dtype=f).reshape(1, 256)
    nodes = [helper.make_node("Mul", ["x", "half"], ["h"]), helper.make_node("Exp", ["h"], ["e"]),
             helper.make_node("QuantizeLinear", ["e", "s", "z"], ["q"]), helper.make_node("DequantizeLinear", ["q", "s", "z"], ["d"]),
             helper.make_node("Log", ["d"], ["y"])]
    inits = {"half": np.array(0.5, f), "s": np.array(0.36, f), "z": np.array(0, np.uint8)}
    cases.append(("edges", model("edges", nodes, [("x", x)], inits, x.shape), [x], 1,
                  "Mul by 0.5 and Exp on the float graph input before its QuantizeLinear, Log after the DequantizeLinear"))

    manifest = []
    for name, m, inputs, bound, what in cases:
        stem = "float_" + name  # not `exp`, `log`, `erf`: the file's stem names the generated code's namespace
        onnx.save(m, os.path.join(OUT, f"{stem}.onnx"))
        files = []
        for i, v in enumerate(inputs):
            files.append(f"{stem}.input_{i}.npy")
            np.save(os.path.join(OUT, files[-1]), v)
        # Softmax: where ORT's output is below 2^-126 (a subnormal: exp's underflow, then times 1 / sum) it may
        # be 0 here, the bound is then 2^-126 in absolute value.
        entry = {"name": name, "model": f"{stem}.onnx", "inputs": files, "output": f"{stem}.output_0.npy",
                 "bound": bound, "unit": "LSB" if name == "gelu" else "ulp", "what": what}
        if name.startswith("softmax"):
            entry["absolute_below"] = 2.0 ** -126
        manifest.append(entry)
    with open(os.path.join(OUT, "manifest.json"), "w") as out:
        json.dump({"models": manifest}, out, indent=1)
        out.write("\n")


if __name__ == "__main__":
    main()
