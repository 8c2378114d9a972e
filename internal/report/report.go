// Package report turns a run's artifact folder (or several: a multi-run,
// a sweep, a search, a comparison) into report.html: one self-contained
// page that opens offline from disk, makes no network request, reads
// without JavaScript (its tables are plain HTML) and draws its charts with
// uPlot, embedded. The pages are built from the files, not from a run's
// memory, so `llmbench plot` regenerates exactly what a run wrote, and
// draws AIPerf's own folders too.
package report

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"github.com/llmbench/llmbench/internal/chart"
)

// FileName is the report's name in an artifact folder.
const FileName = "report.html"

// Page is one report.
type Page struct {
	// Title heads the page; Kind says what it reports (Single run,
	// Multi-run, Sweep, Search, Comparison).
	Title, Kind string
	// Facts are the headline's what, when and against what.
	Facts []Fact
	// Warnings are shown at the top, in a box.
	Warnings []string
	Sections []Section
	// Generator names the program and version that wrote the page.
	Generator string
}

// Fact is one line of the headline.
type Fact struct{ Name, Value string }

// Section is one part of the page, with an entry in its contents.
type Section struct {
	ID, Title string
	// Intro is a paragraph under the title.
	Intro  string
	Tables []Table
	Charts []chart.Chart
	// Pre is preformatted text at the end (the configuration).
	Pre string
}

// Table is an HTML table; it reads without JavaScript.
type Table struct {
	ID, Caption string
	Header      []string
	Rows        [][]Cell
}

// Cell is one table cell. ID, when set, names it for tests and links;
// Class styles it (good, bad, num).
type Cell struct {
	Text, ID, Class string
}

// Charts lists every chart of the page.
func (p *Page) Charts() []chart.Chart {
	var out []chart.Chart
	for _, s := range p.Sections {
		out = append(out, s.Charts...)
	}
	return out
}

var (
	//go:embed assets/uPlot.iife.min.js
	uplotJS string
	//go:embed assets/uPlot.min.css
	uplotCSS string
	//go:embed assets/report.js
	reportJS string
	//go:embed assets/report.css
	reportCSS string
	//go:embed assets/page.html
	pageHTML string
)

// page is the template; parsing it cannot fail at run time for a
// template that parsed in the tests.
func page() (*template.Template, error) {
	return template.New("page").Parse(pageHTML)
}

// Render writes the page as one HTML document.
func Render(p *Page) ([]byte, error) {
	t, err := page()
	if err != nil {
		return nil, fmt.Errorf("report template: %w", err)
	}
	data, err := chartsJSON(p.Charts())
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	err = t.Execute(&b, struct {
		*Page
		CSS       template.CSS
		UPlot     template.JS
		Script    template.JS
		ChartData template.JS
	}{p, template.CSS(uplotCSS + "\n" + reportCSS), template.JS(uplotJS), template.JS(reportJS), template.JS(data)})
	if err != nil {
		return nil, fmt.Errorf("render report: %w", err)
	}
	return b.Bytes(), nil
}

// Write renders the page to dir/report.html and returns the path.
func Write(dir string, p *Page) (string, error) { return WriteAs(dir, FileName, p) }

// WriteAs renders the page to dir/name and returns the path.
func WriteAs(dir, name string, p *Page) (string, error) {
	b, err := Render(p)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return "", fmt.Errorf("write report: %w", err)
	}
	return path, nil
}

// chartsJSON is the charts' data for the page's script: JSON whose
// numbers have 7 significant digits (enough for any axis, and a third of
// the size of full precision), NaN and infinities as null, and no '<'
// (so it cannot end the script element).
func chartsJSON(charts []chart.Chart) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, c := range charts {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := writeChart(&b, c); err != nil {
			return nil, fmt.Errorf("chart %s: %w", c.ID, err)
		}
	}
	b.WriteByte(']')
	return b.Bytes(), nil
}

func writeChart(b *bytes.Buffer, c chart.Chart) error {
	fmt.Fprintf(b, `{"id":%s,"title":%s,"x":%s,"y":%s`, jsonString(c.ID), jsonString(c.Title), axisJSON(c.X), axisJSON(c.Y))
	if c.Y2 != nil {
		fmt.Fprintf(b, `,"y2":%s`, axisJSON(*c.Y2))
	}
	b.WriteString(`,"series":[`)
	for i, s := range c.Series {
		if len(s.Y) != len(s.X) || s.Low != nil && len(s.Low) != len(s.X) || s.High != nil && len(s.High) != len(s.X) ||
			s.PointLabels != nil && len(s.PointLabels) != len(s.X) {
			return fmt.Errorf("series %q: its columns have different lengths", s.Label)
		}
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(b, `{"label":%s,"style":%s,"right":%t,"color":%s,"x":`, jsonString(s.Label), jsonString(string(s.Style)), s.Right, jsonString(s.Color))
		numbers(b, s.X)
		b.WriteString(`,"y":`)
		numbers(b, s.Y)
		if s.Low != nil {
			b.WriteString(`,"low":`)
			numbers(b, s.Low)
			b.WriteString(`,"high":`)
			numbers(b, s.High)
		}
		if s.PointLabels != nil {
			b.WriteString(`,"pointLabels":[`)
			for k, l := range s.PointLabels {
				if k > 0 {
					b.WriteByte(',')
				}
				b.WriteString(jsonString(l))
			}
			b.WriteByte(']')
		}
		b.WriteByte('}')
	}
	b.WriteString("]}")
	return nil
}

func axisJSON(a chart.Axis) string {
	rng := "null"
	if len(a.Range) == 2 {
		var b bytes.Buffer
		numbers(&b, a.Range)
		rng = b.String()
	}
	return fmt.Sprintf(`{"label":%s,"log":%t,"range":%s}`, jsonString(a.Label), a.Log, rng)
}

func numbers(b *bytes.Buffer, xs []float64) {
	b.WriteByte('[')
	for i, x := range xs {
		if i > 0 {
			b.WriteByte(',')
		}
		if math.IsNaN(x) || math.IsInf(x, 0) {
			b.WriteString("null")
			continue
		}
		b.Write(strconv.AppendFloat(nil, x, 'g', 7, 64))
	}
	b.WriteByte(']')
}

// jsonString quotes s as a JSON string with <, > and & escaped.
func jsonString(s string) string {
	var b bytes.Buffer
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == '<' || r == '>' || r == '&' || r == 0x2028 || r == 0x2029:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
