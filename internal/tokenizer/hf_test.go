package tokenizer

import (
	"testing"
	"time"
)

func TestO200kLoads(t *testing.T) {
	start := time.Now()
	tok, err := O200k()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("loaded in %v", time.Since(start))
	// Known o200k_base encodings (tiktoken).
	for text, want := range map[string][]int{
		"hello world": {24912, 2375},
	} {
		got := tok.Encode(text)
		if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
			t.Errorf("%q: %v, want %v", text, got, want)
		}
	}
}
