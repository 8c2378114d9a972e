// Package pngchart draws a chart.Chart as a PNG image with gonum/plot, in
// pure Go: the static plots `llmbench plot --png` writes next to a run,
// named and sized as AIPerf names and sizes its plots.
package pngchart

import (
	"bufio"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/llmbench/llmbench/internal/chart"
)

// The default image size, AIPerf's.
const (
	DefaultWidth  = 1600
	DefaultHeight = 800
)

// maxSide bounds each side so a bad size cannot allocate gigabytes.
const maxSide = 16384

// baseDPI is the resolution at the default size; larger sizes scale it so
// the layout (font sizes relative to the image) stays the same.
const baseDPI = 96

// Render draws c as a PNG of width×height pixels (0,0 = 1600×800) into w.
// A zero width or height takes the default for that side.
func Render(w io.Writer, c chart.Chart, width, height int) error {
	img, err := render(c, width, height)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	enc := png.Encoder{CompressionLevel: png.DefaultCompression}
	if err := enc.Encode(bw, img); err != nil {
		return fmt.Errorf("encode chart %q as PNG: %w", c.ID, err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write chart %q: %w", c.ID, err)
	}
	return nil
}

// WriteFile renders c to dir/<c.ID>.png and returns the path.
func WriteFile(dir string, c chart.Chart, width, height int) (string, error) {
	if c.ID == "" || c.ID != filepath.Base(c.ID) || c.ID == "." || c.ID == ".." {
		return "", fmt.Errorf("write chart %q: the ID must be a plain file name", c.ID)
	}
	path := filepath.Join(dir, c.ID+".png")
	f, err := os.Create(path)
	if err != nil {
		return "", fmt.Errorf("write chart %q: %w", c.ID, err)
	}
	if err := Render(f, c, width, height); err != nil {
		f.Close()
		os.Remove(path)
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("write chart %q: %w", c.ID, err)
	}
	return path, nil
}

// render draws c onto a new image.
func render(c chart.Chart, width, height int) (img image.Image, err error) {
	if width == 0 {
		width = DefaultWidth
	}
	if height == 0 {
		height = DefaultHeight
	}
	if width < 0 || height < 0 || width > maxSide || height > maxSide {
		return nil, fmt.Errorf("render chart %q: size %d×%d: each side must be between 1 and %d pixels", c.ID, width, height, maxSide)
	}
	scale := math.Min(float64(width)/DefaultWidth, float64(height)/DefaultHeight)
	dpi := int(math.Round(baseDPI * scale))
	// Below 72 dpi, text would shrink under 11 pixels: keep it readable
	// and let small images be busier.
	dpi = max(dpi, 72)

	// gonum/plot panics on data it cannot draw (a log axis reaching
	// zero); the filters here keep such data out, and this keeps a case
	// they miss from taking the whole run down.
	defer func() {
		if r := recover(); r != nil {
			img, err = nil, fmt.Errorf("render chart %q: %v", c.ID, r)
		}
	}()
	cv := vgimg.NewWith(vgimg.UseImage(image.NewRGBA(image.Rect(0, 0, width, height))), vgimg.UseDPI(dpi))
	dc := draw.New(cv)
	if err := drawChart(dc, c); err != nil {
		return nil, fmt.Errorf("render chart %q: %w", c.ID, err)
	}
	return cv.Image(), nil
}

// Layout, in points (1/72 inch; at the default size a point is 4/3
// pixels).
const (
	margin     vg.Length = 12
	legendGap  vg.Length = 14
	panelGap   vg.Length = 10
	titleSize  vg.Length = 16
	labelSize  vg.Length = 13
	tickSize   vg.Length = 11
	legendSize vg.Length = 11
	noteSize   vg.Length = 10
	pointSize  vg.Length = 9
)

// maxLegendShare is the largest part of the width the legend may take;
// longer series labels are cut to fit.
const maxLegendShare = 4

// Grey levels of text, notes and axis lines.
const (
	textGray = 0x22
	noteGray = 0x66
	axisGray = 0x88
)

// sans is the font of all text: Liberation Sans, which gonum/plot embeds.
func sans(size vg.Length) font.Font {
	return font.Font{Typeface: "Liberation", Variant: "Sans", Size: size}
}

func textStyle(size vg.Length, gray uint8) text.Style {
	return text.Style{
		Color:   color.Gray{Y: gray},
		Font:    sans(size),
		Handler: plot.DefaultTextHandler,
	}
}

// drawChart lays the chart out on dc: the title on top, the note at the
// bottom, the panels in between and their legends to their right.
func drawChart(dc draw.Canvas, c chart.Chart) error {
	dc = draw.Crop(dc, margin, -margin, margin, -margin)

	if c.Title != "" {
		st := textStyle(titleSize, textGray)
		st.XAlign, st.YAlign = draw.XCenter, draw.YTop
		dc.FillText(st, vg.Point{X: dc.Center().X, Y: dc.Max.Y}, c.Title)
		dc.Max.Y -= st.Height(c.Title) + margin
	}
	if c.Note != "" {
		st := textStyle(noteSize, noteGray)
		st.XAlign, st.YAlign = draw.XLeft, draw.YBottom
		dc.FillText(st, vg.Point{X: dc.Min.X, Y: dc.Min.Y}, c.Note)
		dc.Min.Y += st.Height(c.Note) + margin/2
	}

	panels, err := buildPanels(c, (dc.Max.X-dc.Min.X)/maxLegendShare)
	if err != nil {
		return err
	}
	if len(panels) == 0 {
		st := textStyle(titleSize, noteGray)
		st.XAlign, st.YAlign = draw.XCenter, draw.YCenter
		dc.FillText(st, dc.Center(), "no data")
		return nil
	}

	var legendW vg.Length
	for _, p := range panels {
		if r := p.legend.Rectangle(dc); r.Size().X > legendW {
			legendW = r.Size().X
		}
	}
	if legendW > 0 {
		dc.Max.X -= legendW + legendGap
	}

	canvases := []draw.Canvas{dc}
	if len(panels) == 2 {
		tiles := draw.Tiles{Rows: 2, Cols: 1, PadY: panelGap}
		grid := plot.Align([][]*plot.Plot{{panels[0].plot}, {panels[1].plot}}, tiles, dc)
		canvases = []draw.Canvas{grid[0][0], grid[1][0]}
	}
	for i, p := range panels {
		p.plot.Draw(canvases[i])
		if legendW == 0 {
			continue
		}
		data := p.plot.DataCanvas(canvases[i])
		lc := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: data.Max.X + legendGap, Y: data.Min.Y},
			Max: vg.Point{X: data.Max.X + legendGap + legendW, Y: data.Max.Y},
		}}
		p.legend.Draw(lc)
	}
	return nil
}

