package tokenizer

import (
	"os"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// bertJSON is a tokenizer.json as bert-base-uncased's is laid out, around
// a vocabulary small enough to cut words by hand.
func bertJSON(t *testing.T, vocab map[string]int, normalizer map[string]any, model map[string]any) []byte {
	t.Helper()
	m := map[string]any{"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 100, "vocab": vocab}
	for k, v := range model {
		m[k] = v
	}
	var added []any
	for _, s := range []string{"[UNK]", "[CLS]", "[SEP]"} {
		added = append(added, map[string]any{"id": vocab[s], "content": s, "special": true, "normalized": false})
	}
	return tinyJSON(t, m, map[string]any{
		"added_tokens":   added,
		"normalizer":     normalizer,
		"pre_tokenizer":  map[string]any{"type": "BertPreTokenizer"},
		"post_processor": map[string]any{"type": "BertProcessing", "sep": []any{"[SEP]", 2}, "cls": []any{"[CLS]", 1}},
		"decoder":        map[string]any{"type": "WordPiece", "prefix": "##", "cleanup": true},
	})
}

var tinyBertVocab = map[string]int{
	"[UNK]": 0, "[CLS]": 1, "[SEP]": 2, "un": 3, "##aff": 4, "##able": 5, "aff": 6, "able": 7, "hello": 8, ",": 9,
	"!": 10, "a": 11, "ab": 12, "abc": 13, "##b": 14, "##bcd": 15, "##d": 16, "##s": 18, "漢": 19, "字": 20, "n": 21,
	"'": 23, "t": 24, "do": 25, "not": 26, ".": 27,
}

// TestWordPiece: greedy longest-match-first from each word's start, "##"
// pieces after the first, a word any part of which no piece matches is
// [UNK] alone, as is one over max_input_chars_per_word; BERT's normalizer
// and pre-tokenizer before; the post-processor's [CLS] and [SEP] are not
// added (add_special_tokens=False), but count when written.
func TestWordPiece(t *testing.T) {
	uncased := map[string]any{"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "strip_accents": nil, "lowercase": true}
	tok, err := ParseHF(bertJSON(t, tinyBertVocab, uncased, map[string]any{"max_input_chars_per_word": 9}), "tiny-bert")
	if err != nil {
		t.Fatal(err)
	}
	tests := []encodeCase{
		{"unaffable", []int{3, 4, 5}},
		{"UnAffAble", []int{3, 4, 5}},
		{"affable", []int{6, 5}},
		{"unaffablex", []int{0}},              // 10 characters: over the limit
		{"unaffabl", []int{0}},                // "##abl" is no piece: the whole word is [UNK]
		{"abcd", []int{13, 16}},               // abc+##d, not ab+... or a+##bcd
		{"abbd", []int{12, 14, 16}},           // ab+##b+##d
		{"hello, able!", []int{8, 9, 7, 10}},  // punctuation is a word of its own
		{"Héllo\t\u200bABLE", []int{8, 7}},    // accents stripped, zero-width space deleted, tab a space
		{"[CLS] hello [SEP]", []int{1, 8, 2}}, // written special tokens count
		{"[cls]", []int{0, 0, 0}},             // lowercase is not the token: [ cls ]
		{"漢字", []int{19, 20}},                 // each Chinese character a word
		{"a漢b", []int{11, 19, 0}},             // "b" alone has no piece
		{"don't", []int{0, 23, 24}},           // don, ', t: "do" and then no "##n"
		{"", nil},
	}
	checkEncodes(t, tok, tests)

	decodes := []decodeCase{
		{[]int{3, 4, 5}, "unaffable"},
		{[]int{8, 9, 7, 10}, "hello, able!"}, // " ," and " !" cleaned up
		{[]int{5, 7}, "##able able"},         // a first piece keeps its prefix
		{[]int{25, 26, 27}, "do not."},       // cleanup is token by token: " not" is no " do not"
		{[]int{1, 8, 2}, "[CLS] hello [SEP]"},
		{[]int{8, 99, 7}, "hello able"}, // an unknown id is skipped
	}
	checkDecodes(t, tok, decodes)
}

// TestBertNormalizer: clean_text, handle_chinese_chars, strip_accents
// (null: as lowercase) and lowercase, by hand.
func TestBertNormalizer(t *testing.T) {
	uncased := bertNormalizer{cleanText: true, chineseChars: true, stripAccents: true, lowercase: true}
	cased := bertNormalizer{cleanText: true, chineseChars: true}
	tests := []struct {
		n        normalizer
		in, want string
	}{
		{n: uncased, in: "Hello World", want: "hello world"},
		{n: uncased, in: "a\tb\nc\r\vd\x00e\x7f", want: "a b c de"},
		{n: uncased, in: "Héllo Wörld", want: "hello world"},
		{n: uncased, in: "e\u0301", want: "e"},
		{n: uncased, in: "İ", want: "i"},     // stripped to I, then lowercased
		{n: uncased, in: "ΣΊΣ", want: "σισ"}, // one character at a time: no final sigma
		{n: uncased, in: "a\u00a0b\u3000c\u2028d", want: "a b c d"},
		{n: uncased, in: "x\u200by\ufeffz\ufffd\u00ad", want: "xyz"},
		{n: uncased, in: "漢字a", want: " 漢  字 a"},
		{n: uncased, in: "ひらがな", want: "ひらかな"}, // NFD splits the voicing mark (Mn) off が
		{n: uncased, in: "\u212b", want: "a"},  // Ångström sign: NFD to A + ring
		{n: cased, in: "Héllo İ", want: "Héllo İ"},
		{n: cased, in: "A\tB漢", want: "A B 漢 "},
		{n: bertNormalizer{lowercase: true}, in: "ÉA\t", want: "éa\t"},               // strip_accents false: é stays
		{n: lowercaseNorm{}, in: "Éİ\u212a", want: "éi\u0307k"},                      // İ becomes two characters; Kelvin sign k
		{n: stripAccentsNorm{}, in: "é e\u0301 \u0915\u093f", want: "é e \u0915"},    // no NFD; Mc goes too
		{n: nfdForm{}, in: "é\U00011938", want: "e\u0301\U00011938"},                 // the reference does not decompose U+11938
		{n: nfdForm{}, in: "\U00011938\u0308é", want: "\U00011938\u0308e\u0301"},     // nor join it to a mark after it
		{n: uncased, in: "\U00011938\u0308x\u0c3c\u0301", want: "\U00011938x\u0c3c"}, // U+0C3C is no mark there (Unicode 14)
	}
	for _, tc := range tests {
		if got := tc.n.normalize(tc.in); got != tc.want {
			t.Errorf("%T%+v(%+q) = %+q, want %+q", tc.n, tc.n, tc.in, got, tc.want)
		}
	}
}

// TestBertPreTokenizer: white space separates and goes; each punctuation
// character (ASCII symbols included, currency signs not) is a word.
func TestBertPreTokenizer(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"Hello, world!", []string{"Hello", ",", "world", "!"}},
		{"a...b", []string{"a", ".", ".", ".", "b"}},
		{"  x\u3000y\u0085z ", []string{"x", "y", "z"}},
		{"$5 and €5", []string{"$", "5", "and", "€5"}},
		{"¿Qué?—sí", []string{"¿", "Qué", "?", "—", "sí"}},
		{"x86_64 a+b", []string{"x86", "_", "64", "a", "+", "b"}},
		{"", nil},
	}
	for _, tc := range tests {
		if got := (bertPreTokenizer{}).split(nil, tc.in, true, &pieceScratch{}); !slices.Equal(got, tc.want) {
			t.Errorf("%q: %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestWordPieceRefusals: what the reference would fail on, or what
// llmbench cannot run, is an error, by name.
func TestWordPieceRefusals(t *testing.T) {
	vocab := map[string]int{"a": 0, "##b": 1}
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"no unk", tinyJSON(t, map[string]any{"type": "WordPiece", "vocab": vocab, "unk_token": "[UNK]"}, nil), `unk_token "[UNK]" is not in the vocabulary`},
		{"byte level", tinyJSON(t, map[string]any{"type": "WordPiece", "vocab": map[string]int{"[UNK]": 0}}, map[string]any{"pre_tokenizer": map[string]any{"type": "ByteLevel"}}), "after a ByteLevel pre-tokenizer"},
		{"empty", tinyJSON(t, map[string]any{"type": "WordPiece", "vocab": map[string]int{}}, nil), "WordPiece vocabulary is empty"},
	}
	for _, tc := range tests {
		_, err := ParseHF(tc.data, tc.name)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}

// BenchmarkCountWordPiece counts a 4 KB chunk of English, and of accented
// French, with the BERT-style uncased tokenizer.
func BenchmarkCountWordPiece(b *testing.B) {
	tok, err := LoadHF(bertModelPath(b, "bert_uncased"), "bert_uncased")
	if err != nil {
		b.Fatal(err)
	}
	data, err := os.ReadFile("../dataset/corpus/moby_dick.txt")
	if err != nil {
		b.Fatal(err)
	}
	for name, text := range map[string]string{"ascii": string(data[10000 : 10000+4096]), "accented": strings.Repeat("Ça a été très « drôle », n'est-ce pas? ", 100)} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				tok.Count(text)
			}
		})
	}
}

