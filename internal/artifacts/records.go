package artifacts

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
)

// maxLine bounds one JSONL line: a long stream's inter_chunk_latency list
// makes lines of hundreds of kilobytes.
const maxLine = 64 << 20

// Record is one request of profile_export.jsonl.
type Record struct {
	// StartNs and EndNs are the request's wall-clock start and end
	// (metadata.request_start_ns, request_end_ns); 0 when absent.
	StartNs, EndNs int64
	// Phase is metadata.benchmark_phase: "profiling" or "warmup" ("" in
	// files that do not say, which count as profiling).
	Phase string
	// Failed is set for a record with an error; ErrorType is its type (or
	// its code, or "error" when it gives neither).
	Failed    bool
	ErrorType string
	Cancelled bool
	// Values are the record's numeric metrics by tag (inter_chunk_latency's
	// list is not one).
	Values map[string]float64
	// Units are the units the record gives its values.
	Units map[string]string
}

// Profiling says whether the record belongs to the measured phase.
func (r *Record) Profiling() bool { return r.Phase == "" || r.Phase == "profiling" }

// Value returns a metric's value, NaN-free: ok is false when the record
// has none.
func (r *Record) Value(tag string) (float64, bool) {
	v, ok := r.Values[tag]
	return v, ok
}

// readRecords reads profile_export.jsonl, every record (warm-up
// included), keys matched as the exporters write them; keep, when not
// empty, names the only metrics kept.
func readRecords(rd io.Reader, keep []string) ([]Record, error) {
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	var out []Record
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		rec, err := parseRecord(b, keep)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		out = append(out, rec)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("after line %d: %w", line, err)
	}
	return out, nil
}

// rawRecord is a record's layout; metrics are decoded one by one so that
// a list value (inter_chunk_latency) or a null is skipped, not an error.
type rawRecord struct {
	Metadata struct {
		RequestStartNs json.Number `json:"request_start_ns"`
		RequestEndNs   json.Number `json:"request_end_ns"`
		Phase          string      `json:"benchmark_phase"`
		WasCancelled   bool        `json:"was_cancelled"`
	} `json:"metadata"`
	Metrics map[string]struct {
		Value json.RawMessage `json:"value"`
		Unit  string          `json:"unit"`
	} `json:"metrics"`
	Error json.RawMessage `json:"error"`
}

func parseRecord(b []byte, keep []string) (Record, error) {
	var raw rawRecord
	if err := json.Unmarshal(b, &raw); err != nil {
		return Record{}, err
	}
	r := Record{
		StartNs:   nanos(raw.Metadata.RequestStartNs),
		EndNs:     nanos(raw.Metadata.RequestEndNs),
		Phase:     raw.Metadata.Phase,
		Cancelled: raw.Metadata.WasCancelled,
		Values:    make(map[string]float64, len(raw.Metrics)),
		Units:     make(map[string]string, len(raw.Metrics)),
	}
	for tag, m := range raw.Metrics {
		if len(keep) > 0 && !slices.Contains(keep, tag) {
			continue
		}
		v := m.Value
		if len(v) == 0 || !bytes.ContainsAny(v[:1], "-0123456789") {
			continue
		}
		x, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			continue // a number beyond float64 (1e999) is no value
		}
		r.Values[tag], r.Units[tag] = x, m.Unit
	}
	if len(raw.Error) > 0 && string(raw.Error) != "null" {
		r.Failed = true
		var e struct {
			Type string          `json:"type"`
			Code json.RawMessage `json:"code"`
		}
		_ = json.Unmarshal(raw.Error, &e)
		switch {
		case e.Type != "":
			r.ErrorType = e.Type
		case len(e.Code) > 0 && string(e.Code) != "null":
			r.ErrorType = "HTTP " + string(bytes.Trim(e.Code, `"`))
		default:
			r.ErrorType = "error"
		}
	}
	return r, nil
}

// nanos reads a timestamp; 0 when absent or not an integer.
func nanos(n json.Number) int64 {
	v, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil {
		return 0
	}
	return v
}
