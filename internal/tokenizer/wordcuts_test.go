package tokenizer

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/llmbench/llmbench/internal/nodetest"
)

// TestCutsAtSpaces: the families whose components prove it say so, the
// others do not; and where it is said, it holds: at every space between
// two ASCII letters of the reference corpus, the tokens before it are
// the text before it's, and the tokens from it on do not depend on what
// precedes it.
func TestCutsAtSpaces(t *testing.T) {
	toks := map[string]interface {
		Tokenizer
		CutsAtSpaces() bool
	}{}
	for name, tok := range pathologicalHF(t) {
		toks[name] = tok
	}
	toks["words"] = Words{}
	if dir, ok := nodetest.Installed(referenceDir); ok {
		gpt4o := sharedHF(t, filepath.Join(dir, "node_modules", "@lenml", "tokenizer-gpt4o", "models", "tokenizer.json"), "gpt4o")
		toks["gpt4o"] = gpt4o
	}
	want := map[string]bool{"gpt4o": true, "builtin": true, "qwen3": true, "llama3": true, "llama2": true, "deepseek_v3": true, "words": true}
	for _, c := range []struct {
		name string
		tok  *HF
		want bool
	}{
		{"sentencepiece, safe merges", spTiny(t, []string{"▁ a", "a b"}), true},
		{"sentencepiece, crossing merge", spTiny(t, []string{"▁ a", "b ▁a"}), false},
		{"bert", loadBert(t, "bert_uncased"), false},
	} {
		if got := c.tok.CutsAtSpaces(); got != c.want {
			t.Errorf("%s: CutsAtSpaces %v, want %v", c.name, got, c.want)
		}
	}
	strs, _ := referenceStrings(t)
	for name, tok := range toks {
		if got := tok.CutsAtSpaces(); got != want[name] {
			t.Errorf("%s: CutsAtSpaces %v, want %v", name, got, want[name])
		}
		if !tok.CutsAtSpaces() {
			continue
		}
		lead := tok.Encode("a")
		checked := 0
		for _, s := range strs[:min(len(strs), 400/raceScale)] {
			for i := 1; i+1 < len(s) && checked < 2000/raceScale; i++ {
				if s[i] != ' ' || !isLetter(s[i-1]) || !isLetter(s[i+1]) {
					continue
				}
				checked++
				rest := tok.Encode("a" + s[i:])
				if !slices.Equal(rest[:len(lead)], lead) {
					t.Fatalf("%s: %q does not start with a's tokens", name, "a"+s[i:i+10])
				}
				if got, want := tok.Encode(s), append(tok.Encode(s[:i]), rest[len(lead):]...); !slices.Equal(got, want) {
					t.Fatalf("%s: cut at %d of %q: %v, pieces %v", name, i, abbreviate(s), head32(got), head32(want))
				}
			}
		}
		if checked == 0 {
			t.Fatalf("%s: no word boundary checked", name)
		}
	}
}

func isLetter(b byte) bool { return 'a' <= b|0x20 && b|0x20 <= 'z' }

func head32(ids []int) []int { return ids[:min(len(ids), 32)] }

func loadBert(t *testing.T, model string) *HF {
	t.Helper()
	tok := sharedHF(t, bertModelPath(t, model), model)
	return tok
}
