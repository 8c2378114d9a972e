package compare

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// maxLine bounds one JSONL line: a long stream's inter_chunk_latency list
// makes lines of hundreds of kilobytes.
const maxLine = 64 << 20

// readRecords reads profile_export.jsonl with encoding/json, keys matched
// exactly as the exporters write them: the profiling records only. A
// failed record (error not null) counts as a request and an error, and
// none of its values: it has no latencies, and what it has (its ISL)
// would bias the successful requests' statistics. A metric's value is
// kept when it is a JSON number (inter_chunk_latency's list and null are
// not); its unit is the first one given with a number, in any record.
func (r *Run) readRecords(rd io.Reader) error {
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	values := map[string][]float64{}
	units := map[string]string{}
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var top, meta, metrics map[string]json.RawMessage
		if err := json.Unmarshal(b, &top); err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
		if err := json.Unmarshal(orNull(top["metadata"]), &meta); err != nil {
			return fmt.Errorf("line %d: metadata: %w", line, err)
		}
		if err := json.Unmarshal(orNull(top["metrics"]), &metrics); err != nil {
			return fmt.Errorf("line %d: metrics: %w", line, err)
		}
		kept := map[string]float64{}
		for tag, raw := range metrics {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(raw, &m); err != nil {
				return fmt.Errorf("line %d: metric %s: %w", line, tag, err)
			}
			v := m["value"]
			if len(v) == 0 || !bytes.ContainsAny(v[:1], "-0123456789") {
				continue
			}
			x, err := strconv.ParseFloat(string(v), 64)
			if err != nil {
				continue // a number beyond float64 (1e999) is no value
			}
			kept[tag] = x
			var unit string
			if json.Unmarshal(m["unit"], &unit) == nil && unit != "" && units[tag] == "" {
				units[tag] = unit
			}
		}
		var phase string
		if json.Unmarshal(meta["benchmark_phase"], &phase) != nil || phase != "profiling" {
			continue
		}
		r.Requests++
		if e, ok := top["error"]; ok && string(e) != "null" {
			r.Errors++
			continue
		}
		for tag, v := range kept {
			values[tag] = append(values[tag], v)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("after line %d: %w", line, err)
	}
	r.Values = values
	r.Units = make(map[string]string, len(values))
	for tag := range values {
		r.Units[tag] = units[tag]
	}
	return nil
}

// orNull reads a missing member as null.
func orNull(raw json.RawMessage) json.RawMessage {
	if raw == nil {
		return json.RawMessage("null")
	}
	return raw
}
