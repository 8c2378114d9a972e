// Package scrape fetches Prometheus /metrics endpoints during a run: it
// normalises their URLs, parses the exposition with Prometheus' own parser,
// rejects non-Prometheus endpoints (with the TensorRT-LLM fallback probe),
// and scrapes every endpoint on its own fixed, drift-free schedule.
package scrape

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Type is a metric family's type as exported.
type Type string

// Family types. Summaries are dropped at parse time: their quantiles cover
// the server's whole lifetime, not the benchmark.
const (
	Gauge     Type = "gauge"
	Counter   Type = "counter"
	Histogram Type = "histogram"
	Unknown   Type = "unknown" // "# TYPE x untyped", or no TYPE line
)

// Label is one label pair.
type Label struct{ Name, Value string }

// Bucket is a histogram bucket: cumulative count of observations <= UpperBound.
type Bucket struct {
	UpperBound float64
	Count      float64
	// Le is the bound as the exposition wrote it ("1.0", "0.005", "+Inf"),
	// kept for the exports; empty when built by hand (FormatBound then).
	Le string
}

// LeText is the bound's exposition text, or its rendering when unknown.
func (b Bucket) LeText() string {
	if b.Le != "" {
		return b.Le
	}
	return FormatBound(b.UpperBound)
}

// Series is one label set's reading in one scrape.
type Series struct {
	// Labels are sorted by name.
	Labels []Label
	// Value is set for gauges, counters and unknown families.
	Value float64
	// Buckets, Sum and Count are set for histograms; Buckets are sorted by
	// bound and end with +Inf.
	Buckets    []Bucket
	Sum, Count float64
}

// Family is one metric family in one scrape.
type Family struct {
	Name   string
	Help   string
	Type   Type
	Series []Series
	// NonFinite counts the samples (gauge, counter, unknown) or label sets
	// (histogram) dropped from this scrape for a NaN or ±Inf value, as
	// AIPerf drops them: legal Prometheus values that no statistic can use.
	NonFinite int
}

// Parse reads Prometheus text exposition from r. Counter family names lose
// their "_total" suffix and "_created" companion series are dropped, as
// Prometheus' Python parser (and so AIPerf) does; summaries and families
// named *_uptime or *_uptime_* are ignored, as AIPerf ignores them.
func Parse(r io.Reader) ([]Family, error) {
	body, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read Prometheus exposition: %w", err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("parse Prometheus exposition: %w", err)
	}
	les := leTexts(body)
	fams := make([]Family, 0, len(mfs))
	for name, mf := range mfs {
		f, ok := convert(name, mf, les[name])
		if ok {
			fams = append(fams, f)
		}
	}
	// Drop "<name>_created" gauges that only carry the creation time of a
	// counter or histogram of the same base name.
	names := make(map[string]Type, len(fams))
	for _, f := range fams {
		names[f.Name] = f.Type
	}
	out := fams[:0]
	for _, f := range fams {
		if base, ok := strings.CutSuffix(f.Name, "_created"); ok && f.Type != Counter && f.Type != Histogram {
			if t, found := names[base]; found && (t == Counter || t == Histogram) {
				continue
			}
		}
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// leTexts finds how the exposition wrote each histogram's bucket bounds:
// for every "<family>_bucket{…le="<text>"…}" line, family → bound → text
// (the first text seen for a bound). expfmt keeps only the float, and
// "1.0" must stay "1.0" in the exports, as AIPerf keeps it.
func leTexts(body []byte) map[string]map[float64]string {
	out := map[string]map[float64]string{}
	for len(body) > 0 {
		line := body
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			line, body = body[:i], body[i+1:]
		} else {
			body = nil
		}
		brace := bytes.IndexByte(line, '{')
		if brace <= 0 || line[0] == '#' {
			continue
		}
		family, ok := bytes.CutSuffix(bytes.TrimSpace(line[:brace]), []byte("_bucket"))
		if !ok {
			continue
		}
		labels := line[brace:]
		at := bytes.Index(labels, []byte(`le="`))
		for at > 0 && labels[at-1] != '{' && labels[at-1] != ',' && labels[at-1] != ' ' {
			next := bytes.Index(labels[at+1:], []byte(`le="`))
			if next < 0 {
				at = -1
				break
			}
			at += 1 + next
		}
		if at < 0 {
			continue
		}
		text := labels[at+len(`le="`):]
		end := bytes.IndexByte(text, '"')
		if end < 0 {
			continue
		}
		text = text[:end]
		bound, err := strconv.ParseFloat(string(text), 64)
		if err != nil {
			continue
		}
		byBound := out[string(family)]
		if byBound == nil {
			byBound = map[float64]string{}
			out[string(family)] = byBound
		}
		if _, seen := byBound[bound]; !seen {
			byBound[bound] = string(text)
		}
	}
	return out
}

