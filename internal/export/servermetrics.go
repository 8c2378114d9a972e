package export

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"

	"github.com/llmbench/llmbench/internal/scrape"
	"github.com/llmbench/llmbench/internal/servermetrics"
	"github.com/llmbench/llmbench/internal/stats"
)

// ServerMetricsFiles names the server metrics files: server_metrics_export.*
// by default, <prefix>_server_metrics.* with --profile-export-prefix.
func ServerMetricsFiles(prefix string) func(ext string) string {
	return func(ext string) string {
		if prefix == "" {
			return "server_metrics_export." + ext
		}
		return prefix + "_server_metrics." + ext
	}
}

// ServerMetrics is what the server metrics exports hold.
type ServerMetrics struct {
	SchemaVersion string
	Version       string
	BenchmarkID   string
	Configured    []string
	Successful    []string
	Start, End    time.Time
	Infos         []scrape.Info
	Metrics       []servermetrics.Metric
	Window        servermetrics.Window
	InputConfig   any
	// For the Parquet metadata.
	ModelNames  []string
	Concurrency int
	RequestRate float64
}

type endpointInfoJSON struct {
	TotalFetches      int      `json:"total_fetches"`
	FirstFetchNs      int64    `json:"first_fetch_ns"`
	LastFetchNs       int64    `json:"last_fetch_ns"`
	AvgFetchLatencyMs float64  `json:"avg_fetch_latency_ms"`
	UniqueUpdates     int      `json:"unique_updates"`
	FirstUpdateNs     int64    `json:"first_update_ns"`
	LastUpdateNs      int64    `json:"last_update_ns"`
	DurationSeconds   float64  `json:"duration_seconds"`
	AvgUpdateMs       float64  `json:"avg_update_interval_ms"`
	MedianUpdateMs    *float64 `json:"median_update_interval_ms"`
	// Added by llmbench (AIPerf's fields are unchanged): "ok", or
	// "partial" for an endpoint that answered and then stopped, with the
	// failed scrapes in a row at the end of the run.
	Status              string `json:"status,omitempty"`
	ConsecutiveFailures int    `json:"consecutive_failures,omitempty"`
}

type gaugeStatsJSON struct {
	Avg float64 `json:"avg"`
	Min float64 `json:"min"`
	Max float64 `json:"max"`
	Std float64 `json:"std"`
	P1  float64 `json:"p1"`
	P5  float64 `json:"p5"`
	P10 float64 `json:"p10"`
	P25 float64 `json:"p25"`
	P50 float64 `json:"p50"`
	P75 float64 `json:"p75"`
	P90 float64 `json:"p90"`
	P95 float64 `json:"p95"`
	P99 float64 `json:"p99"`
}

type counterStatsJSON struct {
	Total   float64  `json:"total"`
	Rate    float64  `json:"rate"`
	RateAvg *float64 `json:"rate_avg,omitempty"`
	RateMin *float64 `json:"rate_min,omitempty"`
	RateMax *float64 `json:"rate_max,omitempty"`
	RateStd *float64 `json:"rate_std,omitempty"`
}

type histStatsJSON struct {
	Count     float64  `json:"count"`
	Sum       *float64 `json:"sum,omitempty"`
	Avg       *float64 `json:"avg,omitempty"`
	CountRate *float64 `json:"count_rate,omitempty"`
	SumRate   *float64 `json:"sum_rate,omitempty"`
	P1        *float64 `json:"p1_estimate,omitempty"`
	P5        *float64 `json:"p5_estimate,omitempty"`
	P10       *float64 `json:"p10_estimate,omitempty"`
	P25       *float64 `json:"p25_estimate,omitempty"`
	P50       *float64 `json:"p50_estimate,omitempty"`
	P75       *float64 `json:"p75_estimate,omitempty"`
	P90       *float64 `json:"p90_estimate,omitempty"`
	P95       *float64 `json:"p95_estimate,omitempty"`
	P99       *float64 `json:"p99_estimate,omitempty"`
}

