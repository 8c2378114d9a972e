package dataset

import (
	"cmp"
	"math"
	"slices"
	"strconv"
)

// bailianRow is one line of an Alibaba Bailian trace
// (github.com/alibaba-edu/qwen-bailian-usagetraces-anon), as AIPerf reads it.
type bailianRow struct {
	ChatID       *int64   `json:"chat_id"`
	ParentChatID *int64   `json:"parent_chat_id"`
	Timestamp    *float64 `json:"timestamp"`
	InputLength  *int     `json:"input_length"`
	OutputLength *int     `json:"output_length"`
	Type         string   `json:"type"`
	Turn         *int     `json:"turn"`
	HashIDs      []int64  `json:"hash_ids"`
}

const bailianFields = "chat_id, parent_chat_id, timestamp, input_length, output_length, type, turn, hash_ids"

// BailianBlockSize is the tokens per hash block of the Bailian traces,
// the block size a bailian_trace run takes unless
// --prompt-input-tokens-block-size says otherwise.
const BailianBlockSize = 16

// bailianTurn is a parsed row: its turn, the chat it belongs to, and the
// turn number it is ordered by.
type bailianTurn struct {
	turn         Turn
	chat, parent int64
	order        int
	line         int
}

// readBailian reads a Bailian trace: one request per line with its
// arrival timestamp in seconds (sent at that time in ms), input_length and
// output_length in tokens, and hash_ids naming its prompt's blocks (16
// tokens each, --prompt-input-tokens-block-size) so that shared blocks
// send the same text. Rows linked by parent_chat_id (-1: a root) are one
// conversation, named for its root chat_id, in turn order. Each row is the
// whole request the service received, its length counting the history, so
// its turns are sent without the earlier turns in front (as AIPerf's
// message_array_with_responses).
func readBailian(files []sourceFile, o FileOptions) ([]Conversation, error) {
	f := &files[0]
	blocks := &blockTexts{corpus: o.Corpus, size: o.BlockSize, seed: o.Seed, full: map[int64]string{}}
	if blocks.size <= 0 {
		blocks.size = BailianBlockSize
	}
	rows := make([]bailianTurn, 0, len(f.lines))
	byChat := map[int64]int{}
	for i, l := range f.lines {
		r, err := parseBailianLine(f, l)
		if err != nil {
			return nil, err
		}
		if k, dup := byChat[*r.ChatID]; dup {
			return nil, f.errorf(l, "chat_id %d is already used on line %d", *r.ChatID, rows[k].line)
		}
		t := bailianTurn{chat: *r.ChatID, parent: -1, order: 1, line: l.num}
		if r.ParentChatID != nil {
			t.parent = *r.ParentChatID
		}
		if r.Turn != nil {
			t.order = *r.Turn
		}
		if err := blocks.check(r.HashIDs, *r.InputLength); err != nil {
			return nil, f.errorf(l, "%v", err)
		}
		t.turn.build, t.turn.InputTokens = blocks.builder(r.HashIDs, *r.InputLength, i), *r.InputLength
		t.turn.MaxTokens = *r.OutputLength
		t.turn.TimestampMs, t.turn.HasTimestamp = *r.Timestamp*1000, true
		byChat[t.chat] = len(rows)
		rows = append(rows, t)
	}
	// A row's conversation is its root: follow parent_chat_id while the
	// parent is in the file (a parent left out of the file, or a loop,
	// ends the walk, as in AIPerf).
	roots := make(map[int64]int64, len(rows))
	root := func(k int) int64 {
		var path []int64
		seen := map[int64]bool{}
		cur := rows[k]
		for cur.parent != -1 && !seen[cur.chat] {
			if r, ok := roots[cur.chat]; ok {
				return r
			}
			seen[cur.chat] = true
			p, ok := byChat[cur.parent]
			if !ok || cur.parent == cur.chat {
				break
			}
			path = append(path, cur.chat)
			cur = rows[p]
		}
		for _, c := range path {
			roots[c] = cur.chat
		}
		return cur.chat
	}
	var convs []Conversation
	var orders [][]int
	byRoot := map[int64]int{}
	for k, r := range rows {
		id := root(k)
		c, ok := byRoot[id]
		if !ok {
			c = len(convs)
			byRoot[id] = c
			convs = append(convs, Conversation{ID: strconv.FormatInt(id, 10), Standalone: true})
			orders = append(orders, nil)
		}
		convs[c].Turns = append(convs[c].Turns, r.turn)
		orders[c] = append(orders[c], r.order)
	}
	for c := range convs {
		sortTurns(convs[c].Turns, orders[c])
	}
	return convs, nil
}

// sortTurns orders turns by their turn numbers, file order among equals.
func sortTurns(turns []Turn, order []int) {
	idx := make([]int, len(turns))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(order[a], order[b]) })
	sorted := make([]Turn, len(turns))
	for i, k := range idx {
		sorted[i] = turns[k]
	}
	copy(turns, sorted)
}

// parseBailianLine reads one line and checks its fields.
func parseBailianLine(f *sourceFile, l sourceLine) (bailianRow, error) {
	var r bailianRow
	if err := decodeLine(f, l, &r, bailianFields); err != nil {
		return r, err
	}
	switch {
	case r.ChatID == nil:
		return r, f.errorf(l, "no chat_id: every Bailian row names its chat")
	case r.Timestamp == nil:
		return r, f.errorf(l, "no timestamp: every Bailian row has its arrival time in seconds")
	case !finiteNonNegative(*r.Timestamp) || *r.Timestamp > math.MaxFloat64/1000:
		return r, f.errorf(l, "timestamp %g: want seconds, not negative", *r.Timestamp)
	case r.InputLength == nil:
		return r, f.errorf(l, "no input_length: every Bailian row needs its prompt length")
	case *r.InputLength < 1 || *r.InputLength > maxPromptTokens:
		return r, f.errorf(l, "input_length %d: it must be 1 to %d tokens", *r.InputLength, maxPromptTokens)
	case r.OutputLength == nil:
		return r, f.errorf(l, "no output_length: every Bailian row needs its output length")
	case *r.OutputLength < 1:
		return r, f.errorf(l, "output_length %d: it must be at least 1 token", *r.OutputLength)
	}
	return r, nil
}