// panel is one plot of the chart with the legend of its series.
type panel struct {
	plot   *plot.Plot
	legend plot.Legend
}

// buildPanels makes the chart's panels: one for the series on the left
// axis and, when some series are on Y2, a second one under it sharing
// its X range. gonum/plot has no second y axis, and two scales on one
// frame are easy to misread, so Y2 gets a panel of its own. A panel
// without a point to draw is left out.
//
// legendW bounds the width of the legends.
func buildPanels(c chart.Chart, legendW vg.Length) ([]panel, error) {
	colors := seriesColors(c.Series)
	var left, right []int
	for i, s := range c.Series {
		if s.Right {
			right = append(right, i)
		} else {
			left = append(left, i)
		}
	}
	y2 := c.Y // Right series without a Y2 axis: label them as Y
	if c.Y2 != nil {
		y2 = *c.Y2
	}

	var panels []panel
	for _, g := range []struct {
		y   chart.Axis
		idx []int
	}{{c.Y, left}, {y2, right}} {
		if len(g.idx) == 0 {
			continue
		}
		p, n, err := newPanel(c, g.y, g.idx, colors, legendW)
		if err != nil {
			return nil, err
		}
		if n > 0 {
			panels = append(panels, p)
		}
	}
	if len(panels) == 2 {
		// Share the X range, and leave the X label to the bottom panel.
		top, bottom := &panels[0].plot.X, &panels[1].plot.X
		lo, hi := math.Min(top.Min, bottom.Min), math.Max(top.Max, bottom.Max)
		top.Min, bottom.Min, top.Max, bottom.Max = lo, lo, hi, hi
		top.Label.Text = ""
	}
	for _, p := range panels {
		padRange(&p.plot.X, c.X.Log)
	}
	return panels, nil
}

