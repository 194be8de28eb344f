#!/usr/bin/python3
"""Makes the import tests' models: malformed ones in bad/ and small well-formed ones in good/.

Run from anywhere:  /usr/bin/python3 tests/import/make_bad_models.py
Every file in bad/ and good/ comes from this script; never edit them by hand. Each bad model
breaks exactly one thing, named by its file; tests/import/bad_models_test.cpp pins the message.
"""
import os
import shutil

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
BAD = os.path.join(HERE, "bad")
GOOD = os.path.join(HERE, "good")

OPSET = 13


def model(nodes, inputs, outputs, initializers=(), opset=OPSET, extra_opsets=(), value_info=()):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers), value_info=list(value_info))
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in extra_opsets]
    m = helper.make_model(graph, opset_imports=opsets, producer_name="tightfit-tests")
    m.ir_version = 8
    return m


def save(folder, name, m):
    onnx.save(m, os.path.join(folder, name))


def const(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def scalar(name, value, dtype):
    return numpy_helper.from_array(np.array(value, dtype=dtype), name)


def float_input(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def conv_qdq(w_scale=None, w_zp=None, relu="Relu", bias=True, act_dtype=np.uint8, x_shape=(1, 2, 5, 5),
             bias_scale=None, out_quantized=True):
    """x -> Q -> DQ -> Conv(3x3, 4 out, pad 1) [-> Relu/Clip] -> Q -> DQ -> y, weights per-channel int8."""
    rng = np.random.default_rng(1)
    cout, cin = 4, x_shape[1]
    w = rng.integers(-100, 100, size=(cout, cin, 3, 3)).astype(np.int8)
    w_scale = np.array([0.01, 0.02, 0.015, 0.03], np.float32) if w_scale is None else np.asarray(w_scale, np.float32)
    w_zp = np.zeros(len(w_scale), np.int8) if w_zp is None else w_zp
    x_scale = np.float32(0.05)
    x_zp = act_dtype(128 if act_dtype == np.uint8 else 0)
    y_scale = np.float32(0.1)
    y_zp = act_dtype(10 if act_dtype == np.uint8 else -20)
    inits = [scalar("x_scale", x_scale, np.float32), scalar("x_zp", x_zp, act_dtype), const("w", w),
             const("w_scale", w_scale), const("w_zp", w_zp) if not isinstance(w_zp, onnx.TensorProto) else w_zp,
             scalar("y_scale", y_scale, np.float32), scalar("y_zp", y_zp, act_dtype)]
    nodes = [helper.make_node("QuantizeLinear", ["x", "x_scale", "x_zp"], ["xq"], name="quant_x"),
             helper.make_node("DequantizeLinear", ["xq", "x_scale", "x_zp"], ["xf"], name="dequant_x"),
             helper.make_node("DequantizeLinear", ["w", "w_scale", "w_zp"], ["wf"], name="dequant_w", axis=0)]
    conv_inputs = ["xf", "wf"]
    if bias:
        b_scale = (x_scale * w_scale).astype(np.float32) if bias_scale is None else np.asarray(bias_scale, np.float32)
        inits += [const("b", np.array([100, -200, 300, 0], np.int32)), const("b_scale", b_scale),
                  const("b_zp", np.zeros(cout, np.int32))]
        nodes.append(helper.make_node("DequantizeLinear", ["b", "b_scale", "b_zp"], ["bf"], name="dequant_b", axis=0))
        conv_inputs.append("bf")
    nodes.append(helper.make_node("Conv", conv_inputs, ["conv_out"], name="conv", pads=[1, 1, 1, 1]))
    last = "conv_out"
    if relu == "Relu":
        nodes.append(helper.make_node("Relu", [last], ["act_out"], name="relu"))
        last = "act_out"
    elif relu == "Clip":
        inits += [scalar("clip_min", 0.0, np.float32), scalar("clip_max", 6.0, np.float32)]
        nodes.append(helper.make_node("Clip", [last, "clip_min", "clip_max"], ["act_out"], name="clip"))
        last = "act_out"
    if out_quantized:
        nodes += [helper.make_node("QuantizeLinear", [last, "y_scale", "y_zp"], ["yq"], name="quant_y"),
                  helper.make_node("DequantizeLinear", ["yq", "y_scale", "y_zp"], ["y"], name="dequant_y")]
    else:
        nodes.append(helper.make_node("Identity", [last], ["y"], name="identity"))
    y_shape = [x_shape[0], cout, x_shape[2], x_shape[3]]
    return model(nodes, [float_input("x", list(x_shape))], [float_input("y", y_shape)], inits)


def qop_model(extra_attr=None):
    """QOperator form: Q -> QLinearConv -> QLinearAdd(with itself) -> QLinearGlobalAveragePool
    -> QLinearSigmoid -> QLinearConcat(two branches) -> DequantizeLinear."""
    rng = np.random.default_rng(2)
    w = rng.integers(-50, 50, size=(3, 2, 1, 1)).astype(np.int8)
    inits = [scalar("s_x", 0.05, np.float32), scalar("z_x", 0, np.int8), const("w", w),
             const("s_w", np.array([0.01, 0.02, 0.03], np.float32)), const("z_w", np.zeros(3, np.int8)),
             scalar("s_c", 0.1, np.float32), scalar("z_c", -5, np.int8), const("b", np.array([1, 2, 3], np.int32)),
             scalar("s_a", 0.2, np.float32), scalar("z_a", 3, np.int8), scalar("s_p", 0.15, np.float32),
             scalar("z_p", 0, np.int8), scalar("s_s", 1.0 / 256, np.float32), scalar("z_s", -128, np.int8),
             scalar("s_o", 0.25, np.float32), scalar("z_o", 1, np.int8)]
    sig_attrs = dict(extra_attr or {})
    nodes = [helper.make_node("QuantizeLinear", ["x", "s_x", "z_x"], ["xq"], name="quant_x"),
             helper.make_node("QLinearConv", ["xq", "s_x", "z_x", "w", "s_w", "z_w", "s_c", "z_c", "b"], ["c"], name="qconv"),
             helper.make_node("QLinearAdd", ["c", "s_c", "z_c", "c", "s_c", "z_c", "s_a", "z_a"], ["a"], name="qadd",
                              domain="com.microsoft"),
             helper.make_node("QLinearGlobalAveragePool", ["a", "s_a", "z_a", "s_p", "z_p"], ["p"], name="qgap",
                              domain="com.microsoft", channels_last=0),
             helper.make_node("QLinearSigmoid", ["p", "s_p", "z_p", "s_s", "z_s"], ["s"], name="qsigmoid",
                              domain="com.microsoft", **sig_attrs),
             helper.make_node("QLinearConcat", ["s_o", "z_o", "s", "s_s", "z_s", "p", "s_p", "z_p"], ["o"], name="qconcat",
                              domain="com.microsoft", axis=1),
             helper.make_node("DequantizeLinear", ["o", "s_o", "z_o"], ["y"], name="dequant_y")]
    return model(nodes, [float_input("x", [1, 2, 4, 4])], [float_input("y", [1, 6, 1, 1])], inits,
                 extra_opsets=[("com.microsoft", 1)])


def matmul_qdq(flatten_input=False):
    """x[2,3] -> Q/DQ -> MatMul(W[3,4] int8 per-column) -> Q -> DQ -> y: FullyConnected, W^T. With
    flatten_input, x is [2,1,3] and a Flatten reads it before the QuantizeLinear, as ORT's quantizer
    leaves a view of a float graph input."""
    w = np.arange(12, dtype=np.int8).reshape(3, 4)
    inits = [scalar("s", 0.1, np.float32), scalar("z", 0, np.int8), const("w", w),
             const("w_scale", np.array([0.1, 0.2, 0.3, 0.4], np.float32)), const("w_zp", np.zeros(4, np.int8))]
    nodes = [helper.make_node("QuantizeLinear", ["x2" if flatten_input else "x", "s", "z"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["xf"]),
             helper.make_node("DequantizeLinear", ["w", "w_scale", "w_zp"], ["wf"], axis=1),
             helper.make_node("MatMul", ["xf", "wf"], ["m"], name="matmul"),
             helper.make_node("QuantizeLinear", ["m", "s", "z"], ["yq"]),
             helper.make_node("DequantizeLinear", ["yq", "s", "z"], ["y"])]
    if flatten_input:
        nodes.insert(0, helper.make_node("Flatten", ["x"], ["x2"], name="flatten", axis=1))
    return model(nodes, [float_input("x", [2, 1, 3] if flatten_input else [2, 3])], [float_input("y", [2, 4])], inits)


def flatten_gemm_qdq(flattened_output=False):
    """x[1,3,4,4] -> Q/DQ (uint8) -> Conv(3x3, 4 out, pad 1) -> Relu -> Q/DQ -> Flatten -> Gemm(W[5,64]
    int8 per-row, transB) -> Q -> DQ -> y[1,5]: a classifier head on an image of 16 pixels, whose
    flatten is free in channels-last memory once the weights' columns are permuted. With
    flattened_output the flattened image is a graph output too, which keeps it in ONNX's order."""
    rng = np.random.default_rng(7)
    inits = [scalar("s", 0.05, np.float32), scalar("z", 128, np.uint8), scalar("s1", 0.08, np.float32),
             scalar("z1", 0, np.uint8), scalar("s2", 0.3, np.float32), scalar("z2", 120, np.uint8),
             const("w", rng.integers(-90, 90, size=(4, 3, 3, 3)).astype(np.int8)), scalar("w_scale", 0.02, np.float32),
             scalar("w_zp", 0, np.int8), const("v", rng.integers(-127, 127, size=(5, 64)).astype(np.int8)),
             const("v_scale", np.array([0.01, 0.02, 0.005, 0.015, 0.03], np.float32)),
             const("v_zp", np.zeros(5, np.int8))]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["xf"]),
             helper.make_node("DequantizeLinear", ["w", "w_scale", "w_zp"], ["wf"]),
             helper.make_node("Conv", ["xf", "wf"], ["c"], name="conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("QuantizeLinear", ["r", "s1", "z1"], ["rq"]),
             helper.make_node("DequantizeLinear", ["rq", "s1", "z1"], ["rf"]),
             helper.make_node("Flatten", ["rf"], ["f"], name="flatten", axis=1),
             helper.make_node("DequantizeLinear", ["v", "v_scale", "v_zp"], ["vf"], axis=0),
             helper.make_node("Gemm", ["f", "vf"], ["g"], name="gemm", transB=1),
             helper.make_node("QuantizeLinear", ["g", "s2", "z2"], ["yq"]),
             helper.make_node("DequantizeLinear", ["yq", "s2", "z2"], ["y"])]
    outputs = [float_input("y", [1, 5])] + ([float_input("f", [1, 64])] if flattened_output else [])
    return model(nodes, [float_input("x", [1, 3, 4, 4])], outputs, inits)


def add_constant_qdq(constant_node):
    """x[1,6] -> Q/DQ -> Add(c) -> Q -> DQ -> y, c [6] a float constant quantized as ORT's quantizer
    leaves a Constant node (its own QuantizeLinear/DequantizeLinear pair), or, without
    constant_node, c stored already quantized (the same int8 values, numpy's rounding half to even
    and saturation) behind a DequantizeLinear. c has two ties (0.25, -0.35 / 0.1) and a saturating
    value (20.0)."""
    c = np.array([0.25, -0.35, 1.0, 20.0, -0.04, 0.0], np.float32)
    inits = [scalar("s", 0.1, np.float32), scalar("z", 3, np.int8)]
    if constant_node:
        nodes = [helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(c, "c")),
                 helper.make_node("QuantizeLinear", ["c", "s", "z"], ["cq"])]
    else:
        q = np.clip(np.round(c / np.float32(0.1)) + 3, -128, 127).astype(np.int8)
        inits.append(const("cq", q))
        nodes = []
    nodes += [helper.make_node("DequantizeLinear", ["cq", "s", "z"], ["cf"]),
              helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"]),
              helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["xf"]),
              helper.make_node("Add", ["xf", "cf"], ["a"], name="add"),
              helper.make_node("QuantizeLinear", ["a", "s", "z"], ["aq"]),
              helper.make_node("DequantizeLinear", ["aq", "s", "z"], ["y"])]
    return model(nodes, [float_input("x", [1, 6])], [float_input("y", [1, 6])], inits)


