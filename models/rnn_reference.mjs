// ONNX Runtime's outputs for models/rnn (made by make_rnn_models.py): graph optimizations disabled
// (ORT's float LSTM, GRU, Sigmoid and Tanh kernels), one thread. A model of several calls feeds each
// call's state outputs back as the next call's state inputs (manifest "carry": input index -> output
// index). Writes rnn/NAME.callC.output_K.npy.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ort from 'onnxruntime-node';
import { readNpy, writeNpy } from './npy.mjs';

const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'rnn');
const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
for (const e of manifest.models) {
  const session = await ort.InferenceSession.create(path.join(dir, e.model), {
    graphOptimizationLevel: 'disabled',
    executionMode: 'sequential',
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
  });
  const inputs = e.inputs.map((f) => readNpy(path.join(dir, f)));
  for (let call = 0; call < e.calls; call++) {
    const feeds = {};
    session.inputNames.forEach((name, j) => {
      feeds[name] = new ort.Tensor(inputs[j].dtype, inputs[j].data, inputs[j].shape);
    });
    const outs = await session.run(feeds);
    session.outputNames.forEach((name, k) => {
      const t = outs[name];
      writeNpy(path.join(dir, `${e.name}.call${call}.output_${k}.npy`), t.type, t.dims, t.data);
    });
    for (const [j, k] of Object.entries(e.carry)) {
      const t = outs[session.outputNames[k]];
      inputs[Number(j)] = { dtype: t.type, shape: t.dims, data: t.data };
    }
  }
}
