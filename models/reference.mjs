// Reference outputs for tightfit's test models.
//
// For every model in manifest.json: run ONNX Runtime (CPU, graph
// optimizations DISABLED, one thread) on each sample input and write the
// outputs as .npy files named in the manifest ("expected"). Then measure:
//   qdq_vs_twin_max_lsb  (QDQ entries) largest |QDQ output - QOp twin output|
//                        over the samples, in output LSBs (difference / scale)
//   test_accuracy        (models with a test set) accuracy of argmax(output)
//   qdq_vs_twin_max_lsb_test_set  the same LSB figure over the whole test set
//   qdq_vs_twin_max_lsb_extra     the same over 16 extra seeded random inputs
//                        (uniform over the input's quantized range; not stored)
// and write them back into manifest.json, and the measured table into
// README.md (between the "measured" markers).
//
// usage: node reference.mjs [NAME ...]     (default: every model)
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ort from 'onnxruntime-node';
import { readNpy, writeNpy } from './npy.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const manifestPath = path.join(here, 'manifest.json');
const manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8'));
const only = new Set(process.argv.slice(2));

const sessions = new Map();
async function session(file) {
  if (!sessions.has(file)) {
    sessions.set(file, await ort.InferenceSession.create(path.join(here, file), {
      graphOptimizationLevel: 'disabled',
      executionMode: 'sequential',
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
    }));
  }
  return sessions.get(file);
}

async function run(file, arrays) {
  const s = await session(file);
  const feeds = {};
  s.inputNames.forEach((n, i) => {
    const a = arrays[i];
    feeds[n] = new ort.Tensor(a.dtype, a.data, a.shape);
  });
  const out = await s.run(feeds);
  return s.outputNames.map((n) => out[n]);
}

function maxLsb(a, b, scale) {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]) / scale);
  return m;
}

function argmax(d, off, n) {
  let best = 0;
  for (let i = 1; i < n; i++) if (d[off + i] > d[off + best]) best = i;
  return best;
}

const byFile = Object.fromEntries(manifest.models.map((e) => [e.file, e]));
const results = {}; // file -> [sample][output] data
for (const e of manifest.models) {
  if (only.size && !only.has(e.name)) continue;
  results[e.file] = [];
  for (const smp of e.samples) {
    const inputs = smp.inputs.map((f) => readNpy(path.join(here, f)));
    const outs = await run(e.file, inputs);
    outs.forEach((t, i) => writeNpy(path.join(here, smp.expected[i]), t.type, t.dims, t.data));
    results[e.file].push(outs.map((t) => t.data));
  }
}

// Extra inputs (not stored): 16 per model, uniform over each input's
// quantized range, from a seeded PRNG; only the QDQ-vs-twin LSB figure is kept.
const EXTRA = 16;
function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
function extraInputs(e) {
  let h = 0;
  for (const c of e.name) h = (Math.imul(h, 31) + c.charCodeAt(0)) >>> 0;
  const rand = mulberry32(h);
  const sets = [];
  const [qmin, qmax] = e.activations === 'int8' ? [-128, 127] : [0, 255];
  for (let s = 0; s < EXTRA; s++) {
    sets.push(e.inputs.map((spec) => {
      const n = spec.shape.reduce((a, b) => a * b, 1);
      const lo = (qmin - spec.zero_point) * spec.scale;
      const hi = (qmax - spec.zero_point) * spec.scale;
      const data = new Float32Array(n);
      for (let i = 0; i < n; i++) data[i] = lo + (hi - lo) * rand();
      return { dtype: 'float32', shape: spec.shape, data };
    }));
  }
  return sets;
}
for (const e of manifest.models) {
  if (!results[e.file] || e.form !== 'qdq' || !results[e.twin]) continue;
  let m = 0;
  for (const inputs of extraInputs(e)) {
    const a = await run(e.file, inputs);
    const b = await run(e.twin, inputs);
    a.forEach((t, i) => { m = Math.max(m, maxLsb(t.data, b[i].data, e.output_scales[i])); });
  }
  e.qdq_vs_twin_max_lsb_extra = Math.round(m * 1000) / 1000;
  byFile[e.twin].qdq_vs_twin_max_lsb_extra = e.qdq_vs_twin_max_lsb_extra;
}

// test sets: accuracy and LSB difference over every test image
const testOut = {};
for (const e of manifest.models) {
  if (!results[e.file] || !e.test_set) continue;
  const x = readNpy(path.join(here, e.test_set.x));
  const y = readNpy(path.join(here, e.test_set.y));
  const n = x.shape[0];
  const per = x.data.length / n;
  const inShape = e.inputs[0].shape;
  let correct = 0;
  const all = [];
  for (let i = 0; i < n; i++) {
    const xi = { dtype: 'float32', shape: inShape, data: x.data.slice(i * per, (i + 1) * per) };
    const [o] = await run(e.file, [xi]);
    const k = o.data.length;
    if (argmax(o.data, 0, k) === Number(y.data[i])) correct++;
    all.push(o.data);
  }
  e.test_accuracy = Math.round((correct / n) * 1e4) / 1e4;
  e.test_correct = correct;
  testOut[e.file] = all;
}

