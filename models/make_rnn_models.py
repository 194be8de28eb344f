#!/usr/bin/python3
"""Recurrent test models: ONNX LSTM and GRU (float, as ORT's quantizer leaves them) and float
Sigmoid/Tanh, with ONNX Runtime's outputs, in models/rnn/.

  act_float_out    Sigmoid and Tanh of a dequantized int8 input (every level, [-20.5, 20.3]) to
                   float graph outputs
  act_float_island Sigmoid and Tanh of a float island's value (a Mul by a float constant) each to
                   a QuantizeLinear (uint8 graph outputs)
  lstm_forward     LSTM, forward, X, initial_h and initial_c float graph inputs, bias; Y, Y_c, and
                   Y_h through a QuantizeLinear (uint8)
  lstm_reverse     LSTM, reverse, X a DequantizeLinear's value, no bias nor initial states; Y, Y_h
  lstm_bidirectional  LSTM, bidirectional, X dequantized, bias, batch 2; Y, Y_h, Y_c
  gru_forward      GRU, forward, linear_before_reset 0, X and initial_h float graph inputs, bias;
                   Y, and Y_h through a QuantizeLinear
  gru_bidirectional_lbr  GRU, bidirectional, linear_before_reset 1, X dequantized, bias, batch 2;
                   Y, Y_h
  gru_reverse_lbr  GRU, reverse, linear_before_reset 1, X dequantized, no bias, initial_h given;
                   Y_h only
  kws_lstm         a keyword spotter from PyTorch, QDQ-quantized (models/quantize_qdq.py):
                   MFCC-like x [1, 10, 49] -> Conv1d(10, 16, 3) + ReLU -> LSTM(64) over the 49
                   frames -> Linear(12) of the last hidden state; h and c graph inputs and outputs
                   (the caller carries them between calls)
  kws_lstm_nostate the same without the state inputs and outputs (zeros each call): its graph
                   I/O is quantized at the edges, for the firmware
  vad_gru          a VAD-sized GRU from PyTorch, QDQ: x [8, 1, 64] (a float graph input, read by
                   the GRU) -> GRU(32) -> Linear(1) -> Sigmoid; h a graph input and output

Every model is in manifest.json with its calls: a stateful model runs 3 calls, each call's state
outputs fed back as the next call's state inputs (ONNX Runtime run the same way by
rnn_reference.mjs, which writes NAME.callC.output_K.npy). Run: /usr/bin/python3
models/make_rnn_models.py. Seeded: a rerun writes the same files (the PyTorch export aside,
whose weights come from a seeded generator too).
"""
import json
import os
import subprocess
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "rnn")
F = np.float32


def save(name, nodes, inputs, outputs, inits, opset=14):
    """A model of `nodes` with graph inputs [(name, array)] and outputs [(name, elem_type, shape)]."""
    graph = helper.make_graph(nodes, name,
                              [helper.make_tensor_value_info(k, onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[v.dtype], list(v.shape)) for k, v in inputs],
                              [helper.make_tensor_value_info(k, t, s) for k, t, s in outputs],
                              [numpy_helper.from_array(v, k) for k, v in inits.items()])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="make_rnn_models.py")
    m.ir_version = 8
    onnx.checker.check_model(m, full_check=True)
    onnx.save(m, os.path.join(OUT, f"{name}.onnx"))


def entry(name, inputs, outputs, calls=1, carry=None, what=""):
    """The manifest entry; writes the call-0 inputs. `carry`: {state input index: output index}."""
    files = []
    for j, (k, a) in enumerate(inputs):
        f = f"{name}.input_{j}.npy"
        np.save(os.path.join(OUT, f), a)
        files.append(f)
    return {"name": name, "model": f"{name}.onnx", "inputs": files, "outputs": outputs, "calls": calls,
            "carry": {str(k): v for k, v in (carry or {}).items()}, "what": what}


