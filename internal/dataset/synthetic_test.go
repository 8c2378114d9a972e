package dataset

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/llmbench/llmbench/internal/tokenizer"
)

func builtin(t testing.TB) tokenizer.Tokenizer {
	t.Helper()
	tok, err := tokenizer.O200k()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestSyntheticExactLengths(t *testing.T) {
	s := Synthetic{Entries: 5, InputMean: 550, OutputMean: 64, Seed: 1}
	tok := builtin(t)
	entries, err := s.Generate(NewCorpus(tok))
	if err != nil {
		t.Fatal(err)
	}
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
	corpus := NewCorpus(builtin(t))
	a, _ := s.Generate(corpus)
	b, _ := s.Generate(NewCorpus(builtin(t)))
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("entry %d differs between two runs with the same seed", i)
		}
	}
	s.Seed = 43
	c, _ := s.Generate(corpus)
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

// TestCorpusTextExact: windows of the real text, of exactly the asked
// count, for every length tried, under the builtin and the word tokenizer.
func TestCorpusTextExact(t *testing.T) {
	whole := sonnets + "\n" + mobyDick
	for name, tok := range map[string]tokenizer.Tokenizer{"builtin": builtin(t), "words": tokenizer.Words{}} {
		c := NewCorpus(tok)
		rng := rand.New(rand.NewPCG(3, 4))
		for _, n := range []int{1, 2, 3, 5, 8, 13, 64, 100, 128, 550, 1000, 3000, 2 * c.Tokens()} {
			for range 20 {
				text, count := c.Text(rng, n)
				if count != n || tok.Count(text) != n || !utf8.ValidString(text) {
					t.Fatalf("%s: %d tokens asked, got %d (counted %d): %q", name, n, count, tok.Count(text), text)
				}
				if name == "builtin" && n < c.Tokens() && !strings.Contains(whole+whole, text) {
					t.Fatalf("%s: %q is not a window of the corpus", name, text)
				}
			}
		}
	}
}

func TestCorpusPieces(t *testing.T) {
	tok := builtin(t)
	c := NewCorpus(tok)
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 7, 64, 300} {
		pieces := c.Pieces(rng, n)
		if len(pieces) != n {
			t.Fatalf("%d pieces, want %d", len(pieces), n)
		}
		for _, p := range pieces {
			if p == "" || !utf8.ValidString(p) {
				t.Fatalf("piece %q", p)
			}
		}
		if got := tok.Count(strings.Join(pieces, "")); got != n {
			t.Fatalf("the pieces count %d tokens, want %d", got, n)
		}
	}
}