def clamp_qdq(op, constant_first=False, pool=False, requantize_before_pool=False):
    """x[1,2,4,4] -> Q/DQ (int8) -> op -> [MaxPool 2x2 ->] Q/DQ (other parameters) -> y, op a
    Max or Min of the activation and a one-element constant off the quantization grid (as tf2onnx
    writes a clamp and ORT's quantizer leaves it float), or the Clip with the same bound. With
    requantize_before_pool the op's output has its own QuantizeLinear/DequantizeLinear before the
    MaxPool: the same values in the integer domain."""
    bound = np.float32(0.37 if op in ("Min", "ClipMax") else -0.43)
    inits = [scalar("s", 0.1, np.float32), scalar("z", -5, np.int8), scalar("s2", 0.07, np.float32),
             scalar("z2", 10, np.int8), scalar("c", bound, np.float32)]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["xf"])]
    if op == "Clip":
        nodes.append(helper.make_node("Clip", ["xf", "c"], ["m"], name="clamp"))
    elif op == "ClipMax":
        nodes.append(helper.make_node("Clip", ["xf", "", "c"], ["m"], name="clamp"))
    else:
        nodes.append(helper.make_node(op, ["c", "xf"] if constant_first else ["xf", "c"], ["m"], name="clamp"))
    last = "m"
    if requantize_before_pool:
        nodes += [helper.make_node("QuantizeLinear", ["m", "s2", "z2"], ["mq"]),
                  helper.make_node("DequantizeLinear", ["mq", "s2", "z2"], ["mf"])]
        last = "mf"
    if pool:
        nodes.append(helper.make_node("MaxPool", [last], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]))
        last = "p"
    nodes += [helper.make_node("QuantizeLinear", [last, "s2", "z2"], ["yq"]),
              helper.make_node("DequantizeLinear", ["yq", "s2", "z2"], ["y"])]
    return model(nodes, [float_input("x", [1, 2, 4, 4])], [float_input("y", [1, 2, 2, 2] if pool else [1, 2, 4, 4])], inits)