// buckets is an ordered {"le": count} object, in bound order, each key
// the bound as the exposition wrote it.
type buckets struct {
	bounds []string
	counts []float64
}

func (b buckets) MarshalJSON() ([]byte, error) {
	if b.counts == nil {
		return []byte("null"), nil
	}
	out := []byte{'{'}
	for i, le := range b.bounds {
		if i > 0 {
			out = append(out, ',')
		}
		out = strconv.AppendQuote(out, le)
		out = append(out, ':')
		out = appendFloat(out, b.counts[i])
	}
	return append(out, '}'), nil
}

type sliceJSON struct {
	StartNs    int64    `json:"start_ns"`
	EndNs      int64    `json:"end_ns"`
	IsComplete *bool    `json:"is_complete,omitempty"`
	Avg        *float64 `json:"avg,omitempty"`
	Min        *float64 `json:"min,omitempty"`
	Max        *float64 `json:"max,omitempty"`
	Total      *float64 `json:"total,omitempty"`
	Rate       *float64 `json:"rate,omitempty"`
	Count      *float64 `json:"count,omitempty"`
	Sum        *float64 `json:"sum,omitempty"`
	Buckets    *buckets `json:"buckets,omitempty"`
}

type seriesJSON struct {
	EndpointURL string            `json:"endpoint_url"`
	Labels      map[string]string `json:"labels,omitempty"`
	Stats       any               `json:"stats"`
	Buckets     *buckets          `json:"buckets,omitempty"`
	Timeslices  []sliceJSON       `json:"timeslices,omitempty"`
}

type metricJSON struct {
	Type        string       `json:"type"`
	Description string       `json:"description"`
	Unit        string       `json:"unit,omitempty"`
	Series      []seriesJSON `json:"series"`
}

