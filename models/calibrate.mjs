// Calibration helper for make_models.py: runs a FLOAT model (every
// intermediate tensor exposed as a graph output) through ONNX Runtime on a
// batch of samples and prints {tensor: [min, max]} as JSON on stdout.
// usage: node calibrate.mjs MODEL.onnx SAMPLES_0.npy [SAMPLES_1.npy ...]
//        (one file per graph input, in order; each N x that input's shape)
import ort from 'onnxruntime-node';
import { readNpy } from './npy.mjs';

const [model, ...samplePaths] = process.argv.slice(2);
const session = await ort.InferenceSession.create(model, {
  graphOptimizationLevel: 'disabled', intraOpNumThreads: 1, interOpNumThreads: 1,
});
const samples = samplePaths.map((p) => readNpy(p));
const n = samples[0].shape[0];
const stats = {};
for (let i = 0; i < n; i++) {
  const feeds = {};
  samples.forEach((s, k) => {
    const inner = s.shape.slice(1);
    const per = inner.reduce((a, b) => a * b, 1);
    feeds[session.inputNames[k]] = new ort.Tensor('float32', s.data.slice(i * per, (i + 1) * per), inner);
  });
  const out = await session.run(feeds);
  for (const [name, t] of Object.entries(out)) {
    let lo = Infinity, hi = -Infinity;
    for (const v of t.data) { if (v < lo) lo = v; if (v > hi) hi = v; }
    const s = stats[name];
    stats[name] = s ? [Math.min(s[0], lo), Math.max(s[1], hi)] : [lo, hi];
  }
}
process.stdout.write(JSON.stringify(stats));
