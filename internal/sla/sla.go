// Package sla holds service-level filters as AIPerf's search and sweep
// options write them, TAG:STAT:OP:THRESHOLD (time_to_first_token:p95:lt:200),
// and decides whether a value meets one.
package sla

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Op compares a metric's value with a threshold.
type Op string

// The comparisons a filter may use.
const (
	LT Op = "lt"
	LE Op = "le"
	GT Op = "gt"
	GE Op = "ge"
)

// Stats are the statistics a filter may name, as AIPerf's parser accepts them.
var Stats = []string{"avg", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "min", "max"}

// Filter is one constraint on a metric's statistic, in the metric's
// exported unit (request_error_rate is in percent).
type Filter struct {
	Tag       string  `json:"metric_tag"`
	Stat      string  `json:"stat"`
	Op        Op      `json:"op"`
	Threshold float64 `json:"threshold"`
}

// Parse reads TAG:STAT:OP:THRESHOLD: exactly four colon-separated parts,
// no blanks trimmed (AIPerf's rule), a known statistic and comparison, and
// a finite threshold.
func Parse(s string) (Filter, error) {
	parts := strings.Split(s, ":")
	if len(parts) != 4 {
		return Filter{}, fmt.Errorf("%q is not TAG:STAT:OP:THRESHOLD (e.g. time_to_first_token:p95:lt:200)", s)
	}
	f := Filter{Tag: parts[0], Stat: parts[1], Op: Op(parts[2])}
	if f.Tag == "" {
		return Filter{}, fmt.Errorf("%q: the metric tag is empty", s)
	}
	if !validStat(f.Stat) {
		return Filter{}, fmt.Errorf("%q: statistic %q is not one of %s", s, f.Stat, strings.Join(Stats, ", "))
	}
	switch f.Op {
	case LT, LE, GT, GE:
	default:
		return Filter{}, fmt.Errorf("%q: comparison %q is not one of lt, le, gt, ge", s, f.Op)
	}
	t, err := strconv.ParseFloat(parts[3], 64)
	if err != nil || math.IsNaN(t) || math.IsInf(t, 0) {
		return Filter{}, fmt.Errorf("%q: threshold %q is not a finite number", s, parts[3])
	}
	f.Threshold = t
	return f, nil
}

func validStat(s string) bool {
	for _, x := range Stats {
		if s == x {
			return true
		}
	}
	return false
}

// String writes the filter back as TAG:STAT:OP:THRESHOLD.
func (f Filter) String() string {
	return f.Tag + ":" + f.Stat + ":" + string(f.Op) + ":" + strconv.FormatFloat(f.Threshold, 'g', -1, 64)
}

// Key is the flat key of the statistic the filter reads: <tag>_<stat>.
func (f Filter) Key() string { return f.Tag + "_" + f.Stat }

// Holds reports whether v meets the filter. A missing (NaN) or infinite
// value fails, and the strict comparisons fail on equality.
func (f Filter) Holds(v float64) bool {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return false
	}
	switch f.Op {
	case LT:
		return v < f.Threshold
	case LE:
		return v <= f.Threshold
	case GT:
		return v > f.Threshold
	case GE:
		return v >= f.Threshold
	}
	return false
}

// Margin is the signed distance of v from the threshold, oriented so that
// a negative margin passes and load is expected to raise it: v − threshold
// for lt and le, threshold − v for gt and ge.
func (f Filter) Margin(v float64) float64 {
	if f.Op == GT || f.Op == GE {
		return f.Threshold - v
	}
	return v - f.Threshold
}

// Upper reports whether the filter bounds its metric from above (lt, le):
// the metric must stay below the threshold.
func (f Filter) Upper() bool { return f.Op == LT || f.Op == LE }
