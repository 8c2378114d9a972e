package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"unicode/utf8"
)

// unigram is the Unigram model (T5, XLM-R, ALBERT, mBART) as the reference
// (tokenizers' models/unigram/model.rs, its optimized encode) runs it: the
// Viterbi best segmentation under the pieces' scores, a character no piece
// starts with scored as unk (the lowest score less 10), runs of unk pieces
// fused into one, which is the unk id unless byte fallback spells it in
// <0xXX> pieces.
type unigram struct {
	trie   pieceTrie
	scores []float64
	// ids finds a fused run of unknown characters that is a piece itself.
	ids          map[string]int32
	unk          int32
	unkScore     float64
	byteFallback bool
	fallbackIDs  [256]int32
}

// unigramScratch is one Viterbi pass's memory: per byte offset, the best
// score of a path ending there, where its last piece starts, and its id.
type unigramScratch struct {
	score []float64
	start []int32
	id    []int32
}

type unigramVocab []struct {
	piece string
	score float64
}

func (v *unigramVocab) UnmarshalJSON(data []byte) error {
	var raw [][2]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	*v = make(unigramVocab, len(raw))
	for i, pair := range raw {
		if err := json.Unmarshal(pair[0], &(*v)[i].piece); err != nil {
			return fmt.Errorf("piece %d: %w", i, err)
		}
		if err := json.Unmarshal(pair[1], &(*v)[i].score); err != nil {
			return fmt.Errorf("piece %d score: %w", i, err)
		}
	}
	return nil
}

// newUnigram builds the model. The reference fails on the first unknown
// character of a model without unk_id: such a file is refused here.
func newUnigram(vocab unigramVocab, unkID *int, byteFallback bool) (*unigram, error) {
	if len(vocab) == 0 {
		return nil, errors.New("the Unigram vocabulary is empty: no text could be counted with it")
	}
	if unkID == nil {
		return nil, errors.New("a Unigram model without unk_id fails on any character outside its vocabulary; it is not supported")
	}
	if *unkID < 0 || *unkID >= len(vocab) {
		return nil, fmt.Errorf("Unigram unk_id %d is outside the vocabulary of %d pieces", *unkID, len(vocab))
	}
	m := &unigram{unk: int32(*unkID), byteFallback: byteFallback, ids: make(map[string]int32, len(vocab)), scores: make([]float64, len(vocab))}
	minScore := math.Inf(1)
	for id, p := range vocab {
		m.ids[p.piece] = int32(id) // a repeated piece is its last id, as in the reference
		m.scores[id] = p.score
		minScore = min(minScore, p.score)
	}
	m.unkScore = minScore - 10
	for b := range m.fallbackIDs {
		m.fallbackIDs[b] = -1
		if id, ok := m.ids[fallbackToken(byte(b))]; ok {
			m.fallbackIDs[b] = id
		}
	}
	m.trie = newPieceTrie(m.ids)
	return m, nil
}

func (m *unigram) appendWord(dst []int32, w string, sc *unigramScratch) []int32 {
	n := len(w)
	if n == 0 {
		return dst
	}
	if cap(sc.score) < n+1 {
		sc.score = make([]float64, n+1)
		sc.start = make([]int32, n+1)
		sc.id = make([]int32, n+1)
	}
	score, start, ids := sc.score[:n+1], sc.start[:n+1], sc.id[:n+1]
	for i := range start {
		start[i] = -1
	}
	score[0] = 0
	nodes := m.trie.nodes
	for at := 0; at < n; {
		base := score[at]
		_, mblen := utf8.DecodeRuneInString(w[at:])
		single := false
		// Every piece that starts here, shortest first.
		node := int32(0)
		for j := at; j < n; j++ {
			next := nodes[node].base + int32(w[j])
			if uint(next) >= uint(len(nodes)) || nodes[next].check != node {
				break
			}
			node = next
			id := nodes[node].value
			if id < 0 {
				continue
			}
			end := j + 1
			if s := base + m.scores[id]; start[end] < 0 || s > score[end] {
				score[end], start[end], ids[end] = s, int32(at), id
			}
			if end-at == mblen {
				single = true
			}
		}
		if !single {
			end := at + mblen
			if s := base + m.unkScore; start[end] < 0 || s > score[end] {
				score[end], start[end], ids[end] = s, int32(at), m.unk
			}
		}
		at += mblen
	}
	// Walk back, then reverse what this word appended.
	first := len(dst)
	for end := n; end > 0; {
		begin := int(start[end])
		if ids[end] != m.unk {
			dst = append(dst, ids[end])
			end = begin
			continue
		}
		runEnd := end
		for end > 0 && ids[end] == m.unk {
			end = int(start[end])
		}
		dst = m.appendUnknown(dst, w[end:runEnd])
	}
	slices.Reverse(dst[first:])
	return dst
}

