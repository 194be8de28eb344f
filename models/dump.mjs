// Debug helper: run MODEL (graph optimizations disabled; with --all, ORT's 'all':
// its fused integer kernels) on one .npy per graph input and write every graph
// output to OUTDIR/<name>.npy. With --save-optimized, also the graph ORT ran, as
// OUTDIR/optimized.onnx (which nodes it fused into integer kernels, which it left float).
// usage: node dump.mjs [--all] [--save-optimized] MODEL OUTDIR INPUT_0.npy [INPUT_1.npy ...]
import path from 'node:path';
import ort from 'onnxruntime-node';
import { readNpy, writeNpy } from './npy.mjs';

const args = process.argv.slice(2);
const level = args[0] === '--all' ? (args.shift(), 'all') : 'disabled';
const saveOptimized = args[0] === '--save-optimized' ? (args.shift(), true) : false;
const [model, outdir, ...inputs] = args;
ort.env.logLevel = 'error'; // not the optimizer's notes on initializers it removes
const options = { graphOptimizationLevel: level, intraOpNumThreads: 1 };
if (saveOptimized) options.optimizedModelFilePath = path.join(outdir, 'optimized.onnx');
const s = await ort.InferenceSession.create(model, options);
const feeds = {};
inputs.forEach((p, i) => {
  const x = readNpy(p);
  feeds[s.inputNames[i]] = new ort.Tensor(x.dtype, x.data, x.shape);
});
const out = await s.run(feeds);
for (const [n, t] of Object.entries(out)) {
  writeNpy(path.join(outdir, n.replace(/[^A-Za-z0-9_.-]/g, '_') + '.npy'), t.type, t.dims, t.data);
}
