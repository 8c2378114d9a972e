// Normalizes each string of a JSON array with the reference's Precompiled
// normalizer built from a raw precompiled_charsmap file, and prints them.
// Run: node normalize_precompiled.mjs path/to/charsmap < strings.json
import tk from '@anush008/tokenizers';
import fs from 'fs';
const n = tk.precompiled(Array.from(fs.readFileSync(process.argv[2])));
const out = [];
for (const s of JSON.parse(fs.readFileSync(0, 'utf8'))) out.push(n.normalizeString(s));
process.stdout.write(JSON.stringify(out));
