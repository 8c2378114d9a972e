package tokenizer

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestO200kKnownIDs(t *testing.T) {
	tok, err := O200k()
	if err != nil {
		t.Fatal(err)
	}
	// tiktoken's o200k_base, by hand from its encoder file.
	tests := map[string][]int{
		"hello world":   {24912, 2375},
		"<|endoftext|>": {199999},
		"":              nil,
	}
	for text, want := range tests {
		if got := tok.Encode(text); !slices.Equal(got, want) {
			t.Errorf("%q: %v, want %v", text, got, want)
		}
		if got := tok.Count(text); got != len(want) {
			t.Errorf("Count(%q) = %d, want %d", text, got, len(want))
		}
	}
	if got := tok.Decode([]int{24912, 2375}); got != "hello world" {
		t.Errorf("Decode: %q", got)
	}
}

// encodeCase is a text and the ids it must encode to.
type encodeCase struct {
	text string
	want []int
}

// checkEncodes fails where tok encodes a case's text to other ids, or
// counts it as other than their number.
func checkEncodes(t *testing.T, tok *HF, cases []encodeCase) {
	t.Helper()
	for _, tc := range cases {
		if got := tok.Encode(tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("%q: %v, want %v", tc.text, got, tc.want)
		}
		if got := tok.Count(tc.text); got != len(tc.want) {
			t.Errorf("Count(%q) = %d, want %d", tc.text, got, len(tc.want))
		}
	}
}

// decodeCase is ids and the text they must decode to.
type decodeCase struct {
	ids  []int
	want string
}

// checkDecodes fails where tok decodes a case's ids to other text.
func checkDecodes(t *testing.T, tok *HF, cases []decodeCase) {
	t.Helper()
	for _, tc := range cases {
		if got := tok.Decode(tc.ids); got != tc.want {
			t.Errorf("Decode(%v) = %q, want %q", tc.ids, got, tc.want)
		}
	}
}

// tinyJSON builds a tokenizer.json around a model and pipeline.
func tinyJSON(t testing.TB, model map[string]any, extra map[string]any) []byte {
	t.Helper()
	doc := map[string]any{"added_tokens": []any{}, "normalizer": nil, "pre_tokenizer": nil, "model": model}
	for k, v := range extra {
		doc[k] = v
	}
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestBPEMerges: a vocabulary small enough to merge by hand. Ranks: "a b"
// first, then "b c", then "ab c"; so "abc" is a·b→ab, then ab·c→abc, and
// "bcb" is b·c→bc, then bc and b do not merge.
func TestBPEMerges(t *testing.T) {
	vocab := map[string]int{"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4, "abc": 5, "<unk>": 6, "x": 7}
	model := map[string]any{"type": "BPE", "vocab": vocab, "merges": []string{"a b", "b c", "ab c"}, "unk_token": "<unk>"}
	tok, err := ParseHF(tinyJSON(t, model, map[string]any{"pre_tokenizer": map[string]any{"type": "WhitespaceSplit"}}), "tiny")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		text string
		want []int
	}{
		{"abc", []int{5}},
		{"bcb", []int{4, 1}},
		{"abab", []int{3, 3}},
		{"cab", []int{2, 3}},
		{"a b  c", []int{0, 1, 2}},
		{"aqqb", []int{0, 6, 6, 1}}, // unknown characters, not fused
	}
	for _, tc := range tests {
		if got := tok.Encode(tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("%q: %v, want %v", tc.text, got, tc.want)
		}
	}
	model["fuse_unk"] = true
	fused, err := ParseHF(tinyJSON(t, model, nil), "fused")
	if err != nil {
		t.Fatal(err)
	}
	if got := fused.Encode("aqqbqx"); !slices.Equal(got, []int{0, 6, 1, 6, 7}) {
		t.Errorf("fused unknowns: %v", got)
	}
}

// TestSentencePieceStyle: Llama 2's pipeline on a tiny vocabulary: "▁" is
// prepended and replaces spaces; a character missing from the vocabulary
// is spelled by its UTF-8 bytes' <0xXX> tokens.
func TestSentencePieceStyle(t *testing.T) {
	vocab := map[string]int{"<unk>": 0, "▁": 1, "h": 2, "i": 3, "▁h": 4, "▁hi": 5, "<0xC3>": 6, "<0xA9>": 7}
	model := map[string]any{"type": "BPE", "vocab": vocab, "merges": []string{"▁ h", "▁h i"}, "unk_token": "<unk>", "byte_fallback": true, "fuse_unk": true}
	tok, err := ParseHF(tinyJSON(t, model, map[string]any{"normalizer": spNormalizer}), "sp")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		text string
		want []int
	}{
		{"hi", []int{5}},
		{"hi hi", []int{5, 5}},
		{"é", []int{1, 6, 7}},
		{"ih", []int{1, 3, 2}},
	}
	for _, tc := range tests {
		if got := tok.Encode(tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("%q: %v, want %v", tc.text, got, tc.want)
		}
	}
	if got := tok.Decode([]int{5, 5, 1, 6, 7}); got != "hi hi é" {
		t.Errorf("Decode: %q", got)
	}
}

