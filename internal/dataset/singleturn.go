package dataset

import "fmt"

// readSingleTurn reads AIPerf's single_turn format: one request per line,
// {"text": …, "output_length"?: …, "timestamp"?: ms, "delay"?: ms,
// "extra"?: {…}}, each its own conversation, in file order. Delays without
// timestamps add up to a schedule: each request is due its delay after the
// one before.
func readSingleTurn(files []sourceFile, o FileOptions) ([]Conversation, error) {
	f := &files[0]
	convs := make([]Conversation, 0, len(f.lines))
	timed, delayed := -1, -1 // the first line with each
	at := 0.0
	for i, l := range f.lines {
		var t turnFields
		if err := decodeLine(f, l, &t, turnFieldNames); err != nil {
			return nil, err
		}
		if t.Role != "" && t.Role != "user" {
			return nil, f.errorf(l, "role %q: a single_turn request is a user message (use multi_turn for a system prompt)", t.Role)
		}
		turn, err := t.turn(f, l, o.Corpus)
		if err != nil {
			return nil, err
		}
		if t.Timestamp != nil && timed < 0 {
			timed = i
		}
		if t.Delay != nil && delayed < 0 {
			delayed = i
		}
		switch {
		case timed >= 0 && delayed >= 0:
			return nil, f.errorf(l, "timestamps (line %d) and delays (line %d) cannot be mixed; give every line one or the other", f.lines[timed].num, f.lines[delayed].num)
		case timed >= 0 && t.Timestamp == nil:
			return nil, f.errorf(l, "no timestamp, but line %d has one: give every line a timestamp or none", f.lines[timed].num)
		case delayed >= 0:
			at += turn.DelayMs
			turn.TimestampMs, turn.HasTimestamp, turn.DelayMs = at, true, 0
		}
		convs = append(convs, Conversation{ID: fmt.Sprintf("session_%06d", i), Turns: []Turn{turn}})
	}
	if delayed > 0 {
		// Lines before the first delay were due at 0.
		for i := range delayed {
			convs[i].Turns[0].HasTimestamp = true
		}
	}
	return convs, nil
}
