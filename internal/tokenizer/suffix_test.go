package tokenizer

import (
	"encoding/json"
	"os"
	"slices"
	"testing"
)

// suffixJSON is a BPE file with end_of_word_suffix "</w>" and the
// BPEDecoder, as CLIP's, with the given vocabulary, merges and
// pre-tokenizer.
func suffixJSON(t *testing.T, vocab map[string]int, merges []string, pre map[string]any) []byte {
	t.Helper()
	model := map[string]any{"type": "BPE", "vocab": vocab, "merges": merges, "end_of_word_suffix": "</w>", "continuing_subword_prefix": ""}
	if _, ok := vocab["<unk>"]; ok {
		model["unk_token"] = "<unk>"
	}
	return tinyJSON(t, model, map[string]any{"pre_tokenizer": pre, "decoder": map[string]any{"type": "BPEDecoder", "suffix": "</w>"}})
}

var (
	suffixVocab = map[string]int{"<unk>": 0, "l": 1, "o": 2, "w": 3, "e": 4, "r": 5, "l</w>": 6, "o</w>": 7, "w</w>": 8, "e</w>": 9, "r</w>": 10,
		"lo": 11, "low</w>": 12, "er</w>": 13, "low": 14, "lower</w>": 15}
	suffixMerges = []string{"l o", "lo w</w>", "e r</w>", "lo w", "low er</w>"}
)

// TestEndOfWordSuffix: a word's last character starts as its symbol with
// "</w>", and merges work on those symbols. Ranks: l·o, lo·w</w>, e·r</w>,
// lo·w, low·er</w>. So "lower" is e·r</w> first (rank 2, before lo·w),
// "lowe" stops at low e</w>, "lox" ends in <unk> (no "x</w>"), and in
// "xlo" the "o" is "o</w>", which "l o" does not merge. The ids were
// hand-derived and are the reference's (Tokenizer.fromFile and encode in
// @anush008/tokenizers 0.6.0), as are the decodings.
func TestEndOfWordSuffix(t *testing.T) {
	tok, err := ParseHF(suffixJSON(t, suffixVocab, suffixMerges, map[string]any{"type": "WhitespaceSplit"}), "tiny-suffix")
	if err != nil {
		t.Fatal(err)
	}
	tests := []encodeCase{
		{"low", []int{12}},
		{"lower", []int{15}},
		{"lowe", []int{14, 9}},
		{"wow", []int{3, 2, 8}},
		{"ol", []int{2, 6}},
		{"l", []int{6}},
		{"lox", []int{11, 0}},
		{"xlo", []int{0, 1, 7}},
		{"rower", []int{5, 2, 3, 13}},
		{"lowlow", []int{14, 12}},
		{"low lower", []int{12, 15}},
	}
	checkEncodes(t, tok, tests)
	decodes := []decodeCase{
		{[]int{14, 12}, "lowlow"},
		{[]int{12, 15}, "low lower"},
		{[]int{12, 99}, "low"}, // an unknown id is skipped: "low</w>" is then last
		{[]int{6, 1}, "l l"},
		{nil, ""},
		{[]int{99}, ""},
	}
	checkDecodes(t, tok, decodes)
}

// TestEndOfWordSuffixByteLevel: in a byte-level vocabulary (CLIP's) the
// suffix goes on the last byte's character: "é" is Ã ©</w>, merged by
// "Ã ©</w>"; a space before a word (ByteLevel's regex keeps it) is Ġ, no
// suffix. Ids: each byte b is b, with the suffix 256+b; th 512, the</w>
// 513, Ã©</w> 514. BPEDecoder leaves the byte-level characters as they
// are (no ByteLevel decoder): "café" decodes to "cafÃ©", as the
// reference's.
func TestEndOfWordSuffixByteLevel(t *testing.T) {
	vocab := map[string]int{"th": 512, "the</w>": 513, "Ã©</w>": 514}
	for b, r := range byteLevelRunes {
		vocab[string(r)] = b
		vocab[string(r)+"</w>"] = 256 + b
	}
	pre := map[string]any{"type": "ByteLevel", "add_prefix_space": false, "use_regex": true, "trim_offsets": true}
	tok, err := ParseHF(suffixJSON(t, vocab, []string{"t h", "th e</w>", "Ã ©</w>"}, pre), "tiny-suffix-bytes")
	if err != nil {
		t.Fatal(err)
	}
	tests := []encodeCase{
		{"the", []int{513}},
		{" the", []int{32, 513}},
		{"é", []int{514}},
		{"café", []int{99, 97, 102, 514}},
		{"e", []int{357}},
		{"the the", []int{513, 32, 513}},
	}
	checkEncodes(t, tok, tests)
	decodes := []decodeCase{
		{[]int{99, 97, 102, 514}, "cafÃ©"},
		{[]int{32, 513}, "Ġthe"},
		{[]int{513, 32, 513}, "the Ġthe"},
		{[]int{195}, "Ã"},
	}
	checkDecodes(t, tok, decodes)
}

