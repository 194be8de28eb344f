// Minimal .npy (format 1.0/2.0) reader and writer for the dtypes the test
// models use. No dependencies; C order only.
import fs from 'node:fs';

const DTYPES = {
  '<f4': { ort: 'float32', Array: Float32Array, size: 4 },
  '<f8': { ort: 'float64', Array: Float64Array, size: 8 },
  '|i1': { ort: 'int8', Array: Int8Array, size: 1 },
  '|u1': { ort: 'uint8', Array: Uint8Array, size: 1 },
  '<i4': { ort: 'int32', Array: Int32Array, size: 4 },
  '<i8': { ort: 'int64', Array: BigInt64Array, size: 8 },
};
const BY_ORT = Object.fromEntries(Object.entries(DTYPES).map(([k, v]) => [v.ort, k]));

export function readNpy(path) {
  const buf = fs.readFileSync(path);
  if (buf.length < 10 || buf[0] !== 0x93 || buf.toString('latin1', 1, 6) !== 'NUMPY') {
    throw new Error(`${path}: not a .npy file`);
  }
  const major = buf[6];
  let hlen, off;
  if (major === 1) { hlen = buf.readUInt16LE(8); off = 10; } else { hlen = buf.readUInt32LE(8); off = 12; }
  const header = buf.toString('latin1', off, off + hlen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  const fortran = /'fortran_order':\s*(True|False)/.exec(header)[1];
  const shapeText = /'shape':\s*\(([^)]*)\)/.exec(header)[1];
  const shape = shapeText.split(',').map((s) => s.trim()).filter((s) => s.length).map(Number);
  if (fortran !== 'False') throw new Error(`${path}: fortran order unsupported`);
  const dt = DTYPES[descr === '<i1' ? '|i1' : descr === '<u1' ? '|u1' : descr];
  if (!dt) throw new Error(`${path}: dtype ${descr} unsupported`);
  const count = shape.reduce((a, b) => a * b, 1);
  const start = off + hlen;
  const bytes = buf.subarray(start, start + count * dt.size);
  const copy = new Uint8Array(bytes); // aligned copy
  const data = new dt.Array(copy.buffer, 0, count);
  return { dtype: dt.ort, shape, data };
}

export function writeNpy(path, dtype, shape, data) {
  const descr = BY_ORT[dtype];
  if (!descr) throw new Error(`writeNpy: dtype ${dtype} unsupported`);
  const shapeText = shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shapeText}, }`;
  const total = 10 + header.length + 1;
  header += ' '.repeat((64 - (total % 64)) % 64) + '\n';
  const pre = Buffer.alloc(10);
  pre[0] = 0x93; pre.write('NUMPY', 1, 'latin1'); pre[6] = 1; pre[7] = 0;
  pre.writeUInt16LE(header.length, 8);
  const body = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  fs.writeFileSync(path, Buffer.concat([pre, Buffer.from(header, 'latin1'), body]));
}
