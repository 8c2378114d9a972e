// Package chart is the model of one chart of a report: its axes and its
// series of points, lines and confidence bands, independent of how it is
// drawn (uPlot in report.html, gonum/plot in PNGs). It also owns the few
// transformations charts need: thinning a scatter without moving its
// percentiles, an empirical CDF, and the Pareto frontier.
package chart

import "math"

// Style says how a series is drawn.
type Style string

// The styles.
const (
	// Points draws a marker per point and no line (a scatter).
	Points Style = "points"
	// Line joins the points in X order; a NaN Y breaks the line.
	Line Style = "line"
	// Dashed is a line drawn dashed: reference lines (p50, p99).
	Dashed Style = "dashed"
	// Step joins the points as a staircase: Y[i] holds over [X[i],
	// X[i+1]) (per-slice rates, gauges between scrapes); the last point
	// only ends the previous step.
	Step Style = "step"
	// LinePoints is a line with a marker on every point: a sweep's cells.
	LinePoints Style = "linepoints"
)

// Axis is one axis of a chart.
type Axis struct {
	Label string `json:"label"`
	// Log draws the axis on a logarithmic scale.
	Log bool `json:"log,omitempty"`
	// Range, when set, is the axis' fixed [min, max] (0–100 for a share
	// in %); nil fits the data.
	Range []float64 `json:"range,omitempty"`
}

// Chart is one chart: a title, its axes and its series.
type Chart struct {
	// ID names the chart: the HTML element's id and, for PNGs, the file's
	// base name (AIPerf's plot name where AIPerf draws the same chart).
	ID    string `json:"id"`
	Title string `json:"title"`
	X     Axis   `json:"x"`
	Y     Axis   `json:"y"`
	// Y2 is the right-hand axis of the series with Right set, if any.
	Y2     *Axis    `json:"y2,omitempty"`
	Series []Series `json:"series"`
	// Note is a sentence under the chart (what was thinned, what is
	// missing).
	Note string `json:"note,omitempty"`
}

// Series is one set of points of a chart.
type Series struct {
	Label string `json:"label"`
	Style Style  `json:"style"`
	// X and Y have the same length. A NaN Y is no value (a gap).
	X []float64 `json:"x"`
	Y []float64 `json:"y"`
	// Low and High, when set, have Y's length: a band around Y (a
	// confidence interval) drawn shaded.
	Low  []float64 `json:"low,omitempty"`
	High []float64 `json:"high,omitempty"`
	// Right puts the series on the chart's Y2 axis.
	Right bool `json:"right,omitempty"`
	// PointLabels, when set, has X's length: a label per point (a sweep
	// cell's concurrency), shown beside the point and on hover.
	PointLabels []string `json:"pointLabels,omitempty"`
	// Color is a colour as #rrggbb; empty takes the palette's colour of
	// the series' position.
	Color string `json:"color,omitempty"`
}

// Points counts the series' points with a finite value.
func (c *Chart) Points() int {
	n := 0
	for _, s := range c.Series {
		for _, y := range s.Y {
			if !math.IsNaN(y) && !math.IsInf(y, 0) {
				n++
			}
		}
	}
	return n
}

// Empty says whether no series has a value to draw.
func (c *Chart) Empty() bool { return c.Points() == 0 }