func f64(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// ServerMetricsJSON renders server_metrics_export.json (schema 1.0).
func ServerMetricsJSON(sm ServerMetrics) ([]byte, error) {
	infos := map[string]endpointInfoJSON{}
	for _, in := range sm.Infos {
		if in.TotalFetches == 0 {
			continue
		}
		infos[in.URL] = endpointInfoJSON{
			TotalFetches: in.TotalFetches, FirstFetchNs: in.FirstFetchNs, LastFetchNs: in.LastFetchNs,
			AvgFetchLatencyMs: in.AvgFetchLatency, UniqueUpdates: in.UniqueUpdates,
			FirstUpdateNs: in.FirstUpdateNs, LastUpdateNs: in.LastUpdateNs, DurationSeconds: in.DurationSeconds,
			AvgUpdateMs: in.AvgUpdateMs, MedianUpdateMs: in.MedianUpdateMs,
			Status: in.Status, ConsecutiveFailures: in.ConsecutiveFailures,
		}
	}
	metrics := make(map[string]metricJSON, len(sm.Metrics))
	for _, m := range sm.Metrics {
		mj := metricJSON{Type: string(m.Type), Description: m.Description, Unit: m.Unit}
		for _, s := range m.Series {
			mj.Series = append(mj.Series, seriesToJSON(s, s.ObservedSeconds))
		}
		metrics[m.Name] = mj
	}
	doc := struct {
		SchemaVersion string `json:"schema_version"`
		AIPerfVersion string `json:"aiperf_version"`
		BenchmarkID   string `json:"benchmark_id"`
		Summary       struct {
			Configured   []string                    `json:"endpoints_configured"`
			Successful   []string                    `json:"endpoints_successful"`
			StartTime    string                      `json:"start_time"`
			EndTime      string                      `json:"end_time"`
			EndpointInfo map[string]endpointInfoJSON `json:"endpoint_info"`
			// Added by llmbench: endpoints that answered and then stopped
			// (their statistics cover the time they answered), and those
			// that never answered or were not Prometheus.
			Partial []string `json:"endpoints_partial,omitempty"`
			Failed  []string `json:"endpoints_failed,omitempty"`
		} `json:"summary"`
		Metrics     map[string]metricJSON `json:"metrics"`
		InputConfig any                   `json:"input_config"`
	}{SchemaVersion: sm.SchemaVersion, AIPerfVersion: sm.Version, BenchmarkID: sm.BenchmarkID, Metrics: metrics, InputConfig: sm.InputConfig}
	doc.Summary.Configured = nonNil(sm.Configured)
	doc.Summary.Successful = nonNil(sm.Successful)
	doc.Summary.StartTime = sm.Start.Format(timeLayout)
	doc.Summary.EndTime = sm.End.Format(timeLayout)
	doc.Summary.EndpointInfo = infos
	for _, in := range sm.Infos {
		switch in.Status {
		case "partial":
			doc.Summary.Partial = append(doc.Summary.Partial, in.URL)
		case "failed":
			doc.Summary.Failed = append(doc.Summary.Failed, in.URL)
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("encode server metrics JSON: %w", err)
	}
	return buf.Bytes(), nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func labelMap(ls []scrape.Label) map[string]string {
	if len(ls) == 0 {
		return nil
	}
	m := make(map[string]string, len(ls))
	for _, l := range ls {
		m[l.Name] = l.Value
	}
	return m
}

func seriesToJSON(s servermetrics.SeriesStats, dur float64) seriesJSON {
	out := seriesJSON{EndpointURL: s.Endpoint, Labels: labelMap(s.Labels)}
	incomplete := func(sl servermetrics.Slice) *bool {
		if sl.Complete {
			return nil
		}
		f := false
		return &f
	}
	switch {
	case s.Gauge != nil:
		g := s.Gauge
		out.Stats = gaugeStatsJSON{Avg: g.Avg, Min: g.Min, Max: g.Max, Std: g.Std,
			P1: g.P[0], P5: g.P[1], P10: g.P[2], P25: g.P[3], P50: g.P[4], P75: g.P[5], P90: g.P[6], P95: g.P[7], P99: g.P[8]}
		for _, sl := range s.Slices {
			out.Timeslices = append(out.Timeslices, sliceJSON{StartNs: sl.StartNs, EndNs: sl.EndNs, IsComplete: incomplete(sl),
				Avg: f64(sl.Avg), Min: f64(sl.Min), Max: f64(sl.Max)})
		}
	case s.Counter != nil:
		c := s.Counter
		cs := counterStatsJSON{Total: c.Total, Rate: c.Rate}
		if r := c.SliceRates; r != nil {
			cs.RateAvg, cs.RateMin, cs.RateMax, cs.RateStd = f64(r.Avg), f64(r.Min), f64(r.Max), f64(r.Std)
		}
		out.Stats = cs
		for _, sl := range s.Slices {
			out.Timeslices = append(out.Timeslices, sliceJSON{StartNs: sl.StartNs, EndNs: sl.EndNs, IsComplete: incomplete(sl),
				Total: f64(sl.Total), Rate: f64(sl.Rate)})
		}
	case s.Hist != nil:
		h := s.Hist
		hs := histStatsJSON{Count: h.Count}
		if h.Count > 0 {
			hs.Sum, hs.Avg = f64(h.Sum), f64(h.Sum/h.Count)
			if dur > 0 {
				hs.CountRate, hs.SumRate = f64(h.Count/dur), f64(h.Sum/dur)
			}
			e := h.Estimates
			hs.P1, hs.P5, hs.P10, hs.P25, hs.P50 = f64(e[0]), f64(e[1]), f64(e[2]), f64(e[3]), f64(e[4])
			hs.P75, hs.P90, hs.P95, hs.P99 = f64(e[5]), f64(e[6]), f64(e[7]), f64(e[8])
		}
		out.Stats = hs
		out.Buckets = &buckets{bounds: h.BoundText, counts: h.Buckets}
		for _, sl := range s.Slices {
			avg := sl.Avg
			out.Timeslices = append(out.Timeslices, sliceJSON{StartNs: sl.StartNs, EndNs: sl.EndNs, IsComplete: incomplete(sl),
				Count: &sl.Count, Sum: &sl.Sum, Avg: &avg, Buckets: &buckets{bounds: h.BoundText, counts: sl.Buckets}})
		}
	}
	return out
}

// ServerMetricsCSV renders server_metrics_export.csv: sections for gauge,
// counter, histogram, unknown and info metrics, always all five and in
// that order (an empty one is its header alone), so scripts can take the
// sections by position; blank lines separate them. Each row is one series,
// its labels expanded into columns (the union of the section's label
// names, sorted; see labelHeaders for names that collide).
func ServerMetricsCSV(sm ServerMetrics) ([]byte, error) {
	type section struct {
		name  string
		stats []string
		keep  func(servermetrics.Metric) bool
		row   func(servermetrics.SeriesStats, float64) []string
	}
	num := func(v float64) string {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return ""
		}
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	pct := make([]string, len(stats.PercentileNames))
	est := make([]string, len(stats.PercentileNames))
	for i, n := range stats.PercentileNames {
		pct[i], est[i] = n, n+"_estimate"
	}
	gaugeRow := func(s servermetrics.SeriesStats, _ float64) []string {
		g := s.Gauge
		r := []string{num(g.Avg), num(g.Min), num(g.Max), num(g.Std)}
		for _, p := range g.P {
			r = append(r, num(p))
		}
		return r
	}
	sections := []section{
		{"gauge", append([]string{"avg", "min", "max", "std"}, pct...),
			func(m servermetrics.Metric) bool { return m.Type == scrape.Gauge && !m.Info }, gaugeRow},
		{"counter", []string{"total", "rate", "rate_avg", "rate_min", "rate_max", "rate_std"},
			func(m servermetrics.Metric) bool { return m.Type == scrape.Counter },
			func(s servermetrics.SeriesStats, _ float64) []string {
				c := s.Counter
				r := []string{num(c.Total), num(c.Rate), "", "", "", ""}
				if q := c.SliceRates; q != nil {
					r[2], r[3], r[4], r[5] = num(q.Avg), num(q.Min), num(q.Max), num(q.Std)
				}
				return r
			}},
		{"histogram", append([]string{"count", "sum", "avg", "count_rate", "sum_rate"}, est...),
			func(m servermetrics.Metric) bool { return m.Type == scrape.Histogram },
			func(s servermetrics.SeriesStats, dur float64) []string {
				h := s.Hist
				r := []string{num(h.Count), "", "", "", ""}
				if h.Count > 0 {
					r[1], r[2] = num(h.Sum), num(h.Sum/h.Count)
					if dur > 0 {
						r[3], r[4] = num(h.Count/dur), num(h.Sum/dur)
					}
				}
				for _, e := range h.Estimates {
					if h.Count > 0 {
						r = append(r, num(e))
					} else {
						r = append(r, "")
					}
				}
				return r
			}},
		{"unknown", append([]string{"avg", "min", "max", "std"}, pct...),
			func(m servermetrics.Metric) bool { return m.Type == scrape.Unknown }, gaugeRow},
		{"info", []string{"value"},
			func(m servermetrics.Metric) bool { return m.Info },
			func(s servermetrics.SeriesStats, _ float64) []string { return []string{num(s.Gauge.Last)} }},
	}
	var buf bytes.Buffer
	wrote := false
	for _, sec := range sections {
		var ms []servermetrics.Metric
		labelSet := map[string]bool{}
		for _, m := range sm.Metrics {
			if sec.keep(m) {
				ms = append(ms, m)
				for _, s := range m.Series {
					for _, l := range s.Labels {
						labelSet[l.Name] = true
					}
				}
			}
		}
		labels := make([]string, 0, len(labelSet))
		for l := range labelSet {
			labels = append(labels, l)
		}
		sort.Strings(labels)
		if wrote {
			buf.WriteByte('\n')
		}
		wrote = true
		w := csv.NewWriter(&buf)
		head := []string{"metric_type", "endpoint_url", "metric_name", "unit"}
		head = append(append(head, labelHeaders(head, labels, sec.stats)...), sec.stats...)
		_ = w.Write(head)
		for _, m := range ms {
			for _, s := range m.Series {
				row := []string{sec.name, s.Endpoint, m.Name, m.Unit}
				vals := map[string]string{}
				for _, l := range s.Labels {
					vals[l.Name] = l.Value
				}
				for _, l := range labels {
					row = append(row, vals[l])
				}
				_ = w.Write(append(row, sec.row(s, s.ObservedSeconds)...))
			}
		}
		w.Flush()
		if err := w.Error(); err != nil {
			return nil, fmt.Errorf("write server metrics CSV: %w", err)
		}
	}
	return buf.Bytes(), nil
}

// labelHeaders names the label columns: a label named like a fixed or
// statistic column (unit, avg, total, …) is prefixed with "label_" (again,
// until the name is free), so a header never repeats.
func labelHeaders(fixed, labels, statNames []string) []string {
	taken := map[string]bool{}
	for _, n := range append(append([]string(nil), fixed...), statNames...) {
		taken[n] = true
	}
	out := make([]string, len(labels))
	for i, l := range labels {
		h := l
		for taken[h] {
			h = "label_" + h
		}
		taken[h] = true
		out[i] = h
	}
	return out
}

// ScrapeWriter streams server_metrics_export.jsonl: one line per scrape, all
// scrapes including warm-up, as they arrive.
type ScrapeWriter struct {
	*lineFile
}

// NewScrapeWriter creates dir/name.
func NewScrapeWriter(dir, name string) (*ScrapeWriter, error) {
	lf, err := createLineFile(dir, name, 1<<20)
	if err != nil {
		return nil, err
	}
	return &ScrapeWriter{lineFile: lf}, nil
}

// Write appends one snapshot's line.
func (sw *ScrapeWriter) Write(s *scrape.Snapshot) error {
	b := sw.buf[:0]
	b = append(b, `{"endpoint_url":`...)
	b = appendJSONString(b, s.Endpoint)
	b = append(b, `,"timestamp_ns":`...)
	b = strconv.AppendInt(b, s.TimestampNs(), 10)
	// As the spec's example: request sent to first byte, not the whole fetch.
	b = append(b, `,"endpoint_latency_ns":`...)
	b = strconv.AppendInt(b, s.FirstByteNs-s.RequestSentNs, 10)
	b = append(b, `,"metrics":{`...)
	for i, f := range s.Families {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, f.Name)
		b = append(b, ":["...)
		for j, ser := range f.Series {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, '{')
			if len(ser.Labels) > 0 {
				b = append(b, `"labels":{`...)
				for k, l := range ser.Labels {
					if k > 0 {
						b = append(b, ',')
					}
					b = appendJSONString(b, l.Name)
					b = append(b, ':')
					b = appendJSONString(b, l.Value)
				}
				b = append(b, "},"...)
			}
			if f.Type == scrape.Histogram {
				b = append(b, `"buckets":{`...)
				for k, bk := range ser.Buckets {
					if k > 0 {
						b = append(b, ',')
					}
					b = strconv.AppendQuote(b, bk.LeText())
					b = append(b, ':')
					b = appendFloat(b, bk.Count)
				}
				b = append(b, `},"sum":`...)
				b = appendFloat(b, ser.Sum)
				b = append(b, `,"count":`...)
				b = appendFloat(b, ser.Count)
			} else {
				b = append(b, `"value":`...)
				b = appendFloat(b, ser.Value)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = append(b, `},"request_sent_ns":`...)
	b = strconv.AppendInt(b, s.RequestSentNs, 10)
	b = append(b, `,"first_byte_ns":`...)
	b = strconv.AppendInt(b, s.FirstByteNs, 10)
	b = append(b, "}\n"...)
	return sw.writeLine(b)
}
