// ONNX Runtime's outputs for models/conv1d (made by make_conv1d_models.py): the QOperator file
// with graph optimizations disabled (ORT's integer QLinearConv kernel), the QDQ file at level
// 'all' (ORT fuses DequantizeLinear -> Conv -> QuantizeLinear into the same integer kernel).
// Writes conv1d/STEM.FORM.sampleS.output_K.npy.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ort from 'onnxruntime-node';
import { readNpy, writeNpy } from './npy.mjs';

const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'conv1d');
for (const file of fs.readdirSync(dir).filter((f) => f.startsWith('conv1d_') && f.endsWith('.onnx')).sort()) {
  const [stem, form] = file.split('.');
  const session = await ort.InferenceSession.create(path.join(dir, file), {
    graphOptimizationLevel: form === 'qop' ? 'disabled' : 'all',
    executionMode: 'sequential',
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
  });
  for (const sample of [0, 1]) {
    const x = readNpy(path.join(dir, `${stem}.sample${sample}.input_0.npy`));
    const feeds = { [session.inputNames[0]]: new ort.Tensor(x.dtype, x.data, x.shape) };
    const outs = await session.run(feeds);
    session.outputNames.forEach((name, k) => {
      const t = outs[name];
      writeNpy(path.join(dir, `${stem}.${form}.sample${sample}.output_${k}.npy`), t.type, t.dims, t.data);
    });
  }
}
