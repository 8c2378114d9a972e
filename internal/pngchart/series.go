package pngchart

import (
	"fmt"
	"image/color"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/llmbench/llmbench/internal/chart"
)

// Series drawing, in points.
const (
	lineWidth    vg.Length = 1.5
	scatterR     vg.Length = 2
	markerR      vg.Length = 3
	dashOn       vg.Length = 6
	dashOff      vg.Length = 4
	gridWidth    vg.Length = 0.75
	gridGray               = 0xe5
	labelOffsetX vg.Length = 4
	labelOffsetY vg.Length = 3
)

// bandAlpha is the opacity of a confidence band's fill.
const bandAlpha = 0x40

// paletteColor is the i-th colour of matplotlib's tab10, the colours
// AIPerf's plots cycle through.
func paletteColor(i int) color.NRGBA {
	palette := [...]color.NRGBA{
		{0x1f, 0x77, 0xb4, 0xff},
		{0xff, 0x7f, 0x0e, 0xff},
		{0x2c, 0xa0, 0x2c, 0xff},
		{0xd6, 0x27, 0x28, 0xff},
		{0x94, 0x67, 0xbd, 0xff},
		{0x8c, 0x56, 0x4b, 0xff},
		{0xe3, 0x77, 0xc2, 0xff},
		{0x7f, 0x7f, 0x7f, 0xff},
		{0xbc, 0xbd, 0x22, 0xff},
		{0x17, 0xbe, 0xcf, 0xff},
	}
	return palette[i%len(palette)]
}

// seriesColors gives each series its colour: its own when it names one
// this package can read, else the palette's next one.
func seriesColors(ss []chart.Series) []color.NRGBA {
	out := make([]color.NRGBA, len(ss))
	next := 0
	for i, s := range ss {
		if c, ok := parseColor(s.Color); ok {
			out[i] = c
			continue
		}
		out[i] = paletteColor(next)
		next++
	}
	return out
}

// parseColor reads a CSS hex colour: #rgb, #rrggbb or #rrggbbaa.
func parseColor(s string) (color.NRGBA, bool) {
	if len(s) < 4 || s[0] != '#' {
		return color.NRGBA{}, false
	}
	h := s[1:]
	if len(h) == 3 {
		h = string([]byte{h[0], h[0], h[1], h[1], h[2], h[2]})
	}
	if len(h) == 6 {
		h += "ff"
	}
	if len(h) != 8 {
		return color.NRGBA{}, false
	}
	v, err := strconv.ParseUint(h, 16, 32)
	if err != nil {
		return color.NRGBA{}, false
	}
	return color.NRGBA{R: uint8(v >> 24), G: uint8(v >> 16), B: uint8(v >> 8), A: uint8(v)}, true
}

// filter says which points a pair of axes can draw: finite ones, and
// positive ones on a log axis.
type filter struct{ xLog, yLog bool }

func (f filter) ok(x, y float64) bool {
	return !math.IsNaN(x) && !math.IsInf(x, 0) && !math.IsNaN(y) && !math.IsInf(y, 0) &&
		(!f.xLog || x > 0) && (!f.yLog || y > 0)
}

// parts are the plotters of one series, by layer.
type parts struct {
	bands, lines, marks, labels []plot.Plotter
	thumbs                      []plot.Thumbnailer
	// points counts the points drawn.
	points int
}

// seriesPlotters makes the plotters drawing s in col. Points f rejects
// are gaps. An unknown style is drawn as a line.
func seriesPlotters(s chart.Series, col color.NRGBA, f filter) (parts, error) {
	n := len(s.X)
	if len(s.Y) != n {
		return parts{}, fmt.Errorf("%d X values but %d Y values", n, len(s.Y))
	}
	hasBand := s.Low != nil || s.High != nil
	if hasBand && (len(s.Low) != n || len(s.High) != n) {
		return parts{}, fmt.Errorf("%d points but %d Low and %d High values", n, len(s.Low), len(s.High))
	}
	if s.PointLabels != nil && len(s.PointLabels) != n {
		return parts{}, fmt.Errorf("%d points but %d point labels", n, len(s.PointLabels))
	}

	var p parts
	if hasBand {
		fill := color.NRGBA{R: col.R, G: col.G, B: col.B, A: uint8(uint16(col.A) * bandAlpha / 0xff)}
		for _, poly := range bandPolygons(s, f) {
			poly.Color = fill
			p.bands = append(p.bands, poly)
		}
		p.thumbs = append(p.thumbs, &plotter.Polygon{Color: fill})
	}

	switch s.Style {
	case chart.Points:
		sc := &plotter.Scatter{XYs: validXYs(s.X, s.Y, f), GlyphStyle: glyph(col, scatterR)}
		p.points = len(sc.XYs)
		if p.points > 0 {
			p.marks = append(p.marks, sc)
		}
		p.thumbs = append(p.thumbs, sc)
	default:
		ls := draw.LineStyle{Color: col, Width: lineWidth}
		if s.Style == chart.Dashed {
			ls.Dashes = []vg.Length{dashOn, dashOff}
		}
		step := plotter.NoStep
		if s.Style == chart.Step {
			// The value at X[i] holds until X[i+1].
			step = plotter.PostStep
		}
		markers := s.Style == chart.LinePoints
		var lone plotter.XYs
		for _, seg := range segments(s.X, s.Y, f) {
			p.points += len(seg)
			if len(seg) == 1 {
				lone = append(lone, seg[0])
				continue
			}
			p.lines = append(p.lines, &plotter.Line{XYs: seg, StepStyle: step, LineStyle: ls})
		}
		thumb := &plotter.Line{LineStyle: ls}
		p.thumbs = append(p.thumbs, thumb)
		if markers {
			sc := &plotter.Scatter{XYs: validXYs(s.X, s.Y, f), GlyphStyle: glyph(col, markerR)}
			if len(sc.XYs) > 0 {
				p.marks = append(p.marks, sc)
			}
			p.thumbs = append(p.thumbs, sc)
		} else if len(lone) > 0 {
			// A point between two gaps has no line to be part of: show
			// it as a dot rather than not at all.
			p.marks = append(p.marks, &plotter.Scatter{XYs: lone, GlyphStyle: glyph(col, lineWidth)})
		}
	}

	if s.PointLabels != nil {
		if l := pointLabels(s, f); l != nil {
			p.labels = append(p.labels, l)
		}
	}
	return p, nil
}

