package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/internal/browsertest"
	"github.com/llmbench/llmbench/internal/chart"
)

// TestHostileTextStaysText: names that come from outside (a server's
// metric labels, a model name, an error message) are shown as text, in
// tables and charts alike: nothing they hold runs or loads.
func TestHostileTextStaysText(t *testing.T) {
	evil := `<img src=x onerror="console.error('ran')"></script><script>console.error('ran2')</script>`
	p := &Page{Title: "t " + evil, Kind: "Single run", Generator: "test", Facts: []Fact{{"Model", evil}}, Warnings: []string{evil},
		Sections: []Section{{ID: "s", Title: evil, Intro: evil,
			Tables: []Table{{ID: "tab", Header: []string{"h", evil}, Rows: [][]Cell{{{Text: "row"}, {Text: evil, ID: "cell"}}}}},
			Charts: []chart.Chart{{ID: "c", Title: evil, X: chart.Axis{Label: evil}, Y: chart.Axis{Label: evil},
				Series: []chart.Series{{Label: evil, Style: chart.LinePoints, X: []float64{1, 2}, Y: []float64{3, 4}, PointLabels: []string{evil, "b"}}}}},
			Pre: evil,
		}}}
	dir := t.TempDir()
	path, err := Write(dir, p)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, FileName))
	if strings.Contains(string(b), "<img src=x") {
		t.Error("the HTML holds the label's markup unescaped")
	}
	page := browsertest.Open(t, path, browsertest.Options{Ready: "window.reportReady === true"})
	if errs := page.ConsoleErrors(); len(errs) > 0 {
		t.Errorf("console errors (a label ran?): %q", errs)
	}
	if reqs := page.Requests(); len(reqs) > 0 {
		t.Errorf("requests (a label loaded something?): %q", reqs)
	}
	if got, err := page.Text("#cell"); err != nil || got != evil {
		t.Errorf("the cell shows %q (%v), want the label as text", got, err)
	}
	var legend string
	if err := page.Eval(`document.querySelector("#chart-c .u-legend").textContent`, &legend); err != nil || !strings.Contains(legend, "<img src=x") {
		t.Errorf("the legend shows %q (%v), want the label as text", legend, err)
	}
}
