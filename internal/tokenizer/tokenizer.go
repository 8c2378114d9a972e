// Package tokenizer counts tokens as the served model does: Hugging Face
// tokenizer.json files (byte-level BPE as GPT-2, Llama 3, Qwen and
// DeepSeek; SentencePiece-style BPE as Llama 2, Mistral and Gemma;
// WordPiece as BERT, MiniLM and BGE), the builtin tiktoken o200k_base, and
// llmbench's own word splitter for tests.
// Counts are those of the reference libraries with add_special_tokens=False:
// no BOS or EOS is added, special tokens written in the text count as one.
package tokenizer

import (
	"context"
	"strings"

	"github.com/llmbench/llmbench/internal/hfhub"
)

// Tokenizer counts, encodes and decodes text. Implementations are safe for
// concurrent use.
type Tokenizer interface {
	// Name is what --tokenizer resolved to: builtin, a path, a model id.
	Name() string
	Count(text string) int
	Encode(text string) []int
	Decode(ids []int) string
}

// BuiltinName selects tiktoken o200k_base, as AIPerf's builtin.
const BuiltinName = O200kName

// placeholderWords mark the model names that documentation uses for "your
// model here" (your-model, test-model, dummy, example-llm, …): AIPerf
// counts them with its builtin tokenizer, with a warning, since no Hub has
// them; so does llmbench.
var placeholderWords = map[string]bool{"your": true, "test": true, "mock": true, "fake": true, "dummy": true, "example": true, "sample": true, "placeholder": true}

// IsPlaceholder reports a placeholder model name: one of whose words
// (split on - _ . / : and spaces) is a placeholder word.
func IsPlaceholder(model string) bool {
	for _, w := range strings.FieldsFunc(strings.ToLower(model), func(r rune) bool { return strings.ContainsRune("-_./: ", r) }) {
		if placeholderWords[w] {
			return true
		}
	}
	return false
}

// DefaultFor is AIPerf's default --tokenizer for a model: the model name
// itself (a Hugging Face id), or builtin for a placeholder name.
func DefaultFor(model string) string {
	if model == "" || IsPlaceholder(model) {
		return BuiltinName
	}
	return model
}

// Load opens the tokenizer spec names: builtin, llmbench:words, a
// tokenizer.json file or a folder holding one, or a Hugging Face model id
// (from the cache, else downloaded into it; o says where).
func Load(ctx context.Context, spec string, o hfhub.Options) (Tokenizer, error) {
	switch spec {
	case BuiltinName:
		return O200k()
	case WordsName:
		return Words{}, nil
	}
	path, err := hfhub.Resolve(ctx, spec, o)
	if err != nil {
		return nil, err
	}
	return LoadHF(path, spec)
}
