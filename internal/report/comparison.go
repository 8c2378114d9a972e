package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/llmbench/llmbench/internal/artifacts"
	"github.com/llmbench/llmbench/internal/compare"
)

// CompareFileName is the comparison report's name, beside compare.json.
const CompareFileName = "compare.html"

// Comparison is the page of `llmbench compare`: what was compared and how,
// the gates, every metric's change with its interval and verdict, and the
// two sides' distributions overlaid. base and nw are the sides' runs (for
// the distributions; either may be empty).
func Comparison(res *compare.Result, base, nw []*artifacts.Run, generator string) *Page {
	p := &Page{Kind: "Comparison", Generator: generator,
		Title: fmt.Sprintf("%s against %s", res.Inputs.New.Path, res.Inputs.Base.Path)}
	side := func(in compare.Input) string {
		if in.Layout == "multi_run" {
			return fmt.Sprintf("%s (%d runs, %d requests)", in.Path, in.Runs, in.Requests)
		}
		return fmt.Sprintf("%s (%d requests)", in.Path, in.Requests)
	}
	s := res.Summary
	p.Facts = []Fact{
		{"Base", side(res.Inputs.Base)},
		{"New", side(res.Inputs.New)},
		{"Method", res.Inputs.Method},
		{"Confidence", fmt.Sprintf("%g %%", 100*res.Inputs.Level)},
		{"Verdicts", fmt.Sprintf("%d improved, %d regressed, %d no significant change, %d not tested", s.Improved, s.Regressed, s.NoSignificantChange, s.NotTested)},
	}
	if s.Gates > 0 {
		p.Facts = append(p.Facts, Fact{"Gates", fmt.Sprintf("%d of %d failed", s.GatesFailed, s.Gates)})
	}
	for _, g := range res.Gates {
		if !g.Passed {
			p.Warnings = append(p.Warnings, fmt.Sprintf("Gate %s %s: %s", g.Expr, g.Status, g.Reason))
		}
	}
	if len(res.Gates) > 0 {
		t := Table{ID: "gates", Header: []string{"Gate", "Status", "Reason"}}
		for _, g := range res.Gates {
			class := "good"
			if !g.Passed {
				class = "bad"
			}
			t.Rows = append(t.Rows, []Cell{{Text: g.Expr}, {Text: g.Status, Class: class}, {Text: g.Reason, Class: "text"}})
		}
		p.Sections = append(p.Sections, Section{ID: "gates", Title: "Gates", Tables: []Table{t}})
	}
	t := Table{ID: "changes", Header: []string{"Metric", "Stat", "Base", "New", "Change", fmt.Sprintf("%g %% interval", 100*res.Inputs.Level), "Verdict", "Method"}}
	for _, e := range res.Metrics {
		class := ""
		switch e.Verdict {
		case compare.Regressed:
			class = "bad"
		case compare.Improved:
			class = "good"
		}
		unit := ""
		if e.Unit != "" {
			unit = " (" + e.Unit + ")"
		}
		t.Rows = append(t.Rows, []Cell{
			{Text: e.Tag + unit}, {Text: e.Stat},
			{Text: number(float64(e.Base), true)}, {Text: number(float64(e.New), true)},
			{Text: relChange(float64(e.ChangeRel)), ID: "change-" + e.Tag + "-" + e.Stat},
			{Text: interval(float64(e.CIRelLow), float64(e.CIRelHigh))},
			{Text: strings.ReplaceAll(e.Verdict, "_", " "), Class: class, ID: "verdict-" + e.Tag + "-" + e.Stat},
			{Text: strings.TrimSpace(e.Method + " " + e.Note), Class: "text"},
		})
	}
	p.Sections = append(p.Sections, Section{ID: "changes", Title: "Every metric's change",
		Intro:  "The change from base to new with its confidence interval; a verdict of improved or regressed when the interval excludes no change.",
		Tables: []Table{t}})
	views := func(runs []*artifacts.Run) []*runView {
		out := make([]*runView, len(runs))
		for i, r := range runs {
			out[i] = newRunView(r)
		}
		return out
	}
	groups := []cdfGroup{{"base", "#7f7f7f", views(base)}, {"new", "#2ca02c", views(nw)}}
	if sec, ok := overlaidCDFSection(groups, latencyMetrics, "compare_", "The share of successful requests at or below each value, every run of a side pooled."); ok {
		p.Sections = append(p.Sections, sec)
	}
	if len(res.Notes) > 0 {
		p.Sections = append(p.Sections, Section{ID: "notes", Title: "Notes", Pre: strings.Join(res.Notes, "\n")})
	}
	return p
}

func relChange(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "–"
	}
	return fmt.Sprintf("%+.2f %%", 100*f)
}

func interval(lo, hi float64) string {
	if math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return "–"
	}
	return fmt.Sprintf("[%+.2f %%, %+.2f %%]", 100*lo, 100*hi)
}
