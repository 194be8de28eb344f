// ONNX Runtime on many models in one process (tests/difftest/run): reads a JSON list of jobs
// {model, inputs: [.npy], outputs: [.npy to write]} from the file given, runs each (CPU, graph
// optimizations disabled, one thread: QOperator models on ORT's integer kernels, QDQ models on
// its float path) and prints one JSON line per job: {ok: true} or {ok: false, error}.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const models = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'models');
const ort = createRequire(path.join(models, 'package.json'))('onnxruntime-node');
const { readNpy, writeNpy } = await import(pathToFileURL(path.join(models, 'npy.mjs')).href);

const jobs = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
for (const job of jobs) {
  try {
    const s = await ort.InferenceSession.create(job.model, {
      graphOptimizationLevel: 'disabled', logSeverityLevel: 3, executionMode: 'sequential', intraOpNumThreads: 1, interOpNumThreads: 1,
    });
    const feeds = {};
    s.inputNames.forEach((n, i) => {
      const a = readNpy(job.inputs[i]);
      feeds[n] = new ort.Tensor(a.dtype, a.data, a.shape);
    });
    const out = await s.run(feeds);
    s.outputNames.forEach((n, i) => writeNpy(job.outputs[i], out[n].type, out[n].dims, out[n].data));
    await s.release();
    console.log(JSON.stringify({ ok: true }));
  } catch (e) {
    console.log(JSON.stringify({ ok: false, error: String(e.message || e).split('\n')[0] }));
  }
}