// appendUnknown appends a fused run of unk pieces, reversed (the caller
// reverses the word's ids once at the end).
func (m *unigram) appendUnknown(dst []int32, run string) []int32 {
	if id, ok := m.ids[run]; ok {
		return append(dst, id)
	}
	if m.byteFallback {
		all := true
		for i := 0; i < len(run); i++ {
			if m.fallbackIDs[run[i]] < 0 {
				all = false
				break
			}
		}
		if all {
			for i := len(run) - 1; i >= 0; i-- {
				dst = append(dst, m.fallbackIDs[run[i]])
			}
			return dst
		}
	}
	return append(dst, m.unk)
}

// pieceTrie is a double-array trie over the pieces' bytes: from node n the
// edge for byte c leads to base[n]+c when check there is n; value is the
// piece ending at a node (-1 for none). Node 0 is the root.
type pieceTrie struct {
	nodes []pieceNode
}

// pieceNode keeps a step's three reads in one cache line.
type pieceNode struct{ base, check, value int32 }

func newPieceTrie(ids map[string]int32) pieceTrie {
	keys := make([]string, 0, len(ids))
	for k := range ids {
		if k != "" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	b := &trieBuilder{}
	b.grow(256)
	b.take(0, -2) // the root
	b.build(0, keys, 0, ids)
	last := len(b.check) - 1
	for last > 0 && b.check[last] == -1 {
		last--
	}
	nodes := make([]pieceNode, last+1)
	for i := range nodes {
		nodes[i] = pieceNode{b.base[i], b.check[i], b.value[i]}
	}
	return pieceTrie{nodes: nodes}
}

type trieBuilder struct {
	base, check, value []int32
	// skip[i] leads towards the first free slot at or after i (union-find
	// with path compression: placing a node costs no scan of full slots).
	skip []int32
}

func (b *trieBuilder) grow(n int) {
	for len(b.check) < n {
		b.skip = append(b.skip, int32(len(b.check)))
		b.base = append(b.base, 0)
		b.check = append(b.check, -1)
		b.value = append(b.value, -1)
	}
}

// freeFrom is the first free slot at or after i.
func (b *trieBuilder) freeFrom(i int) int {
	b.grow(i + 1)
	root := i
	for b.skip[root] != int32(root) {
		root = int(b.skip[root])
		b.grow(root + 1)
	}
	for i != root {
		i, b.skip[i] = int(b.skip[i]), int32(root)
	}
	return root
}

func (b *trieBuilder) take(i int, parent int32) {
	b.check[i] = parent
	b.grow(i + 2)
	b.skip[i] = int32(i + 1)
}

// build places the children of node, whose keys (sorted, sharing their
// first depth bytes) are given.
func (b *trieBuilder) build(node int32, keys []string, depth int, ids map[string]int32) {
	if len(keys[0]) == depth {
		b.value[node] = ids[keys[0]]
		keys = keys[1:]
	}
	if len(keys) == 0 {
		return
	}
	var labels []byte
	for _, k := range keys {
		if c := k[depth]; len(labels) == 0 || labels[len(labels)-1] != c {
			labels = append(labels, c)
		}
	}
	base := 0
	for pos := b.freeFrom(int(labels[0]) + 1); ; pos = b.freeFrom(pos + 1) {
		base = pos - int(labels[0])
		b.grow(base + 256)
		ok := true
		for _, c := range labels[1:] {
			if b.check[base+int(c)] != -1 {
				ok = false
				break
			}
		}
		if ok {
			break
		}
	}
	b.base[node] = int32(base)
	for _, c := range labels {
		b.take(base+int(c), node)
	}
	lo := 0
	for i := 1; i <= len(keys); i++ {
		if i == len(keys) || keys[i][depth] != keys[lo][depth] {
			b.build(int32(base+int(keys[lo][depth])), keys[lo:i], depth+1, ids)
			lo = i
		}
	}
}
