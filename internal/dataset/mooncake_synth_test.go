package dataset

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/internal/tracesynth"
)

// The six-row tree of internal/tracesynth's tests, read as a trace with
// blocks of 4 tokens: --synthesis-prefix-len-multiplier 2 with the speedup
// 2 gives the rows tracesynth computes, and rows that share synthesized
// blocks still share their text.
func TestReadMooncakeSynthesized(t *testing.T) {
	path := filepath.Join("..", "tracesynth", "testdata", "tree.jsonl")
	o := tracesynth.Defaults()
	o.SpeedupRatio, o.PrefixLenMultiplier, o.MaxOSL = 2, 2, 6
	convs, err := ReadFile(path, FileOptions{Type: "mooncake_trace", Corpus: NewCorpus(builtin(t)), BlockSize: 4, Seed: 1, Synthesis: o})
	if err != nil {
		t.Fatal(err)
	}
	// ISL: shared blocks doubled, leaves kept (tracesynth_test.go);
	// timestamps halved and truncated; outputs capped at 6.
	isl := []int{18, 20, 13, 12, 10, 4}
	ts := []float64{0, 50, 100, 150, 225, 499}
	osl := []int{5, 6, 3, 6, 1, 2}
	if len(convs) != 6 {
		t.Fatalf("%d conversations, want 6", len(convs))
	}
	for i, c := range convs {
		turn := c.Turns[0]
		if turn.InputTokens != isl[i] || turn.TimestampMs != ts[i] || turn.MaxTokens != osl[i] {
			t.Errorf("row %d: isl %d ts %v osl %d, want %d %v %d", i, turn.InputTokens, turn.TimestampMs, turn.MaxTokens, isl[i], ts[i], osl[i])
		}
	}
	// Rows 0 and 1 share blocks 2 3 4 5 (16 tokens), rows 3 and 4 blocks
	// 14 15; row 2 shares only 2 3 with them.
	b := &blockTexts{corpus: NewCorpus(builtin(t)), size: 4, seed: 1, full: map[int64]string{}}
	shared4 := b.block(2) + b.block(3) + b.block(4) + b.block(5)
	for _, i := range []int{0, 1} {
		if !strings.HasPrefix(convs[i].Turns[0].Text, shared4) {
			t.Errorf("row %d does not start with the shared blocks 2-5", i)
		}
	}
	if p := convs[2].Turns[0].Text; !strings.HasPrefix(p, b.block(2)+b.block(3)) || strings.HasPrefix(p, shared4) {
		t.Errorf("row 2 should share blocks 2 3 only")
	}
	if !strings.HasPrefix(convs[4].Turns[0].Text, b.block(14)+b.block(15)) {
		t.Errorf("row 4 does not start with the shared blocks 14 15")
	}
}

func TestReadMooncakeSynthesisMaxISL(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.jsonl")
	if err := os.WriteFile(path, []byte("{\"input_length\": 900, \"output_length\": 3}\n{\"input_length\": 300, \"output_length\": 4}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := tracesynth.Defaults()
	o.MaxISL = 500
	convs, err := ReadFile(path, FileOptions{Type: "mooncake_trace", Corpus: NewCorpus(builtin(t)), BlockSize: 512, Seed: 1, Synthesis: o})
	if err != nil {
		t.Fatal(err)
	}
	if len(convs) != 1 || convs[0].Turns[0].InputTokens != 300 {
		t.Errorf("kept %d conversations, want the 300-token row only", len(convs))
	}
	o.MaxISL = 100
	_, err = ReadFile(path, FileOptions{Type: "mooncake_trace", Corpus: NewCorpus(builtin(t)), BlockSize: 512, Seed: 1, Synthesis: o})
	if err == nil || !strings.Contains(err.Error(), "--synthesis-max-isl 100 leaves none of its rows") {
		t.Errorf("error %v", err)
	}
}
