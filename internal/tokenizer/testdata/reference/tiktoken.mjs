// Encodes each string of a JSON array with tiktoken's o200k_base (special
// tokens in the text allowed) and prints the ids.
// Run: node tiktoken.mjs < strings.json
import { get_encoding } from 'tiktoken';
import fs from 'fs';
const enc = get_encoding('o200k_base');
const out = JSON.parse(fs.readFileSync(0, 'utf8')).map((s) => Array.from(enc.encode(s, 'all')));
enc.free();
process.stdout.write(JSON.stringify(out));