// TestAddedTokens: added tokens are found before anything else, leftmost
// and longest first, with lstrip/rstrip taking the spaces beside them.
func TestAddedTokens(t *testing.T) {
	vocab := map[string]int{"a": 0, " ": 1, "<": 2, ">": 3, "x": 4}
	added := []any{
		map[string]any{"id": 10, "content": "<x>", "special": true},
		map[string]any{"id": 11, "content": "<x>>", "special": true},
		map[string]any{"id": 12, "content": "a", "special": false, "lstrip": true, "rstrip": true},
	}
	tok, err := ParseHF(tinyJSON(t, map[string]any{"type": "BPE", "vocab": vocab, "merges": []string{}}, map[string]any{"added_tokens": added}), "added")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		text string
		want []int
	}{
		{"<x>>x", []int{11, 4}},
		{"<x><x>", []int{10, 10}},
		{"x  a  x", []int{4, 12, 4}},
		{"<<x>", []int{2, 10}},
	}
	for _, tc := range tests {
		if got := tok.Encode(tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("%q: %v, want %v", tc.text, got, tc.want)
		}
	}
}

// TestUnsupportedComponents: what cannot be counted exactly is refused,
// by name.
func TestUnsupportedComponents(t *testing.T) {
	bpe := map[string]any{"type": "BPE", "vocab": map[string]int{"a": 0}, "merges": []string{}}
	tests := []struct {
		name  string
		model map[string]any
		extra map[string]any
		want  string
	}{
		// Unigram is run, but not without unk_id: the reference fails on the
		// first character outside the vocabulary.
		{"unigram without unk_id", map[string]any{"type": "Unigram", "vocab": [][]any{{"<unk>", 0.0}, {"▁a", -1.5}}}, nil, `without unk_id`},
		{"no model type", map[string]any{"vocab": map[string]int{"a": 0}}, nil, `model "(no type, no merges)" is not supported`},
		{"no model", map[string]any{}, nil, `not a Hugging Face tokenizer.json`},
		{"empty vocab", map[string]any{"type": "BPE", "vocab": map[string]int{}, "merges": []string{}}, nil, "vocabulary is empty"},
		{"precompiled without its charsmap", bpe, map[string]any{"normalizer": map[string]any{"type": "Precompiled"}}, `Precompiled has no precompiled_charsmap`},
		{"unicode scripts", bpe, map[string]any{"pre_tokenizer": map[string]any{"type": "UnicodeScripts"}}, `pre-tokenizer "UnicodeScripts"`},
		{"punctuation behavior", bpe, map[string]any{"pre_tokenizer": map[string]any{"type": "Punctuation", "behavior": "Sideways"}}, `unknown behavior "Sideways"`},
		{"metaspace after byte-level", bpe, map[string]any{"pre_tokenizer": map[string]any{"type": "Sequence", "pretokenizers": []any{map[string]any{"type": "ByteLevel"}, map[string]any{"type": "Metaspace"}}}}, "Metaspace after a ByteLevel"},
		{"bert in a sequence", bpe, map[string]any{"pre_tokenizer": map[string]any{"type": "Sequence", "pretokenizers": []any{map[string]any{"type": "BertPreTokenizer"}, map[string]any{"type": "UnicodeScripts"}}}}, `pre-tokenizer "UnicodeScripts"`},
		{"dropout", map[string]any{"type": "BPE", "vocab": map[string]int{"a": 0}, "merges": []string{}, "dropout": 0.1}, nil, "dropout"},
		{"prefix", map[string]any{"type": "BPE", "vocab": map[string]int{"a": 0}, "merges": []string{}, "continuing_subword_prefix": "##"}, nil, "continuing_subword_prefix"},
		{"byte-level suffix outside the alphabet", map[string]any{"type": "BPE", "vocab": map[string]int{"a": 0}, "merges": []string{}, "end_of_word_suffix": "▁"}, map[string]any{"pre_tokenizer": map[string]any{"type": "ByteLevel"}}, "outside the byte-level alphabet"},
		{"bad merge", map[string]any{"type": "BPE", "vocab": map[string]int{"a": 0}, "merges": []string{"a b"}}, nil, "missing from the vocabulary"},
		{"negative id", map[string]any{"type": "BPE", "vocab": map[string]int{"a": -3}, "merges": []string{}}, nil, "negative id -3"},
		{"huge id", map[string]any{"type": "BPE", "vocab": map[string]int{"a": 0, "b": 1 << 30}, "merges": []string{}}, nil, "far beyond the 2 tokens"},
		{"negative added id", bpe, map[string]any{"added_tokens": []any{map[string]any{"id": -1, "content": "<x>"}}}, "negative id -1"},
	}
	for _, tc := range tests {
		_, err := ParseHF(tinyJSON(t, tc.model, tc.extra), tc.name)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}

// TestMergeScanEqualsHeap: the two merge loops give the same tokens on
// random words, for both merge orders (pair ranks and tiktoken's ranks).
func TestMergeScanEqualsHeap(t *testing.T) {
	tok, err := O200k()
	if err != nil {
		t.Fatal(err)
	}
	m := tok.model
	rng := rand.New(rand.NewPCG(9, 9))
	letters := "etaoinshrdlu  ,.'\\n"
	for range 3000 {
		n := 2 + rng.IntN(60)
		var b strings.Builder
		for range n {
			b.WriteByte(letters[rng.IntN(len(letters))])
		}
		word := b.String()
		a := &bpeScratch{}
		a.ids, a.starts = m.symbols(nil, nil, word)
		scan := slices.Clone(m.mergeScan(a, word))
		h := &bpeScratch{}
		h.ids, h.starts = m.symbols(nil, nil, word)
		heap := m.mergeHeap(h, word)
		if !slices.Equal(scan, heap) {
			t.Fatalf("%q: scan %v, heap %v", word, scan, heap)
		}
	}
}

// TestConcurrentUse: one tokenizer shared by goroutines (the collector,
// the built-in server's handlers) counts as it does alone.
func TestConcurrentUse(t *testing.T) {
	tok, err := O200k()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(2, 2))
	texts := make([]string, 200)
	want := make([]int, len(texts))
	for i := range texts {
		texts[i] = randomTricky(rng) + " the whale, the whale! " + randomTricky(rng)
		want[i] = (&HF{raw: tok.raw, normalized: tok.normalized, pre: tok.pre, model: &bpe{
			vocab: tok.model.vocab, byteLevel: true, byteIDs: tok.model.byteIDs, rankIsID: true, ignoreMerges: true, unk: -1,
		}}).Count(texts[i]) // a fresh cache: nothing shared
	}
	errs := make(chan string, 4)
	for g := range 4 {
		go func() {
			for k := range 5 * len(texts) {
				i := (k*7 + g) % len(texts)
				if got := tok.Count(texts[i]); got != want[i] {
					errs <- texts[i]
					return
				}
			}
			errs <- ""
		}()
	}
	for range 4 {
		if s := <-errs; s != "" {
			t.Errorf("%q counted differently under concurrency", s)
		}
	}
}

