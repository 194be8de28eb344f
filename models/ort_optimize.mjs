// ONNX Runtime's 'basic' graph optimizations (constant folding, Identity and Dropout
// elimination, Conv+BatchNormalization/Add/Mul fusion), saved to a file: the ORT step of
// onnxruntime.quantization.quant_pre_process, which ORT asks users to run before
// quantize_static. Used by quantize_qdq.py --preprocess.
// usage: node ort_optimize.mjs IN.onnx OUT.onnx
import ort from 'onnxruntime-node';

const [input, output] = process.argv.slice(2);
ort.env.logLevel = 'error'; // not its notes on the initializers it removes
await ort.InferenceSession.create(input, {
  graphOptimizationLevel: 'basic', optimizedModelFilePath: output, intraOpNumThreads: 1, interOpNumThreads: 1,
});