def movement_qdq():
    """DQ -> MaxPool -> Q (same params: alias), DQ -> Reshape -> Q (other params: Requantize),
    and a Concat of two differently quantized inputs (Requantize + Concat)."""
    inits = [scalar("s", 0.1, np.float32), scalar("z", 5, np.uint8), scalar("s2", 0.2, np.float32),
             scalar("z2", 7, np.uint8), const("shape", np.array([1, -1], np.int64))]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["xf"]),
             helper.make_node("MaxPool", ["xf"], ["mp"], name="maxpool", kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("QuantizeLinear", ["mp", "s", "z"], ["mpq"]),
             helper.make_node("DequantizeLinear", ["mpq", "s", "z"], ["mpf"]),
             helper.make_node("Reshape", ["mpf", "shape"], ["r"], name="reshape"),
             helper.make_node("QuantizeLinear", ["r", "s2", "z2"], ["rq"], name="requant"),
             helper.make_node("DequantizeLinear", ["rq", "s2", "z2"], ["rf"]),
             helper.make_node("Reshape", ["xf", "shape"], ["r0"], name="reshape_x"),
             helper.make_node("Concat", ["rf", "r0"], ["cat"], name="concat", axis=1),
             helper.make_node("QuantizeLinear", ["cat", "s2", "z2"], ["catq"], name="quant_cat"),
             helper.make_node("DequantizeLinear", ["catq", "s2", "z2"], ["y"])]
    return model(nodes, [float_input("x", [1, 1, 4, 4])], [float_input("y", [1, 20])], inits)


