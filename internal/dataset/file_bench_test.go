package dataset

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkReadMooncake reads a Mooncake-shaped trace of 500 rows (the
// arxiv trace's shape: about 7,600 input tokens, 15 hash blocks of 512,
// half of them shared with earlier rows) and reports rows per second:
// what a long trace costs before its replay starts.
func BenchmarkReadMooncake(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	var sb strings.Builder
	next := int64(0)
	for i := range 500 {
		blocks := 10 + rng.IntN(10)
		ids := make([]string, blocks)
		for k := range ids {
			if k < blocks/2 && next > 50 {
				ids[k] = fmt.Sprint(rng.Int64N(50)) // a shared prefix block
			} else {
				ids[k] = fmt.Sprint(next)
				next++
			}
		}
		n := (blocks-1)*512 + 1 + rng.IntN(511)
		fmt.Fprintf(&sb, `{"timestamp": %d, "input_length": %d, "output_length": 50, "hash_ids": [%s]}`+"\n", i*100, n, strings.Join(ids, ", "))
	}
	path := filepath.Join(b.TempDir(), "trace.jsonl")
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	corpus := NewCorpus(builtin(b))
	b.ResetTimer()
	for range b.N {
		if _, err := ReadFile(path, FileOptions{Type: "mooncake_trace", Corpus: corpus, BlockSize: 512, Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(500*b.N)/b.Elapsed().Seconds(), "rows/s")
}
