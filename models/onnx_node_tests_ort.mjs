// ONNX Runtime on the converted ONNX node tests (models/onnx_node_tests/, made by
// onnx_node_tests.py): for each test, runs its .onnx on its stored inputs (CPU, graph
// optimizations disabled, one thread) and compares every output with the stored expected
// output (ONNX's own test_data_set_0) byte for byte. Writes nothing.
//
// usage: node onnx_node_tests_ort.mjs        exit 1 if an output differs or a model fails to run,
//                                            77 if onnxruntime-node is not installed
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readNpy } from './npy.mjs';

let ort;
try {
  ort = (await import('onnxruntime-node')).default;
} catch {
  console.log('onnxruntime-node is not installed in models/node_modules (npm ci --ignore-scripts): skipped');
  process.exit(77);  // ctest's "skipped"
}

const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'onnx_node_tests');
const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));

let failures = 0;
for (const t of manifest.tests) {
  let line;
  try {
    const s = await ort.InferenceSession.create(path.join(dir, t.model), {
      graphOptimizationLevel: 'disabled', executionMode: 'sequential', intraOpNumThreads: 1, interOpNumThreads: 1,
    });
    const feeds = {};
    t.inputs.forEach((inp) => {
      const a = readNpy(path.join(dir, inp.file));
      feeds[inp.name] = new ort.Tensor(a.dtype, a.data, a.shape);
    });
    const out = await s.run(feeds);
    const verdicts = t.outputs.map((o) => {
      const want = readNpy(path.join(dir, o.file));
      const got = out[o.name];
      const same = got.type === want.dtype && got.dims.join(',') === want.shape.join(',') &&
        Buffer.compare(Buffer.from(got.data.buffer, got.data.byteOffset, got.data.byteLength),
                       Buffer.from(want.data.buffer, want.data.byteOffset, want.data.byteLength)) === 0;
      if (!same) failures++;
      return same ? 'equal' : `DIFFERS (got ${Array.from(got.data).slice(0, 8)} want ${Array.from(want.data).slice(0, 8)})`;
    });
    line = `${t.name}: ORT ${verdicts.join(', ')}`;
  } catch (e) {
    failures++;
    line = `${t.name}: ORT failed: ${String(e.message).split('\n')[0]}`;
  }
  console.log(line);
}
process.exit(failures ? 1 : 0);