// FuzzBertNormalizer: the all-ASCII shortcut normalizes as the general
// path does.
func FuzzBertNormalizer(f *testing.F) {
	for _, s := range []string{"Hello World", "a\tb\r\n\x00\x7f\v", "UPPER lower 123 !?", "Héllo 漢字 İ"} {
		f.Add(s, uint8(15))
	}
	f.Fuzz(func(t *testing.T, s string, flags uint8) {
		n := bertNormalizer{cleanText: flags&1 != 0, chineseChars: flags&2 != 0, stripAccents: flags&4 != 0, lowercase: flags&8 != 0}
		if !utf8.ValidString(s) {
			return // the reference only ever sees valid text
		}
		if got, want := n.normalize(s), n.normalizeRunes(s); got != want {
			t.Fatalf("%+v(%+q): %+q, general path %+q", n, s, got, want)
		}
	})
}

// naiveWordPiece is the reference's WordPiece loop as it is written: the
// whole rest of the word first, the prefix glued on, one character
// shorter each time.
func naiveWordPiece(vocab map[string]int, word string, maxChars int) []int {
	if utf8.RuneCountInString(word) > maxChars {
		return []int{vocab["[UNK]"]}
	}
	var out []int
	for start := 0; start < len(word); {
		end := len(word)
		found := false
		for start < end {
			sub := word[start:end]
			if start > 0 {
				sub = "##" + sub
			}
			if id, ok := vocab[sub]; ok {
				out = append(out, id)
				found = true
				break
			}
			_, size := utf8.DecodeLastRuneInString(word[start:end])
			end -= size
		}
		if !found {
			return []int{vocab["[UNK]"]}
		}
		start = end
	}
	return out
}

// FuzzWordPiece: the model cuts words as the reference's loop does.
func FuzzWordPiece(f *testing.F) {
	for _, s := range []string{"unaffable", "abcd", "abbd", "unaffablex", "漢a", "é##b"} {
		f.Add(s)
	}
	vocab := map[string]int{"[UNK]": 0, "un": 1, "##aff": 2, "##able": 3, "a": 4, "ab": 5, "abc": 6, "##b": 7, "##bcd": 8, "##d": 9, "é": 10, "##é": 11, "##": 12, "###": 13, "漢": 14, "##漢a": 15}
	v32 := map[string]int32{}
	for s, id := range vocab {
		v32[s] = int32(id)
	}
	m, err := newWordPiece(v32, "[UNK]", "##", 12)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, word string) {
		if !utf8.ValidString(word) {
			return
		}
		var got []int
		for _, id := range m.appendWord(nil, word) {
			got = append(got, int(id))
		}
		if want := naiveWordPiece(vocab, word, 12); word != "" && !slices.Equal(got, want) {
			t.Fatalf("%q: %v, reference loop %v", word, got, want)
		}
	})
}