def relu_qdq(out_scale):
    """x -> Q -> DQ -> Relu -> Q(scale out_scale) -> DQ -> y: a Relu with no operator to fuse into."""
    inits = [scalar("s", 0.1, np.float32), scalar("z", -10, np.int8), scalar("s_out", out_scale, np.float32)]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["xf"]),
             helper.make_node("Relu", ["xf"], ["r"], name="relu"),
             helper.make_node("QuantizeLinear", ["r", "s_out", "z"], ["rq"]),
             helper.make_node("DequantizeLinear", ["rq", "s_out", "z"], ["y"])]
    return model(nodes, [float_input("x", [1, 8])], [float_input("y", [1, 8])], inits)


def convinteger_qdq():
    """x -> Q -> ConvInteger -> DequantizeLinear(int32, x_scale * w_scale) -> Q -> DQ -> y."""
    w = np.array([[[[1, -2], [3, 4]]]], np.int8)
    inits = [scalar("s", 0.1, np.float32), scalar("z", 3, np.uint8), const("w", w),
             scalar("acc_scale", np.float32(0.1) * np.float32(0.5), np.float32), scalar("acc_zp", 0, np.int32),
             scalar("s_out", 0.2, np.float32), scalar("z_out", 0, np.int8)]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"]),
             helper.make_node("ConvInteger", ["xq", "w", "z"], ["acc"], name="convinteger"),
             helper.make_node("DequantizeLinear", ["acc", "acc_scale", "acc_zp"], ["accf"]),
             helper.make_node("QuantizeLinear", ["accf", "s_out", "z_out"], ["yq"], name="requantize"),
             helper.make_node("DequantizeLinear", ["yq", "s_out", "z_out"], ["y"])]
    return model(nodes, [float_input("x", [1, 1, 3, 3])], [float_input("y", [1, 1, 2, 2])], inits)


