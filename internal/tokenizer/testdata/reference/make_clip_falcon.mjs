// Writes a CLIP-style and a Falcon-style tokenizer.json, laid out as
// openai/clip-vit-base-patch32's and tiiuae/falcon-7b's are, around a small
// byte-level BPE vocabulary learnt here from the given text files. No npm
// package ships either file, and the reference library's own trainer
// cannot learn CLIP's end_of_word_suffix, so the words are counted by the
// reference itself (each file's normalizer and pre-tokenizer, as the file
// declares them) and the merges learnt by a plain BPE learner below
// (most frequent pair first, ties by the pair's text), MERGES of them.
// Each file is loaded back with Tokenizer.fromFile to prove the reference
// accepts it. The learning is deterministic, but the files are kept in
// ../clip_falcon/ so that the tests read fixed files and need not learn
// (go test -run TestMakeClipFalconFiles -update-clip-falcon writes them).
//   clip: NFC, \s+ -> " ", Lowercase; Split (CLIP's regex, Removed,
//     inverted) then ByteLevel without its regex; BPE with
//     end_of_word_suffix "</w>"; RobertaProcessing; BPEDecoder.
//   falcon: Punctuation (Contiguous), ByteLevel (its regex), Digits,
//     Split [0-9][0-9][0-9] (Isolated); plain byte-level BPE.
// Run: node make_clip_falcon.mjs OUTDIR train.txt...
import tk from '@anush008/tokenizers';
import fs from 'fs';
import path from 'path';

const MERGES = 3000;
const [outDir, ...files] = process.argv.slice(2);

// alphabet is GPT-2's bytes_to_unicode, in byte order.
const alphabet = (() => {
  const out = [];
  let n = 0;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
    out.push(String.fromCodePoint(printable ? b : 256 + n++));
  }
  return out;
})();

const clipRegex = "'s|'t|'re|'ve|'m|'ll|'d|[\\p{L}]+|[\\p{N}]|[^\\s\\p{L}\\p{N}]+";
const added = (id, content, normalized) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized, special: true });

const variants = {
  clip: {
    suffix: '</w>',
    specials: ['<|startoftext|>', '<|endoftext|>'], // after the vocabulary, as CLIP's
    normalized: true,
    file: (model, ids) => ({
      version: '1.0', truncation: null, padding: null,
      added_tokens: [added(ids['<|startoftext|>'], '<|startoftext|>', true), added(ids['<|endoftext|>'], '<|endoftext|>', true)],
      normalizer: { type: 'Sequence', normalizers: [{ type: 'NFC' }, { type: 'Replace', pattern: { Regex: '\\s+' }, content: ' ' }, { type: 'Lowercase' }] },
      pre_tokenizer: { type: 'Sequence', pretokenizers: [
        { type: 'Split', pattern: { Regex: clipRegex }, behavior: 'Removed', invert: true },
        { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false }] },
      post_processor: { type: 'RobertaProcessing', sep: ['<|endoftext|>', ids['<|endoftext|>']], cls: ['<|startoftext|>', ids['<|startoftext|>']], trim_offsets: false, add_prefix_space: false },
      decoder: { type: 'BPEDecoder', suffix: '</w>' },
      model: { type: 'BPE', dropout: null, unk_token: '<|endoftext|>', continuing_subword_prefix: '', end_of_word_suffix: '</w>', fuse_unk: false, byte_fallback: false, ignore_merges: false, ...model },
    }),
    // CLIP writes its merges "a b".
    merge: (a, b) => `${a} ${b}`,
  },
  falcon: {
    suffix: '',
    // Before the vocabulary, as Falcon's (ids 0 to 11).
    leading: ['>>TITLE<<', '>>ABSTRACT<<', '>>INTRODUCTION<<', '>>SUMMARY<<', '>>COMMENT<<', '>>ANSWER<<', '>>QUESTION<<', '>>DOMAIN<<', '>>PREFIX<<', '>>SUFFIX<<', '>>MIDDLE<<', '<|endoftext|>'],
    specials: [],
    file: (model, ids) => ({
      version: '1.0', truncation: null, padding: null,
      added_tokens: Object.entries(ids).filter(([, id]) => id < 12).map(([s, id]) => added(id, s, false)),
      normalizer: null,
      pre_tokenizer: { type: 'Sequence', pretokenizers: [
        { type: 'Punctuation', behavior: 'Contiguous' },
        { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
        { type: 'Digits', individual_digits: false },
        { type: 'Split', pattern: { Regex: '[0-9][0-9][0-9]' }, behavior: 'Isolated', invert: false }] },
      post_processor: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
      decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
      model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null, end_of_word_suffix: null, fuse_unk: false, byte_fallback: false, ignore_merges: false, ...model },
    }),
    merge: (a, b) => [a, b],
  },
};

