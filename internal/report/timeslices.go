package report

import (
	"fmt"
	"math"
	"slices"

	"github.com/llmbench/llmbench/internal/artifacts"
	"github.com/llmbench/llmbench/internal/chart"
	"github.com/llmbench/llmbench/internal/stats"
)

// binWidth picks a time-slice width: the run's --slice-duration when it
// had one, else a round width giving at most about 120 slices.
func binWidth(r *artifacts.Run, span float64) float64 {
	cfg := inputConfig(r)
	if d := max(cfg.num("output", "slice_duration"), cfg.num("server_metrics", "slice_duration")); d > 0 && span/d <= 2000 {
		return d
	}
	for _, w := range []float64{0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600} {
		if span/w <= 120 {
			return w
		}
	}
	return math.Ceil(span / 120)
}

// bins are the slices' start times.
func bins(span, width float64) []float64 {
	n := max(1, int(math.Ceil(span/width)))
	out := make([]float64, n)
	for i := range out {
		out[i] = float64(i) * width
	}
	return out
}

// overlap is how long [a, b] and [c, d] overlap.
func overlap(a, b, c, d float64) float64 { return max(0, min(b, d)-max(a, c)) }

// sliceView is a run cut into time slices: per slice, the output-token
// throughput (each request's tokens spread evenly from its first token to
// its end, as AIPerf's dispersed throughput), the requests completed per
// second and the requests in flight (time-averaged).
type sliceView struct {
	w, end                 float64
	starts                 []float64
	tokens, done, inFlight []float64
}

// newSliceView cuts the run into slices; nil without records.
func newSliceView(r *artifacts.Run, v *runView) *sliceView {
	if len(v.records) == 0 || v.end <= 0 {
		return nil
	}
	w := binWidth(r, v.end)
	starts := bins(v.end, w)
	sv := &sliceView{w: w, end: v.end, starts: starts,
		tokens: make([]float64, len(starts)), done: make([]float64, len(starts)), inFlight: make([]float64, len(starts))}
	// The last slice ends with the run: its rates are over its own length.
	width := func(i int) float64 { return max(min(w, v.end-starts[i]), 1e-9) }
	for _, rec := range v.records {
		start, end := v.at(rec.StartNs), v.at(max(rec.EndNs, rec.StartNs))
		for i, b := range starts {
			sv.inFlight[i] += overlap(start, end, b, b+w) / width(i)
		}
		if rec.Failed {
			continue
		}
		if k := min(int(end/w), len(starts)-1); k >= 0 {
			sv.done[k] += 1 / width(k)
		}
		osl, ok := rec.Value("output_sequence_length")
		ttft, ok2 := rec.Value("time_to_first_token")
		if !ok || !ok2 || osl <= 0 {
			continue
		}
		first := start + ttft/1e3
		if end <= first {
			continue
		}
		rate := osl / (end - first)
		for i, b := range starts {
			sv.tokens[i] += rate * overlap(first, end, b, b+w) / width(i)
		}
	}
	return sv
}

// hasTokens says whether any output token was counted.
func (sv *sliceView) hasTokens() bool {
	return slices.ContainsFunc(sv.tokens, func(x float64) bool { return x > 0 })
}

// sliceSection draws the throughputs and requests in flight per slice,
// and each slice's TTFT and ITL (AIPerf's timeslices plots).
func sliceSection(v *runView, sv *sliceView) (Section, bool) {
	if sv == nil {
		return Section{}, false
	}
	s := Section{ID: "throughput", Title: "Throughput and latency per time slice",
		Intro: fmt.Sprintf("Per %s slice. Output tokens are spread evenly over each request's generation (its first token to its end), as AIPerf's dispersed throughput; requests in flight are time-averaged; a slice's TTFT and ITL are those of the requests sent in it.", seconds(sv.w))}
	if sv.hasTokens() {
		s.Charts = append(s.Charts, chart.Chart{ID: "dispersed_throughput_over_time", Title: "Output token throughput and requests in flight",
			X: chart.Axis{Label: "Time since the first request (s)"}, Y: chart.Axis{Label: "Output tokens/s"}, Y2: &chart.Axis{Label: "Requests in flight"},
			Series: []chart.Series{
				closedSteps("Output tokens/s", sv.starts, sv.tokens, sv.end, false),
				closedSteps("Requests in flight", sv.starts, sv.inFlight, sv.end, true),
			}})
	}
	s.Charts = append(s.Charts, chart.Chart{ID: "request_throughput_over_time", Title: "Requests completed per second and requests in flight",
		X: chart.Axis{Label: "Time since the first request (s)"}, Y: chart.Axis{Label: "Requests/s"}, Y2: &chart.Axis{Label: "Requests in flight"},
		Series: []chart.Series{
			closedSteps("Requests/s", sv.starts, sv.done, sv.end, false),
			closedSteps("Requests in flight", sv.starts, sv.inFlight, sv.end, true),
		}})
	for _, m := range []struct {
		id     string
		metric requestMetric
	}{
		{"timeslices_ttft", latencyMetrics[0]},
		{"timeslices_itl", latencyMetrics[1]},
	} {
		if c, ok := sliceLatencyChart(v, sv, m.id, m.metric); ok {
			s.Charts = append(s.Charts, c)
		}
	}
	return s, true
}

// sliceLatencyChart draws a metric's mean and p99 over the successful
// requests sent in each slice (AIPerf's timeslices_ttft and _itl draw the
// mean).
func sliceLatencyChart(v *runView, sv *sliceView, id string, m requestMetric) (chart.Chart, bool) {
	per := make([][]float64, len(sv.starts))
	xs, ys := v.values(m.Tag)
	for k, x := range xs {
		i := min(int(x/sv.w), len(per)-1)
		per[i] = append(per[i], ys[k])
	}
	mean, p99 := make([]float64, len(per)), make([]float64, len(per))
	for i, vals := range per {
		mean[i], p99[i] = math.NaN(), math.NaN()
		if len(vals) == 0 {
			continue
		}
		slices.Sort(vals)
		mean[i], p99[i] = stats.Mean(vals), stats.PercentileSorted(vals, 99)
	}
	c := chart.Chart{ID: id, Title: m.Name + " per time slice", X: chart.Axis{Label: "Time since the first request (s)"},
		Y: chart.Axis{Label: fmt.Sprintf("%s (ms)", m.Short)},
		Series: []chart.Series{
			closedSteps("mean", sv.starts, mean, sv.end, false),
			closedSteps("p99", sv.starts, p99, sv.end, false),
		}}
	return c, !c.Empty()
}

// closedSteps is a step series of per-slice values whose last step is
// drawn to the end of the run (a step holds until the next point).
func closedSteps(label string, starts, values []float64, end float64, right bool) chart.Series {
	x, y := slices.Clone(starts), slices.Clone(values)
	if len(x) > 0 && end > x[len(x)-1] {
		x, y = append(x, end), append(y, y[len(y)-1])
	}
	return chart.Series{Label: label, Style: chart.Step, X: x, Y: y, Right: right}
}

func seconds(w float64) string {
	if w < 1 {
		return fmt.Sprintf("%g s", w)
	}
	return fmt.Sprintf("%g-second", w)
}