def with_external_data(m, location):
    """Moves the initializer 'w' into external data at `location` (relative to the model)."""
    for t in m.graph.initializer:
        if t.name == "w":
            t.ClearField("raw_data")
            t.data_location = TensorProto.EXTERNAL
            t.external_data.add(key="location", value=location)
            t.external_data.add(key="offset", value="0")
            t.external_data.add(key="length", value=str(int(np.prod(t.dims))))
    return m


def make_good():
    save(GOOD, "conv_relu_qdq.onnx", conv_qdq())
    save(GOOD, "conv_clip_int8_qdq.onnx", conv_qdq(relu="Clip", act_dtype=np.int8))
    save(GOOD, "qop_branches.onnx", qop_model())
    save(GOOD, "matmul_qdq.onnx", matmul_qdq())
    save(GOOD, "matmul_flatten_input_qdq.onnx", matmul_qdq(flatten_input=True))
    save(GOOD, "movement_qdq.onnx", movement_qdq())
    save(GOOD, "max_constant_qdq.onnx", clamp_qdq("Max", constant_first=True))
    save(GOOD, "max_constant_twin_clip_qdq.onnx", clamp_qdq("Clip"))
    save(GOOD, "min_constant_qdq.onnx", clamp_qdq("Min"))
    save(GOOD, "min_constant_twin_clip_qdq.onnx", clamp_qdq("ClipMax"))
    save(GOOD, "max_constant_maxpool_qdq.onnx", clamp_qdq("Max", pool=True))
    save(GOOD, "max_constant_maxpool_twin_qdq.onnx", clamp_qdq("Max", pool=True, requantize_before_pool=True))
    save(GOOD, "add_constant_node_qdq.onnx", add_constant_qdq(constant_node=True))
    save(GOOD, "add_constant_initializer_qdq.onnx", add_constant_qdq(constant_node=False))
    save(GOOD, "convinteger_qdq.onnx", convinteger_qdq())
    save(GOOD, "flatten_gemm_qdq.onnx", flatten_gemm_qdq())
    save(GOOD, "flatten_gemm_twin_qdq.onnx", flatten_gemm_qdq(flattened_output=True))
    save(GOOD, "relu_same_scale_qdq.onnx", relu_qdq(0.1))
    save(GOOD, "relu_new_scale_qdq.onnx", relu_qdq(0.05))
    unsorted = conv_qdq()
    nodes = list(unsorted.graph.node)
    del unsorted.graph.node[:]
    unsorted.graph.node.extend(reversed(nodes))
    save(GOOD, "unsorted_nodes.onnx", unsorted)
    dynamic = conv_qdq()
    dynamic.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "N"
    save(GOOD, "dynamic_batch.onnx", dynamic)  # compiled at batch 1
    # External data: the weight bytes in a file beside the model.
    ext = conv_qdq()
    w = next(numpy_helper.to_array(t) for t in ext.graph.initializer if t.name == "w")
    w.tofile(os.path.join(GOOD, "external_weights.bin"))
    save(GOOD, "external_data.onnx", with_external_data(ext, "external_weights.bin"))


