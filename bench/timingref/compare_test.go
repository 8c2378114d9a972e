package main

import (
	"slices"
	"strings"
	"testing"
)

// TestCompare rebuilds llmbench's chunk arrivals from a JSONL record and
// judges them and a reference CSV against the server's write log, by hand.
func TestCompare(t *testing.T) {
	records := `{"metadata":{"x_request_id":"a","request_start_ns":1000000000},"metrics":{"time_to_first_token":{"value":2.5,"unit":"ms"},"inter_chunk_latency":{"value":[1,0.5],"unit":"ms"}}}
{"metadata":{"x_request_id":"b","request_start_ns":2000000000},"metrics":{"time_to_first_token":{"value":0.000001,"unit":"ms"}}}
`
	got, err := readRecords(strings.NewReader(records))
	if err != nil {
		t.Fatal(err)
	}
	want := arrivalLog{"a": {1002500000, 1003500000, 1004000000}, "b": {2000000001}}
	for id, a := range want {
		if !slices.Equal(got[id], a) {
			t.Errorf("%s: arrivals %v, want %v", id, got[id], a)
		}
	}
	server, err := readCSV(strings.NewReader("a,0,1002400000\na,1,1003000000\na,2,1003900000\nb,0,2000000000\n"))
	if err != nil {
		t.Fatal(err)
	}
	s := compareLogs(server, got)
	// First chunks: a 0.1 ms, b 0.000001 ms; later: a 0.5 and 0.1 ms.
	if !slices.Equal(s.first, []float64{0.000001, 0.1}) || !slices.Equal(s.later, []float64{0.1, 0.5}) || s.unmatched != 0 {
		t.Errorf("errors first %v later %v unmatched %d", s.first, s.later, s.unmatched)
	}
	if q := quantile(s.later, 0.99); q != 0.5 {
		t.Errorf("p99 %v, want 0.5", q)
	}
	// A request whose chunk count differs from the server's is not judged.
	got["a"] = got["a"][:2]
	if s := compareLogs(server, got); s.unmatched != 1 {
		t.Errorf("unmatched %d, want 1", s.unmatched)
	}
	if _, err := readCSV(strings.NewReader("a,x,1\n")); err == nil {
		t.Error("a malformed line was accepted")
	}
}
