package sla

import (
	"math"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	cases := []struct {
		in   string
		want Filter
		err  string
	}{
		{"time_to_first_token:p95:lt:200", Filter{"time_to_first_token", "p95", LT, 200}, ""},
		{"request_error_rate:avg:lt:1", Filter{"request_error_rate", "avg", LT, 1}, ""},
		{"good_request_fraction:avg:ge:0.95", Filter{"good_request_fraction", "avg", GE, 0.95}, ""},
		{"output_token_throughput:min:gt:-1e3", Filter{"output_token_throughput", "min", GT, -1000}, ""},
		{"ttft:p95:lt", Filter{}, "TAG:STAT:OP:THRESHOLD"},
		{"ttft:p95:lt:1:2", Filter{}, "TAG:STAT:OP:THRESHOLD"},
		{":p95:lt:1", Filter{}, "tag is empty"},
		{"ttft:p96:lt:1", Filter{}, "statistic \"p96\""},
		{"ttft: p95:lt:1", Filter{}, "statistic \" p95\""}, // no trimming, as AIPerf
		{"ttft:p95:ne:1", Filter{}, "comparison \"ne\""},
		{"ttft:p95:lt:NaN", Filter{}, "finite"},
		{"ttft:p95:lt:inf", Filter{}, "finite"},
		{"ttft:p95:lt:abc", Filter{}, "finite"},
	}
	for _, c := range cases {
		got, err := Parse(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("Parse(%q) error %v; want one with %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
		if back, err := Parse(got.String()); err != nil || back != got {
			t.Errorf("%q does not read back: %+v, %v", got.String(), back, err)
		}
	}
}

func TestHoldsAndMargin(t *testing.T) {
	cases := []struct {
		f      Filter
		v      float64
		holds  bool
		margin float64
	}{
		{Filter{"x", "p95", LT, 100}, 99, true, -1},
		{Filter{"x", "p95", LT, 100}, 100, false, 0}, // strict fails on equality
		{Filter{"x", "p95", LE, 100}, 100, true, 0},
		{Filter{"x", "avg", GT, 0.9}, 0.95, true, -0.05},
		{Filter{"x", "avg", GT, 0.9}, 0.9, false, 0},
		{Filter{"x", "avg", GE, 0.9}, 0.9, true, 0},
		{Filter{"x", "avg", GE, 0.9}, 0.5, false, 0.4},
		{Filter{"x", "p95", LE, 100}, math.NaN(), false, math.NaN()},
		{Filter{"x", "p95", GE, 100}, math.Inf(1), false, math.Inf(-1)},
	}
	for _, c := range cases {
		if got := c.f.Holds(c.v); got != c.holds {
			t.Errorf("%v Holds(%v) = %v", c.f, c.v, got)
		}
		m := c.f.Margin(c.v)
		if !(math.Abs(m-c.margin) < 1e-12 || math.IsNaN(m) && math.IsNaN(c.margin) || m == c.margin) {
			t.Errorf("%v Margin(%v) = %v, want %v", c.f, c.v, m, c.margin)
		}
	}
	if f := (Filter{"time_to_first_token", "p95", LT, 1}); f.Key() != "time_to_first_token_p95" || !f.Upper() {
		t.Errorf("Key %q Upper %v", f.Key(), f.Upper())
	}
}

// FuzzParse: whatever Parse accepts has a finite threshold, a known
// statistic and comparison, and reads back from its String unchanged.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"time_to_first_token:p95:lt:200", "a:avg:ge:0.5", "::::", "x:p1:le:-0", "x:max:gt:1e308"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := Parse(s)
		if err != nil {
			return
		}
		if math.IsNaN(got.Threshold) || math.IsInf(got.Threshold, 0) || !validStat(got.Stat) || got.Tag == "" {
			t.Fatalf("Parse(%q) accepted %+v", s, got)
		}
		back, err := Parse(got.String())
		if err != nil || back != got {
			t.Fatalf("Parse(%q) = %+v does not read back: %+v, %v", s, got, back, err)
		}
	})
}
