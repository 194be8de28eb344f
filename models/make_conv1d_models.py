#!/usr/bin/python3
"""Conv1d test models: 3-D ONNX Convs in QDQ form and their QOperator twins (QLinearConv), with
ONNX Runtime's outputs, in models/conv1d/. tightfit runs a 1-D Conv as a 2-D one of height 1.

  conv1d_u8  uint8 activations: Conv (group 2, stride 2, pads [2, 1], dilation 2, bias) -> Conv
             (pads [1, 1], bias), per-channel int8 weights
  conv1d_s8  int8 activations, openWakeWord's melspectrogram in small: audio [1, 400] ->
             Unsqueeze -> two Convs (weight [17, 1, 32], stride 16, no bias, no pads) reading it
  conv1d_int ConvInteger (QOperator form only): uint8 x with zero point 3, uint8 weight with zero
             point 100, stride 2, pads [1, 2]; int32 output
  conv3d     a QLinearConv over a 3-D image (input [1, 2, 4, 4, 4]), which tightfit refuses

Run: /usr/bin/python3 models/make_conv1d_models.py (then node models/conv1d_reference.mjs, which
this script calls). Seeded: a rerun writes the same files.
"""
import os
import subprocess

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "conv1d")


def conv1d(x, w, b, stride, pads, dilation, group):
    """Float 1-D convolution (ONNX semantics) to choose output scales."""
    n, c, length = x.shape
    m, cg, k = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[1])))
    out_len = (length + pads[0] + pads[1] - (k - 1) * dilation - 1) // stride + 1
    y = np.zeros((n, m, out_len))
    mg = m // group
    for o in range(m):
        g = o // mg
        for t in range(out_len):
            window = xp[:, g * cg:(g + 1) * cg, t * stride:t * stride + (k - 1) * dilation + 1:dilation]
            y[:, o, t] = (window * w[o]).sum(axis=(1, 2))
    if b is not None:
        y += b[None, :, None]
    return y


class Builder:
    def __init__(self, dtype):
        self.dtype = dtype  # np.uint8 or np.int8
        self.onnx_dtype = TensorProto.UINT8 if dtype == np.uint8 else TensorProto.INT8
        self.qdq_nodes, self.qop_nodes, self.inits = [], [], []

    def const(self, name, array):
        self.inits.append(numpy_helper.from_array(array, name))
        return name

    def act_qparams(self, name, lo, hi):
        lo, hi = min(lo, 0.0), max(hi, 0.0)
        scale = np.float32((hi - lo) / 255.0)
        zp = int(round(-lo / scale)) + (0 if self.dtype == np.uint8 else -128)
        zp = int(np.clip(zp, np.iinfo(self.dtype).min, np.iinfo(self.dtype).max))
        return self.const(name + "_scale", np.array(scale, np.float32)), self.const(name + "_zp", np.array(zp, self.dtype)), scale, zp

    def conv(self, name, x_q, x_scale, x_zp, xs, x_float, rng, m, k, stride, pads, dilation, group, bias):
        c = x_float.shape[1]
        w = rng.normal(0, 1, (m, c // group, k)).astype(np.float32)
        w_scale = (np.abs(w).reshape(m, -1).max(axis=1) / 127).astype(np.float32)
        wq = np.clip(np.round(w / w_scale[:, None, None]), -127, 127).astype(np.int8)
        wf = wq * w_scale[:, None, None]
        b_q = None
        if bias:
            b_scale = (np.float32(xs) * w_scale).astype(np.float32)
            b_q = np.round(rng.normal(0, 1, m) / b_scale).astype(np.int32)
        y = conv1d(x_float, wf, None if b_q is None else b_q * b_scale, stride, pads, dilation, group)
        ys_name, yz_name, ys, yz = self.act_qparams(name + "_y", float(y.min()), float(y.max()))
        attrs = dict(strides=[stride], pads=list(pads), dilations=[dilation], group=group, kernel_shape=[k])
        w_name = self.const(name + "_w", wq)
        ws_name = self.const(name + "_w_scale", w_scale)
        wz_name = self.const(name + "_w_zp", np.zeros(m, np.int8))
        b_name = self.const(name + "_b", b_q) if bias else None
        # QDQ: DequantizeLinear -> Conv -> QuantizeLinear
        self.qdq_nodes.append(helper.make_node("DequantizeLinear", [x_q, x_scale, x_zp], [name + "_x_dq"]))
        self.qdq_nodes.append(helper.make_node("DequantizeLinear", [w_name, ws_name, wz_name], [name + "_w_dq"], axis=0))
        inputs = [name + "_x_dq", name + "_w_dq"]
        if bias:
            bs_name = self.const(name + "_b_scale", b_scale)
            bz_name = self.const(name + "_b_zp", np.zeros(m, np.int32))
            self.qdq_nodes.append(helper.make_node("DequantizeLinear", [b_name, bs_name, bz_name], [name + "_b_dq"], axis=0))
            inputs.append(name + "_b_dq")
        self.qdq_nodes.append(helper.make_node("Conv", inputs, [name + "_y_float"], name=name, **attrs))
        self.qdq_nodes.append(helper.make_node("QuantizeLinear", [name + "_y_float", ys_name, yz_name], [name + "_y_q"]))
        # QOperator: QLinearConv
        qinputs = [x_q, x_scale, x_zp, w_name, ws_name, wz_name, ys_name, yz_name] + ([b_name] if bias else [])
        self.qop_nodes.append(helper.make_node("QLinearConv", qinputs, [name + "_y_q"], name=name, **attrs))
        y_deq = (np.clip(np.round(y / ys) + yz, np.iinfo(self.dtype).min, np.iinfo(self.dtype).max) - yz) * ys
        return name + "_y_q", ys_name, yz_name, ys, y_deq

    def save(self, stem, inputs, outputs, head_nodes):
        for form, nodes in (("qdq", self.qdq_nodes), ("qop", self.qop_nodes)):
            used = {name for node in head_nodes + nodes for name in node.input}
            graph = helper.make_graph(head_nodes + nodes, stem, inputs, outputs, [t for t in self.inits if t.name in used])
            model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_conv1d_models.py")
            model.ir_version = 8
            onnx.checker.check_model(model, full_check=True)
            onnx.save(model, os.path.join(OUT, f"{stem}.{form}.onnx"))


def output_dq(b, name, q, scale, zp, shape):
    node = helper.make_node("DequantizeLinear", [q, scale, zp], [name])
    return node, helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def conv1d_u8(rng):
    b = Builder(np.uint8)
    x = rng.uniform(-1, 1, (1, 4, 40)).astype(np.float32)
    xs_name, xz_name, xs, xz = b.act_qparams("x", -1.0, 1.0)
    head = [helper.make_node("QuantizeLinear", ["input", xs_name, xz_name], ["x_q"])]
    xf = (np.clip(np.round(x / xs) + xz, 0, 255) - xz) * xs
    a, a_s, a_z, a_scale, af = b.conv("conv_a", "x_q", xs_name, xz_name, xs, xf, rng, 6, 5, 2, (2, 1), 2, 2, True)
    c, c_s, c_z, _, cf = b.conv("conv_b", a, a_s, a_z, a_scale, af, rng, 3, 3, 1, (1, 1), 1, 1, True)
    dq, out = output_dq(b, "output", c, c_s, c_z, list(cf.shape))
    b.qdq_nodes.append(dq)
    b.qop_nodes.append(dq)
    b.save("conv1d_u8", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 4, 40])], [out], head)
    return [x, rng.uniform(-1, 1, x.shape).astype(np.float32)]


