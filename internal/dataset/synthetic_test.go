package dataset

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
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
	s := Synthetic{Conversations: 5, InputMean: 550, OutputMean: 64, Seed: 1}
	tok := builtin(t)
	convs, err := s.Generate(NewCorpus(tok))
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range convs {
		if len(c.Turns) != 1 || c.System != "" {
			t.Fatalf("conversation %d: %d turns, system %q; want 1 turn, no system", i, len(c.Turns), c.System)
		}
		e := c.Turns[0]
		if e.InputTokens != 550 || tok.Count(e.Text) != 550 {
			t.Errorf("conversation %d: %d input tokens (counted %d), want 550", i, e.InputTokens, tok.Count(e.Text))
		}
		if e.MaxTokens != 64 || e.DelayMs != 0 || e.HasTimestamp {
			t.Errorf("conversation %d: max tokens %d delay %g timestamp %v, want 64, 0, none", i, e.MaxTokens, e.DelayMs, e.HasTimestamp)
		}
		// AIPerf names dataset conversations session_000000, …
		if want := fmt.Sprintf("session_%06d", i); c.ID != want {
			t.Errorf("conversation %d: id %q, want %q", i, c.ID, want)
		}
	}
}

func TestSyntheticReproducible(t *testing.T) {
	s := Synthetic{Conversations: 20, InputMean: 100, InputStddev: 30, OutputMean: 50, OutputStddev: 10, TurnMean: 3, TurnStddev: 1, DelayMean: 100, DelayStddev: 20, PrefixPool: 2, PrefixLength: 20, Seed: 42}
	corpus := NewCorpus(builtin(t))
	a, _ := s.Generate(corpus)
	b, _ := s.Generate(NewCorpus(builtin(t)))
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two runs with the same seed differ")
	}
	s.Seed = 43
	c, _ := s.Generate(corpus)
	if reflect.DeepEqual(c[0], a[0]) {
		t.Fatal("a different seed gave the same first conversation")
	}
}

// TestSyntheticSessions: turns per conversation and delays follow their
// distributions; the first turn has no delay; every turn is exact.
func TestSyntheticSessions(t *testing.T) {
	tok := builtin(t)
	s := Synthetic{Conversations: 400, InputMean: 20, OutputMean: 5, TurnMean: 4, TurnStddev: 1, DelayMean: 1000, DelayStddev: 100, DelayRatio: 0.5, Seed: 9}
	convs, err := s.Generate(NewCorpus(tok))
	if err != nil {
		t.Fatal(err)
	}
	var turns, delays, nd float64
	for _, c := range convs {
		turns += float64(len(c.Turns))
		for k, tr := range c.Turns {
			if tok.Count(tr.Text) != 20 || tr.InputTokens != 20 {
				t.Fatalf("%s turn %d: %d tokens, want 20", c.ID, k, tok.Count(tr.Text))
			}
			if k == 0 && tr.DelayMs != 0 {
				t.Fatalf("%s: the first turn has a delay %g", c.ID, tr.DelayMs)
			}
			if k > 0 {
				delays += tr.DelayMs
				nd++
			}
		}
	}
	// Mean turns 4 (sd 1, n 400: se 0.05); delays 0.5 × 1000 ms (se < 5).
	if m := turns / float64(len(convs)); math.Abs(m-4) > 0.25 {
		t.Errorf("mean turns %.2f, want about 4", m)
	}
	if m := delays / nd; math.Abs(m-500) > 10 {
		t.Errorf("mean delay %.1f ms, want about 500 (1000 × ratio 0.5)", m)
	}
	if n := Requests(convs); n != int(turns) || !MultiTurn(convs) || Timed(convs) {
		t.Errorf("Requests %d (want %d), MultiTurn %v, Timed %v", n, int(turns), MultiTurn(convs), Timed(convs))
	}
}

// TestSyntheticPrefixPool: every first turn starts with one of the pool's
// prefixes, byte for byte, and counts prefix + ISL tokens exactly; the
// shared system prompt is one text of its length for every conversation.
func TestSyntheticPrefixPool(t *testing.T) {
	tok := builtin(t)
	s := Synthetic{Conversations: 60, InputMean: 100, TurnMean: 2, PrefixPool: 3, PrefixLength: 200, SharedSystemLength: 50, Seed: 5}
	convs, err := s.Generate(NewCorpus(tok))
	if err != nil {
		t.Fatal(err)
	}
	groups := map[string][]string{} // by the first 100 bytes
	for _, c := range convs {
		if c.System != convs[0].System || tok.Count(c.System) != 50 || c.SystemTokens != 50 {
			t.Fatalf("%s: system prompt of %d tokens, not the shared one of 50", c.ID, tok.Count(c.System))
		}
		first := c.Turns[0]
		if tok.Count(first.Text) != 300 || first.InputTokens != 300 {
			t.Fatalf("%s: first turn counts %d, want 200 + 100", c.ID, tok.Count(first.Text))
		}
		if tok.Count(c.Turns[1].Text) != 100 {
			t.Fatalf("%s: the second turn counts %d, want 100 (no prefix)", c.ID, tok.Count(c.Turns[1].Text))
		}
		groups[first.Text[:100]] = append(groups[first.Text[:100]], first.Text)
	}
	if len(groups) > 3 || len(groups) < 2 {
		t.Fatalf("%d distinct prefixes, want 2 or 3 of a pool of 3", len(groups))
	}
	for _, texts := range groups {
		n := len(texts[0])
		for _, x := range texts[1:] {
			n = min(n, commonPrefix(texts[0], x))
		}
		if got := tok.Count(texts[0][:n]); len(texts) > 1 && got < 199 {
			t.Fatalf("conversations with the same start share only %d tokens, want the 200-token prefix", got)
		}
	}
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
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
