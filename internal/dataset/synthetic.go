// Package dataset produces the conversations a run sends: synthetic ones
// cut from an embedded corpus to exact token lengths, or read from the
// user's files (single_turn, multi_turn, random_pool, mooncake_trace), and
// the order they are sampled in. It knows nothing of HTTP or payloads.
package dataset

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Synthetic describes a synthetic dataset.
type Synthetic struct {
	// Conversations is how many distinct conversations to make.
	Conversations          int
	InputMean, InputStddev float64
	// OutputMean 0 means no max_tokens.
	OutputMean, OutputStddev float64
	// TurnMean and TurnStddev give each conversation's number of turns
	// (at least 1); DelayMean and DelayStddev the think time before every
	// turn after the first, in milliseconds, scaled by DelayRatio (0: no
	// delays, as --conversation-turn-delay-ratio 0 asks).
	TurnMean, TurnStddev   float64
	DelayMean, DelayStddev float64
	DelayRatio             float64
	// PrefixPool prefixes of PrefixLength tokens are made, and every
	// conversation's first turn starts with one of them, chosen at random.
	PrefixPool, PrefixLength int
	// SharedSystemLength, when set, is the length of one system message
	// every conversation shares.
	SharedSystemLength int
	// Batch texts of the drawn length make each request (embeddings'
	// --prompt-batch-size); 0 or 1: one.
	Batch int
	// Rankings, when set, makes ranking requests instead: a query and
	// passages of drawn lengths.
	Rankings *Rankings
	Seed     uint64
}

// Rankings shapes synthetic ranking requests (AIPerf's --rankings-*).
type Rankings struct {
	PassagesMean, PassagesStddev           float64
	PassageTokensMean, PassageTokensStddev float64
	QueryTokensMean, QueryTokensStddev     float64
}

// Generate makes the dataset from the corpus: each turn a window of it of
// exactly the drawn token count (a turn with a prefix counts the prefix's
// tokens and its own). The same Synthetic and corpus always give the same
// conversations.
func (s Synthetic) Generate(corpus *Corpus) ([]Conversation, error) {
	if s.Conversations <= 0 {
		return nil, fmt.Errorf("synthetic dataset: %d conversations requested, need at least 1", s.Conversations)
	}
	if s.PrefixPool > 0 && s.PrefixLength <= 0 {
		return nil, fmt.Errorf("synthetic dataset: a prefix pool of %d needs a prefix length of at least 1 token", s.PrefixPool)
	}
	rng := rand.New(rand.NewPCG(s.Seed, 0x6c6c6d62656e6368)) // "llmbench"
	var system string
	var systemTokens int
	if s.SharedSystemLength > 0 {
		system, systemTokens = corpus.Text(rng, s.SharedSystemLength)
	}
	prefixes := make([]string, s.PrefixPool)
	for i := range prefixes {
		p, _ := corpus.Text(rng, s.PrefixLength)
		prefixes[i] = p + " "
	}
	convs := make([]Conversation, s.Conversations)
	for i := range convs {
		c := Conversation{ID: fmt.Sprintf("session_%06d", i), System: system, SystemTokens: systemTokens}
		turns := SampleLength(rng, max(s.TurnMean, 1), s.TurnStddev)
		for t := range turns {
			var turn Turn
			n := SampleLength(rng, s.InputMean, s.InputStddev)
			switch {
			case s.Rankings != nil:
				turn = s.Rankings.turn(rng, corpus)
			case s.Batch > 1:
				for range s.Batch {
					text, count := corpus.Text(rng, n)
					turn.Texts = append(turn.Texts, text)
					turn.InputTokens += count
				}
				turn.Text = turn.Texts[0]
			case t == 0 && len(prefixes) > 0:
				prefix := prefixes[rng.IntN(len(prefixes))]
				tail, count := corpus.TextAfter(rng, prefix, s.PrefixLength+n)
				turn.Text, turn.InputTokens = prefix+tail, count
			default:
				turn.Text, turn.InputTokens = corpus.Text(rng, n)
			}
			if s.OutputMean > 0 {
				turn.MaxTokens = SampleLength(rng, s.OutputMean, s.OutputStddev)
			}
			if t > 0 && (s.DelayMean > 0 || s.DelayStddev > 0) {
				turn.DelayMs = s.DelayRatio * max(0, s.DelayMean+rng.NormFloat64()*s.DelayStddev)
			}
			c.Turns = append(c.Turns, turn)
		}
		convs[i] = c
	}
	return convs, nil
}

// turn draws one ranking request: a query of the drawn length and the
// drawn number of passages, each of its drawn length, every length exact
// under the corpus' tokenizer.
func (r *Rankings) turn(rng *rand.Rand, corpus *Corpus) Turn {
	var t Turn
	q, n := corpus.Text(rng, SampleLength(rng, r.QueryTokensMean, r.QueryTokensStddev))
	t.Query, t.Text, t.InputTokens = q, q, n
	for range SampleLength(rng, r.PassagesMean, r.PassagesStddev) {
		p, k := corpus.Text(rng, SampleLength(rng, r.PassageTokensMean, r.PassageTokensStddev))
		t.Passages = append(t.Passages, p)
		t.InputTokens += k
	}
	return t
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
