// ONNX Runtime's outputs for models/float_math/ (made by float_math_models.py): each model on its
// inputs (CPU, graph optimizations disabled, one thread), written as NAME.output_0.npy.
//
// usage: node models/float_math_ort.mjs
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ort from 'onnxruntime-node';
import { readNpy, writeNpy } from './npy.mjs';

const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'float_math');
const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
for (const m of manifest.models) {
  const s = await ort.InferenceSession.create(path.join(dir, m.model), {
    graphOptimizationLevel: 'disabled', executionMode: 'sequential', intraOpNumThreads: 1, interOpNumThreads: 1,
  });
  const feeds = {};
  m.inputs.forEach((file, i) => {
    const a = readNpy(path.join(dir, file));
    feeds[s.inputNames[i]] = new ort.Tensor(a.dtype, a.data, a.shape);
  });
  const y = (await s.run(feeds))[s.outputNames[0]];
  writeNpy(path.join(dir, m.output), y.type, y.dims, y.data);
  console.log(`${m.name}: ${y.dims.join('x')} ${y.type}`);
}