def activation_models(rng):
    entries = []
    x = np.resize(np.arange(-128, 128), (2, 128)).astype(np.int8)
    x = rng.permuted(x, axis=1)
    nodes = [helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["xf"]), helper.make_node("Sigmoid", ["xf"], ["sig"]),
             helper.make_node("Tanh", ["xf"], ["tanh"])]
    save("act_float_out", nodes, [("x", x)], [("sig", TensorProto.FLOAT, [2, 128]), ("tanh", TensorProto.FLOAT, [2, 128])],
         {"xs": np.array(0.16, F), "xz": np.array(0, np.int8)})
    entries.append(entry("act_float_out", [("x", x)], 2, what="Sigmoid and Tanh of a dequantized value to float outputs"))

    u = np.resize(np.arange(0, 256), (2, 128)).astype(np.uint8)
    u = rng.permuted(u, axis=1)
    nodes = [helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["xf"]), helper.make_node("Mul", ["xf", "k"], ["m"]),
             helper.make_node("Sigmoid", ["m"], ["s"]), helper.make_node("QuantizeLinear", ["s", "ss", "sz"], ["sig"]),
             helper.make_node("Tanh", ["m"], ["t"]), helper.make_node("QuantizeLinear", ["t", "ts", "tz"], ["tanh"])]
    save("act_float_island", nodes, [("x", u)], [("sig", TensorProto.UINT8, [2, 128]), ("tanh", TensorProto.UINT8, [2, 128])],
         {"xs": np.array(0.05, F), "xz": np.array(128, np.uint8), "k": np.array([1.7320508], F),
          "ss": np.array(1 / 255, F), "sz": np.array(0, np.uint8), "ts": np.array(2 / 255, F), "tz": np.array(128, np.uint8)})
    entries.append(entry("act_float_island", [("x", u)], 2,
                         what="Sigmoid and Tanh of a float island's value (Mul by a float constant), each to a QuantizeLinear"))
    return entries


def rnn_node_models(rng):
    entries = []

    def weights(gates, d, h, i, bias):
        w = rng.uniform(-0.6, 0.6, (d, gates * h, i)).astype(F)
        r = rng.uniform(-0.6, 0.6, (d, gates * h, h)).astype(F)
        b = rng.uniform(-0.5, 0.5, (d, 2 * gates * h)).astype(F) if bias else None
        return w, r, b

    # name, op, direction, seq, batch, input, hidden, bias, X from a DequantizeLinear (else a float
    # input, and Y_h goes to a QuantizeLinear: tightfit refuses a model with no quantization at
    # all), states given, outputs used, linear_before_reset
    cases = [("lstm_forward", "LSTM", "forward", 6, 1, 5, 8, True, False, True, (True, True, True), 0),
             ("lstm_reverse", "LSTM", "reverse", 5, 1, 4, 6, False, True, False, (True, True, False), 0),
             ("lstm_bidirectional", "LSTM", "bidirectional", 4, 2, 3, 5, True, True, False, (True, True, True), 0),
             ("gru_forward", "GRU", "forward", 6, 1, 5, 8, True, False, True, (True, True), 0),
             ("gru_bidirectional_lbr", "GRU", "bidirectional", 4, 2, 3, 5, True, True, False, (True, True), 1),
             ("gru_reverse_lbr", "GRU", "reverse", 5, 1, 4, 6, False, True, True, (False, True), 1)]
    for name, op, direction, seq, batch, isz, hid, bias, dq, states, used, lbr in cases:
        gates = 4 if op == "LSTM" else 3
        d = 2 if direction == "bidirectional" else 1
        w, r, b = weights(gates, d, hid, isz, bias)
        inits = {"W": w, "R": r}
        inputs, nodes = [], []
        if dq:
            xq = rng.integers(-128, 128, (seq, batch, isz)).astype(np.int8)
            inputs.append(("x", xq))
            nodes.append(helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["X"]))
            inits.update({"xs": np.array(0.02, F), "xz": np.array(3, np.int8)})
        else:
            inputs.append(("X", rng.uniform(-2, 2, (seq, batch, isz)).astype(F)))
        ins = ["X", "W", "R", "B" if bias else "", ""]
        if bias:
            inits["B"] = b
        state_names = ["initial_h", "initial_c"][:2 if op == "LSTM" else 1]
        if states:
            for s in state_names:
                inputs.append((s, rng.uniform(-1, 1, (d, batch, hid)).astype(F)))
            ins += state_names
        names = ["Y", "Y_h", "Y_c"][:len(used)]
        outs = [k if u else "" for k, u in zip(names, used)]
        while outs and not outs[-1]:
            outs.pop()
        attrs = {"hidden_size": hid, "direction": direction}
        if op == "GRU":
            attrs["linear_before_reset"] = lbr
        shapes = {"Y": [seq, d, batch, hid], "Y_h": [d, batch, hid], "Y_c": [d, batch, hid]}
        types = {k: TensorProto.FLOAT for k in outs}
        if not dq:
            outs[1] = "Y_hf"
            nodes.append(helper.make_node("QuantizeLinear", ["Y_hf", "ys", "yz"], ["Y_h"]))
            inits.update({"ys": np.array(1 / 128, F), "yz": np.array(128, np.uint8)})
            types["Y_h"] = TensorProto.UINT8
        nodes.insert(len(nodes) - (0 if dq else 1), helper.make_node(op, ins, outs, **attrs))
        names = [k if k != "Y_hf" else "Y_h" for k in outs]
        graph_outs = [(k, types[k], shapes[k]) for k in names if k]
        save(name, nodes, inputs, graph_outs, inits)
        entries.append(entry(name, inputs, len(graph_outs),
                             what=f"{op} {direction}, seq {seq}, batch {batch}, input {isz}, hidden {hid}, "
                                  f"bias {bias}, X {'dequantized' if dq else 'a float input'}, "
                                  f"initial states {'given' if states else 'absent'}, outputs {', '.join(k for k in names if k)}"
                                  + ("" if dq else " (Y_h through a QuantizeLinear)")
                                  + (f", linear_before_reset {lbr}" if op == "GRU" else "")))
    return entries


