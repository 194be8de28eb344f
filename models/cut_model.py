#!/usr/bin/env python3
"""Cut a QOperator model at an inner activation: the nodes that compute TENSOR, and a
DequantizeLinear that makes it the float output `features`, with the scale and zero point its
first QLinear reader reads it with. A model whose own output is a handful of classes then shows a
wrong row, band or pixel of its large early activations in many output values (the tiling tests).

  cut_model.py MODEL.qop.onnx TENSOR OUT.onnx
"""
import sys

import onnx
from onnx import helper, shape_inference, utils


def main():
    model_path, tensor, out_path = sys.argv[1:4]
    model = onnx.load(model_path)
    graph = model.graph
    reader = next((n for n in graph.node if n.op_type.startswith('QLinear') and n.input and n.input[0] == tensor), None)
    if reader is None:
        sys.exit(f'{model_path}: no QLinear node reads {tensor} as its first input')
    cut = utils.Extractor(model).extract_model([i.name for i in graph.input], [tensor])
    # The extractor keeps only what reaches `tensor`: bring back the reader's scale and zero point.
    kept = {i.name for i in cut.graph.initializer}
    for name in reader.input[1:3]:
        if name not in kept:
            cut.graph.initializer.append(next(i for i in graph.initializer if i.name == name))
    cut.graph.node.append(helper.make_node('DequantizeLinear', [tensor, reader.input[1], reader.input[2]], ['features'],
                                           name='DequantizeLinear_features'))
    shape = next(v.type.tensor_type.shape for v in shape_inference.infer_shapes(model).graph.value_info
                 if v.name == tensor)
    del cut.graph.output[:]
    cut.graph.output.append(helper.make_tensor_value_info('features', onnx.TensorProto.FLOAT,
                                                          [d.dim_value for d in shape.dim]))
    onnx.checker.check_model(cut)
    onnx.save(cut, out_path)


if __name__ == '__main__':
    main()
