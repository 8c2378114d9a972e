package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/llmbench/llmbench/internal/artifacts"
	"github.com/llmbench/llmbench/internal/chart"
)

// serverChart is one server-metrics chart: the metrics it draws, by
// name suffix (vLLM, SGLang and TensorRT-LLM name the same quantity
// differently), and how each series' values become the drawn ones.
type serverChart struct {
	id, title, yLabel string
	gauges            []string // gauge suffixes drawn as they are
	counters          []string // counter suffixes drawn as rates per second
	percent           bool     // gauges are ratios 0..1, drawn as %
}

var serverCharts = []serverChart{
	{id: "server_kv_cache_usage", title: "KV-cache usage", yLabel: "KV cache used (%)",
		gauges: []string{"kv_cache_usage_perc", "gpu_cache_usage_perc", ":token_usage", "kv_cache_utilization"}, percent: true},
	{id: "server_requests", title: "Requests running and waiting on the server", yLabel: "Requests",
		gauges: []string{"num_requests_running", "num_requests_waiting", "num_running_reqs", "num_queue_reqs", "num_requests_swapped"}},
	{id: "server_token_rates", title: "Token rates on the server", yLabel: "Tokens/s",
		counters: []string{":prompt_tokens", ":prompt_tokens_total", ":generation_tokens", ":generation_tokens_total"}},
}

// clientCounterpart maps a server histogram (by name suffix) to the
// client metric that measures the same thing, and the factor from the
// histogram's unit to the client's.
var clientCounterpart = []struct {
	suffix, tag string
	factor      float64
}{
	{"e2e_request_latency_seconds", "request_latency", 1e3},
	{"time_to_first_token_seconds", "time_to_first_token", 1e3},
	{"inter_token_latency_seconds", "inter_token_latency", 1e3},
	{"time_per_output_token_seconds", "inter_token_latency", 1e3},
	{"request_prompt_tokens", "input_sequence_length", 1},
	{"request_generation_tokens", "output_sequence_length", 1},
}

// serverSection draws the server's gauges and counter rates on the
// client's time axis, and sets each server histogram's estimated
// percentiles beside the client's measured ones.
func serverSection(r *artifacts.Run, v *runView) (Section, bool) {
	if r.Server == nil {
		return Section{}, false
	}
	s := Section{ID: "server", Title: "Server metrics"}
	t0 := v.t0
	if t0 == 0 && len(r.Server.Series) > 0 && len(r.Server.Series[0].T) > 0 {
		t0 = r.Server.Series[0].T[0]
	}
	at := func(ns int64) float64 { return float64(ns-t0) / 1e9 }
	endpoints := map[string]bool{}
	for _, se := range r.Server.Series {
		endpoints[se.Endpoint] = true
	}
	label := func(se *artifacts.ServerSeries) string {
		l := se.Metric
		if ls := se.LabelString(); ls != "" && strings.Count(ls, "=") > 0 && !onlyModelLabels(se) {
			l += "{" + ls + "}"
		}
		if len(endpoints) > 1 {
			l += " @ " + se.Endpoint
		}
		return l
	}
	// Counters are drawn per time slice, as the client's throughput.
	span := v.end
	for _, se := range r.Server.Series {
		if len(se.T) > 0 {
			span = max(span, at(se.T[len(se.T)-1]))
		}
	}
	w := binWidth(r, max(span, 1e-3))
	starts := bins(max(span, 1e-3), w)
	for _, sc := range serverCharts {
		c := chart.Chart{ID: sc.id, Title: sc.title, X: chart.Axis{Label: "Time since the first request (s)"}, Y: chart.Axis{Label: sc.yLabel}}
		for i := range r.Server.Series {
			se := &r.Server.Series[i]
			switch {
			case hasSuffix(se.Metric, sc.gauges) && se.Type != "counter" && se.Type != "histogram":
				x, y := make([]float64, len(se.T)), make([]float64, len(se.T))
				for k := range se.T {
					x[k], y[k] = at(se.T[k]), se.V[k]
					if sc.percent {
						y[k] *= 100
					}
				}
				c.Series = append(c.Series, chart.Series{Label: label(se), Style: chart.Step, X: x, Y: y})
			case hasSuffix(se.Metric, sc.counters) && se.Type == "counter":
				c.Series = append(c.Series, closedSteps(label(se)+" rate", starts, counterBins(times(se, at), se.V, nil, starts, w), span, false))
			}
		}
		if !c.Empty() {
			s.Charts = append(s.Charts, c)
		}
	}
	if c, ok := prefixHitRate(r.Server.Series, at, label, starts, w, span); ok {
		s.Charts = append(s.Charts, c)
	}
	if len(s.Charts) == 0 {
		if r.Server.SeriesSource == "" {
			s.Intro = "The scrapes' time series were not written (add jsonl or parquet to --server-metrics-formats to draw them)."
		} else {
			s.Intro = "None of the server's metrics is one this report draws over time (KV-cache usage, running and waiting requests, token counters, prefix-cache hits)."
		}
	} else {
		s.Intro = "Scraped from the server's Prometheus endpoint, on the client's time axis (from " + r.Server.SeriesSource + "). Counters are drawn as rates per " + seconds(w) + " slice."
	}
	if t, ok := histogramTable(r, v); ok {
		s.Tables = append(s.Tables, t)
	}
	return s, len(s.Charts) > 0 || len(s.Tables) > 0
}

