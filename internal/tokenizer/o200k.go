package tokenizer

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"fmt"
	"io"
)

// o200kRanks is tiktoken's o200k_base vocabulary (testdata/reference/
// make_o200k.mjs writes it from tiktoken's own file): for each rank in
// order, a length byte and the token's bytes.
//
//go:embed o200k_base.bin.gz
var o200kRanks []byte

// O200kName is the builtin tokenizer's name.
const O200kName = "builtin"

// O200k returns tiktoken's o200k_base (GPT-4o's tokenizer), AIPerf's
// builtin: byte-level BPE whose merge order is the rank of the merged
// token, with its two special tokens. It needs no file or network.
func O200k() (*HF, error) {
	zr, err := gzip.NewReader(bytes.NewReader(o200kRanks))
	if err != nil {
		return nil, fmt.Errorf("builtin tokenizer: %w", err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("builtin tokenizer: %w", err)
	}
	var tokens []string
	for i := 0; i < len(data); {
		n := int(data[i])
		if i+1+n > len(data) {
			return nil, fmt.Errorf("builtin tokenizer: truncated at rank %d", len(tokens))
		}
		tokens = append(tokens, string(data[i+1:i+1+n]))
		i += 1 + n
	}
	// As tiktoken, a piece that is a token is that token, unmerged.
	m := &bpe{byteLevel: true, ignoreMerges: true, unk: -1, vocab: make(map[string]int32, len(tokens))}
	for i := range m.byteIDs {
		m.byteIDs[i], m.fallbackIDs[i] = -1, -1
	}
	for rank, tok := range tokens {
		m.vocab[tok] = int32(rank)
		if len(tok) == 1 {
			m.byteIDs[tok[0]] = int32(rank)
		}
	}
	// tiktoken merges the adjacent pair whose concatenation has the
	// lowest rank; ranks are ids.
	m.rankIsID = true
	special := []addedToken{{id: 199999, content: "<|endoftext|>"}, {id: 200018, content: "<|endofprompt|>"}}
	t := &HF{
		name:       O200kName,
		raw:        newAddedTrie(special),
		normalized: newAddedTrie(nil),
		pre:        splitter{pat: fastPattern(o200kPattern), behavior: isolated},
		model:      m,
		pieces:     make([]string, 200019),
	}
	copy(t.pieces, tokens)
	for _, s := range special {
		t.pieces[s.id] = s.content
	}
	return t, nil
}
