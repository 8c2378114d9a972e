package compare

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Gate is a --fail-on condition: how much worse NEW may get on one
// metric's statistic before a CI job fails.
//
// A gate fails only when both hold: the change is a significant
// regression (its interval excludes 0 on the bad side) AND the estimated
// change is worse than the allowance. Significance alone would fail a
// job on a real but negligible change, which with enough requests every
// change is; the allowance alone would fail it on noise, which with few
// requests is most of any change.
type Gate struct {
	// Expr is the gate as written.
	Expr string
	Tag  string
	Stat string
	// Relative: Allowance is a fraction of the base value (+5% is 0.05).
	// Otherwise it is in Unit.
	Relative  bool
	Allowance float64
	// Unit of an absolute allowance: a time unit (ns, us, ms, s) for a
	// latency, "pp" (percentage points) for the error rate, "" for the
	// metric's own unit.
	Unit string
}

// timeUnits are the time units absolute allowances and metrics use, in
// nanoseconds.
var timeUnits = map[string]float64{"ns": 1, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9, "sec": 1e9}

// ParseGate parses a --fail-on expression:
//
//	TAG:STAT:+5%     NEW may be 5% worse than BASE
//	TAG:STAT:+3ms    NEW may be 3 ms worse (latencies: ns, us, ms, s)
//	TAG:STAT:+0.5    NEW may be 0.5 worse, in the metric's own unit
//	error_rate:+1    NEW's error rate may be 1 percentage point higher
//
// "Worse" is the metric's bad direction: up for a latency, down for a
// throughput, so +5% on request_throughput allows a 5% drop.
func ParseGate(s string) (Gate, error) {
	g := Gate{Expr: s}
	bad := func(format string, args ...any) (Gate, error) {
		return Gate{}, fmt.Errorf("--fail-on %q: %s", s, fmt.Sprintf(format, args...))
	}
	parts := strings.Split(strings.TrimSpace(s), ":")
	var allowance string
	switch {
	case parts[0] == ErrorRateTag:
		if len(parts) != 2 {
			return bad("write error_rate:+N, N the percentage points NEW's error rate may rise (e.g. error_rate:+1)")
		}
		g.Tag, g.Stat, g.Unit, allowance = ErrorRateTag, ErrorRateStat, "pp", parts[1]
		allowance = strings.TrimSuffix(allowance, "pp")
		if strings.HasSuffix(allowance, "%") {
			return bad("error_rate allowances are percentage points, not a relative change: write error_rate:+1 for one point")
		}
	case len(parts) != 3:
		return bad("write TAG:STAT:+ALLOWANCE, e.g. time_to_first_token:p99:+5%% or request_latency:avg:+3ms, or error_rate:+1")
	default:
		g.Tag, g.Stat, allowance = parts[0], parts[1], parts[2]
	}
	d, ok := lookupMetric(g.Tag)
	if g.Tag != ErrorRateTag {
		if !ok {
			return bad("unknown metric %q; gates take %s", g.Tag, strings.Join(gateTags(), ", "))
		}
		if d.better == "" {
			return bad("%s describes the workload, not the server: it has no better or worse to gate on", g.Tag)
		}
		stats := bootStats[:]
		if d.aggregate {
			stats = stats[:1]
		}
		if !slices.Contains(stats, g.Stat) {
			return bad("unknown statistic %q for %s; use one of %s", g.Stat, g.Tag, strings.Join(stats, ", "))
		}
	}
	if strings.HasPrefix(allowance, "-") {
		return bad("the allowance is how much worse NEW may get, in the metric's bad direction; write it with + (e.g. +5%%): for a throughput, +5%% allows a 5%% drop")
	}
	num := strings.TrimPrefix(allowance, "+")
	switch {
	case strings.HasSuffix(num, "%"):
		g.Relative = true
		num = strings.TrimSuffix(num, "%")
	case g.Tag == ErrorRateTag:
	default:
		i := strings.IndexFunc(num, func(r rune) bool { return !(r >= '0' && r <= '9' || r == '.' || r == 'e' || r == 'E' || r == '+') })
		if i >= 0 {
			g.Unit = num[i:]
			num = num[:i]
			if _, ok := timeUnits[g.Unit]; !ok || !d.timed {
				if d.timed {
					return bad("unknown unit %q; give a latency's allowance in ns, us, ms or s, or as a percentage", g.Unit)
				}
				return bad("unit %q: give %s's allowance as a percentage (+5%%) or a plain number in its own unit", g.Unit, g.Tag)
			}
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return bad("allowance %q is not a number: write e.g. +5%%, +3ms or +0.5", allowance)
	}
	g.Allowance = v
	if g.Relative {
		g.Allowance = v / 100
	}
	return g, nil
}

func gateTags() []string {
	var out []string
	for _, d := range metricDefs {
		if d.better != "" {
			out = append(out, d.tag)
		}
	}
	return append(out, ErrorRateTag)
}

// Gate statuses.
const (
	GatePass = "pass"
	GateFail = "fail"
	// GateNotTested: the gate could not be checked (the metric is missing
	// or has no interval). It counts as failed: a CI gate that cannot
	// check must not pass silently.
	GateNotTested = "not_tested"
)

// GateResult is a gate checked against the comparison.
type GateResult struct {
	Expr   string `json:"expr"`
	Tag    string `json:"tag"`
	Stat   string `json:"stat"`
	Status string `json:"status"`
	Passed bool   `json:"passed"`
	// Change is the change in the bad direction (positive is worse), in
	// the allowance's terms: a fraction for a relative gate, else in
	// Unit; Allowance is the most it may be.
	Change    Num     `json:"change_bad"`
	Allowance float64 `json:"allowance"`
	Unit      string  `json:"unit"`
	Reason    string  `json:"reason"`
}

// evaluate checks the gate against its entry (nil when not compared).
func (g Gate) evaluate(e *Entry) GateResult {
	gr := GateResult{Expr: g.Expr, Tag: g.Tag, Stat: g.Stat, Status: GateNotTested, Allowance: g.Allowance, Change: Num(math.NaN())}
	gr.Unit = g.Unit
	if g.Relative {
		gr.Unit = "fraction"
	} else if g.Unit == "" && e != nil {
		gr.Unit = e.Unit
	}
	if e == nil {
		gr.Reason = fmt.Sprintf("%s:%s is not in both folders", g.Tag, g.Stat)
		return gr
	}
	if e.Verdict == NotTested {
		gr.Reason = fmt.Sprintf("%s:%s has no confidence interval: %s", g.Tag, g.Stat, e.Note)
		return gr
	}
	sign := 1.0
	if e.Better == Higher {
		sign = -1
	}
	var bad float64
	switch {
	case g.Relative:
		bad = sign * float64(e.ChangeRel)
	case g.Unit == "pp" || g.Unit == "":
		bad = sign * float64(e.ChangeAbs)
	default:
		from, okFrom := timeUnits[e.Unit]
		if !okFrom {
			gr.Reason = fmt.Sprintf("%s is in %q, not a time unit: give the allowance as a percentage or a plain number", g.Tag, e.Unit)
			return gr
		}
		bad = sign * float64(e.ChangeAbs) * from / timeUnits[g.Unit]
	}
	if math.IsNaN(bad) {
		gr.Reason = fmt.Sprintf("%s:%s has no relative change (its base is 0): give an absolute allowance", g.Tag, g.Stat)
		return gr
	}
	gr.Change = Num(bad)
	exceeds := bad > g.Allowance
	switch {
	case e.Verdict == Regressed && exceeds:
		gr.Status, gr.Reason = GateFail, fmt.Sprintf("regressed significantly, by %s: more than the %s allowed", g.format(bad), g.format(g.Allowance))
	case e.Verdict == Regressed:
		gr.Status, gr.Reason = GatePass, fmt.Sprintf("regressed significantly, but by %s: within the %s allowed", g.format(bad), g.format(g.Allowance))
	case exceeds:
		gr.Status, gr.Reason = GatePass, fmt.Sprintf("worse by %s, more than the %s allowed, but not significantly (%s)", g.format(bad), g.format(g.Allowance), e.Verdict)
	default:
		gr.Status, gr.Reason = GatePass, e.Verdict
	}
	gr.Passed = gr.Status == GatePass
	return gr
}

// format writes an amount in the gate's terms.
func (g Gate) format(x float64) string {
	switch {
	case g.Relative:
		return fmt.Sprintf("%+.2f%%", 100*x)
	case g.Unit == "pp":
		return fmt.Sprintf("%+.3g percentage points", x)
	default:
		return fmt.Sprintf("%+.4g%s", x, g.Unit)
	}
}
