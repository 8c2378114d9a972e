package dataset

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
)

// mooncakeRow is one line of a Mooncake trace, as AIPerf reads it.
type mooncakeRow struct {
	Timestamp    *float64        `json:"timestamp"`
	InputLength  *int            `json:"input_length"`
	OutputLength *int            `json:"output_length"`
	HashIDs      []int64         `json:"hash_ids"`
	TextInput    *string         `json:"text_input"`
	InputText    *string         `json:"input_text"`
	SessionID    string          `json:"session_id"`
	Delay        *float64        `json:"delay"`
	Extra        json.RawMessage `json:"extra"`
	Messages     json.RawMessage `json:"messages"`
	Tools        json.RawMessage `json:"tools"`
	Type         string          `json:"type"`
}

// maxPromptTokens bounds a trace's input_length: beyond any model's
// context, and a typo there would make gigabytes of prompt.
const maxPromptTokens = 2_000_000

const mooncakeFields = "timestamp, input_length, output_length, hash_ids, text_input, session_id, delay, extra"

// readMooncake reads a Mooncake trace: one request per line with its
// arrival timestamp (ms), input_length and output_length in tokens, and
// hash_ids naming the prompt's blocks of o.BlockSize tokens. Requests that
// share a hash id share that block's text byte for byte, so a server's
// prefix cache sees the trace's reuse; the last block is cut so that the
// prompt counts exactly input_length tokens. Rows with a session_id are
// the turns of one conversation, in file order; others are conversations
// of their own.
func readMooncake(files []sourceFile, o FileOptions) ([]Conversation, error) {
	f := &files[0]
	blocks := &blockTexts{corpus: o.Corpus, size: o.BlockSize, seed: o.Seed, full: map[int64]string{}}
	if blocks.size <= 0 {
		blocks.size = 512
	}
	var convs []Conversation
	bySession := map[string]int{}
	rows, lines, err := mooncakeRows(f, o)
	if err != nil {
		return nil, err
	}
	for i, r := range rows {
		turn, err := r.turn(f, lines[i], blocks, i)
		if err != nil {
			return nil, err
		}
		if r.SessionID != "" {
			if k, ok := bySession[r.SessionID]; ok {
				convs[k].Turns = append(convs[k].Turns, turn)
				continue
			}
			bySession[r.SessionID] = len(convs)
		}
		id := r.SessionID
		if id == "" {
			id = fmt.Sprintf("session_%06d", i)
		}
		convs = append(convs, Conversation{ID: id, Turns: []Turn{turn}})
	}
	return convs, nil
}

func (r *mooncakeRow) turn(f *sourceFile, l sourceLine, blocks *blockTexts, row int) (Turn, error) {
	var t Turn
	switch {
	case len(r.Messages) > 0 || len(r.Tools) > 0:
		return t, f.errorf(l, "messages and tools rows (recorded conversations) are not supported yet; give input_length (with hash_ids) or text_input")
	case r.TextInput != nil && r.InputText != nil:
		return t, f.errorf(l, "give text_input or input_text, not both")
	}
	text := r.TextInput
	if text == nil {
		text = r.InputText
	}
	switch {
	case text != nil && r.InputLength != nil:
		return t, f.errorf(l, "give input_length or text_input, not both")
	case text != nil:
		if strings.TrimSpace(*text) == "" {
			return t, f.errorf(l, "text_input is empty")
		}
		t.Text, t.InputTokens = *text, blocks.corpus.Count(*text)
	case r.InputLength == nil:
		return t, f.errorf(l, "no input_length (or text_input): every trace row needs its prompt length")
	case *r.InputLength < 1 || *r.InputLength > maxPromptTokens:
		return t, f.errorf(l, "input_length %d: it must be 1 to %d tokens", *r.InputLength, maxPromptTokens)
	default:
		if err := blocks.check(r.HashIDs, *r.InputLength); err != nil {
			return t, f.errorf(l, "%v", err)
		}
		t.build, t.InputTokens = blocks.builder(r.HashIDs, *r.InputLength, row), *r.InputLength
	}
	err := requestFields{r.OutputLength, r.Timestamp, r.Delay, r.Extra}.apply(f, l, &t)
	return t, err
}

// blockTexts makes trace prompts from hash blocks: the text of a full
// block depends only on its hash id (and the seed), so it is the same in
// every request that names it.
type blockTexts struct {
	corpus *Corpus
	size   int
	seed   uint64
	full   map[int64]string
	// counts are the blocks' token counts, kept with their texts.
	counts map[int64]int
	// refs counts the prompts still to build that name each block: a
	// block is dropped once none does (made again, the same, if asked
	// for), so that the blocks of a long trace are not all held.
	refs map[int64]int32
	// heads are the join states (Corpus.join) of the texts of hash-id
	// sequences, a trie from the first id: a row counts only what its
	// blocks add after the longest head an earlier row counted.
	heads headNode
}

type headNode struct {
	state joinState
	next  map[int64]*headNode
}

func (b *blockTexts) block(id int64) string {
	t, _ := b.counted(id)
	return t
}

