// Encodes each string of a JSON array with a tokenizer.json under the Hugging
// Face tokenizers library (add_special_tokens=False) and prints the ids. A
// file's truncation and padding (sentence-transformers files set both) are
// the model input's, not the text's: they are turned off.
// Run: node encode.mjs path/to/tokenizer.json < strings.json
import tk from '@anush008/tokenizers';
import fs from 'fs';
const t = tk.Tokenizer.fromFile(process.argv[2]);
t.disableTruncation();
t.disablePadding();
const out = [];
for (const s of JSON.parse(fs.readFileSync(0, 'utf8'))) {
  const e = await t.encode(s, null, { addSpecialTokens: false });
  out.push(e.getIds());
}
process.stdout.write(JSON.stringify(out));