// TestNormalizedSpecialToken: a special token marked "normalized" (CLIP's
// <|endoftext|>) is found after normalization, as the reference finds it:
// "<END>" lowercased is "<end>"; not normalized, only "<end>" as written
// is, and "LOW<END>lower" is one word of unknowns. Ids are the reference's.
func TestNormalizedSpecialToken(t *testing.T) {
	for _, tc := range []struct {
		normalized bool
		text       string
		want       []int
	}{
		{true, "LOW<END>lower", []int{12, 16, 15}},
		{true, "low<end>LOWER", []int{12, 16, 15}},
		{false, "LOW<END>lower", []int{14, 0, 4, 0, 0, 0, 15}},
		{false, "low<end>LOWER", []int{12, 16, 15}},
	} {
		model := map[string]any{"type": "BPE", "vocab": suffixVocab, "merges": suffixMerges, "unk_token": "<unk>", "end_of_word_suffix": "</w>"}
		added := []any{map[string]any{"id": 16, "content": "<end>", "special": true, "normalized": tc.normalized}}
		tok, err := ParseHF(tinyJSON(t, model, map[string]any{"added_tokens": added, "normalizer": map[string]any{"type": "Lowercase"}, "pre_tokenizer": map[string]any{"type": "WhitespaceSplit"}}), "tiny-added")
		if err != nil {
			t.Fatal(err)
		}
		if got := tok.Encode(tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("normalized %v, %q: %v, want %v", tc.normalized, tc.text, got, tc.want)
		}
	}
}

// TestEndOfWordSuffixByteFallback: the reference spells a last character
// missing from the vocabulary in the byte fallbacks of the character with
// its suffix ("é</w>": C3 A9 3C 2F 77 3E); one whose bytes are not all
// there ("b</w>", no <0x62>) is dropped, there being no unk_token. A
// BPEDecoder writes the fallback tokens as they are. Ids and texts are the
// reference's.
func TestEndOfWordSuffixByteFallback(t *testing.T) {
	vocab := map[string]int{"a": 0, "a</w>": 1, "<0xC3>": 2, "<0xA9>": 3, "<0x3C>": 4, "<0x2F>": 5, "<0x77>": 6, "<0x3E>": 7, "b": 8}
	model := map[string]any{"type": "BPE", "vocab": vocab, "merges": []string{}, "byte_fallback": true, "end_of_word_suffix": "</w>"}
	tok, err := ParseHF(tinyJSON(t, model, map[string]any{"pre_tokenizer": map[string]any{"type": "WhitespaceSplit"}, "decoder": map[string]any{"type": "BPEDecoder", "suffix": "</w>"}}), "tiny-fallback")
	if err != nil {
		t.Fatal(err)
	}
	checkEncodes(t, tok, []encodeCase{
		{"aé", []int{0, 2, 3, 4, 5, 6, 7}},
		{"éa", []int{2, 3, 1}},
		{"a", []int{1}},
		{"é", []int{2, 3, 4, 5, 6, 7}},
		{"b", nil},
		{"ab", []int{0}},
	})
	checkDecodes(t, tok, []decodeCase{
		{[]int{0, 2, 3}, "a<0xC3><0xA9>"},
		{[]int{0, 1}, "aa"},
	})
}

// TestLongWordSuffix: a word too long to merge whole is merged in
// overlapping windows; with an end-of-word suffix only its last symbol
// carries it, and the windows' tokens are those of the whole word merged
// at once. Both with CLIP's byte-level file and with its vocabulary read
// as characters (its pre-tokenizer without ByteLevel).
func TestLongWordSuffix(t *testing.T) {
	data, err := os.ReadFile(gunzipFixture(t, "clip_falcon", "clip"))
	if err != nil {
		t.Fatal(err)
	}
	clip, err := ParseHF(data, "clip")
	if err != nil {
		t.Fatal(err)
	}
	var j map[string]any
	if err := json.Unmarshal(data, &j); err != nil {
		t.Fatal(err)
	}
	j["pre_tokenizer"] = map[string]any{"type": "WhitespaceSplit"}
	if data, err = json.Marshal(j); err != nil {
		t.Fatal(err)
	}
	chars, err := ParseHF(data, "clip-chars")
	if err != nil {
		t.Fatal(err)
	}
	if !clip.model.byteLevel || chars.model.byteLevel || clip.model.suffix != "</w>" || chars.model.suffix != "</w>" {
		t.Fatal("not one byte-level and one character model, both with the suffix")
	}
	for name, m := range map[string]*bpe{"clip": clip.model, "clip-chars": chars.model} {
		checkWindowsMatchWhole(t, name, m, 3)
		// The last symbol is the suffixed one.
		if got, want := m.appendWord(nil, "thethe"), m.appendWord(nil, "the"); len(want) != 1 || got[len(got)-1] != want[0] {
			t.Errorf("%s: thethe %v, the %v: the last token not the</w>", name, got, want)
		}
	}
}