func glyph(col color.Color, r vg.Length) draw.GlyphStyle {
	return draw.GlyphStyle{Color: col, Radius: r, Shape: draw.CircleGlyph{}}
}

// validXYs are the points of x, y that f accepts.
func validXYs(x, y []float64, f filter) plotter.XYs {
	out := make(plotter.XYs, 0, len(x))
	for i := range x {
		if f.ok(x[i], y[i]) {
			out = append(out, plotter.XY{X: x[i], Y: y[i]})
		}
	}
	return out
}

// segments splits x, y at the points f rejects: the runs a line joins.
func segments(x, y []float64, f filter) []plotter.XYs {
	var out []plotter.XYs
	start := -1
	for i := 0; i <= len(x); i++ {
		if i < len(x) && f.ok(x[i], y[i]) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			seg := make(plotter.XYs, i-start)
			for j := range seg {
				seg[j] = plotter.XY{X: x[start+j], Y: y[start+j]}
			}
			out = append(out, seg)
			start = -1
		}
	}
	return out
}

// bandPolygons outlines the band between s.Low and s.High, one polygon
// per run of points where both bounds are drawable. A step series gets a
// stepped band.
func bandPolygons(s chart.Series, f filter) []*plotter.Polygon {
	var out []*plotter.Polygon
	ok := func(i int) bool { return f.ok(s.X[i], s.Low[i]) && f.ok(s.X[i], s.High[i]) }
	start := -1
	for i := 0; i <= len(s.X); i++ {
		if i < len(s.X) && ok(i) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 && i-start >= 2 {
			x, lo, hi := s.X[start:i], s.Low[start:i], s.High[start:i]
			if s.Style == chart.Step {
				x, lo, hi = stairs(x, lo, hi)
			}
			ring := make(plotter.XYs, 0, 2*len(x))
			for j := range x {
				ring = append(ring, plotter.XY{X: x[j], Y: hi[j]})
			}
			for j := len(x) - 1; j >= 0; j-- {
				ring = append(ring, plotter.XY{X: x[j], Y: lo[j]})
			}
			out = append(out, &plotter.Polygon{XYs: []plotter.XYs{ring}})
		}
		start = -1
	}
	return out
}

// stairs turns the runs into post-step staircases: each value holds
// until the next X.
func stairs(x, lo, hi []float64) (sx, slo, shi []float64) {
	m := 2*len(x) - 1
	sx, slo, shi = make([]float64, 0, m), make([]float64, 0, m), make([]float64, 0, m)
	for i := range x {
		if i > 0 {
			sx, slo, shi = append(sx, x[i]), append(slo, lo[i-1]), append(shi, hi[i-1])
		}
		sx, slo, shi = append(sx, x[i]), append(slo, lo[i]), append(shi, hi[i])
	}
	return sx, slo, shi
}

// pointLabels draws s.PointLabels beside their points, or returns nil
// when none is drawable.
func pointLabels(s chart.Series, f filter) *plotter.Labels {
	st := textStyle(pointSize, noteGray)
	st.XAlign, st.YAlign = text.XLeft, text.YBottom
	l := &plotter.Labels{Offset: vg.Point{X: labelOffsetX, Y: labelOffsetY}}
	for i, lab := range s.PointLabels {
		if lab == "" || !f.ok(s.X[i], s.Y[i]) {
			continue
		}
		l.XYs = append(l.XYs, plotter.XY{X: s.X[i], Y: s.Y[i]})
		l.Labels = append(l.Labels, lab)
		l.TextStyle = append(l.TextStyle, st)
	}
	if len(l.Labels) == 0 {
		return nil
	}
	return l
}