// newPanel plots the series idx of c against y, and returns the panel
// and how many points it draws.
func newPanel(c chart.Chart, y chart.Axis, idx []int, colors []color.NRGBA, legendW vg.Length) (panel, int, error) {
	p := plot.New()
	p.BackgroundColor = nil // the canvas is white already
	setAxis(&p.X, c.X, 10)
	setAxis(&p.Y, y, 6)

	grid := newGrid()
	p.Add(grid)

	lg := plot.NewLegend()
	lg.TextStyle = textStyle(legendSize, textGray)
	lg.Top, lg.Left = true, true
	lg.Padding = 4
	lg.ThumbnailWidth = 24
	textW := legendW - lg.ThumbnailWidth - lg.TextStyle.Width(" ")

	f := filter{xLog: c.X.Log, yLog: y.Log}
	var bands, lines, marks, labels []plot.Plotter
	n := 0
	for _, i := range idx {
		s := c.Series[i]
		sp, err := seriesPlotters(s, colors[i], f)
		if err != nil {
			return panel{}, 0, fmt.Errorf("series %q: %w", s.Label, err)
		}
		n += sp.points
		bands = append(bands, sp.bands...)
		lines = append(lines, sp.lines...)
		marks = append(marks, sp.marks...)
		labels = append(labels, sp.labels...)
		if s.Label != "" && sp.points > 0 {
			lg.Add(fit(s.Label, lg.TextStyle, textW), sp.thumbs...)
		}
	}
	// Bands under lines under markers under labels, whatever the series
	// order.
	p.Add(bands...)
	p.Add(lines...)
	p.Add(marks...)
	p.Add(labels...)
	if n > 0 {
		padRange(&p.Y, y.Log)
	}
	return panel{plot: p, legend: lg}, n, nil
}

// setAxis styles a, with about ticks labelled ticks, and sets its label
// and scale from ax.
func setAxis(a *plot.Axis, ax chart.Axis, ticks int) {
	a.Label.Text = ax.Label
	a.Label.TextStyle.Font = sans(labelSize)
	a.Label.TextStyle.Color = color.Gray{Y: textGray}
	a.Label.Padding = 6
	a.Tick.Label.Font = sans(tickSize)
	a.Tick.Label.Color = color.Gray{Y: textGray}
	a.Tick.Length = 5
	a.Color = color.Gray{Y: axisGray}
	a.Tick.Color = color.Gray{Y: axisGray}
	a.Tick.Marker = linearTicks{n: ticks}
	if ax.Log {
		a.Scale = plot.LogScale{}
		a.Tick.Marker = logTicks{}
	}
}

// padRange widens a so that data does not touch the frame, and keeps a
// log axis positive.
func padRange(a *plot.Axis, log bool) {
	lo, hi := a.Min, a.Max
	if math.IsInf(lo, 0) || math.IsInf(hi, 0) || math.IsNaN(lo) || math.IsNaN(hi) {
		return
	}
	if log {
		if lo == hi {
			lo, hi = lo/2, hi*2
		}
		f := math.Pow(hi/lo, 0.03)
		a.Min, a.Max = lo/f, hi*f
		return
	}
	if lo == hi {
		d := math.Abs(lo) * 0.1
		if d == 0 {
			d = 1
		}
		lo, hi = lo-d, hi+d
	}
	d := hi*0.03 - lo*0.03 // not (hi-lo)*0.03: that overflows sooner
	if !math.IsInf(lo-d, 0) && !math.IsInf(hi+d, 0) {
		lo, hi = lo-d, hi+d
	}
	a.Min, a.Max = lo, hi
}

// fit cuts s, marking the cut, until it is at most w wide in st.
func fit(s string, st text.Style, w vg.Length) string {
	if st.Width(s) <= w {
		return s
	}
	r := []rune(s)
	// Binary search the longest prefix that fits with its ellipsis.
	lo, hi := 0, len(r)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if st.Width(string(r[:mid])+"…") <= w {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return string(r[:lo]) + "…"
}
