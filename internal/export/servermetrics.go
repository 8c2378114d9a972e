package export

import (
	"bytes"
	"cmp"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
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

// A statistic that overflowed (a gauge of 1e308 averaged, its squares
// summed) is written null, never NaN: encoding/json refuses NaN and ±Inf,
// and the whole file with them (f64).
type gaugeStatsJSON struct {
	Avg *float64 `json:"avg"`
	Min *float64 `json:"min"`
	Max *float64 `json:"max"`
	Std *float64 `json:"std"`
	P1  *float64 `json:"p1"`
	P5  *float64 `json:"p5"`
	P10 *float64 `json:"p10"`
	P25 *float64 `json:"p25"`
	P50 *float64 `json:"p50"`
	P75 *float64 `json:"p75"`
	P90 *float64 `json:"p90"`
	P95 *float64 `json:"p95"`
	P99 *float64 `json:"p99"`
}

type counterStatsJSON struct {
	Total   *float64 `json:"total"`
	Rate    *float64 `json:"rate"`
	RateAvg *float64 `json:"rate_avg,omitempty"`
	RateMin *float64 `json:"rate_min,omitempty"`
	RateMax *float64 `json:"rate_max,omitempty"`
	RateStd *float64 `json:"rate_std,omitempty"`
}

type histStatsJSON struct {
	Count     *float64 `json:"count"`
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
		out = AppendJSONNumber(out, b.counts[i])
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
		out.Stats = gaugeStatsJSON{Avg: f64(g.Avg), Min: f64(g.Min), Max: f64(g.Max), Std: f64(g.Std),
			P1: f64(g.P[0]), P5: f64(g.P[1]), P10: f64(g.P[2]), P25: f64(g.P[3]), P50: f64(g.P[4]),
			P75: f64(g.P[5]), P90: f64(g.P[6]), P95: f64(g.P[7]), P99: f64(g.P[8])}
		for _, sl := range s.Slices {
			out.Timeslices = append(out.Timeslices, sliceJSON{StartNs: sl.StartNs, EndNs: sl.EndNs, IsComplete: incomplete(sl),
				Avg: f64(sl.Avg), Min: f64(sl.Min), Max: f64(sl.Max)})
		}
	case s.Counter != nil:
		c := s.Counter
		cs := counterStatsJSON{Total: f64(c.Total), Rate: f64(c.Rate)}
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
		hs := histStatsJSON{Count: f64(h.Count)}
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
			out.Timeslices = append(out.Timeslices, sliceJSON{StartNs: sl.StartNs, EndNs: sl.EndNs, IsComplete: incomplete(sl),
				Count: f64(sl.Count), Sum: f64(sl.Sum), Avg: f64(sl.Avg), Buckets: &buckets{bounds: h.BoundText, counts: sl.Buckets}})
		}
	}
	return out
}

