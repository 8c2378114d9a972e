package tokenizer

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/dlclark/regexp2"
)

var knownPatterns = map[string]string{
	"gpt2": gpt2Pattern, "cl100k": cl100kPattern, "qwen": qwenPattern, "o200k": o200kPattern, "tekken": tekkenPattern,
}

// trickyPieces are the characters and strings where the patterns' classes
// and backtracking meet: contractions in both cases, marks, title case,
// modifier letters, other numbers, every kind of white space.
var trickyPieces = []string{
	"a", "Z", "0", "9", " ", "  ", "\t", "\n", "\r", "\r\n", "\v", "\f", "'", "'s", "'S", "'re", "'RE", "'Ll", "'ve", "'d", "'m", "'t", "'x",
	".", ",", "!", "/", "//", "-", "_", "$", "\"", "é", "É", "ß", "ǅ", "ʰ", "ー", "漢", "ア", "ñ", "\u0301", "\u0308", "\u20dd",
	"٣", "①", "Ⅻ", "½", "²", "\u00a0", "\u3000", "\u2028", "\u0085", "\u200b", "😀", "👍🏽", "ſ", "K", "\ufffd", "x", "The", "HELLO", "camelCase",
}

func randomTricky(rng *rand.Rand) string {
	var b strings.Builder
	for range rng.IntN(24) + 1 {
		b.WriteString(trickyPieces[rng.IntN(len(trickyPieces))])
	}
	return b.String()
}

func regexMatches(t testing.TB, expr, s string) [][2]int {
	t.Helper()
	re, err := regexp2.Compile(expr, regexp2.None)
	if err != nil {
		t.Fatal(err)
	}
	return regex{re}.matches(nil, s)
}

// TestFastPatternsMatchRegex holds each hand-written matcher to the
// backtracking engine on 20,000 random strings of the tricky pieces.
func TestFastPatternsMatchRegex(t *testing.T) {
	for name, expr := range knownPatterns {
		fast := fastPattern(expr)
		if fast == nil {
			t.Fatalf("%s: no fast matcher", name)
		}
		re, err := regexp2.Compile(expr, regexp2.None)
		if err != nil {
			t.Fatal(err)
		}
		slow := regex{re}
		rng := rand.New(rand.NewPCG(1, uint64(len(name))))
		for range 20000 / raceScale {
			s := randomTricky(rng)
			if got, want := fast.matches(nil, s), slow.matches(nil, s); !slices.Equal(got, want) {
				t.Fatalf("%s on %q:\n fast  %v\n regex %v", name, s, got, want)
			}
		}
	}
}

func TestFastPatternExamples(t *testing.T) {
	pieces := func(p pattern, s string) []string {
		var out []string
		for _, m := range p.matches(nil, s) {
			out = append(out, s[m[0]:m[1]])
		}
		return out
	}
	tests := []struct {
		expr, text string
		want       []string
	}{
		{cl100kPattern, "Hello world's 12345 end.\n\n  x", []string{"Hello", " world", "'s", " ", "123", "45", " end", ".\n\n", " ", " x"}},
		{qwenPattern, "a  123", []string{"a", " ", " ", "1", "2", "3"}},
		{o200kPattern, "HelloWorld THE'S x/y//\n", []string{"Hello", "World", " THE'S", " x", "/y", "//\n"}},
		{tekkenPattern, "HelloWorld THE'S 123\n", []string{"Hello", "World", " THE", "'S", " ", "1", "2", "3", "\n"}},
		{gpt2Pattern, "I'm  fine!! 42", []string{"I", "'m", " ", " fine", "!!", " 42"}},
	}
	for _, tc := range tests {
		if got := pieces(fastPattern(tc.expr), tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("%q: got %q, want %q", tc.text, got, tc.want)
		}
	}
}

func FuzzFastPatterns(f *testing.F) {
	for _, s := range []string{"Hello world's", "  \n\t x", "ǅabc'S", "a\u0301b", "12345", " ?!\r\n/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for name, expr := range knownPatterns {
			if got, want := fastPattern(expr).matches(nil, s), regexMatches(t, expr, s); !slices.Equal(got, want) {
				t.Fatalf("%s on %q:\n fast  %v\n regex %v", name, s, got, want)
			}
		}
	})
}
