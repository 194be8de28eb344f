// Debug helper: run MODEL (graph optimizations disabled) on one .npy per graph
// input and write every graph output to OUTDIR/<name>.npy.
// usage: node dump.mjs MODEL OUTDIR INPUT_0.npy [INPUT_1.npy ...]
import path from 'node:path';
import ort from 'onnxruntime-node';
import { readNpy, writeNpy } from './npy.mjs';

const [model, outdir, ...inputs] = process.argv.slice(2);
const s = await ort.InferenceSession.create(model, { graphOptimizationLevel: 'disabled', intraOpNumThreads: 1 });
const feeds = {};
inputs.forEach((p, i) => {
  const x = readNpy(p);
  feeds[s.inputNames[i]] = new ort.Tensor(x.dtype, x.data, x.shape);
});
const out = await s.run(feeds);
for (const [n, t] of Object.entries(out)) {
  writeNpy(path.join(outdir, n.replace(/[^A-Za-z0-9_.-]/g, '_') + '.npy'), t.type, t.dims, t.data);
}
