package scrape

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/llmbench/llmbench/internal/scrape/scrapetest"
)

// render prints families in a canonical text: series sorted by label key,
// buckets with their bounds' text; so two readers' results compare as
// strings.
func render(fams []Family) string {
	var b strings.Builder
	for _, f := range fams {
		fmt.Fprintf(&b, "%s %s %q nonfinite=%d\n", f.Name, f.Type, f.Help, f.NonFinite)
		lines := make([]string, 0, len(f.Series))
		for _, s := range f.Series {
			l := "  {" + LabelKey(s.Labels) + "}"
			if f.Type == Histogram {
				l += fmt.Sprintf(" sum=%s count=%s", fmtFloat(s.Sum), fmtFloat(s.Count))
				for _, bk := range s.Buckets {
					l += fmt.Sprintf(" %s:%s", bk.LeText(), fmtFloat(bk.Count))
				}
			} else {
				l += " " + fmtFloat(s.Value)
			}
			lines = append(lines, l)
		}
		sort.Strings(lines)
		for _, l := range lines {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// expfmtFamilies reads body with expfmt, Prometheus' Go client parser, an
// independent reader, into the same families (bounds as floats: expfmt
// does not keep their text).
func expfmtFamilies(t testing.TB, body []byte) ([]Family, error) {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	var fams []Family
	types := map[string]Type{}
	for name, mf := range mfs {
		if skipped(name) {
			continue
		}
		f := Family{Name: name, Help: mf.GetHelp()}
		switch mf.GetType() {
		case dto.MetricType_GAUGE:
			f.Type = Gauge
		case dto.MetricType_COUNTER:
			f.Type, f.Name = Counter, strings.TrimSuffix(name, "_total")
		case dto.MetricType_HISTOGRAM:
			f.Type = Histogram
		case dto.MetricType_UNTYPED:
			f.Type = Unknown
		default:
			continue
		}
		for _, m := range mf.Metric {
			var s Series
			for _, l := range m.Label {
				s.Labels = append(s.Labels, Label{l.GetName(), l.GetValue()})
			}
			sort.Slice(s.Labels, func(i, j int) bool { return s.Labels[i].Name < s.Labels[j].Name })
			switch f.Type {
			case Gauge:
				s.Value = m.GetGauge().GetValue()
			case Counter:
				s.Value = m.GetCounter().GetValue()
			case Unknown:
				s.Value = m.GetUntyped().GetValue()
			case Histogram:
				h := m.GetHistogram()
				s.Sum, s.Count = h.GetSampleSum(), float64(h.GetSampleCount())
				if h.SampleCountFloat != nil {
					s.Count = h.GetSampleCountFloat()
				}
				for _, bk := range h.Bucket {
					c := float64(bk.GetCumulativeCount())
					if bk.CumulativeCountFloat != nil {
						c = bk.GetCumulativeCountFloat()
					}
					s.Buckets = append(s.Buckets, Bucket{UpperBound: bk.GetUpperBound(), Count: c})
				}
				sort.SliceStable(s.Buckets, func(i, j int) bool { return s.Buckets[i].UpperBound < s.Buckets[j].UpperBound })
				if n := len(s.Buckets); n == 0 || !math.IsInf(s.Buckets[n-1].UpperBound, 1) {
					s.Buckets = append(s.Buckets, Bucket{UpperBound: math.Inf(1), Count: s.Count})
				}
				if !histogramFinite(s) {
					f.NonFinite++
					continue
				}
			}
			if f.Type != Histogram && !finite(s.Value) {
				f.NonFinite++
				continue
			}
			f.Series = append(f.Series, s)
		}
		types[f.Name] = f.Type
		fams = append(fams, f)
	}
	kept := fams[:0]
	for _, f := range fams {
		if base, ok := strings.CutSuffix(f.Name, "_created"); ok && f.Type != Counter && f.Type != Histogram {
			if t := types[base]; t == Counter || t == Histogram {
				continue
			}
		}
		kept = append(kept, f)
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].Name < kept[j].Name })
	return kept, nil
}

// withoutLeText forgets the bounds' text, which expfmt does not keep.
func withoutLeText(fams []Family) []Family {
	out := make([]Family, len(fams))
	for i, f := range fams {
		out[i] = f
		out[i].Series = make([]Series, len(f.Series))
		for j, s := range f.Series {
			s.Buckets = slices.Clone(s.Buckets)
			for k := range s.Buckets {
				s.Buckets[k].Le = ""
			}
			out[i].Series[j] = s
		}
	}
	return out
}

// TestParserMatchesExpfmt: on every exposition the tests hold, the parser
// gives what expfmt, an independent reader, gives.
func TestParserMatchesExpfmt(t *testing.T) {
	bodies := map[string][]byte{"BigExposition": scrapetest.BigExposition()}
	files, _ := filepath.Glob("testdata/*.prom")
	more, _ := filepath.Glob("testdata/fixtures/*.prom")
	for _, name := range append(files, more...) {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		bodies[name] = b
	}
	if len(bodies) < 9 {
		t.Fatalf("only %d expositions found", len(bodies))
	}
	for name, body := range bodies {
		want, err := expfmtFamilies(t, body)
		if err != nil {
			t.Fatalf("%s: expfmt: %v", name, err)
		}
		p := NewParser()
		for pass := range 2 { // the second pass takes the repeat path
			got, err := p.Parse(body)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if g, w := render(withoutLeText(got)), render(want); g != w {
				t.Errorf("%s pass %d:\n got %s\nwant %s", name, pass, g, w)
			}
		}
	}
}

// TestParserRepeatPath: a scrape that repeats the last one's series with
// new values, reordered, with new and vanished series, timestamps and
// spellings the repeat path leaves to Prometheus' parser, reads as a fresh
// Parser reads it.
func TestParserRepeatPath(t *testing.T) {
	first := `# TYPE g gauge
g{a="1"} 1
g{a="2"} 2
# TYPE h histogram
h_bucket{le="1"} 1
h_bucket{le="+Inf"} 2
h_sum 3
h_count 2
`
	second := map[string]string{
		"values":     strings.NewReplacer(" 1\n", " 10\n", " 2\n", " 20\n").Replace(first),
		"reordered":  "# TYPE g gauge\ng{a=\"2\"} 5\ng{a=\"1\"} 6\n# TYPE h histogram\nh_sum 3\nh_count 2\nh_bucket{le=\"+Inf\"} 2\nh_bucket{le=\"1\"} 1\n",
		"new series": strings.Replace(first, "g{a=\"2\"} 2\n", "g{a=\"3\"} 7\ng{a=\"2\"} 2\n", 1),
		"vanished":   strings.Replace(first, "g{a=\"1\"} 1\n", "", 1),
		"timestamp":  strings.Replace(first, "g{a=\"1\"} 1\n", "g{a=\"1\"} 4 1700000000000\n", 1),
		"tabs":       strings.Replace(first, "g{a=\"1\"} 1\n", "g{a=\"1\"}\t4\t\n", 1),
		"nan":        strings.Replace(first, "g{a=\"1\"} 1\n", "g{a=\"1\"} NaN\n", 1),
		"hex":        strings.Replace(first, "g{a=\"1\"} 1\n", "g{a=\"1\"} 0x1p3\n", 1),
		"bad value":  strings.Replace(first, "g{a=\"1\"} 1\n", "g{a=\"1\"} 1_0\n", 1),
		"repeat":     strings.Replace(first, "g{a=\"2\"} 2\n", "g{a=\"2\"} 2\ng{a=\"2\"} 9\n", 1),
		"prefix":     strings.Replace(first, "g{a=\"1\"} 1\n", "g{a=\"1\"}x 1\n", 1),
		"no newline": strings.TrimSuffix(first, "\n"),
		"nul":        strings.Replace(first, "g{a=\"2\"} 2\n", "g{a=\"2\"} 2\n\x00", 1),
		"type later": strings.Replace(first, "# TYPE g gauge\n", "", 1) + "# TYPE g counter\n",
	}
	for name, body := range second {
		p := NewParser()
		if _, err := p.Parse([]byte(first)); err != nil {
			t.Fatal(err)
		}
		got, gotErr := p.Parse([]byte(body))
		want, wantErr := NewParser().Parse([]byte(body))
		if (gotErr == nil) != (wantErr == nil) || render(got) != render(want) {
			t.Errorf("%s: after a first scrape got %v %s\nfresh parser: %v %s", name, gotErr, render(got), wantErr, render(want))
		}
	}
	// The values are read, not remembered.
	p := NewParser()
	p.Parse([]byte(first))
	got, _ := p.Parse([]byte(second["values"]))
	if g := render(got); !strings.Contains(g, `{a="1"} 10`) || !strings.Contains(g, "sum=3 count=20") {
		t.Errorf("new values not read:\n%s", g)
	}
}

// TestParserKeepsLeAndQuantileText: Prometheus' parser rewrites le and
// quantile values in its float format ("1" → "1.0") depending on the last
// TYPE line; the values stay as written, in histograms and in other
// families that merely have such a label.
func TestParserKeepsLeAndQuantileText(t *testing.T) {
	body := `# TYPE h histogram
h_bucket{le="1"} 1
h_bucket{le="+Inf"} 2
other{le="1",quantile="0.50"} 3
# TYPE s summary
s{quantile="0.5"} 1
untyped_after_summary{quantile="1"} 4
`
	fams, err := NewParser().Parse([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := `h histogram "" nonfinite=0
  {} sum=0 count=0 1:1 +Inf:2
other unknown "" nonfinite=0
  {le="1",quantile="0.50"} 3
untyped_after_summary unknown "" nonfinite=0
  {quantile="1"} 4
`
	if got := render(fams); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

// TestParserForgetsChurnedLines: an exposition whose label values change
// every scrape does not grow the parser's memory without bound.
func TestParserForgetsChurnedLines(t *testing.T) {
	p := NewParser()
	for scrape := range 50 {
		var b strings.Builder
		for i := range 100 {
			fmt.Fprintf(&b, "requests{id=\"%d-%d\"} %d\n", scrape, i, i)
		}
		fams, err := p.Parse([]byte(b.String()))
		if err != nil {
			t.Fatal(err)
		}
		if len(fams) != 1 || len(fams[0].Series) != 100 {
			t.Fatalf("scrape %d: %d families", scrape, len(fams))
		}
	}
	if n := len(p.lines); n > 2*100+1024 {
		t.Fatalf("%d lines remembered for 100 per scrape", n)
	}
	if n := len(p.sets); n > 2*100+1024 {
		t.Fatalf("%d label sets remembered", n)
	}
}

// FuzzParserRepeat: whatever the previous scrape was, a Parser reads a
// body as a fresh one does, on the repeat path or not.
func FuzzParserRepeat(f *testing.F) {
	small, _ := os.ReadFile("testdata/vllm_small.prom")
	f.Add(string(small), string(small))
	f.Add(string(small), strings.ReplaceAll(string(small), "1500.0", "1501 17"))
	f.Add("a 1\nb{x=\"y\"} 2\n", "a 1\nb{x=\"y\"} 2e3 12\na 4\n")
	f.Add("# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_count 2\nh_sum 1\n", "h_bucket{le=\"1\"} 2\n# TYPE h histogram\nh_count 2\n")
	f.Fuzz(func(t *testing.T, first, second string) {
		p := NewParser()
		_, _ = p.Parse([]byte(first))
		want, wantErr := NewParser().Parse([]byte(second))
		for pass := range 2 {
			got, err := p.Parse([]byte(second))
			if (err == nil) != (wantErr == nil) {
				t.Fatalf("pass %d: error %v, fresh parser's %v", pass, err, wantErr)
			}
			if g, w := render(got), render(want); g != w {
				t.Fatalf("pass %d:\n got %s\nwant %s", pass, g, w)
			}
			if err == nil && !reflect.DeepEqual(withoutLeText(got), withoutLeText(want)) {
				t.Fatalf("pass %d: same rendering, different families", pass)
			}
		}
	})
}