// skipped reports a family AIPerf leaves out whole: uptimes (a clock, not a
// measure of the load) like _created timestamps.
func skipped(name string) bool {
	return strings.HasSuffix(name, "_uptime") || strings.Contains(name, "_uptime_")
}

func convert(name string, mf *dto.MetricFamily, les map[float64]string) (Family, bool) {
	if skipped(name) {
		return Family{}, false
	}
	f := Family{Name: name, Help: mf.GetHelp()}
	switch mf.GetType() {
	case dto.MetricType_GAUGE:
		f.Type = Gauge
	case dto.MetricType_COUNTER:
		f.Type = Counter
		f.Name = strings.TrimSuffix(name, "_total")
	case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
		f.Type = Histogram
	case dto.MetricType_UNTYPED:
		f.Type = Unknown
	default: // summaries
		return Family{}, false
	}
	f.Series = make([]Series, 0, len(mf.Metric))
	for _, m := range mf.Metric {
		s := Series{Labels: labels(m.Label)}
		switch f.Type {
		case Gauge:
			s.Value = m.GetGauge().GetValue()
		case Counter:
			s.Value = m.GetCounter().GetValue()
		case Unknown:
			s.Value = m.GetUntyped().GetValue()
		}
		if f.Type != Histogram && !finite(s.Value) {
			f.NonFinite++
			continue
		}
		switch f.Type {
		case Histogram:
			h := m.GetHistogram()
			s.Sum, s.Count = h.GetSampleSum(), float64(h.GetSampleCount())
			if h.SampleCountFloat != nil {
				s.Count = h.GetSampleCountFloat()
			}
			s.Buckets = make([]Bucket, 0, len(h.Bucket)+1)
			for _, b := range h.Bucket {
				c := float64(b.GetCumulativeCount())
				if b.CumulativeCountFloat != nil {
					c = b.GetCumulativeCountFloat()
				}
				s.Buckets = append(s.Buckets, Bucket{UpperBound: b.GetUpperBound(), Count: c, Le: les[b.GetUpperBound()]})
			}
			sort.Slice(s.Buckets, func(i, j int) bool { return s.Buckets[i].UpperBound < s.Buckets[j].UpperBound })
			if n := len(s.Buckets); n == 0 || !math.IsInf(s.Buckets[n-1].UpperBound, 1) {
				s.Buckets = append(s.Buckets, Bucket{UpperBound: math.Inf(1), Count: s.Count, Le: "+Inf"})
			}
			if !histogramFinite(s) {
				f.NonFinite++ // the whole label set, for this scrape
				continue
			}
		}
		f.Series = append(f.Series, s)
	}
	return f, true
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func histogramFinite(s Series) bool {
	if !finite(s.Sum) || !finite(s.Count) {
		return false
	}
	for _, b := range s.Buckets {
		if !finite(b.Count) || math.IsNaN(b.UpperBound) {
			return false
		}
	}
	return true
}

func labels(pairs []*dto.LabelPair) []Label {
	if len(pairs) == 0 {
		return nil
	}
	out := make([]Label, len(pairs))
	for i, p := range pairs {
		out[i] = Label{Name: p.GetName(), Value: p.GetValue()}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// LabelKey renders labels as a stable, unambiguous key (`a="1",b="2"`):
// values are escaped as the exposition format escapes them (\\, \", \n)
// and a name that is not a plain identifier (UTF-8 names are legal) is
// quoted, so two different label sets never share a key, whatever their
// values hold.
func LabelKey(ls []Label) string {
	var b strings.Builder
	for i, l := range ls {
		if i > 0 {
			b.WriteByte(',')
		}
		if plainLabelName(l.Name) {
			b.WriteString(l.Name)
		} else {
			writeEscaped(&b, l.Name)
		}
		b.WriteByte('=')
		writeEscaped(&b, l.Value)
	}
	return b.String()
}

// writeEscaped writes s in double quotes with \, " and newlines escaped.
func writeEscaped(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			b.WriteString(`\\`)
		case '"':
			b.WriteString(`\"`)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
}

// plainLabelName reports a legacy Prometheus label name: [a-zA-Z_][a-zA-Z0-9_]*.
func plainLabelName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9' {
			continue
		}
		return false
	}
	return true
}

// FormatBound renders a bucket bound as exported: "0.005", "1", "+Inf".
func FormatBound(le float64) string {
	if math.IsInf(le, 1) {
		return "+Inf"
	}
	return fmt.Sprint(le)
}
