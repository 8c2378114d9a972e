// Decodes each id list of a JSON array with a tokenizer.json under the
// Hugging Face tokenizers library (special tokens kept) and prints the
// texts.
// Run: node decode.mjs path/to/tokenizer.json < ids.json
import tk from '@anush008/tokenizers';
import fs from 'fs';
const t = tk.Tokenizer.fromFile(process.argv[2]);
const out = [];
for (const ids of JSON.parse(fs.readFileSync(0, 'utf8'))) out.push(await t.decode(ids, false));
process.stdout.write(JSON.stringify(out));