func newGrid() *plotter.Grid {
	ls := draw.LineStyle{Color: color.Gray{Y: gridGray}, Width: gridWidth}
	return &plotter.Grid{Vertical: ls, Horizontal: ls}
}

// logTicks marks a log axis. plot.LogTicks labels powers of ten only,
// which leaves an axis spanning less than a decade without a number, and
// crowds one spanning many: this labels 1-2-5 steps (or linear ticks) on
// the first and every few decades on the second.
type logTicks struct{}

// maxLogLabels bounds the labelled ticks of a log axis.
const maxLogLabels = 8

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi > lo) || math.IsInf(hi, 0) {
		return nil
	}
	ticks := plot.LogTicks{Prec: -1}.Ticks(lo, hi)
	in := func(v float64) bool { return v >= lo && v <= hi }
	labelled := 0
	for _, t := range ticks {
		if t.Label != "" && in(t.Value) {
			labelled++
		}
	}
	switch {
	case labelled < 2:
		for _, keep := range []func(m int) bool{
			func(m int) bool { return m == 1 || m == 2 || m == 5 },
			func(int) bool { return true },
		} {
			labelled = 0
			for i := range ticks {
				v := ticks[i].Value
				ticks[i].Label = ""
				if keep(mantissa(v)) {
					ticks[i].Label = strconv.FormatFloat(v, 'g', -1, 64)
					if in(v) {
						labelled++
					}
				}
			}
			if labelled >= 2 {
				return ticks
			}
		}
		// Too narrow for any of those: the scale is close to linear.
		return linearTicks{n: 5}.Ticks(lo, hi)
	case labelled > maxLogLabels:
		every := (labelled + maxLogLabels - 1) / maxLogLabels
		k := 0
		for i := range ticks {
			if ticks[i].Label == "" {
				continue
			}
			if k%every != 0 {
				ticks[i].Label = ""
			}
			k++
		}
	}
	return ticks
}

// mantissa is the leading digit of v, a digit times a power of ten.
func mantissa(v float64) int {
	e := math.Floor(math.Log10(v) + 1e-9)
	return int(math.Round(v / math.Pow(10, e)))
}

// linearTicks marks a linear axis with about n labelled ticks at 1-2-5
// steps, labelled with no more decimals than the step needs (gonum's
// default gives three or four ticks with fixed decimals: "1250.00").
type linearTicks struct{ n int }

func (t linearTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(lo, 0) || math.IsInf(hi, 0) || t.n < 1 {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	step, minors := niceStep((hi - lo) / float64(t.n))
	format := tickFormat(math.Max(math.Abs(lo), math.Abs(hi)), step)
	minor := step / float64(minors)
	first, last := math.Ceil(lo/minor), math.Floor(hi/minor)
	if !(last-first <= 10000) || math.IsInf(first, 0) || math.IsInf(last, 0) { // never loop forever
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	ticks := make([]plot.Tick, 0, int(last-first)+1)
	for k := first; k <= last; k++ {
		tk := plot.Tick{Value: k * minor}
		if math.Mod(k, float64(minors)) == 0 {
			tk.Label = format(tk.Value)
		}
		ticks = append(ticks, tk)
	}
	return ticks
}

// niceStep rounds raw to 1, 2 or 5 times a power of ten, and says in how
// many minor steps to divide it.
func niceStep(raw float64) (step float64, minors int) {
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	switch f := raw / p; {
	case f < 1.5:
		return p, 5
	case f < 3:
		return 2 * p, 4
	case f < 7:
		return 5 * p, 5
	default:
		return 10 * p, 5
	}
}

// tickFormat formats the labels of an axis reaching maxAbs at step:
// millions and billions with a suffix, tiny values in e-notation, others
// with the decimals step needs.
func tickFormat(maxAbs, step float64) func(float64) string {
	decimals := func(step float64) int { return max(0, -int(math.Floor(math.Log10(step)+1e-9))) }
	switch {
	case maxAbs >= 1e9:
		return func(v float64) string { return trimZero(strconv.FormatFloat(v/1e9, 'f', decimals(step/1e9), 64)) + "G" }
	case maxAbs >= 1e6:
		return func(v float64) string { return trimZero(strconv.FormatFloat(v/1e6, 'f', decimals(step/1e6), 64)) + "M" }
	case maxAbs < 1e-3:
		return func(v float64) string {
			if v == 0 {
				return "0"
			}
			return strconv.FormatFloat(v, 'e', 1, 64)
		}
	}
	d := decimals(step)
	return func(v float64) string { return trimZero(strconv.FormatFloat(v, 'f', d, 64)) }
}

// trimZero turns "-0" (a tick at zero reached from below) into "0".
func trimZero(s string) string {
	if s == "-0" || strings.Trim(s, "-0.") == "" {
		return "0"
	}
	return s
}
