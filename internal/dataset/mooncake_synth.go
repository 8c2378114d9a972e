package dataset

import (
	"fmt"

	"github.com/llmbench/llmbench/internal/tracesynth"
)

// mooncakeRows decodes a Mooncake trace's lines and, when o.Synthesis
// asks for it, reshapes the rows before any prompt is made from them
// (internal/tracesynth: --synthesis-*). lines[i] is the line rows[i] came
// from, for errors. The zero Synthesis, as callers that know nothing of it
// leave it, changes nothing.
func mooncakeRows(f *sourceFile, o FileOptions) ([]mooncakeRow, []sourceLine, error) {
	rows := make([]mooncakeRow, len(f.lines))
	for i, l := range f.lines {
		if err := decodeLine(f, l, &rows[i], mooncakeFields); err != nil {
			return nil, nil, err
		}
	}
	if o.Synthesis == (tracesynth.Options{}) || !o.Synthesis.Active() {
		return rows, f.lines, nil
	}
	trace := make([]tracesynth.Row, len(rows))
	for i, r := range rows {
		t := tracesynth.Row{Timestamp: r.Timestamp, OutputLength: r.OutputLength, Session: r.SessionID}
		if r.TextInput == nil && r.InputText == nil {
			t.InputLength, t.HashIDs = r.InputLength, r.HashIDs
		}
		trace[i] = t
	}
	size := o.BlockSize
	if size <= 0 {
		size = 512
	}
	out, keep, err := tracesynth.Apply(trace, o.Synthesis, size, o.Seed)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", f.name, err)
	}
	if len(out) == 0 {
		return nil, nil, fmt.Errorf("%s: --synthesis-max-isl %d leaves none of its rows (all are longer)", f.name, o.Synthesis.MaxISL)
	}
	kept := make([]mooncakeRow, len(out))
	lines := make([]sourceLine, len(out))
	for i, t := range out {
		r := rows[keep[i]]
		r.Timestamp, r.OutputLength = t.Timestamp, t.OutputLength
		if t.InputLength != nil {
			r.InputLength, r.HashIDs = t.InputLength, t.HashIDs
		}
		kept[i], lines[i] = r, f.lines[keep[i]]
	}
	return kept, lines, nil
}