// onlyModelLabels says whether a series' labels are only the usual
// engine and model_name, which every series of a one-model server has
// and which would only lengthen the legend.
func onlyModelLabels(se *artifacts.ServerSeries) bool {
	for k := range se.Labels {
		if k != "engine" && k != "model_name" {
			return false
		}
	}
	return true
}

// times are a series' scrape times on the report's axis.
func times(se *artifacts.ServerSeries, at func(int64) float64) []float64 {
	out := make([]float64, len(se.T))
	for k, t := range se.T {
		out[k] = at(t)
	}
	return out
}

func hasSuffix(name string, suffixes []string) bool {
	return slices.ContainsFunc(suffixes, func(s string) bool { return strings.HasSuffix(name, s) })
}

// counterBins turns a cumulative counter's scrapes into a rate per
// time slice (num's increase over den's in %, when den is given): the
// counter is read at each slice's edges by linear interpolation between
// scrapes, so the rates line up with the client's slices and do not
// flicker with the scrape interval. A drop (a counter reset) counts as a
// restart from zero. Slices outside the scrapes' span, and a ratio over
// no increase of den, are gaps.
func counterBins(t []float64, num, den []float64, starts []float64, w float64) []float64 {
	num = monotone(num)
	if den != nil {
		den = monotone(den)
	}
	out := make([]float64, len(starts))
	for i, b := range starts {
		out[i] = math.NaN()
		if len(t) < 2 || b < t[0] || b+w > t[len(t)-1]+w/2 {
			continue
		}
		e := min(b+w, t[len(t)-1])
		dn := valueAt(t, num, e) - valueAt(t, num, b)
		switch {
		case e <= b:
		case den == nil:
			out[i] = dn / (e - b)
		default:
			if dd := valueAt(t, den, e) - valueAt(t, den, b); dd > 0 {
				out[i] = 100 * min(dn/dd, 1)
			}
		}
	}
	return out
}

// monotone undoes counter resets: after a drop, the value before it is
// added to every later sample.
func monotone(v []float64) []float64 {
	out := make([]float64, len(v))
	offset := 0.0
	for k := range v {
		if k > 0 && v[k] < v[k-1] {
			offset += v[k-1]
		}
		out[k] = v[k] + offset
	}
	return out
}

// valueAt reads samples (t ascending) at x by linear interpolation,
// clamped to the first and last sample.
func valueAt(t, v []float64, x float64) float64 {
	k, _ := slices.BinarySearch(t, x)
	switch {
	case k == 0:
		return v[0]
	case k >= len(t):
		return v[len(v)-1]
	case t[k] == t[k-1]:
		return v[k]
	}
	f := (x - t[k-1]) / (t[k] - t[k-1])
	return v[k-1] + f*(v[k]-v[k-1])
}

// prefixHitRate draws the prefix cache's hit rate: vLLM's hits over
// queries between scrapes, or a hit-rate gauge (SGLang, older vLLM).
func prefixHitRate(series []artifacts.ServerSeries, at func(int64) float64, label func(*artifacts.ServerSeries) string, starts []float64, w, span float64) (chart.Chart, bool) {
	c := chart.Chart{ID: "server_prefix_cache_hit_rate", Title: "Prefix-cache hit rate", X: chart.Axis{Label: "Time since the first request (s)"},
		Note: "Per time slice: tokens found in the prefix cache over tokens looked up; a gap where nothing was looked up.", Y: chart.Axis{Label: "Hit rate (%)", Range: []float64{0, 100}}}
	for i := range series {
		hits := &series[i]
		switch {
		case strings.HasSuffix(hits.Metric, "prefix_cache_hits") || strings.HasSuffix(hits.Metric, "prefix_cache_hits_total"):
			queriesName := strings.Replace(hits.Metric, "prefix_cache_hits", "prefix_cache_queries", 1)
			for k := range series {
				q := &series[k]
				if q.Metric == queriesName && q.Endpoint == hits.Endpoint && q.LabelString() == hits.LabelString() && len(q.T) == len(hits.T) {
					c.Series = append(c.Series, closedSteps(label(hits), starts, counterBins(times(hits, at), hits.V, q.V, starts, w), span, false))
				}
			}
		case strings.HasSuffix(hits.Metric, "cache_hit_rate") && hits.Type != "counter":
			x, y := make([]float64, len(hits.T)), make([]float64, len(hits.T))
			for k := range hits.T {
				x[k], y[k] = at(hits.T[k]), 100*hits.V[k]
			}
			c.Series = append(c.Series, chart.Series{Label: label(hits), Style: chart.Step, X: x, Y: y})
		}
	}
	return c, !c.Empty()
}

