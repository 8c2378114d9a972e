package dataset

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/llmbench/llmbench/internal/tokenizer"
)

func TestSyntheticExactLengths(t *testing.T) {
	s := Synthetic{Entries: 5, InputMean: 550, OutputMean: 64, Seed: 1}
	entries, err := s.Generate(tokenizer.Builtin{})
	if err != nil {
		t.Fatal(err)
	}
	var tok tokenizer.Builtin
	for i, e := range entries {
		if e.InputTokens != 550 || tok.Count(e.Prompt) != 550 {
			t.Errorf("entry %d: %d input tokens (counted %d), want 550", i, e.InputTokens, tok.Count(e.Prompt))
		}
		if e.MaxTokens != 64 {
			t.Errorf("entry %d: max tokens %d, want 64", i, e.MaxTokens)
		}
		// AIPerf names dataset conversations session_000000, …
		if want := fmt.Sprintf("session_%06d", i); e.ConversationID != want {
			t.Errorf("entry %d: conversation id %q, want %q", i, e.ConversationID, want)
		}
	}
}

func TestSyntheticReproducible(t *testing.T) {
	s := Synthetic{Entries: 20, InputMean: 100, InputStddev: 30, OutputMean: 50, OutputStddev: 10, Seed: 42}
	a, _ := s.Generate(tokenizer.Builtin{})
	b, _ := s.Generate(tokenizer.Builtin{})
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("entry %d differs between two runs with the same seed", i)
		}
	}
	s.Seed = 43
	c, _ := s.Generate(tokenizer.Builtin{})
	if c[0] == a[0] {
		t.Fatal("a different seed gave the same first entry")
	}
}

func TestSampleLengthDistribution(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	const n = 20000
	var sum, sq float64
	for range n {
		v := float64(SampleLength(rng, 200, 20))
		sum += v
		sq += v * v
	}
	mean := sum / n
	std := math.Sqrt(sq/n - mean*mean)
	// Standard error of the mean is 20/sqrt(20000) ≈ 0.14; allow 5 of them.
	if math.Abs(mean-200) > 0.7 || math.Abs(std-20) > 1 {
		t.Fatalf("mean %.2f std %.2f, want about 200 and 20", mean, std)
	}
	if got := SampleLength(rng, 0.2, 0); got != 1 {
		t.Fatalf("lengths are at least 1, got %d", got)
	}
}