def make_bad():
    good = conv_qdq().SerializeToString()
    open(os.path.join(BAD, "empty.onnx"), "wb").close()
    with open(os.path.join(BAD, "truncated.onnx"), "wb") as f:
        f.write(good[: len(good) // 2])
    with open(os.path.join(BAD, "wrong_magic.onnx"), "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)

    # A float model: Conv with float weights, nothing quantized.
    save(BAD, "float_only.onnx", model([helper.make_node("Conv", ["x", "w"], ["y"], name="conv")],
                                       [float_input("x", [1, 1, 4, 4])], [float_input("y", [1, 1, 2, 2])],
                                       [const("w", np.ones((1, 1, 3, 3), np.float32))]))
    # A float model like Silero VAD: an int64 input and an If whose branches hold an LSTM; the
    # refusal names what is missing besides the quantization (the If and Equal, not the LSTM).
    hidden, lstm_x = 2, [1, 1, 3]
    w = np.ones((1, 4 * hidden, 3), np.float32)
    r = np.ones((1, 4 * hidden, hidden), np.float32)
    branch = [helper.make_graph([helper.make_node("LSTM", ["x", "w", "r"], [f"y_{k}"], hidden_size=hidden)],
                                f"branch_{k}", [], [helper.make_tensor_value_info(f"y_{k}", TensorProto.FLOAT, None)])
              for k in range(2)]
    save(BAD, "float_if_lstm.onnx",
         model([helper.make_node("Equal", ["sr", "sr16k"], ["is16k"], name="equal"),
                helper.make_node("If", ["is16k"], ["y"], name="if", then_branch=branch[0], else_branch=branch[1])],
               [float_input("x", lstm_x), helper.make_tensor_value_info("sr", TensorProto.INT64, [])],
               [float_input("y", [1, 1, 1, hidden])],
               [const("w", w), const("r", r), const("sr16k", np.array(16000, np.int64))]))
    # A quantized model with one float operator in the middle (Hardmax is not carried).
    m = conv_qdq()
    for n in m.graph.node:
        if n.name == "dequant_y":
            n.output[0] = "yf"
    m.graph.node.append(helper.make_node("Hardmax", ["yf"], ["y"], name="hardmax"))
    save(BAD, "unsupported_operator.onnx", m)
    # Three unsupported operators, one of them unnamed: inspect --json lists them all.
    m = conv_qdq()
    for n in m.graph.node:
        if n.name == "dequant_y":
            n.output[0] = "yf"
    m.graph.node.extend([helper.make_node("Hardmax", ["yf"], ["e"], name="hardmax"),
                         helper.make_node("Sin", ["e"], ["s"]),
                         helper.make_node("Cos", ["s"], ["y"], name="cos")])
    save(BAD, "unsupported_operators.onnx", m)
    # A float64 graph input.
    m = conv_qdq()
    m.graph.input.append(helper.make_tensor_value_info("d", TensorProto.DOUBLE, [2]))
    m.graph.output.append(helper.make_tensor_value_info("d_out", TensorProto.DOUBLE, [2]))
    m.graph.node.append(helper.make_node("Identity", ["d"], ["d_out"], name="pass_double"))
    save(BAD, "unsupported_dtype.onnx", m)

    m = conv_qdq()
    m.graph.input[0].type.tensor_type.shape.dim[2].dim_param = "H"
    save(BAD, "dynamic_height.onnx", m)
    # Weights of a higher rank than the input (a 1-D signal, 2-D kernels): Debian's libonnx crashes
    # in its own shape inference on this (found by fuzz/run import).
    m = qop_model()
    del m.graph.input[0].type.tensor_type.shape.dim[3]
    save(BAD, "conv_weights_rank_above_input.onnx", m)
    # The one dimension of a 1-D input is a length, not a batch: it stays dynamic.
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["L"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["L"])
    m = model([helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
               helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"])], [x], [y],
              [scalar("s", 0.1, np.float32), scalar("z", 0, np.int8)])
    save(BAD, "dynamic_length.onnx", m)

    m = conv_qdq()
    m.opset_import[0].version = 18
    save(BAD, "opset_too_new.onnx", m)
    m = conv_qdq()
    m.opset_import[0].version = 9
    save(BAD, "opset_too_old.onnx", m)

    m = conv_qdq()
    m.graph.input[0].type.tensor_type.shape.dim[1].dim_value = 0
    save(BAD, "zero_dimension.onnx", m)
    m = conv_qdq()
    m.graph.input[0].type.tensor_type.shape.dim[3].dim_value = -5
    save(BAD, "negative_dimension.onnx", m)
    # An initializer claiming 2^31 * 2^31 elements (the product overflows 64 bits when in bytes).
    m = conv_qdq()
    huge = TensorProto(name="huge", data_type=TensorProto.INT8, dims=[2**31, 2**31, 16], raw_data=b"\0")
    m.graph.initializer.append(huge)
    save(BAD, "huge_dimensions.onnx", m)

    # A graph input whose element count overflows (2 * 2^32 * 2^32 elements; 2^65 bytes as int8).
    m = conv_qdq()
    for i, d in enumerate([1, 2, 2**32, 2**32]):
        m.graph.input[0].type.tensor_type.shape.dim[i].dim_value = d
    save(BAD, "huge_input.onnx", m)

    m = conv_qdq()
    m.graph.initializer.remove(next(t for t in m.graph.initializer if t.name == "w"))
    save(BAD, "missing_initializer.onnx", m)
    # A node input that nothing produces: not a graph input, an initializer or a node's output.
    m = conv_qdq()
    for n in m.graph.node:
        if n.name == "relu":
            n.input[0] = "nobody_writes_this"
    save(BAD, "dangling_input.onnx", m)
    m = conv_qdq()
    m.graph.output[0].name = "nobody_makes_this"
    save(BAD, "dangling_output.onnx", m)
    # A cycle: the conv reads the output of the relu after it.
    m = conv_qdq()
    for n in m.graph.node:
        if n.name == "conv":
            n.input[0] = "act_out"
    save(BAD, "cycle.onnx", m)

    save(BAD, "zero_point_out_of_range.onnx",
         conv_qdq(w_zp=helper.make_tensor("w_zp", TensorProto.INT8, [4], [0, 0, 200, 0])))
    save(BAD, "scale_zero.onnx", conv_qdq(w_scale=[0.01, 0.0, 0.01, 0.01]))
    save(BAD, "scale_negative.onnx", conv_qdq(w_scale=[0.01, -0.5, 0.01, 0.01]))
    save(BAD, "scale_nan.onnx", conv_qdq(w_scale=[0.01, np.nan, 0.01, 0.01]))
    save(BAD, "scale_inf.onnx", conv_qdq(w_scale=[0.01, np.inf, 0.01, 0.01]))
    save(BAD, "per_channel_length.onnx", conv_qdq(w_scale=[0.01, 0.02, 0.03], w_zp=np.zeros(3, np.int8), bias=False))
    save(BAD, "bias_scale_mismatch.onnx", conv_qdq(bias_scale=[0.5, 0.5, 0.5, 0.5]))
    save(BAD, "float_output_not_quantized.onnx", conv_qdq(out_quantized=False))

    save(BAD, "unsupported_attribute_contrib.onnx", qop_model(extra_attr={"channels_last": 1}))
    m = matmul_qdq()
    for n in m.graph.node:
        if n.op_type == "MatMul":
            n.op_type = "Gemm"
            n.attribute.append(helper.make_attribute("alpha", 0.5))
    save(BAD, "unsupported_attribute_gemm.onnx", m)

    # External data that escapes the model's folder, and external data whose file is missing.
    save(BAD, "external_traversal.onnx", with_external_data(conv_qdq(), "../good/external_weights.bin"))
    save(BAD, "external_missing.onnx", with_external_data(conv_qdq(), "no_such_weights.bin"))
    save(BAD, "external_absolute.onnx", with_external_data(conv_qdq(), "/etc/passwd"))
    # External data that points past the end of its file.
    m = with_external_data(conv_qdq(), "external_data_short.bin")
    for t in m.graph.initializer:
        if t.name == "w":
            for e in t.external_data:
                if e.key == "offset":
                    e.value = "1000000"
    with open(os.path.join(BAD, "external_data_short.bin"), "wb") as f:
        f.write(bytes(16))
    save(BAD, "external_out_of_range.onnx", m)

    # A form of Slice that tightfit refuses: a step of 2.
    save(BAD, "slice_step_2.onnx", qdq_island("Slice", ["xf", "starts", "ends", "axes", "steps"], {
        "starts": np.array([0], np.int64), "ends": np.array([4], np.int64), "axes": np.array([1], np.int64),
        "steps": np.array([2], np.int64)}, [1, 2, 3, 3]))
    # Pow by an activation: only a constant exponent of 2 or 3 (tightfit::pow_float multiplies).
    save(BAD, "pow_by_activation.onnx", qdq_island("Pow", ["xf", "xf"], {}, [1, 4, 3, 3]))
    # Div by an activation runs in a float island (good/div_by_activation.onnx).
    save(GOOD, "div_by_activation.onnx", qdq_island("Div", ["xf", "xf"], {}, [1, 4, 3, 3]))

    # ConvTranspose forms tightfit refuses: groups, and the size given by output_shape.
    for name, attrs, w_shape, y_shape in (
            ("convtranspose_grouped.onnx", {"group": 2}, [4, 1, 2, 2], [1, 2, 4, 4]),
            ("convtranspose_output_shape.onnx", {"strides": [2, 2], "output_shape": [5, 5]}, [4, 2, 2, 2], [1, 2, 5, 5])):
        m = qdq_island("ConvTranspose", ["xf", "wf"], {"w": np.ones(w_shape, np.int8)}, y_shape)
        m.graph.node[2].attribute.extend([helper.make_attribute(k, v) for k, v in attrs.items()])
        m.graph.node.insert(2, helper.make_node("DequantizeLinear", ["w", "s", "z"], ["wf"], name="dequant_w"))
        save(BAD, name, m)


def qdq_island(op, op_inputs, consts, y_shape, name="op"):
    """x -> QuantizeLinear -> DequantizeLinear -> `op` -> QuantizeLinear -> y (int8, [1, 4, 3, 3])."""
    inits = [scalar("s", 0.05, np.float32), scalar("z", 0, np.int8)] + [const(k, v) for k, v in consts.items()]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"], name="quant_x"),
             helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["xf"], name="dequant_x"),
             helper.make_node(op, op_inputs, ["yf"], name=name),
             helper.make_node("QuantizeLinear", ["yf", "s", "z"], ["y"], name="quant_y")]
    return model(nodes, [float_input("x", [1, 4, 3, 3])], [helper.make_tensor_value_info("y", TensorProto.INT8, y_shape)], inits)


def main():
    for folder in (BAD, GOOD):
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
    make_good()
    make_bad()


if __name__ == "__main__":
    main()
