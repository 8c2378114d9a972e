package tokenizer

import (
	"slices"
	"strings"
	"testing"
)

// TestPunctuationPreTokenizer: each behavior on punctuation runs, ASCII
// symbols ($ is one, as Rust's is_ascii_punctuation has it) and Unicode
// punctuation (¿ — “ ”; € is a currency sign, not punctuation). The
// expected pieces are the reference's (punctuationPreTokenizer(behavior)
// .preTokenizeString in @anush008/tokenizers 0.6.0).
func TestPunctuationPreTokenizer(t *testing.T) {
	const a, b, c, d = "a,b..c!?d(e)“f”", "$5 €5 ¿qué?—sí", "...x", "y!!"
	tests := []struct {
		behavior behavior
		in       string
		want     []string
	}{
		{isolated, a, []string{"a", ",", "b", ".", ".", "c", "!", "?", "d", "(", "e", ")", "“", "f", "”"}},
		{isolated, b, []string{"$", "5 €5 ", "¿", "qué", "?", "—", "sí"}},
		{isolated, c, []string{".", ".", ".", "x"}},
		{isolated, d, []string{"y", "!", "!"}},
		{removed, a, []string{"a", "b", "c", "d", "e", "f"}},
		{removed, b, []string{"5 €5 ", "qué", "sí"}},
		{removed, c, []string{"x"}},
		{removed, d, []string{"y"}},
		{mergedWithPrevious, a, []string{"a,", "b.", ".", "c!", "?", "d(", "e)", "“", "f”"}},
		{mergedWithPrevious, b, []string{"$", "5 €5 ¿", "qué?", "—", "sí"}},
		{mergedWithPrevious, c, []string{".", ".", ".", "x"}},
		{mergedWithPrevious, d, []string{"y!", "!"}},
		{mergedWithNext, a, []string{"a", ",b", ".", ".c", "!", "?d", "(e", ")", "“f", "”"}},
		{mergedWithNext, b, []string{"$5 €5 ", "¿qué", "?", "—sí"}},
		{mergedWithNext, c, []string{".", ".", ".x"}},
		{mergedWithNext, d, []string{"y", "!", "!"}},
		{contiguous, a, []string{"a", ",", "b", "..", "c", "!?", "d", "(", "e", ")“", "f", "”"}},
		{contiguous, b, []string{"$", "5 €5 ", "¿", "qué", "?—", "sí"}},
		{contiguous, c, []string{"...", "x"}},
		{contiguous, d, []string{"y", "!!"}},
	}
	for _, tc := range tests {
		p := punctSplit{behavior: tc.behavior}
		if got := p.split(nil, tc.in, true, &pieceScratch{}); !slices.Equal(got, tc.want) {
			t.Errorf("behavior %d, %q: %q, want %q", tc.behavior, tc.in, got, tc.want)
		}
	}
}

// TestFalconPreTokenizer: Falcon's Sequence (Punctuation contiguous,
// ByteLevel with its regex, Digits, Split [0-9]{3} isolated) parsed from
// its JSON, its pieces written in byte-level characters as the reference
// lists them (preTokenizeString of the Falcon file's pre-tokenizer). After
// ByteLevel the Digits step sees "½" as the characters "Â½" and cuts the
// number ½ off its lead byte; "«" (Â«) and "µ" (Âµ) are no numbers; digit
// runs are then cut in threes.
func TestFalconPreTokenizer(t *testing.T) {
	raw := `{"type":"Sequence","pretokenizers":[{"type":"Punctuation","behavior":"Contiguous"},` +
		`{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":true},` +
		`{"type":"Digits","individual_digits":false},` +
		`{"type":"Split","pattern":{"Regex":"[0-9][0-9][0-9]"},"behavior":"Isolated","invert":false}]}`
	pre, bytes, err := parsePreTokenizer([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes {
		t.Fatal("Falcon's pre-tokenizer not reported byte-level")
	}
	tests := []struct {
		in   string
		want []string
	}{
		{"x½y", []string{"x", "Â", "½", "y"}},
		{"a²³b", []string{"a", "Â", "²", "Â", "³", "b"}},
		{"1234567 89", []string{"123", "456", "7", "Ġ", "89"}},
		{"«ok»", []string{"Â«", "ok", "Â»"}},
		{"¿qué?", []string{"Â¿", "quÃ©", "?"}},
		{"12,345.6789", []string{"12", ",", "345", ".", "678", "9"}},
		{"ab¹²", []string{"ab", "Â", "¹", "Â", "²"}},
		{"µ3ª", []string{"Âµ", "3", "Âª"}},
	}
	var ws wordStream
	for _, tc := range tests {
		var got []string
		ws.each(pre, tc.in, true, func(w string) { got = append(got, toByteLevel(w)) })
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q: streamed %q, want %q", tc.in, got, tc.want)
		}
		got = got[:0]
		for _, w := range pre.split(nil, tc.in, true, &pieceScratch{}) {
			got = append(got, toByteLevel(w))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q: split %q, want %q", tc.in, got, tc.want)
		}
	}
}

// toByteLevel writes raw bytes in the byte-level alphabet.
func toByteLevel(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteRune(byteLevelRunes[s[i]])
	}
	return b.String()
}

// TestAfterByteLevelRefused: a step after ByteLevel whose outcome on
// byte-level characters is not worked out is an error naming it, not a
// miscount.
func TestAfterByteLevelRefused(t *testing.T) {
	for _, step := range []string{`{"type":"Metaspace","replacement":"▁","prepend_scheme":"always"}`, `{"type":"WhitespaceSplit"}`, `{"type":"ByteLevel","add_prefix_space":true}`} {
		raw := `{"type":"Sequence","pretokenizers":[{"type":"ByteLevel","add_prefix_space":false,"use_regex":true},` + step + `]}`
		if _, _, err := parsePreTokenizer([]byte(raw)); err == nil || !strings.Contains(err.Error(), "after a ByteLevel") {
			t.Errorf("%s after ByteLevel: error %v", step, err)
		}
	}
}
