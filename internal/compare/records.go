package compare

import (
	"encoding/json"
	"io"

	"github.com/llmbench/llmbench/internal/artifacts"
)

// readRecords reads profile_export.jsonl (artifacts' reader): the
// profiling records only. A failed record (error not null) counts as a
// request and an error, and none of its values: it has no latencies, and
// what it has (its ISL) would bias the successful requests' statistics.
// A metric's value is kept when it is a JSON number (inter_chunk_latency's
// list and null are not); its unit is the first one given with a number,
// in any record.
func (r *Run) readRecords(rd io.Reader) error {
	recs, err := artifacts.ReadRecords(rd)
	if err != nil {
		return err
	}
	values := map[string][]float64{}
	units := map[string]string{}
	for _, rec := range recs {
		for tag, u := range rec.Units {
			if u != "" && units[tag] == "" {
				units[tag] = u
			}
		}
		if rec.Phase != "profiling" {
			continue
		}
		r.Requests++
		if rec.Failed {
			r.Errors++
			continue
		}
		for tag, v := range rec.Values {
			values[tag] = append(values[tag], v)
		}
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