// ServerMetricsCSV renders server_metrics_export.csv in AIPerf's layout
// (its ServerMetricsCsvExporter): sections gauge, counter, histogram,
// unknown and info, in that order, an empty one left out, one blank line
// between them. Each metric section's header is
// Endpoint,Type,Metric,Unit,<statistics>,<label columns>,Description (and
// buckets for histograms): Endpoint is host:port (the URL without its
// scheme and /metrics), one row per series, floats with 4 decimals,
// counts as integers, a value that does not exist an empty cell (never
// NaN). Statistics: gauge and unknown avg,min,max,std,p1…p99; counter
// total,rate,rate_avg,rate_min,rate_max,rate_std (the rate_* with time
// slices); histogram count,count_rate,sum,sum_rate,avg,p1_estimate…
// p99_estimate, buckets as le=count pairs joined by ";". The info section
// is transposed: Endpoint,Metric,Key,Value,Description, one row per label
// of each _info metric. Where llmbench differs: no "# AIPerf …" comment
// block above the first section and "\n" line endings, so that the
// documented split on blank lines reads every section with pandas; label
// columns sorted by name; rows by metric, endpoint and labels.
func ServerMetricsCSV(sm ServerMetrics) ([]byte, error) {
	type section struct {
		typ   string
		stats []string
		keep  func(servermetrics.Metric) bool
		row   func(servermetrics.SeriesStats) []string
	}
	pct := make([]string, len(stats.PercentileNames))
	est := make([]string, len(stats.PercentileNames))
	for i, n := range stats.PercentileNames {
		pct[i], est[i] = n, n+"_estimate"
	}
	gaugeRow := func(s servermetrics.SeriesStats) []string {
		g := s.Gauge
		r := []string{csv4(g.Avg), csv4(g.Min), csv4(g.Max), csv4(g.Std)}
		for _, p := range g.P {
			r = append(r, csv4(p))
		}
		return r
	}
	sections := []section{
		{"gauge", append([]string{"avg", "min", "max", "std"}, pct...),
			func(m servermetrics.Metric) bool { return m.Type == scrape.Gauge && !m.Info }, gaugeRow},
		{"counter", []string{"total", "rate", "rate_avg", "rate_min", "rate_max", "rate_std"},
			func(m servermetrics.Metric) bool { return m.Type == scrape.Counter && !m.Info },
			func(s servermetrics.SeriesStats) []string {
				c := s.Counter
				r := []string{csv4(c.Total), csv4(c.Rate), "", "", "", ""}
				if q := c.SliceRates; q != nil {
					r[2], r[3], r[4], r[5] = csv4(q.Avg), csv4(q.Min), csv4(q.Max), csv4(q.Std)
				}
				return r
			}},
		{"histogram", append([]string{"count", "count_rate", "sum", "sum_rate", "avg"}, est...),
			func(m servermetrics.Metric) bool { return m.Type == scrape.Histogram && !m.Info },
			func(s servermetrics.SeriesStats) []string {
				h, dur := s.Hist, s.ObservedSeconds
				r := []string{csvCount(h.Count), "", "", "", ""}
				if h.Count > 0 {
					r[2], r[4] = csv4(h.Sum), csv4(h.Sum/h.Count)
					if dur > 0 {
						r[1], r[3] = csv4(h.Count/dur), csv4(h.Sum/dur)
					}
				}
				for _, e := range h.Estimates {
					if h.Count > 0 {
						r = append(r, csv4(e))
					} else {
						r = append(r, "")
					}
				}
				return r
			}},
		{"unknown", append([]string{"avg", "min", "max", "std"}, pct...),
			func(m servermetrics.Metric) bool { return m.Type == scrape.Unknown && !m.Info }, gaugeRow},
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	separate := func() {
		w.Flush()
		if buf.Len() > 0 {
			buf.WriteByte('\n')
		}
	}
	for _, sec := range sections {
		type row struct {
			m servermetrics.Metric
			s servermetrics.SeriesStats
		}
		var rows []row
		labelSet := map[string]bool{}
		for _, m := range sm.Metrics {
			if !sec.keep(m) {
				continue
			}
			for _, s := range m.Series {
				rows = append(rows, row{m, s})
				for _, l := range s.Labels {
					labelSet[l.Name] = true
				}
			}
		}
		if len(rows) == 0 {
			continue // AIPerf leaves an empty section out
		}
		slices.SortStableFunc(rows, func(a, b row) int {
			return cmp.Or(strings.Compare(a.m.Name, b.m.Name), strings.Compare(a.s.Endpoint, b.s.Endpoint),
				strings.Compare(scrape.LabelKey(a.s.Labels), scrape.LabelKey(b.s.Labels)))
		})
		labels := make([]string, 0, len(labelSet))
		for l := range labelSet {
			labels = append(labels, l)
		}
		sort.Strings(labels)
		fixed := []string{"Endpoint", "Type", "Metric", "Unit"}
		tail := []string{"Description"}
		if sec.typ == "histogram" {
			tail = append(tail, "buckets")
		}
		separate()
		head := append(append([]string(nil), fixed...), sec.stats...)
		head = append(append(head, labelHeaders(append(fixed, tail...), labels, sec.stats)...), tail...)
		_ = w.Write(head)
		for _, r := range rows {
			line := append([]string{csvEndpoint(r.s.Endpoint), sec.typ, r.m.Name, r.m.Unit}, sec.row(r.s)...)
			vals := map[string]string{}
			for _, l := range r.s.Labels {
				vals[l.Name] = l.Value
			}
			for _, l := range labels {
				line = append(line, vals[l])
			}
			line = append(line, r.m.Description)
			if h := r.s.Hist; sec.typ == "histogram" && h != nil {
				pairs := make([]string, len(h.Buckets))
				for i, c := range h.Buckets {
					pairs[i] = h.BoundText[i] + "=" + csvCount(c)
				}
				line = append(line, strings.Join(pairs, ";"))
			}
			_ = w.Write(line)
		}
	}
	// The info section, transposed: one row per label of each _info metric.
	type infoRow struct{ endpoint, metric, key, value, desc string }
	var info []infoRow
	for _, m := range sm.Metrics {
		if !m.Info {
			continue
		}
		for _, s := range m.Series {
			for _, l := range s.Labels {
				info = append(info, infoRow{csvEndpoint(s.Endpoint), m.Name, l.Name, l.Value, m.Description})
			}
		}
	}
	if len(info) > 0 {
		slices.SortStableFunc(info, func(a, b infoRow) int {
			return cmp.Or(strings.Compare(a.metric, b.metric), strings.Compare(a.endpoint, b.endpoint), strings.Compare(a.key, b.key))
		})
		separate()
		_ = w.Write([]string{"Endpoint", "Metric", "Key", "Value", "Description"})
		for _, r := range info {
			_ = w.Write([]string{r.endpoint, r.metric, r.key, r.value, r.desc})
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return nil, fmt.Errorf("write server metrics CSV: %w", err)
	}
	return buf.Bytes(), nil
}

// csv4 formats a statistic as AIPerf's server-metrics CSV does: four
// decimals; no value (NaN, ±Inf) an empty cell.
func csv4(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	return strconv.FormatFloat(v, 'f', 4, 64)
}

// csvCount writes a count as an integer, as AIPerf writes Python ints.
func csvCount(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
		return strconv.FormatInt(int64(v), 10)
	}
	return csv4(v)
}

// csvEndpoint is an endpoint as AIPerf's CSV names it: the URL without its
// scheme and a trailing /metrics (http://localhost:8000/metrics →
// localhost:8000); another path stays.
func csvEndpoint(u string) string {
	if _, rest, ok := strings.Cut(u, "://"); ok {
		u = rest
	}
	return strings.TrimSuffix(u, "/metrics")
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
					b = AppendJSONNumber(b, bk.Count)
				}
				b = append(b, `},"sum":`...)
				b = AppendJSONNumber(b, ser.Sum)
				b = append(b, `,"count":`...)
				b = AppendJSONNumber(b, ser.Count)
			} else {
				b = append(b, `"value":`...)
				b = AppendJSONNumber(b, ser.Value)
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
