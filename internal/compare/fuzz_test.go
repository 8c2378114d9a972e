package compare

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParseGate: any --fail-on value parses to a sane gate or an error
// that names it; never a panic.
func FuzzParseGate(f *testing.F) {
	for _, s := range []string{"time_to_first_token:p99:+5%", "request_latency:avg:+3ms", "error_rate:+1", "error_rate:0.5pp",
		"inter_token_latency:p90:+0.5", "request_throughput:avg:+5%", "x:y:z", "::", "time_to_first_token:p99:+1e309", "time_to_first_token:p99:+NaN"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		g, err := ParseGate(s)
		if err != nil {
			if !strings.Contains(err.Error(), fmt.Sprintf("%q", s)) {
				t.Errorf("error %v does not name %q", err, s)
			}
			return
		}
		if math.IsNaN(g.Allowance) || math.IsInf(g.Allowance, 0) || g.Allowance < 0 {
			t.Errorf("%q: allowance %v", s, g.Allowance)
		}
		if _, ok := lookupMetric(g.Tag); !ok && g.Tag != ErrorRateTag {
			t.Errorf("%q: unknown tag %q accepted", s, g.Tag)
		}
	})
}

// refReadRecords reads profile_export.jsonl as readRecords does, by
// encoding/json, keys matched exactly: the reference the fuzz target
// holds readRecords to.
func refReadRecords(data []byte) (*Run, error) {
	r := &Run{Values: map[string][]float64{}, Units: map[string]string{}}
	units := map[string]string{}
	for line := range bytes.Lines(data) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var top, meta, metrics map[string]json.RawMessage
		if err := json.Unmarshal(line, &top); err != nil {
			return nil, err
		}
		if err := json.Unmarshal(orNull(top["metadata"]), &meta); err != nil {
			return nil, err
		}
		if err := json.Unmarshal(orNull(top["metrics"]), &metrics); err != nil {
			return nil, err
		}
		var phase string
		_ = json.Unmarshal(meta["benchmark_phase"], &phase)
		values := map[string]float64{}
		for tag, raw := range metrics {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(raw, &m); err != nil {
				return nil, err
			}
			v, err := strconv.ParseFloat(string(m["value"]), 64)
			if m["value"] == nil || err != nil || !strings.ContainsAny(string(m["value"][:1]), "-0123456789") {
				continue
			}
			values[tag] = v
			var unit string
			if json.Unmarshal(m["unit"], &unit) == nil && unit != "" && units[tag] == "" {
				units[tag] = unit
			}
		}
		if phase != "profiling" {
			continue
		}
		r.Requests++
		if e, ok := top["error"]; ok && string(e) != "null" {
			r.Errors++
			continue
		}
		for tag, v := range values {
			r.Values[tag] = append(r.Values[tag], v)
		}
	}
	// A metric's unit is the first given with a number, in any record.
	for tag := range r.Values {
		r.Units[tag] = units[tag]
	}
	return r, nil
}

// FuzzReadRecords: readRecords reads what encoding/json reads: whenever
// the reference reads a file, it reads the same requests, errors, values
// and units. It may refuse less (or more) of what is not JSON.
func FuzzReadRecords(f *testing.F) {
	b, err := os.ReadFile(filepath.Join(fixtures, "qwen_concurrency1", RecordsFile))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte(record("profiling", 10, false) + "\n" + record("profiling", 0, true) + "\n" + record("warmup", 1, false)))
	for _, s := range []string{
		`{"metadata":{"benchmark_phase":"profiling"},"metrics":{"x":{"value":null}},"error":{}}`,
		`{"metadata":{"benchmark_phase":"profiling","benchmark_phase":5},"metrics":{"x":{"value":1,"unit":"ms"}}}`,
		`{"metrics":{"x":{"value":1},"x":{"value":[1]}},"metadata":{"benchmark_phase":"profiling"}}`,
		`{"metrics":{"x\u0041":{"unit":"m\"s","value":-1.5e3}},"metadata":{"benchmark_phase":"prof\u0069ling"},"error":null}`,
		`{"metrics":{"x":{"value":1e999}},"metadata":{"benchmark_phase":"profiling"}}`,
		`null`,
		`{"metadata":null,"metrics":null}`,
		`{"metadata":{"benchmark_phase":"profiling"},"metrics":{"x":{"value":01}}}`,
		`{"a":[[[[[]]]]],"metadata":{"benchmark_phase":"profiling"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got Run
		gotErr := got.readRecords(bytes.NewReader(data))
		want, wantErr := refReadRecords(data)
		if wantErr != nil || bytes.ContainsAny(data, "\r") || !utf8.Valid(data) {
			// Not JSON to encoding/json (or lines split differently, or
			// strings it would repair): only no panic and sane counts.
			if gotErr == nil && (got.Errors > got.Requests || got.Errors < 0) {
				t.Errorf("%d errors of %d requests", got.Errors, got.Requests)
			}
			return
		}
		if gotErr != nil {
			t.Fatalf("encoding/json reads it, readRecords fails: %v", gotErr)
		}
		if got.Requests != want.Requests || got.Errors != want.Errors {
			t.Errorf("requests/errors %d/%d, want %d/%d", got.Requests, got.Errors, want.Requests, want.Errors)
		}
		if !maps.EqualFunc(got.Values, want.Values, func(a, b []float64) bool { return slices.Equal(a, b) }) {
			t.Errorf("values %v, want %v", got.Values, want.Values)
		}
		if !maps.Equal(got.Units, want.Units) {
			t.Errorf("units %v, want %v", got.Units, want.Units)
		}
	})
}

// BenchmarkReadRecords reads 10,000 streamed records of 200 tokens each,
// their inter_chunk_latency lists included, as profile_export.jsonl has
// them.
func BenchmarkReadRecords(b *testing.B) {
	var sb strings.Builder
	icl := strings.TrimSuffix(strings.Repeat("18.123456789,", 199), ",")
	for i := range 10000 {
		fmt.Fprintf(&sb, `{"metadata":{"session_num":%d,"x_request_id":"fd78b108-2a8f-43b0-8327-0f97e76c6a9c","request_start_ns":1762551534797067827,"benchmark_phase":"profiling","was_cancelled":false},"metrics":{"output_sequence_length":{"value":200,"unit":"tokens"},"input_sequence_length":{"value":100,"unit":"tokens"},"time_to_first_token":{"value":31.742933999999998,"unit":"ms"},"time_to_second_token":{"value":17.868007,"unit":"ms"},"request_latency":{"value":3644.2601019999997,"unit":"ms"},"inter_chunk_latency":{"value":[%s],"unit":"ms"},"inter_token_latency":{"value":18.1,"unit":"ms"},"output_token_throughput_per_user":{"value":55.1,"unit":"tokens/sec/user"}},"error":null}`+"\n", i, icl)
	}
	data := []byte(sb.String())
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		var r Run
		if err := r.readRecords(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}