for (const e of manifest.models) {
  if (!results[e.file] || e.form !== 'qdq' || !e.twin || !results[e.twin]) continue;
  let m = 0;
  results[e.file].forEach((outs, s) => outs.forEach((d, i) => {
    m = Math.max(m, maxLsb(d, results[e.twin][s][i], e.output_scales[i]));
  }));
  e.qdq_vs_twin_max_lsb = Math.round(m * 1000) / 1000;
  byFile[e.twin].qdq_vs_twin_max_lsb = e.qdq_vs_twin_max_lsb;
  if (testOut[e.file] && testOut[e.twin]) {
    let t = 0;
    testOut[e.file].forEach((d, i) => { t = Math.max(t, maxLsb(d, testOut[e.twin][i], e.output_scales[0])); });
    e.qdq_vs_twin_max_lsb_test_set = Math.round(t * 1000) / 1000;
    byFile[e.twin].qdq_vs_twin_max_lsb_test_set = e.qdq_vs_twin_max_lsb_test_set;
  }
}

// Guard: the float path never saturates, so a QOp twin far from its QDQ form
// means ONNX Runtime's integer kernels went wrong on this CPU (e.g. the 16-bit
// saturation of u8 x s8 kernels without VNNI). Fail loudly instead of storing it.
const LSB_LIMIT = 4;
const failures = manifest.models.filter((e) => e.form === 'qdq' && results[e.file] &&
  (e.qdq_vs_twin_max_lsb > LSB_LIMIT || e.qdq_vs_twin_max_lsb_test_set > LSB_LIMIT ||
   e.qdq_vs_twin_max_lsb_extra > LSB_LIMIT));

const tmp = manifestPath + '.tmp';
fs.writeFileSync(tmp, JSON.stringify(manifest, null, 1) + '\n');
fs.renameSync(tmp, manifestPath);

// table
const rows = [['model', 'activations', 'weights', 'layers', 'params', 'weight bytes', 'MACs', 'largest activation B',
  'max layer in+out B', 'QDQ / QOp file B', 'QDQ vs QOp max LSB', 'accuracy QDQ / QOp']];
for (const e of manifest.models) {
  if (e.form !== 'qdq') continue;
  const t = byFile[e.twin] || {};
  const f = e.figures || {};
  const lsb = e.qdq_vs_twin_max_lsb ?? '-';
  const lsbTest = (e.qdq_vs_twin_max_lsb_test_set !== undefined ? ` (test set: ${e.qdq_vs_twin_max_lsb_test_set})` : '') +
    (e.qdq_vs_twin_max_lsb_extra !== undefined ? ` [${EXTRA} extra: ${e.qdq_vs_twin_max_lsb_extra}]` : '');
  const acc = e.test_accuracy !== undefined ? `${e.test_accuracy} / ${t.test_accuracy}` : '';
  const tf = t.figures || {};
  rows.push([e.name, e.activations, `${e.weights}, ${e.weight_bits}-bit`, String(f.layers), String(f.params),
    String(f.weight_bytes), String(f.macs), String(f.largest_activation_bytes), String(f.max_layer_io_bytes),
    `${f.file_bytes} / ${tf.file_bytes}`, `${lsb}${lsbTest}`, acc]);
}
const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
for (const r of rows) console.log(r.map((v, c) => v.padEnd(widths[c])).join('  '));

const readme = path.join(here, 'README.md');
if (fs.existsSync(readme)) {
  const text = fs.readFileSync(readme, 'utf8');
  const begin = '<!-- measured:begin -->';
  const end = '<!-- measured:end -->';
  const a = text.indexOf(begin);
  const b = text.indexOf(end);
  if (a >= 0 && b > a) {
    const md = ['| ' + rows[0].join(' | ') + ' |', '|' + rows[0].map(() => '---').join('|') + '|',
      ...rows.slice(1).map((r) => '| ' + r.join(' | ') + ' |')].join('\n');
    fs.writeFileSync(readme, text.slice(0, a + begin.length) + '\n' + md + '\n' + text.slice(b));
  }
}

if (failures.length) {
  for (const e of failures) {
    console.error(`ERROR ${e.name}: QDQ and QOp outputs differ by ${e.qdq_vs_twin_max_lsb} LSB ` +
      `(limit ${LSB_LIMIT}); ONNX Runtime's integer kernels may saturate on this CPU`);
  }
  process.exit(1);
}
