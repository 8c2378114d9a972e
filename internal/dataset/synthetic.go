// Package dataset produces the inputs a run sends: synthetic prompts of
// exact token lengths today, user datasets and traces later. It knows
// nothing of HTTP or payload formats.
package dataset

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Entry is one prompt of the dataset, with the lengths it was made for.
type Entry struct {
	ConversationID string
	Prompt         string
	// InputTokens is Prompt's length by the tokenizer that made it.
	InputTokens int
	// MaxTokens is the output length to request, or 0 to leave it to the server.
	MaxTokens int
}

// Synthetic describes a synthetic dataset.
type Synthetic struct {
	Entries                int
	InputMean, InputStddev float64
	// OutputMean 0 means no max_tokens.
	OutputMean, OutputStddev float64
	Seed                     uint64
}

// Generate makes the dataset from the corpus: each prompt a window of it
// of exactly the drawn token count. The same Synthetic and corpus always
// give the same entries.
func (s Synthetic) Generate(corpus *Corpus) ([]Entry, error) {
	if s.Entries <= 0 {
		return nil, fmt.Errorf("synthetic dataset: %d entries requested, need at least 1", s.Entries)
	}
	rng := rand.New(rand.NewPCG(s.Seed, 0x6c6c6d62656e6368)) // "llmbench"
	entries := make([]Entry, s.Entries)
	for i := range entries {
		prompt, count := corpus.Text(rng, SampleLength(rng, s.InputMean, s.InputStddev))
		e := Entry{ConversationID: fmt.Sprintf("session_%06d", i), Prompt: prompt, InputTokens: count}
		if s.OutputMean > 0 {
			e.MaxTokens = SampleLength(rng, s.OutputMean, s.OutputStddev)
		}
		entries[i] = e
	}
	return entries, nil
}

// SampleLength draws a token count from a normal distribution, rounded to
// the nearest integer and never below 1.
func SampleLength(rng *rand.Rand, mean, stddev float64) int {
	v := mean
	if stddev > 0 {
		v = rng.NormFloat64()*stddev + mean
	}
	return max(1, int(math.Round(v)))
}