// FuzzParseHF: any file either loads or is refused with an error; a loaded
// tokenizer counts any text without panicking.
func FuzzParseHF(f *testing.F) {
	f.Add([]byte(`{"model":{"type":"BPE","vocab":{"a":0,"b":1,"ab":2},"merges":["a b"]},"added_tokens":[{"id":3,"content":"<s>"}]}`), "ab<s>ba")
	f.Add([]byte(`{"model":{"type":"BPE","vocab":{"▁":0,"<0x41>":1,"<unk>":2},"merges":[],"byte_fallback":true,"unk_token":"<unk>"},"normalizer":{"type":"Prepend","prepend":"▁"},"pre_tokenizer":{"type":"Metaspace"}}`), "A b")
	f.Add([]byte(`{"model":{"type":"BPE","vocab":{"a":0},"merges":[]},"pre_tokenizer":{"type":"Split","pattern":{"Regex":"a+"},"behavior":"Contiguous","invert":true}}`), "aab a")
	f.Add([]byte(`{"model":{"type":"WordPiece","vocab":{"[UNK]":0,"un":1,"##aff":2,"##able":3},"unk_token":"[UNK]","continuing_subword_prefix":"##","max_input_chars_per_word":100},"normalizer":{"type":"BertNormalizer","clean_text":true,"handle_chinese_chars":true,"strip_accents":null,"lowercase":true},"pre_tokenizer":{"type":"BertPreTokenizer"},"added_tokens":[{"id":0,"content":"[UNK]","special":true}]}`), "Unaffable, 漢字 É\u200b[UNK]")
	f.Fuzz(func(t *testing.T, data []byte, text string) {
		tok, err := ParseHF(data, "fuzz")
		if err != nil {
			return
		}
		if n := tok.Count(text); n < 0 || n != len(tok.Encode(text)) {
			t.Fatalf("Count %d, Encode %d", n, len(tok.Encode(text)))
		}
	})
}