def conv1d_s8(rng):
    b = Builder(np.int8)
    audio = rng.uniform(-1, 1, (1, 400)).astype(np.float32)
    xs_name, xz_name, xs, xz = b.act_qparams("x", -1.0, 1.0)
    axes = b.const("unsqueeze_axes", np.array([1], np.int64))
    head = [helper.make_node("Unsqueeze", ["input", axes], ["audio_3d"], name="unsqueeze"),
            helper.make_node("QuantizeLinear", ["audio_3d", xs_name, xz_name], ["x_q"])]
    xf = ((np.clip(np.round(audio / xs) + xz, -128, 127) - xz) * xs)[:, None, :]
    outs = []
    for i, name in enumerate(("stft_real", "stft_imag")):
        q, s, z, _, yf = b.conv(name, "x_q", xs_name, xz_name, xs, xf, rng, 17, 32, 16, (0, 0), 1, 1, False)
        dq, out = output_dq(b, f"output_{i}", q, s, z, list(yf.shape))
        b.qdq_nodes.append(dq)
        b.qop_nodes.append(dq)
        outs.append(out)
    b.save("conv1d_s8", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 400])], outs, head)
    return [audio, rng.uniform(-1, 1, audio.shape).astype(np.float32)]


def conv1d_int(rng):
    inits = [numpy_helper.from_array(rng.integers(0, 256, (3, 2, 3)).astype(np.uint8), "w"),
             numpy_helper.from_array(np.array(3, np.uint8), "x_zp"), numpy_helper.from_array(np.array(100, np.uint8), "w_zp")]
    node = helper.make_node("ConvInteger", ["input", "w", "x_zp", "w_zp"], ["output"], name="conv", strides=[2], pads=[1, 2])
    graph = helper.make_graph([node], "conv1d_int", [helper.make_tensor_value_info("input", TensorProto.UINT8, [1, 2, 10])],
                              [helper.make_tensor_value_info("output", TensorProto.INT32, [1, 3, 6])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_conv1d_models.py")
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, os.path.join(OUT, "conv1d_int.qop.onnx"))
    return [rng.integers(0, 256, (1, 2, 10)).astype(np.uint8) for _ in range(2)]


def conv3d():
    inits = [numpy_helper.from_array(np.array(0.5, np.float32), "scale"), numpy_helper.from_array(np.array(0, np.int8), "zp"),
             numpy_helper.from_array(np.ones((2, 2, 3, 3, 3), np.int8), "w")]
    node = helper.make_node("QLinearConv", ["x", "scale", "zp", "w", "scale", "zp", "scale", "zp"], ["y"], name="conv3d")
    graph = helper.make_graph([node], "conv3d", [helper.make_tensor_value_info("x", TensorProto.INT8, [1, 2, 4, 4, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.INT8, [1, 2, 2, 2, 2])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="make_conv1d_models.py")
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, os.path.join(OUT, "conv3d.qop.onnx"))
    np.save(os.path.join(OUT, "conv3d.sample0.input_0.npy"), np.zeros((1, 2, 4, 4, 4), np.int8))


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(20261204)
    for stem, make in (("conv1d_u8", conv1d_u8), ("conv1d_s8", conv1d_s8), ("conv1d_int", conv1d_int)):
        for sample, x in enumerate(make(rng)):
            np.save(os.path.join(OUT, f"{stem}.sample{sample}.input_0.npy"), x)
    conv3d()
    subprocess.run(["node", os.path.join(HERE, "conv1d_reference.mjs")], check=True)


if __name__ == "__main__":
    main()
