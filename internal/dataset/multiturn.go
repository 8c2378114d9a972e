package dataset

import "fmt"

// readMultiTurn reads AIPerf's multi_turn format: one conversation per
// line, {"session_id"?: …, "turns": [turn, …]}, each turn as a single_turn
// line. A leading turn with "role": "system" and only text becomes the
// conversation's system message, sent before every turn, not a request.
func readMultiTurn(files []sourceFile, o FileOptions) ([]Conversation, error) {
	f := &files[0]
	convs := make([]Conversation, 0, len(f.lines))
	seen := map[string]int{}
	for i, l := range f.lines {
		var line struct {
			SessionID string       `json:"session_id"`
			Turns     []turnFields `json:"turns"`
			Type      string       `json:"type"`
		}
		if err := decodeLine(f, l, &line, "session_id, turns, type; each turn "+turnFieldNames); err != nil {
			return nil, err
		}
		c := Conversation{ID: line.SessionID}
		if c.ID == "" {
			c.ID = fmt.Sprintf("session_%06d", i)
		}
		if prev, dup := seen[c.ID]; dup {
			return nil, f.errorf(l, "session_id %q is already used on line %d", c.ID, prev)
		}
		seen[c.ID] = l.num
		turns := line.Turns
		if len(turns) > 0 && turns[0].Role == "system" && systemOnly(&turns[0]) {
			sys, err := turns[0].turn(f, l, o.Corpus)
			if err != nil {
				return nil, err
			}
			c.System, c.SystemTokens = sys.Text, sys.InputTokens
			turns = turns[1:]
		}
		if len(turns) == 0 {
			return nil, f.errorf(l, "no turns: a conversation needs at least one user turn in \"turns\"")
		}
		for k := range turns {
			t := &turns[k]
			if t.Role != "" && t.Role != "user" {
				return nil, f.errorf(l, "turn %d: role %q; turns are user messages (a system turn must come first and carry only text)", k+1, t.Role)
			}
			turn, err := t.turn(f, l, o.Corpus)
			if err != nil {
				return nil, fmt.Errorf("%w (turn %d)", err, k+1)
			}
			c.Turns = append(c.Turns, turn)
		}
		convs = append(convs, c)
	}
	return convs, nil
}

// systemOnly reports whether a system turn is only text, as AIPerf hoists
// it: one with timing, an output length or extras stays a turn.
func systemOnly(t *turnFields) bool {
	return t.Timestamp == nil && t.Delay == nil && t.OutputLength == nil && len(t.Extra) == 0
}
