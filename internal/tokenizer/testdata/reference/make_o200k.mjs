// Writes ../../o200k_base.bin.gz, the o200k_base ranks llmbench embeds, from
// tiktoken's own encoder file: for each rank in order, one length byte and
// the token's bytes.  Run: node make_o200k.mjs
import fs from 'fs';
import zlib from 'zlib';
import { createRequire } from 'module';
const require = createRequire(import.meta.url);
const enc = JSON.parse(fs.readFileSync(require.resolve('tiktoken/encoders/o200k_base.json'), 'utf8'));
const tokens = [];
for (const line of enc.bpe_ranks.split('\n')) {
  if (!line) continue;
  const [, offset, ...b64] = line.split(' ');
  b64.forEach((b, i) => { tokens[Number(offset) + i] = Buffer.from(b, 'base64'); });
}
const parts = [];
tokens.forEach((t, rank) => {
  if (!t) throw new Error(`rank ${rank} missing`);
  if (t.length > 255) throw new Error(`rank ${rank} too long`);
  parts.push(Buffer.from([t.length]), t);
});
fs.writeFileSync(new URL('../../o200k_base.bin.gz', import.meta.url), zlib.gzipSync(Buffer.concat(parts), { level: 9 }));
console.log(tokens.length, 'ranks;', JSON.stringify(enc.special_tokens), JSON.stringify(enc.pat_str).length, 'chars of pattern');
