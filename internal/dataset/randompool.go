package dataset

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
)

// readRandomPool reads AIPerf's random_pool format: a file (one pool) or a
// directory (one pool per file, in name order) of single_turn-like lines
// without timing. Each of the o.Conversations conversations draws one
// entry from every pool, with replacement; a request from several pools
// carries their texts one after the other.
func readRandomPool(files []sourceFile, o FileOptions) ([]Conversation, error) {
	pools := make([][]Turn, len(files))
	for p := range files {
		f := &files[p]
		for _, l := range f.lines {
			var t turnFields
			if err := decodeLine(f, l, &t, turnFieldNames); err != nil {
				return nil, err
			}
			if t.Timestamp != nil || t.Delay != nil {
				return nil, f.errorf(l, "random_pool entries are drawn at random and take no timestamp or delay (use single_turn to replay a schedule)")
			}
			turn, err := t.turn(f, l, o.Corpus)
			if err != nil {
				return nil, err
			}
			pools[p] = append(pools[p], turn)
		}
	}
	n := o.Conversations
	if n <= 0 {
		return nil, fmt.Errorf("random_pool: --conversation-num %d, need at least 1", n)
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x72616e64706f6f6c)) // "randpool"
	convs := make([]Conversation, n)
	for i := range convs {
		var texts []string
		var turn Turn
		for _, pool := range pools {
			e := pool[rng.IntN(len(pool))]
			texts = append(texts, e.Text)
			if turn.MaxTokens == 0 {
				turn.MaxTokens = e.MaxTokens
			}
			turn.Extra = mergeExtra(turn.Extra, e.Extra)
		}
		turn.Text = strings.Join(texts, "\n")
		turn.InputTokens = o.Corpus.Count(turn.Text)
		convs[i] = Conversation{ID: fmt.Sprintf("session_%06d", i), Turns: []Turn{turn}}
	}
	return convs, nil
}

// mergeExtra shallow-merges two JSON objects, b's keys winning.
func mergeExtra(a, b json.RawMessage) json.RawMessage {
	if len(a) == 0 {
		return b
	}
	if len(b) == 0 {
		return a
	}
	var ma, mb map[string]json.RawMessage
	_ = json.Unmarshal(a, &ma)
	_ = json.Unmarshal(b, &mb)
	for k, v := range mb {
		ma[k] = v
	}
	out, _ := json.Marshal(ma)
	return out
}
