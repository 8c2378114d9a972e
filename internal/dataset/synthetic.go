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

// Vocabulary is what synthetic generation needs from a tokenizer: ids it can
// decode into text with exactly one token per id.
type Vocabulary interface {
	VocabSize() int
	Decode(ids []int) string
	Count(text string) int
}

// Synthetic describes a synthetic dataset.
type Synthetic struct {
	Entries                int
	InputMean, InputStddev float64
	// OutputMean 0 means no max_tokens.
	OutputMean, OutputStddev float64
	Seed                     uint64
}

// Generate makes the dataset. The same Synthetic and vocabulary always give
// the same entries.
func (s Synthetic) Generate(vocab Vocabulary) ([]Entry, error) {
	if s.Entries <= 0 {
		return nil, fmt.Errorf("synthetic dataset: %d entries requested, need at least 1", s.Entries)
	}
	rng := rand.New(rand.NewPCG(s.Seed, 0x6c6c6d62656e6368)) // "llmbench"
	entries := make([]Entry, s.Entries)
	ids := make([]int, 0, int(s.InputMean)+1)
	for i := range entries {
		n := SampleLength(rng, s.InputMean, s.InputStddev)
		ids = ids[:0]
		for range n {
			ids = append(ids, rng.IntN(vocab.VocabSize()))
		}
		prompt := vocab.Decode(ids)
		e := Entry{ConversationID: fmt.Sprintf("session_%06d", i), Prompt: prompt, InputTokens: vocab.Count(prompt)}
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