const text = files.map((f) => fs.readFileSync(f, 'utf8')).join('\n').split('\n');

for (const [name, v] of Object.entries(variants)) {
  // A file with the alphabet alone runs the reference's normalizer and
  // pre-tokenizer for counting the words.
  const vocab = {};
  for (const s of v.leading ?? []) vocab[s] = Object.keys(vocab).length;
  for (const c of alphabet) vocab[c] = Object.keys(vocab).length;
  if (v.suffix) for (const c of alphabet) vocab[c + v.suffix] = Object.keys(vocab).length;
  const withSpecials = (vocab) => {
    const ids = { ...vocab };
    for (const s of v.specials) ids[s] = Object.keys(ids).length;
    return ids;
  };
  const counter = path.join(outDir, name + '.count.json');
  fs.writeFileSync(counter, JSON.stringify(v.file({ vocab: withSpecials(vocab), merges: [] }, withSpecials(vocab))));
  const t = tk.Tokenizer.fromFile(counter);
  fs.unlinkSync(counter);
  const norm = t.getNormalizer(), pre = t.getPreTokenizer();
  const counts = new Map();
  for (const line of text) {
    const s = norm ? norm.normalizeString(line) : line;
    for (const [w] of pre.preTokenizeString(s)) counts.set(w, (counts.get(w) ?? 0) + 1);
  }

  const merges = learn(counts, v.suffix, MERGES);
  for (const [a, b] of merges) if (!(a + b in vocab)) vocab[a + b] = Object.keys(vocab).length;
  const ids = withSpecials(vocab);
  const out = path.join(outDir, name + '.json');
  fs.writeFileSync(out, JSON.stringify(v.file({ vocab: ids, merges: merges.map(([a, b]) => v.merge(a, b)) }, ids)));
  tk.Tokenizer.fromFile(out); // the reference accepts it
}

// learn returns n merges learnt from words (word -> count): each word's
// symbols are its characters, the last carrying suffix; the pair most
// often adjacent is merged next (ties: the smaller "a b" text), until n
// merges or no pair occurs twice.
function learn(counts, suffix, n) {
  const words = [];
  for (const [w, count] of counts) {
    const syms = [...w];
    if (suffix) syms[syms.length - 1] += suffix;
    words.push({ syms, count });
  }
  const pairCount = new Map(), pairWords = new Map();
  const key = (a, b) => a + '\u0000' + b;
  const account = (wi, sign) => {
    const { syms, count } = words[wi];
    for (let i = 0; i + 1 < syms.length; i++) {
      const k = key(syms[i], syms[i + 1]);
      pairCount.set(k, (pairCount.get(k) ?? 0) + sign * count);
      if (sign > 0) {
        if (!pairWords.has(k)) pairWords.set(k, new Set());
        pairWords.get(k).add(wi);
      }
    }
  };
  words.forEach((_, wi) => account(wi, 1));
  const merges = [];
  while (merges.length < n) {
    let best = null, bestCount = 1;
    for (const [k, c] of pairCount) {
      if (c > bestCount || (c === bestCount && best !== null && k < best)) { best = k; bestCount = c; }
    }
    if (best === null) break;
    const [a, b] = best.split('\u0000');
    merges.push([a, b]);
    for (const wi of pairWords.get(best)) {
      const { syms } = words[wi];
      let has = false;
      for (let i = 0; i + 1 < syms.length; i++) if (syms[i] === a && syms[i + 1] === b) has = true;
      if (!has) continue;
      account(wi, -1);
      const merged = [];
      for (let i = 0; i < syms.length; i++) {
        if (i + 1 < syms.length && syms[i] === a && syms[i + 1] === b) { merged.push(a + b); i++; } else merged.push(syms[i]);
      }
      words[wi].syms = merged;
      account(wi, 1);
    }
    pairWords.delete(best);
    pairCount.delete(best);
    for (const [k, c] of pairCount) if (c <= 0) pairCount.delete(k);
  }
  return merges;
}