def torch_models():
    import torch
    torch.manual_seed(20261205)
    entries = []

    class Kws(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv1d(10, 16, 3, padding=1)
            self.lstm = torch.nn.LSTM(16, 64)
            self.fc = torch.nn.Linear(64, 12)

        def frames(self, x):  # [1, 10, 49] -> [49, 1, 16]
            return torch.relu(self.conv(x)).permute(2, 0, 1)

    class KwsState(Kws):
        def forward(self, x, h, c):
            _, (h2, c2) = self.lstm(self.frames(x), (h, c))
            return self.fc(h2.squeeze(0)), h2, c2

    class KwsNoState(Kws):
        def __init__(self):
            super().__init__()
            self.register_buffer("zeros", torch.zeros(1, 1, 64))  # initial states: a constant, no shape arithmetic

        def forward(self, x):
            _, (h2, _) = self.lstm(self.frames(x), (self.zeros, self.zeros))
            return self.fc(h2.squeeze(0))

    class Vad(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.gru = torch.nn.GRU(64, 32)
            self.fc = torch.nn.Linear(32, 1)

        def forward(self, x, h):
            _, h2 = self.gru(x, h)
            return torch.sigmoid(self.fc(h2.squeeze(0))), h2

    kws = KwsState().eval()
    nostate = KwsNoState().eval()
    nostate.load_state_dict(kws.state_dict(), strict=False)
    vad = Vad().eval()
    g = np.random.default_rng(20261205)
    specs = [
        ("kws_lstm", kws, [("x", (1, 10, 49)), ("h", (1, 1, 64)), ("c", (1, 1, 64))], ["logits", "h_out", "c_out"],
         {1: 1, 2: 2}, "keyword spotter: Conv1d + ReLU -> LSTM(64) over 49 frames -> Linear(12); h, c carried"),
        ("kws_lstm_nostate", nostate, [("x", (1, 10, 49))], ["logits"], {}, "the keyword spotter without state I/O"),
        ("vad_gru", vad, [("x", (8, 1, 64)), ("h", (1, 1, 32))], ["prob", "h_out"], {1: 1},
         "VAD-sized GRU(32) over 8 frames of 64 features -> Linear(1) -> Sigmoid; h carried"),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        for name, module, ins, outs, carry, what in specs:
            args = tuple(torch.zeros(s) for _, s in ins)
            fp = os.path.join(tmp, f"{name}.float.onnx")
            torch.onnx.export(module, args, fp, opset_version=14, input_names=[k for k, _ in ins], output_names=outs)
            # calibration: 32 seeded samples per input (states within the range they take)
            calib = []
            for j, (k, s) in enumerate(ins):
                path = os.path.join(tmp, f"{name}.calib{j}.npy")
                np.save(path, g.uniform(-1, 1, (32,) + s).astype(F))
                calib.append(path)
            subprocess.run(["/usr/bin/python3", os.path.join(HERE, "quantize_qdq.py"), fp, *calib, "-o",
                            os.path.join(OUT, f"{name}.onnx")], check=True)
            inputs = [(k, g.uniform(-1, 1, s).astype(F)) for k, s in ins]
            entries.append(entry(name, inputs, len(outs), calls=3 if carry else 1, carry=carry, what=what))
    return entries


def main():
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        os.remove(os.path.join(OUT, f))
    rng = np.random.default_rng(20261205)
    entries = activation_models(rng) + rnn_node_models(rng) + torch_models()
    with open(os.path.join(OUT, "manifest.json"), "w") as f:
        json.dump({"made_by": "models/make_rnn_models.py", "reference": "models/rnn_reference.mjs", "models": entries}, f, indent=1)
        f.write("\n")
    subprocess.run(["node", os.path.join(HERE, "rnn_reference.mjs")], check=True, cwd=HERE)


if __name__ == "__main__":
    main()
