package artifacts

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
)

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

// ReadRecords reads profile_export.jsonl, every record (warm-up
// included), keys matched as the exporters write them; keep, when given,
// names the only metrics kept.
func ReadRecords(rd io.Reader, keep ...string) ([]Record, error) {
	var out []Record
	err := EachLine(rd, func(_ int, b []byte) error {
		rec, err := parseRecord(b, keep)
		out = append(out, rec)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// parseRecord reads one record leniently: a member of an unexpected type
// (a string timestamp, a numeric unit) is no value, not an error; only a
// line that is not a JSON object, or whose metadata, metrics or metric
// entries (those kept) are not objects, is refused. Keys match exactly, as
// the exporters write them.
func parseRecord(b []byte, keep []string) (Record, error) {
	var top, meta, metrics map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		return Record{}, err
	}
	if err := json.Unmarshal(orNull(top["metadata"]), &meta); err != nil {
		return Record{}, fmt.Errorf("metadata: %w", err)
	}
	if err := json.Unmarshal(orNull(top["metrics"]), &metrics); err != nil {
		return Record{}, fmt.Errorf("metrics: %w", err)
	}
	r := Record{
		StartNs: nanos(meta["request_start_ns"]),
		EndNs:   nanos(meta["request_end_ns"]),
		Values:  make(map[string]float64, len(metrics)),
		Units:   make(map[string]string, len(metrics)),
	}
	_ = json.Unmarshal(meta["benchmark_phase"], &r.Phase)
	_ = json.Unmarshal(meta["was_cancelled"], &r.Cancelled)
	for tag, raw := range metrics {
		// A metric not kept is not decoded: a stream's inter_chunk_latency
		// list is most of a line.
		if len(keep) > 0 && !slices.Contains(keep, tag) {
			continue
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			return Record{}, fmt.Errorf("metric %s: %w", tag, err)
		}
		v := m["value"]
		if len(v) == 0 || !bytes.ContainsAny(v[:1], "-0123456789") {
			continue
		}
		x, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			continue // a number beyond float64 (1e999) is no value
		}
		r.Values[tag] = x
		var unit string
		if json.Unmarshal(m["unit"], &unit) == nil {
			r.Units[tag] = unit
		}
	}
	if e, ok := top["error"]; ok && string(e) != "null" {
		r.Failed = true
		var detail map[string]json.RawMessage
		_ = json.Unmarshal(e, &detail)
		var typ string
		_ = json.Unmarshal(detail["type"], &typ)
		code := detail["code"]
		switch {
		case typ != "":
			r.ErrorType = typ
		case len(code) > 0 && string(code) != "null":
			r.ErrorType = "HTTP " + string(bytes.Trim(code, `"`))
		default:
			r.ErrorType = "error"
		}
	}
	return r, nil
}

// orNull reads a missing member as null.
func orNull(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("null")
	}
	return b
}

// nanos reads a timestamp; 0 when absent or not an integer.
func nanos(n json.RawMessage) int64 {
	v, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil {
		return 0
	}
	return v
}
