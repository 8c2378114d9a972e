package capacity

import (
	"fmt"
	"math"

	"github.com/llmbench/llmbench/internal/metrics"
	"github.com/llmbench/llmbench/internal/sla"
	"github.com/llmbench/llmbench/internal/stats"
)

// errorRateTag is AIPerf's request_error_rate, in percent, which SLA
// filters (--error-rate-sla) name but llmbench's exports do not carry:
// it is derived from the request and error counts where a filter needs it.
const errorRateTag = "request_error_rate"

// errorRateDef describes request_error_rate.
var errorRateDef = metrics.Def{Tag: errorRateTag, Header: "Request Error Rate", Unit: "%", Kind: metrics.Derived}

// statOf is a run's value of a metric statistic (avg, min, max, p1…p99,
// std, sum), NaN when the run lacks it.
func statOf(rs metrics.Results, tag, stat string) float64 {
	if tag == errorRateTag {
		if stat != "avg" {
			return math.NaN()
		}
		return errorRate(rs)
	}
	r, ok := rs.Get(tag)
	if !ok {
		return math.NaN()
	}
	if r.Dist == nil {
		if stat == "avg" {
			return r.Value
		}
		return math.NaN()
	}
	d := r.Dist
	switch stat {
	case "avg":
		return d.Avg
	case "min":
		return d.Min
	case "max":
		return d.Max
	case "std":
		return d.Std
	case "sum":
		return d.Sum
	}
	for i, name := range stats.PercentileNames {
		if name == stat {
			return d.P[i]
		}
	}
	return math.NaN()
}

// errorRate is the percentage of failed requests.
func errorRate(rs metrics.Results) float64 {
	n := rs.RequestCount + rs.ErrorCount
	if n == 0 {
		return math.NaN()
	}
	return 100 * float64(rs.ErrorCount) / float64(n)
}

// withFilterMetrics adds to a run's results the metrics its SLA filters
// name that the run does not report itself (request_error_rate), so that
// the sweep aggregate can judge them.
func withFilterMetrics(rs metrics.Results, filters []sla.Filter) metrics.Results {
	for _, f := range filters {
		if f.Tag != errorRateTag {
			continue
		}
		if _, ok := rs.Get(errorRateTag); ok {
			break
		}
		out := rs
		out.Metrics = append(append([]metrics.Result(nil), rs.Metrics...), metrics.Result{Def: errorRateDef, Value: errorRate(rs)})
		return out
	}
	return rs
}

// mean is the mean of the finite values, NaN when there are none.
func mean(xs []float64) float64 {
	sum, n := 0.0, 0
	for _, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			sum += x
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}

// unreported is the first filter whose metric the run does not report at
// all (a misspelt tag, or a metric this endpoint never produces), nil
// when each is there. Such a filter would fail every cell and probe
// without saying why; the caller stops with an error instead.
func unreported(rs metrics.Results, filters []sla.Filter) *sla.Filter {
	for i, f := range filters {
		if f.Tag == errorRateTag {
			continue
		}
		if _, ok := rs.Get(f.Tag); !ok {
			return &filters[i]
		}
	}
	return nil
}

// unreportedError says which SLA filter names a metric no run reports.
func unreportedError(f *sla.Filter, label string) error {
	return fmt.Errorf("SLA filter %s: %s reports no metric %q; check the tag's spelling (the profile export's metric names, e.g. time_to_first_token, request_latency)", f, label, f.Tag)
}
