// The reference side of bench/tokenizer_speed.sh: the same chunks as
// bench/tokenizerspeed, counted one at a time by the Hugging Face tokenizers
// library (a tokenizer.json) or by tiktoken (o200k_base), in MB/s.
// Run: node bench.mjs <tokenizer.json|tiktoken> <text file> [chunk bytes] [seconds]
import tk from '@anush008/tokenizers';
import { get_encoding } from 'tiktoken';
import fs from 'fs';
const [spec, file, chunkArg, secondsArg] = process.argv.slice(2);
const size = Number(chunkArg || 4096), seconds = Number(secondsArg || 2);
const text = fs.readFileSync(file);
const chunks = [];
for (let i = 0; i < text.length;) {
  let end = Math.min(i + size, text.length);
  while (end < text.length && text[end - 1] !== 0x0a) end++;
  chunks.push(text.subarray(i, end).toString('utf8'));
  i = end;
}
let count;
if (spec === 'tiktoken') {
  const enc = get_encoding('o200k_base');
  count = async (s) => enc.encode(s, 'all').length;
} else {
  const t = tk.Tokenizer.fromFile(spec);
  count = async (s) => (await t.encode(s, null, { addSpecialTokens: false })).getIds().length;
}
let tokens = 0;
for (const c of chunks) tokens += await count(c);
let bytes = 0;
const start = process.hrtime.bigint();
const elapsed = () => Number(process.hrtime.bigint() - start) / 1e9;
while (elapsed() < seconds) {
  for (const c of chunks) { await count(c); bytes += Buffer.byteLength(c); }
}
console.log(`${(bytes / elapsed() / 1e6).toFixed(2)} MB/s (${tokens} tokens in ${text.length} bytes)`);
