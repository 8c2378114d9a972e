package tokenizer

import (
	"testing"
	"unicode/utf8"
)

func TestWordsCount(t *testing.T) {
	tests := []struct {
		text string
		want int
	}{
		{"", 0},
		{"   \n\t", 0},
		{"hello", 1},
		{"Hello, world!", 4},
		{"a  b\tc\nd", 4},
		{"gpt-4o", 3},
		{"3.14", 3},
		{"naïve café", 2},
		{"日本語", 1},
		{"¿qué?", 3},
		{" bako tire", 2},
	}
	var tok Words
	for _, tc := range tests {
		if got := tok.Count(tc.text); got != tc.want {
			t.Errorf("Count(%q) = %d, want %d", tc.text, got, tc.want)
		}
	}
}

func TestWordsDecodeRoundTrip(t *testing.T) {
	var tok Words
	if w := tok.Word(0); w != "baba" {
		t.Fatalf("Word(0) = %q, want baba", w)
	}
	if w := tok.Word(VocabSize - 1); w != "zuzu" {
		t.Fatalf("Word(last) = %q, want zuzu", w)
	}
	seen := map[string]bool{}
	for id := 0; id < VocabSize; id++ {
		seen[tok.Word(id)] = true
	}
	if len(seen) != VocabSize {
		t.Fatalf("vocabulary has %d distinct words, want %d", len(seen), VocabSize)
	}
	for _, n := range []int{0, 1, 2, 17, 550} {
		ids := make([]int, n)
		for i := range ids {
			ids[i] = i * 7919
		}
		if got := tok.Count(tok.Decode(ids)); got != n {
			t.Errorf("Count(Decode(%d ids)) = %d", n, got)
		}
	}
}

func FuzzWordsCount(f *testing.F) {
	for _, s := range []string{"", "Hello, world!", "naïve café", "\xff\xfe", "a-b c"} {
		f.Add(s)
	}
	var tok Words
	f.Fuzz(func(t *testing.T, s string) {
		n := tok.Count(s)
		if n < 0 || n > utf8.RuneCountInString(s) {
			t.Fatalf("Count(%q) = %d, outside [0, runes]", s, n)
		}
		// Joining two texts with a space never merges their tokens.
		if got := tok.Count(s + " " + s); got != 2*n {
			t.Fatalf("Count(s+' '+s) = %d, want %d", got, 2*n)
		}
	})
}

func BenchmarkWordsCount(b *testing.B) {
	var tok Words
	ids := make([]int, 1000)
	for i := range ids {
		ids[i] = i
	}
	text := tok.Decode(ids)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		tok.Count(text)
	}
}
