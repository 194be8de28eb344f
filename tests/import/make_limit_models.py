#!/usr/bin/python3
"""Makes the models that test tightfit's resource limits, into OUT (a temporary folder: some are
megabytes, so they are made at test time, never checked in):

  many_nodes.onnx        100,000 nodes (a chain of QuantizeLinear and DequantizeLinear)
  long_tensor_name.onnx  a tensor whose name is 1 MiB long
  nested_if.onnx         If nodes nested 1,000 deep (each then_branch holds the next)
  repeated_2_31.onnx     raw protobuf bytes: an initializer whose packed float_data claims 2^31
                         entries (8 GiB) in a file of a few hundred bytes
  repeated_dims_2_31.onnx  the same claim on its packed dims

  /usr/bin/python3 tests/import/make_limit_models.py OUT

A shape whose element count overflows 64 bits is in bad/ already (huge_dimensions.onnx,
huge_input.onnx, made by make_bad_models.py).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def chain_model(nodes, inits):
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])], initializer=inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="tightfit-tests")
    m.ir_version = 8
    return m


def scale_and_zero_point():
    return [numpy_helper.from_array(np.array(0.1, np.float32), "s"), numpy_helper.from_array(np.array(0, np.int8), "z")]


def many_nodes(count):
    names = ["x"] + [f"v{i}" for i in range(1, count)] + ["y"]
    nodes = [helper.make_node("QuantizeLinear" if i % 2 == 0 else "DequantizeLinear", [names[i], "s", "z"],
                              [names[i + 1]], name=f"n{i}") for i in range(count)]
    return chain_model(nodes, scale_and_zero_point())


def long_tensor_name(length):
    t = "t" * length
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], [t], name="q"),
             helper.make_node("DequantizeLinear", [t, "s", "z"], ["y"], name="dq")]
    return chain_model(nodes, scale_and_zero_point())


def nested_if(depth):
    out = helper.make_tensor_value_info("o", TensorProto.FLOAT, [1, 4])
    leaf = helper.make_graph([helper.make_node("Identity", ["x"], ["o"], name="leaf")], "leaf", [], [out])
    branch = leaf
    for d in range(depth):
        node = helper.make_node("If", ["c"], ["o"], name=f"if{d}")
        node.attribute.add(name="then_branch", type=onnx.AttributeProto.GRAPH).g.CopyFrom(branch)
        node.attribute.add(name="else_branch", type=onnx.AttributeProto.GRAPH).g.CopyFrom(leaf)
        branch = helper.make_graph([node], f"level{d}", [], [out])
    graph = helper.make_graph(list(branch.node), "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4]),
                               helper.make_tensor_value_info("c", TensorProto.BOOL, [])], [out])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="tightfit-tests")
    m.ir_version = 8
    return m.SerializeToString()


def varint(n):
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(number, wire_type, payload=b"", value=None):
    """One protobuf field: a varint (wire type 0) or length-delimited bytes (2)."""
    key = varint(number << 3 | wire_type)
    return key + (varint(value) if wire_type == 0 else varint(len(payload)) + payload)


def repeated_claim(tensor_field):
    """A ModelProto whose one initializer has a packed repeated field (TensorProto field
    `tensor_field`: 1 dims, int64; 4 float_data, float) whose length prefix claims 2^31 entries,
    followed by a few bytes: the claim runs past its message and the file."""
    claimed = 2**31 * (8 if tensor_field == 1 else 4)
    bogus = varint(tensor_field << 3 | 2) + varint(claimed) + b"\0" * 16
    tensor = field(2, 0, value=TensorProto.FLOAT) + field(8, 2, b"w") + bogus  # data_type, name
    graph = field(2, 2, b"g") + field(5, 2, tensor)  # name, initializer
    opset = field(1, 2, b"") + field(2, 0, value=13)  # domain, version
    return field(1, 0, value=8) + field(7, 2, graph) + field(8, 2, opset)  # ir_version, graph, opset_import


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    onnx.save(many_nodes(100_000), os.path.join(out, "many_nodes.onnx"))
    onnx.save(long_tensor_name(1 << 20), os.path.join(out, "long_tensor_name.onnx"))
    files = {"nested_if.onnx": nested_if(1000), "repeated_2_31.onnx": repeated_claim(4),
             "repeated_dims_2_31.onnx": repeated_claim(1)}
    for name, data in files.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
