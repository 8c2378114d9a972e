// Package scrape fetches Prometheus /metrics endpoints during a run: it
// normalises their URLs, parses the exposition with Prometheus' own text
// parser, rejects non-Prometheus endpoints (with the TensorRT-LLM fallback
// probe), and scrapes every endpoint on its own fixed, drift-free schedule.
package scrape

import (
	"fmt"
	"io"
	"math"
	"strings"
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
	// Labels are sorted by name. A Parser shares them between scrapes:
	// never modify them.
	Labels []Label
	// Key is LabelKey(Labels) when a Parser made the series; empty when
	// built by hand.
	Key string
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

// Parse reads Prometheus text exposition from r with a fresh Parser.
func Parse(r io.Reader) ([]Family, error) {
	body, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read Prometheus exposition: %w", err)
	}
	return NewParser().Parse(body)
}

// skipped reports a family AIPerf leaves out whole: uptimes (a clock, not a
// measure of the load) like _created timestamps.
func skipped(name string) bool {
	return strings.HasSuffix(name, "_uptime") || strings.Contains(name, "_uptime_")
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
