// Prints, for every code point, what the Hugging Face tokenizers library's
// BERT components do with it: the characters BertNormalizer's clean_text
// removes or turns into a space, the ones handle_chinese_chars surrounds
// with spaces, the ones BertPreTokenizer splits on or isolates, the marks
// strip_accents and the StripAccents normalizer drop, Lowercase's mapping,
// NFD's decompositions, and which of the candidate characters read on
// stdin (a JSON array of code points) NFD treats as combining (reorders).
// bert_tables_test.go turns this into bert_tables.go.
// Run: node bert_tables.mjs < candidates.json
import tk from '@anush008/tokenizers';
import fs from 'fs';

const clean = tk.bertNormalizer({ cleanText: true, handleChineseChars: false, stripAccents: false, lowercase: false });
const chinese = tk.bertNormalizer({ cleanText: false, handleChineseChars: true, stripAccents: false, lowercase: false });
const bertStrip = tk.bertNormalizer({ cleanText: false, handleChineseChars: false, stripAccents: true, lowercase: false });
const stripAccents = tk.stripAccentsNormalizer();
const lower = tk.lowercase();
const nfd = tk.nfdNormalizer();
const pre = tk.bertPreTokenizer();

const codePoints = [];
for (let c = 0; c <= 0x10ffff; c++) {
  if (c < 0xd800 || c > 0xdfff) codePoints.push(c);
}

// perChar runs a normalizer over many characters at once, each followed by
// sep, which it leaves alone and which nothing maps to; sep itself is run
// alone.
function perChar(n, sep, f) {
  const chunk = 2048;
  for (let i = 0; i < codePoints.length; i += chunk) {
    const cs = codePoints.slice(i, i + chunk).filter((c) => c !== sep.codePointAt(0));
    const parts = n.normalizeString(cs.map((c) => String.fromCodePoint(c) + sep).join('')).split(sep);
    if (parts.length !== cs.length + 1) throw new Error('separator ' + sep + ' was changed near ' + cs[0]);
    cs.forEach((c, k) => f(c, parts[k]));
  }
  f(sep.codePointAt(0), n.normalizeString(sep));
}

function ranges(cs) {
  const out = [];
  for (const c of cs.sort((a, b) => a - b)) {
    if (out.length && out[out.length - 1][1] === c - 1) out[out.length - 1][1] = c;
    else out.push([c, c]);
  }
  return out;
}

const out = { control: [], cleanSpace: [], chinese: [], whitespace: [], punctuation: [], nonspacing: [], combining: [], lower: [], nfd: [], combiningClass: [] };
const removed = [], cleanSpace = [], cjk = [], nonspacing = [], combining = [], decomposed = new Set();
perChar(clean, 'a', (c, r) => {
  if (r === '') removed.push(c);
  else if (r === ' ' && c !== 0x20) cleanSpace.push(c);
  else if (r !== String.fromCodePoint(c)) throw new Error('clean_text mapped ' + c + ' to ' + JSON.stringify(r));
});
perChar(chinese, 'a', (c, r) => { if (r !== String.fromCodePoint(c)) cjk.push(c); });
perChar(nfd, '\ue000', (c, r) => {
  if (r !== String.fromCodePoint(c)) { out.nfd.push([c, r]); decomposed.add(c); }
});
perChar(bertStrip, '\ue000', (c, r) => { if (r === '' && !decomposed.has(c)) nonspacing.push(c); });
perChar(stripAccents, '\ue000', (c, r) => { if (r === '') combining.push(c); });
perChar(lower, '\ue000', (c, r) => { if (r !== String.fromCodePoint(c)) out.lower.push([c, r]); });
// Each character between an x and a comma: "xc" stays one piece, a
// space leaves "x" alone, punctuation is a piece of its own.
const ws = [], punct = [];
function classify(c, group) {
  const x = 'x' + String.fromCodePoint(c);
  if (group.length === 1 && group[0] === x) return;
  if (group.length === 1 && group[0] === 'x') ws.push(c);
  else if (group.length === 2 && group[0] === 'x' && group[1] === String.fromCodePoint(c)) punct.push(c);
  else throw new Error('BertPreTokenizer split ' + JSON.stringify(x) + ' into ' + JSON.stringify(group));
}
for (let i = 0; i < codePoints.length; i += 2048) {
  const cs = codePoints.slice(i, i + 2048).filter((c) => c !== 0x2c && c !== 0x78);
  const pieces = pre.preTokenizeString(cs.map((c) => 'x' + String.fromCodePoint(c) + ',').join('')).map((p) => p[0]);
  let k = 0, group = [];
  for (const p of pieces) {
    if (p !== ',') { group.push(p); continue; }
    classify(cs[k++], group);
    group = [];
  }
  if (k !== cs.length || group.length) throw new Error('BertPreTokenizer pieces out of step near ' + cs[0]);
}
punct.push(0x2c);
// A combining character sorts against U+0301 (class 230) or U+0334
// (class 1); a starter stays where it is.
for (const c of JSON.parse(fs.readFileSync(0, 'utf8'))) {
  const s = String.fromCodePoint(c);
  if (nfd.normalizeString('a\u0301' + s) !== 'a\u0301' + s || nfd.normalizeString('a' + s + '\u0334') !== 'a' + s + '\u0334') {
    out.combiningClass.push(c);
  }
}
out.control = ranges(removed);
out.cleanSpace = ranges(cleanSpace);
out.chinese = ranges(cjk);
out.whitespace = ranges(ws);
out.punctuation = ranges(punct);
out.nonspacing = ranges(nonspacing);
out.combining = ranges(combining);
process.stdout.write(JSON.stringify(out));
