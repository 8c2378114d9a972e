package dataset

import (
	"encoding/csv"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// burstColumns are where a BurstGPT CSV keeps the columns AIPerf reads;
// the others (Model, Total tokens, Log Type) are ignored, as there.
type burstColumns struct{ timestamp, request, response, n int }

// burstRow is one BurstGPT request: its arrival in ms and its lengths.
type burstRow struct {
	timestampMs   float64
	input, output int
}

// readBurstGPT reads a BurstGPT trace (github.com/HPMLL/BurstGPT) as AIPerf
// does: a CSV with a header naming Timestamp (seconds since the trace's
// start), Request tokens and Response tokens. Each row is a conversation
// of one request, due at its timestamp in ms, with a synthetic prompt of
// exactly Request tokens tokens and Response tokens as its output length.
func readBurstGPT(files []sourceFile, o FileOptions) ([]Conversation, error) {
	f := &files[0]
	cols, err := parseBurstHeader(f, f.lines[0])
	if err != nil {
		return nil, err
	}
	blocks := &blockTexts{corpus: o.Corpus, size: 1, seed: o.Seed, full: map[int64]string{}}
	convs := make([]Conversation, 0, len(f.lines)-1)
	for i, l := range f.lines[1:] {
		r, err := parseBurstGPTRow(f, l, cols)
		if err != nil {
			return nil, err
		}
		t := Turn{MaxTokens: r.output, TimestampMs: r.timestampMs, HasTimestamp: true}
		t.build, t.InputTokens = blocks.builder(nil, r.input, i), r.input
		convs = append(convs, Conversation{ID: fmt.Sprintf("session_%06d", i), Turns: []Turn{t}})
	}
	return convs, nil
}

func splitCSV(line []byte) ([]string, error) {
	r := csv.NewReader(strings.NewReader(string(line)))
	r.FieldsPerRecord = -1
	return r.Read()
}

// parseBurstHeader finds the columns in the header line.
func parseBurstHeader(f *sourceFile, l sourceLine) (burstColumns, error) {
	names, err := splitCSV(l.data)
	if err != nil {
		return burstColumns{}, f.errorf(l, "not a CSV header line: %v", err)
	}
	cols := burstColumns{timestamp: -1, request: -1, response: -1, n: len(names)}
	for i, name := range names {
		switch strings.TrimSpace(name) {
		case "Timestamp":
			cols.timestamp = i
		case "Request tokens":
			cols.request = i
		case "Response tokens":
			cols.response = i
		}
	}
	var missing []string
	for _, c := range []struct {
		at   int
		name string
	}{{cols.timestamp, "Timestamp"}, {cols.request, "Request tokens"}, {cols.response, "Response tokens"}} {
		if c.at < 0 {
			missing = append(missing, strconv.Quote(c.name))
		}
	}
	if len(missing) > 0 {
		return cols, f.errorf(l, "the header has no column %s (burst_gpt_trace reads a CSV whose first line names Timestamp, Request tokens and Response tokens)", strings.Join(missing, ", "))
	}
	return cols, nil
}

// parseBurstGPTRow reads one data row.
func parseBurstGPTRow(f *sourceFile, l sourceLine, cols burstColumns) (burstRow, error) {
	var r burstRow
	fields, err := splitCSV(l.data)
	if err != nil {
		return r, f.errorf(l, "not a CSV row: %v", err)
	}
	if len(fields) != cols.n {
		return r, f.errorf(l, "%d columns, the header has %d", len(fields), cols.n)
	}
	ts, err := strconv.ParseFloat(strings.TrimSpace(fields[cols.timestamp]), 64)
	if err != nil || !finiteNonNegative(ts) || ts > math.MaxFloat64/1000 {
		return r, f.errorf(l, "Timestamp %q: want seconds since the trace's start, not negative", fields[cols.timestamp])
	}
	r.timestampMs = ts * 1000
	in, err := strconv.Atoi(strings.TrimSpace(fields[cols.request]))
	if err != nil || in < 1 || in > maxPromptTokens {
		return r, f.errorf(l, "Request tokens %q: want a whole number of tokens, 1 to %d", fields[cols.request], maxPromptTokens)
	}
	r.input = in
	out, err := strconv.Atoi(strings.TrimSpace(fields[cols.response]))
	switch {
	case err != nil || out < 0:
		return r, f.errorf(l, "Response tokens %q: want a whole number of tokens, at least 1", fields[cols.response])
	case out == 0:
		return r, f.errorf(l, "Response tokens 0 (a request that failed in the trace): leave such rows out, e.g. awk -F, 'NR==1 || $%d > 0'", cols.response+1)
	}
	r.output = out
	return r, nil
}
