// Runs one-operator ONNX models with ONNX Runtime (CPU, graph optimizations
// disabled) for make_kernel_cases.py.
//   node run_ort.js manifest.json results.json
// manifest: [{model, inputs: [{name, type, dims, data}]}]; results: per model,
// the list of outputs as {type, dims, data} (floats as their IEEE bit patterns).
'use strict';
const fs = require('fs');
const ort = require('/work/main/models/node_modules/onnxruntime-node');

const arrays = {
  int8: Int8Array,
  uint8: Uint8Array,
  int32: Int32Array,
  float32: Float32Array,
  int64: BigInt64Array,
};

function toPlain(tensor) {
  let data;
  if (tensor.type === 'float32') {
    data = Array.from(new Uint32Array(tensor.data.buffer, tensor.data.byteOffset, tensor.data.length));
  } else {
    data = Array.from(tensor.data, Number);
  }
  return { type: tensor.type, dims: Array.from(tensor.dims), data };
}

async function main() {
  const [manifestPath, resultsPath] = process.argv.slice(2);
  const manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8'));
  const results = [];
  for (const entry of manifest) {
    const session = await ort.InferenceSession.create(entry.model, {
      graphOptimizationLevel: 'disabled',
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
    });
    const feeds = {};
    for (const input of entry.inputs) {
      let data;
      if (input.type === 'float32') {
        data = new Float32Array(new Uint32Array(input.data).buffer);
      } else if (input.type === 'int64') {
        data = BigInt64Array.from(input.data, BigInt);
      } else {
        data = arrays[input.type].from(input.data);
      }
      feeds[input.name] = new ort.Tensor(input.type, data, input.dims);
    }
    const out = await session.run(feeds);
    results.push(session.outputNames.map((name) => toPlain(out[name])));
  }
  fs.writeFileSync(resultsPath, JSON.stringify(results));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
