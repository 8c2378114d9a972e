// Package multirun runs a profile several times (--num-profile-runs) and
// turns the runs' summaries into confidence statistics: per metric and
// statistic, the mean across runs, its spread and a Student-t confidence
// interval, as AIPerf's "confidence" aggregation reports them.
package multirun

import (
	"math"

	"github.com/llmbench/llmbench/internal/metrics"
	"github.com/llmbench/llmbench/internal/stats"
)

// Stat is one metric statistic across runs ("time_to_first_token_p99").
type Stat struct {
	Name string // <tag>_<stat>
	Unit string
	// Mean, Std (sample, ddof = 1), Min and Max of the runs' values; CV is
	// Std/Mean (+Inf for a zero mean), SE is Std/√n, and [CILow, CIHigh] is
	// Mean ± TCritical·SE with TCritical Student's t quantile
	// 1 − (1 − level)/2 for n − 1 degrees of freedom. With one run, Std, CV
	// and SE are 0, the interval is the value and TCritical is NaN.
	Mean, Std, Min, Max float64
	CV, SE              float64
	CILow, CIHigh       float64
	TCritical           float64
	N                   int
}

// statNames are the statistics aggregated, in AIPerf's STAT_KEYS order.
var statNames = append(append([]string{"avg", "min", "max", "sum"}, stats.PercentileNames[:]...), "std")

// values returns a result's statistics by name; single values have only avg.
func values(r metrics.Result) map[string]float64 {
	if r.Dist == nil {
		return map[string]float64{"avg": r.Value}
	}
	d := r.Dist
	out := map[string]float64{"avg": d.Avg, "min": d.Min, "max": d.Max, "sum": d.Sum, "std": d.Std}
	for i, name := range stats.PercentileNames {
		out[name] = d.P[i]
	}
	return out
}

// Aggregate computes the confidence statistics of every metric statistic
// the runs reported, in the order of the first run that has each metric
// (then statNames); a run lacking a metric, or a non-finite value, is left
// out of that statistic.
func Aggregate(runs []metrics.Results, level float64, exported func(metrics.Def) bool) []Stat {
	type key struct{ tag, stat string }
	var order []key
	seen := map[key]bool{}
	units := map[string]string{}
	samples := map[key][]float64{}
	for _, rs := range runs {
		for _, r := range rs.Metrics {
			if !exported(r.Def) {
				continue
			}
			units[r.Def.Tag] = r.Def.Unit
			vals := values(r)
			for _, st := range statNames {
				v, ok := vals[st]
				if !ok {
					continue
				}
				k := key{r.Def.Tag, st}
				if !seen[k] {
					seen[k] = true
					order = append(order, k)
				}
				if !math.IsNaN(v) && !math.IsInf(v, 0) {
					samples[k] = append(samples[k], v)
				}
			}
		}
	}
	out := make([]Stat, 0, len(order))
	for _, k := range order {
		if xs := samples[k]; len(xs) > 0 {
			out = append(out, confidence(k.tag+"_"+k.stat, units[k.tag], xs, level))
		}
	}
	return out
}

// confidence computes one Stat from the runs' values.
func confidence(name, unit string, xs []float64, level float64) Stat {
	n := len(xs)
	s := Stat{Name: name, Unit: unit, N: n, Mean: stats.Mean(xs), Min: xs[0], Max: xs[0]}
	for _, x := range xs {
		s.Min, s.Max = min(s.Min, x), max(s.Max, x)
	}
	if n == 1 {
		s.CILow, s.CIHigh, s.TCritical = s.Mean, s.Mean, math.NaN()
		return s
	}
	s.Std = stats.StdDev(xs, 1)
	s.CV = math.Inf(1)
	if s.Mean != 0 {
		s.CV = s.Std / s.Mean
	}
	s.SE = s.Std / math.Sqrt(float64(n))
	s.TCritical = stats.StudentTQuantile(1-(1-level)/2, float64(n-1))
	margin := s.TCritical * s.SE
	s.CILow, s.CIHigh = s.Mean-margin, s.Mean+margin
	return s
}