// histogramTable sets every server histogram's estimated p50, p90 and
// p99 beside the client's measured ones, where the client measures the
// same quantity.
func histogramTable(r *artifacts.Run, v *runView) (Table, bool) {
	t := Table{ID: "server-histograms", Caption: "Server histograms: estimated percentiles beside the client's measured ones",
		Header: []string{"Server histogram", "Client metric", "p50 server", "p50 client", "p90 server", "p90 client", "p99 server", "p99 client"}}
	names := make([]string, 0, len(r.Server.Metrics))
	for name, m := range r.Server.Metrics {
		if m.Type == "histogram" {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		m := r.Server.Metrics[name]
		tag, factor := "", 1.0
		for _, cp := range clientCounterpart {
			if strings.HasSuffix(name, cp.suffix) {
				tag, factor = cp.tag, cp.factor
				break
			}
		}
		unit := m.Unit
		if factor == 1e3 {
			unit = "ms"
		}
		for _, se := range m.Series {
			if se.Stats["count"] == 0 {
				continue
			}
			title := name
			if len(m.Series) > 1 {
				title += " {" + labelString(se.Labels) + "}"
			}
			if unit != "" {
				title += " (" + unit + ")"
			}
			row := []Cell{{Text: title, Class: "text"}, {Text: tag}}
			for _, st := range []string{"p50", "p90", "p99"} {
				est, ok := se.Stats[st+"_estimate"]
				row = append(row, Cell{Text: number(est*factor, ok)})
				client, cok := 0.0, false
				if tag != "" {
					client, cok = percentile(r, v, tag, st)
				}
				row = append(row, Cell{Text: number(client, cok)})
			}
			t.Rows = append(t.Rows, row)
		}
	}
	return t, len(t.Rows) > 0
}

func labelString(labels map[string]string) string {
	s := artifacts.ServerSeries{Labels: labels}
	return s.LabelString()
}

// gpuSection draws each GPU's power and utilization over time, and
// AIPerf's chart of the output-token throughput beside the GPUs'
// utilization.
func gpuSection(r *artifacts.Run, v *runView, sv *sliceView) (Section, bool) {
	if len(r.GPUs) == 0 {
		return Section{}, false
	}
	t0 := v.t0
	if t0 == 0 {
		t0 = r.GPUs[0].TimestampNs
	}
	s := Section{ID: "gpu", Title: "GPU telemetry"}
	// AIPerf 0.12 prefixes the fields with the platform (nvidia_, amd_);
	// earlier versions wrote them bare.
	for _, f := range []struct {
		id     string
		fields []string
		title  string
		label  string
	}{
		{"gpu_power_over_time", []string{"nvidia_power_usage", "amd_power_usage", "gpu_power_usage"}, "GPU power", "Power (W)"},
		{"gpu_utilization_over_time", []string{"nvidia_gpu_utilization", "amd_gfx_activity", "gpu_utilization"}, "GPU utilization", "Utilization (%)"},
	} {
		c := chart.Chart{ID: f.id, Title: f.title, X: chart.Axis{Label: "Time since the first request (s)"}, Y: chart.Axis{Label: f.label}}
		byGPU := map[int]*chart.Series{}
		var order []int
		for _, g := range r.GPUs {
			val, ok := 0.0, false
			for _, name := range f.fields {
				if val, ok = g.Fields[name]; ok {
					break
				}
			}
			if !ok {
				continue
			}
			se := byGPU[g.GPUIndex]
			if se == nil {
				se = &chart.Series{Label: fmt.Sprintf("GPU %d", g.GPUIndex), Style: chart.Line}
				byGPU[g.GPUIndex] = se
				order = append(order, g.GPUIndex)
			}
			se.X, se.Y = append(se.X, float64(g.TimestampNs-t0)/1e9), append(se.Y, val)
		}
		slices.Sort(order)
		for _, i := range order {
			c.Series = append(c.Series, *byGPU[i])
		}
		if c.Empty() {
			continue
		}
		s.Charts = append(s.Charts, c)
		if c.ID == "gpu_utilization_over_time" && sv != nil && sv.hasTokens() {
			both := chart.Chart{ID: "gpu_utilization_and_throughput_over_time", Title: "Output token throughput and GPU utilization",
				X: c.X, Y: chart.Axis{Label: "Output tokens/s"}, Y2: &chart.Axis{Label: "GPU utilization (%)"},
				Series: []chart.Series{closedSteps("Output tokens/s", sv.starts, sv.tokens, sv.end, false)}}
			for _, g := range c.Series {
				g.Right = true
				both.Series = append(both.Series, g)
			}
			s.Charts = append(s.Charts, both)
		}
	}
	return s, len(s.Charts) > 0
}
