// Writes BERT-style tokenizer.json files with the Hugging Face tokenizers
// library itself: a WordPiece vocabulary the library learns from the given
// text files (its first 8,000 pieces), laid out as bert-base-uncased and
// -cased lay theirs out ([PAD], [UNK], [CLS], [SEP], [MASK] as special
// added tokens), with BertNormalizer, BertPreTokenizer, the [CLS] $A [SEP]
// template and the WordPiece decoder; and a variant with the Sequence
// normalizer other BERT-family files use (NFD, Lowercase, StripAccents), a
// Sequence pre-tokenizer and a short max_input_chars_per_word. They stand
// in for a published BERT tokenizer.json, which no npm package was found to
// carry; learning is not deterministic, so the files are kept in
// ../bert/ (go test -run TestMakeBertFiles -update-bert writes them).
// Run: node make_bert.mjs out-dir train.txt...
import tk from '@anush008/tokenizers';

const [outDir, ...files] = process.argv.slice(2);
const specials = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'];

const variants = [
  { name: 'bert_uncased', normalizer: () => tk.bertNormalizer({ cleanText: true, handleChineseChars: true, lowercase: true }) },
  { name: 'bert_cased', normalizer: () => tk.bertNormalizer({ cleanText: true, handleChineseChars: true, lowercase: false }) },
  {
    name: 'bert_sequence',
    normalizer: () => tk.sequenceNormalizer([tk.nfdNormalizer(), tk.lowercase(), tk.stripAccentsNormalizer()]),
    preTokenizer: () => tk.sequencePreTokenizer([tk.whitespaceSplitPreTokenizer(), tk.bertPreTokenizer()]),
    maxInputCharsPerWord: 12,
    cleanup: false,
  },
];

for (const v of variants) {
  const preTokenizer = v.preTokenizer ?? (() => tk.bertPreTokenizer());
  const learner = new tk.Tokenizer(tk.WordPiece.empty());
  learner.setNormalizer(v.normalizer());
  learner.setPreTokenizer(preTokenizer());
  learner.train(files);
  const vocab = {};
  specials.forEach((s, i) => { vocab[s] = i; });
  for (const [piece, id] of Object.entries(learner.getVocab(false))) {
    if (id < 8000) vocab[piece] = specials.length + id;
  }

  const t = new tk.Tokenizer(tk.WordPiece.init(vocab, { unkToken: '[UNK]', continuingSubwordPrefix: '##', maxInputCharsPerWord: v.maxInputCharsPerWord ?? 100 }));
  t.setNormalizer(v.normalizer());
  t.setPreTokenizer(preTokenizer());
  t.setPostProcessor(tk.templateProcessing('[CLS] $A [SEP]', '[CLS] $A [SEP] $B:1 [SEP]:1', [['[CLS]', 2], ['[SEP]', 3]]));
  t.setDecoder(tk.wordPieceDecoder('##', v.cleanup ?? true));
  t.addSpecialTokens(specials);
  t.save(`${outDir}/${v.name}.json`, true);
}
