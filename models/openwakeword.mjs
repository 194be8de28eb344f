// Helper for openwakeword.py, under ONNX Runtime (CPU, one thread).
//   node openwakeword.mjs features MEL.onnx EMB.onnx CLIPS.npy OUTDIR
//     Streams each clip (a row of CLIPS, int16-scaled float samples) as openwakeword-js
//     0.1.27 does: chunks of 1280 new samples after 480 of context (1760 in all), mel
//     frames x/10 + 2, 8 frames a chunk into a buffer that starts as 76 frames of ones,
//     and after each chunk the FLOAT embedding model on the last 76 frames. Writes
//     mel_in.npy [N*C, 1, 1760], emb_in.npy [N*C, 76, 32, 1], emb_out.npy [N*C, 96].
//   node openwakeword.mjs reference MODEL.onnx OUTPREFIX INPUT.npy
//     Runs MODEL with graph optimizations 'disabled' and 'all' and writes
//     OUTPREFIX.disabled.output_K.npy and OUTPREFIX.all.output_K.npy.
import ort from 'onnxruntime-node';
import { readNpy, writeNpy } from './npy.mjs';

ort.env.logLevel = 'error';
const [mode, ...args] = process.argv.slice(2);
const opts = (level) => ({ graphOptimizationLevel: level, intraOpNumThreads: 1, interOpNumThreads: 1 });

if (mode === 'features') {
  const [melPath, embPath, clipsPath, outdir] = args;
  const mel = await ort.InferenceSession.create(melPath, opts('disabled'));
  const emb = await ort.InferenceSession.create(embPath, opts('disabled'));
  const clips = readNpy(clipsPath);
  const [n, len] = clips.shape;
  const CHUNK = 1280, CONTEXT = 480, BINS = 32, FRAMES = 8, WINDOW = 76;
  const melIn = [], embIn = [], embOut = [];
  for (let c = 0; c < n; c++) {
    const clip = clips.data.subarray(c * len, (c + 1) * len);
    const context = new Float32Array(CONTEXT);
    const buffer = Array.from({ length: WINDOW }, () => new Float32Array(BINS).fill(1));
    for (let s = 0; s + CHUNK <= len; s += CHUNK) {
      const chunk = clip.subarray(s, s + CHUNK);
      const x = new Float32Array(CHUNK + CONTEXT);
      x.set(context); x.set(chunk, CONTEXT);
      context.set(chunk.subarray(CHUNK - CONTEXT));
      melIn.push(x);
      const out = await mel.run({ [mel.inputNames[0]]: new ort.Tensor('float32', x, [1, x.length]) });
      const m = out[mel.outputNames[0]].data;
      for (let f = 0; f < FRAMES; f++) {
        const frame = new Float32Array(BINS);
        for (let b = 0; b < BINS; b++) frame[b] = m[f * BINS + b] / 10 + 2;
        buffer.push(frame);
      }
      buffer.splice(0, buffer.length - WINDOW);
      const w = new Float32Array(WINDOW * BINS);
      buffer.forEach((fr, i) => w.set(fr, i * BINS));
      embIn.push(w);
      const e = await emb.run({ [emb.inputNames[0]]: new ort.Tensor('float32', w, [1, WINDOW, BINS, 1]) });
      embOut.push(Float32Array.from(e[emb.outputNames[0]].data));
    }
  }
  const cat = (arrs) => { const r = new Float32Array(arrs.length * arrs[0].length); arrs.forEach((a, i) => r.set(a, i * a.length)); return r; };
  writeNpy(`${outdir}/mel_in.npy`, 'float32', [melIn.length, 1, CHUNK + CONTEXT], cat(melIn));
  writeNpy(`${outdir}/emb_in.npy`, 'float32', [embIn.length, WINDOW, BINS, 1], cat(embIn));
  writeNpy(`${outdir}/emb_out.npy`, 'float32', [embOut.length, 96], cat(embOut));
} else if (mode === 'reference') {
  const [model, prefix, input] = args;
  const x = readNpy(input);
  for (const level of ['disabled', 'all']) {
    const s = await ort.InferenceSession.create(model, opts(level));
    const out = await s.run({ [s.inputNames[0]]: new ort.Tensor(x.dtype, x.data, x.shape) });
    s.outputNames.forEach((name, k) => {
      const t = out[name];
      writeNpy(`${prefix}.${level}.output_${k}.npy`, t.type, t.dims, t.data);
    });
  }
} else {
  console.error('usage: node openwakeword.mjs features|reference ...');
  process.exit(2);
}
