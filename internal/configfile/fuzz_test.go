package configfile

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/internal/config"
)

// FuzzLoad feeds Load's parsing (what it does once the file is read) any
// bytes: it must never panic, every error must be one line, and whatever
// it accepts must be llmbench flags in File.Args' form.
func FuzzLoad(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.yaml")
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("benchmark: {model: \"{{ 1 }}\", phases: [{name: warmup, requests: 1}, {name: p, kind: profiling, type: gamma, rate: 1}]}\nsweep: {parameters: {phases.1.rate: [1, 2]}}"))
	fs := flag.NewFlagSet("fuzz", flag.ContinueOnError)
	p := config.Default()
	canonical := config.BindFlags(fs, &p).Canonical
	getenv := env(map[string]string{"API_KEY": "k", "OPENAI_API_KEY": "k"})
	f.Fuzz(func(t *testing.T, data []byte) {
		var fi fakeInline
		file, err := parse(data, getenv, fi.write)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error of more than one line: %q", err)
			}
			return
		}
		for _, g := range groupFlags(file.Args) {
			if !strings.HasPrefix(g.tokens[0], "--") || len(g.tokens) > 2 {
				t.Fatalf("args %q: group %q is not one flag", file.Args, g.tokens)
			}
			if c := canonical(g.name); c != g.name {
				t.Fatalf("args %q: --%s is no profile flag's canonical name (%q)", file.Args, g.name, c)
			}
		}
		if got := MergeArgs(file.Args, nil, canonical); !slices.Equal(got, file.Args) {
			t.Fatalf("MergeArgs changed the file's own args: %q -> %q", file.Args, got)
		}
	})
}