// counted is block id's text and its token count.
func (b *blockTexts) counted(id int64) (string, int) {
	if t, ok := b.full[id]; ok {
		if n, ok := b.counts[id]; ok {
			return t, n
		}
	}
	rng := rand.New(rand.NewPCG(b.seed, uint64(id)))
	t, n := b.corpus.Text(rng, b.size)
	if b.counts == nil {
		b.counts = map[int64]int{}
	}
	b.full[id], b.counts[id] = t, n
	return t, n
}

// check says whether n tokens can hold the hash blocks ids: all but the
// last are whole.
func (b *blockTexts) check(ids []int64, n int) error {
	if full := (len(ids) - 1) * b.size; len(ids) > 0 && n <= full {
		return fmt.Errorf("input_length %d is too short for %d hash blocks of %d tokens (more than %d needed; is --prompt-input-tokens-block-size the trace's block size?)", n, len(ids), b.size, full)
	}
	return nil
}

// builder is a row's prompt, built when called (Turn.build).
func (b *blockTexts) builder(ids []int64, n, row int) func() (string, int, error) {
	if b.refs == nil {
		b.refs = map[int64]int32{}
	}
	for _, id := range ids {
		b.refs[id]++
	}
	return func() (string, int, error) {
		defer b.release(ids)
		return b.prompt(ids, n, row)
	}
}

// release notes that a prompt naming ids is built.
func (b *blockTexts) release(ids []int64) {
	for _, id := range ids {
		switch r := b.refs[id]; {
		case r > 1:
			b.refs[id] = r - 1
		case r == 1:
			delete(b.refs, id)
			delete(b.full, id)
			delete(b.counts, id)
		}
	}
}

// prompt joins the full blocks of ids[:len-1] and fits the last block so
// that the whole counts exactly n tokens. Without hash ids the prompt is
// text of its own.
func (b *blockTexts) prompt(ids []int64, n, row int) (string, int, error) {
	if len(ids) == 0 {
		rng := rand.New(rand.NewPCG(b.seed^0x6e6f68617368, uint64(row))) // "nohash"
		text, count := b.corpus.Text(rng, n)
		return text, count, nil
	}
	if err := b.check(ids, n); err != nil {
		return "", 0, err
	}
	if !b.corpus.composes() {
		return b.promptCounted(ids, n)
	}
	// The head's count and end from the trie: only its blocks past the
	// longest head counted before are joined.
	node := &b.heads
	headLen := 0
	for _, id := range ids[:len(ids)-1] {
		text, count := b.counted(id)
		headLen += len(text)
		next := node.next[id]
		if next == nil {
			next = &headNode{state: b.corpus.join(node.state, text, count)}
			if node.next == nil {
				node.next = map[int64]*headNode{}
			}
			node.next[id] = next
		}
		node = next
	}
	head := node.state
	last := ids[len(ids)-1]
	if n-(len(ids)-1)*b.size == b.size {
		// A whole last block: the same text as wherever else it is whole,
		// when the join does not change the count.
		text, count := b.counted(last)
		if first, _ := wordBoundaries(text); b.corpus.joinCount(head, text, count, first) == n {
			return b.joined(ids, ""), n, nil
		}
	}
	rng := rand.New(rand.NewPCG(b.seed, uint64(last)^0x7461696c)) // "tail"
	end := joinEnd(b.suffix(ids[:len(ids)-1], 257))
	tail, added := b.corpus.textAfter(rng, end, head.n, n)
	count := head.n + added
	if len(end) != headLen && !hasWordBoundary(end) {
		// end is neither the whole head nor has a word boundary inside:
		// count the tail after the head's state.
		count = b.corpus.joinCount(head, tail, -1, -1)
	}
	return b.joined(ids[:len(ids)-1], tail), count, nil
}

// suffix is the last k bytes of the text of blocks ids (all of it when
// shorter).
func (b *blockTexts) suffix(ids []int64, k int) string {
	if len(ids) == 0 {
		return ""
	}
	if t := b.block(ids[len(ids)-1]); len(t) >= k {
		return t[len(t)-k:]
	}
	from, size := len(ids), 0
	for from > 0 && size < k {
		from--
		size += len(b.block(ids[from]))
	}
	s := b.joined(ids[from:], "")
	return s[max(0, len(s)-k):]
}

// joined is the text of blocks ids followed by tail, in one allocation.
func (b *blockTexts) joined(ids []int64, tail string) string {
	size := len(tail)
	for _, id := range ids {
		size += len(b.block(id))
	}
	var out strings.Builder
	out.Grow(size)
	for _, id := range ids {
		out.WriteString(b.block(id))
	}
	out.WriteString(tail)
	return out.String()
}

// promptCounted is prompt for a tokenizer whose counts do not compose
// (Corpus.composes): every prompt is counted whole.
func (b *blockTexts) promptCounted(ids []int64, n int) (string, int, error) {
	var head strings.Builder
	for _, id := range ids[:len(ids)-1] {
		head.WriteString(b.block(id))
	}
	last := ids[len(ids)-1]
	if n-(len(ids)-1)*b.size == b.size {
		if text := head.String() + b.block(last); b.corpus.Count(text) == n {
			return text, n, nil
		}
	}
	rng := rand.New(rand.NewPCG(b.seed, uint64(last)^0x7461696c)) // "tail"
	tail, count := b.corpus.TextAfter(rng, head.String(), n)
	return head.String() + tail, count, nil
}
