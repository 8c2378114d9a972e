package search

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/llmbench/llmbench/internal/sla"
)

// The recipes' post-process files (b2), written under the sweep aggregate
// directory. Each function takes the values the orchestrator read from
// per_combination_metrics (block "mean" of the flat key tag_stat, else of
// the bare tag) and returns the file's bytes.

// Point is one swept value X with its metric Y.
type Point struct{ X, Y float64 }

// leaf is the last segment of a dotted path.
func leaf(path string) string { return path[strings.LastIndexByte(path, '.')+1:] }

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// KneeParams configure degradation_knee.json; zero values take the
// concurrency-ramp defaults.
type KneeParams struct {
	SweptParam string  // phases.profiling.concurrency
	Metric     string  // request_latency
	Stat       string  // p99
	Threshold  float64 // 0.20 (--degradation-threshold)
}

// DegradationKnee writes degradation_knee.json: the baseline is the metric
// at the lowest swept value (it must be finite and positive); the knee is
// the first later point whose metric is strictly above
// baseline × (1 + threshold), null when none is.
func DegradationKnee(p KneeParams, points []Point) ([]byte, error) {
	p.SweptParam = cmp.Or(p.SweptParam, PathConcurrency)
	p.Metric = cmp.Or(p.Metric, "request_latency")
	p.Stat = cmp.Or(p.Stat, "p99")
	p.Threshold = cmp.Or(p.Threshold, 0.20)
	if len(points) == 0 {
		return nil, fmt.Errorf("degradation knee: no cell has %s and %s %s: check that the sweep ran", p.SweptParam, p.Metric, p.Stat)
	}
	pts := slices.Clone(points)
	slices.SortStableFunc(pts, func(a, b Point) int { return cmp.Compare(a.X, b.X) })
	base := pts[0]
	if !finite(base.Y) || base.Y <= 0 {
		return nil, fmt.Errorf("degradation knee: the baseline %s %s at %s %g is %g: it must be a positive number (did the lowest-load cell fail?)", p.Metric, p.Stat, leaf(p.SweptParam), base.X, base.Y)
	}
	cutoff := base.Y * (1 + p.Threshold)
	var kneeX, kneeY any
	for _, pt := range pts[1:] {
		if pt.Y > cutoff {
			kneeX, kneeY = pt.X, pt.Y
			break
		}
	}
	name := leaf(p.SweptParam)
	all := make([]any, len(pts))
	for i, pt := range pts {
		all[i] = obj{}.with(name, pt.X).with(p.Stat, pt.Y)
	}
	return encode(obj{}.
		with("baseline_"+name, base.X).
		with("baseline_"+p.Stat, base.Y).
		with("knee_"+name, kneeX).
		with("knee_"+p.Stat, kneeY).
		with("threshold_pct", p.Threshold).
		with("swept_metric", p.Metric).
		with("stat", p.Stat).
		with("swept_param", p.SweptParam).
		with("all_points", all)), nil
}

// BreachRow is one cell of a grid judged by SLA filters.
type BreachRow struct {
	Value float64
	// Observed holds each filter's value, in filter order; NaN: missing.
	Observed []float64
}

// SLABreach writes sla_breach.json (max-concurrency-under-sla's grid
// style). Rows are sorted by swept value; rows of the same value merge,
// feasible only if all are, their breaches concatenated.
//
// Key order follows the spec's table (b2), which lists swept_param last;
// AIPerf's code writes it first.
func SLABreach(sweptParam string, filters []sla.Filter, rows []BreachRow) ([]byte, error) {
	sweptParam = cmp.Or(sweptParam, PathConcurrency)
	name := leaf(sweptParam)
	type point struct {
		x        float64
		feasible bool
		breaches []any
	}
	sorted := slices.Clone(rows)
	slices.SortStableFunc(sorted, func(a, b BreachRow) int { return cmp.Compare(a.Value, b.Value) })
	var pts []*point
	for _, r := range sorted {
		if len(r.Observed) != len(filters) {
			return nil, fmt.Errorf("sla breach: the cell at %s %g has %d values for %d filters", name, r.Value, len(r.Observed), len(filters))
		}
		var bs []any
		for i, f := range filters {
			if !f.Holds(r.Observed[i]) {
				bs = append(bs, BreachOf(f, r.Observed[i]))
			}
		}
		if n := len(pts); n > 0 && pts[n-1].x == r.Value {
			pts[n-1].feasible = pts[n-1].feasible && len(bs) == 0
			pts[n-1].breaches = append(pts[n-1].breaches, bs...)
			continue
		}
		pts = append(pts, &point{x: r.Value, feasible: len(bs) == 0, breaches: bs})
	}
	var maxPass, firstFail, firstBreach any
	seenFail, monotonic := false, true
	all := make([]any, len(pts))
	for i, pt := range pts {
		if pt.feasible {
			maxPass = pt.x
			monotonic = monotonic && !seenFail
		} else if !seenFail {
			seenFail = true
			firstFail, firstBreach = pt.x, pt.breaches[0]
		}
		all[i] = obj{}.with(name, pt.x).with("feasible", pt.feasible).with("breaches", append([]any{}, pt.breaches...))
	}
	return encode(obj{}.
		with("max_passing_"+name, maxPass).
		with("first_failing_"+name, firstFail).
		with("first_failing_breach", firstBreach).
		with("all_points", all).
		with("monotonicity_check", monotonic).
		with("filters", filtersJSON(filters)).
		with("swept_param", sweptParam)), nil
}

// CurveParams configure prefill_curve.json; zero values take the
// prefill-ttft-curve defaults.
type CurveParams struct {
	SweptParam string  // datasets.main.prompts.isl
	Metric     string  // time_to_first_token
	Stat       string  // avg
	R2Floor    float64 // 0.85
}

// PrefillCurve writes prefill_curve.json: the least-squares line
// TTFT = a·ISL + b, or the quadratic when the line's r² is below the
// floor, there are 3 points or more and the quadratic's r² is higher.
// Non-finite points are left out of the fit (kept in raw_points); fewer
// than 2 finite points give the below_floor sentinel with error_reason.
func PrefillCurve(p CurveParams, points []Point) ([]byte, error) {
	p.SweptParam = cmp.Or(p.SweptParam, PathISL)
	p.Metric = cmp.Or(p.Metric, "time_to_first_token")
	p.Stat = cmp.Or(p.Stat, "avg")
	p.R2Floor = cmp.Or(p.R2Floor, 0.85)
	if len(points) < 2 {
		return nil, fmt.Errorf("prefill curve: %d cell(s) have %s %s: a curve needs 2 or more (widen --isl-min/--isl-max or add --isl-steps)", len(points), p.Metric, p.Stat)
	}
	pts := slices.Clone(points)
	slices.SortStableFunc(pts, func(a, b Point) int { return cmp.Compare(a.X, b.X) })
	raw := make([]any, len(pts))
	var xs, ys []float64
	for i, pt := range pts {
		raw[i] = obj{}.with("isl", pt.X).with("ttft_ms", pt.Y)
		if finite(pt.X) && finite(pt.Y) {
			xs, ys = append(xs, pt.X), append(ys, pt.Y)
		}
	}
	tail := func(o obj) obj {
		return o.with("raw_points", raw).with("swept_metric", p.Metric).with("stat", p.Stat).with("swept_param", p.SweptParam)
	}
	if len(xs) < 2 {
		return encode(tail(obj{}.
			with("fit_form", "linear").
			with("coefficients", []any{}).
			with("r_squared", 0.0).
			with("below_floor", true).
			with("r_squared_floor", p.R2Floor).
			with("error_reason", fmt.Sprintf("prefill curve: fewer than 2 finite points once non-finite values are left out (%d of %d): check that the swept cells had successful requests", len(xs), len(pts))))), nil
	}
	form, coeffs := "linear", polyfit(xs, ys, 1)
	r2 := rSquared(xs, ys, coeffs)
	if r2 < p.R2Floor && len(xs) >= 3 {
		if q := polyfit(xs, ys, 2); rSquared(xs, ys, q) > r2 {
			form, coeffs, r2 = "quadratic", q, rSquared(xs, ys, q)
		}
	}
	below := math.IsNaN(r2) || r2 < p.R2Floor || slices.ContainsFunc(coeffs, func(c float64) bool { return !finite(c) })
	return encode(tail(obj{}.
		with("fit_form", form).
		with("coefficients", coeffs).
		with("r_squared", r2).
		with("below_floor", below).
		with("r_squared_floor", p.R2Floor))), nil
}

// polyfit is the least-squares polynomial of degree 1 or 2, coefficients
// highest degree first (numpy.polyfit's order). x is centred and scaled
// before solving, so ISLs in the tens of thousands stay well conditioned;
// a singular fit (every x equal) gives NaN coefficients.
func polyfit(xs, ys []float64, deg int) []float64 {
	n := float64(len(xs))
	var mx float64
	for _, x := range xs {
		mx += x / n
	}
	var sx float64
	for _, x := range xs {
		sx += (x - mx) * (x - mx)
	}
	sx = math.Sqrt(sx / n)
	out := make([]float64, deg+1)
	if sx == 0 {
		for i := range out {
			out[i] = math.NaN()
		}
		return out
	}
	// Normal equations in t = (x − mx)/sx: A[i][j] = Σ t^(i+j), b[i] = Σ t^i y.
	k := deg + 1
	a := make([][]float64, k)
	for i := range a {
		a[i] = make([]float64, k+1)
	}
	for j, x := range xs {
		t := (x - mx) / sx
		pw := make([]float64, 2*k-1)
		pw[0] = 1
		for e := 1; e < len(pw); e++ {
			pw[e] = pw[e-1] * t
		}
		for r := range k {
			for c := range k {
				a[r][c] += pw[r+c]
			}
			a[r][k] += pw[r] * ys[j]
		}
	}
	c := solve(a) // c[i] multiplies t^i
	if c == nil {
		for i := range out {
			out[i] = math.NaN()
		}
		return out
	}
	// Back to x: t = (x − mx)/sx.
	if deg == 1 {
		slope := c[1] / sx
		return []float64{slope, c[0] - slope*mx}
	}
	a2 := c[2] / (sx * sx)
	b1 := c[1] / sx
	return []float64{a2, b1 - 2*a2*mx, a2*mx*mx - b1*mx + c[0]}
}

// solve runs Gaussian elimination with partial pivoting on the augmented
// matrix a (k × k+1); nil when it is singular.
func solve(a [][]float64) []float64 {
	k := len(a)
	for col := range k {
		piv := col
		for r := col + 1; r < k; r++ {
			if math.Abs(a[r][col]) > math.Abs(a[piv][col]) {
				piv = r
			}
		}
		if math.Abs(a[piv][col]) < 1e-12 {
			return nil
		}
		a[col], a[piv] = a[piv], a[col]
		for r := col + 1; r < k; r++ {
			f := a[r][col] / a[col][col]
			for c := col; c <= k; c++ {
				a[r][c] -= f * a[col][c]
			}
		}
	}
	x := make([]float64, k)
	for r := k - 1; r >= 0; r-- {
		s := a[r][k]
		for c := r + 1; c < k; c++ {
			s -= a[r][c] * x[c]
		}
		x[r] = s / a[r][r]
	}
	return x
}

// rSquared is 1 − SS_res/SS_tot of the fit, 0 when y is constant.
func rSquared(xs, ys, coeffs []float64) float64 {
	var my float64
	for _, y := range ys {
		my += y / float64(len(ys))
	}
	var res, tot float64
	for i, x := range xs {
		var fit float64
		for _, c := range coeffs {
			fit = fit*x + c
		}
		res += (ys[i] - fit) * (ys[i] - fit)
		tot += (ys[i] - my) * (ys[i] - my)
	}
	if tot == 0 {
		return 0
	}
	return 1 - res/tot
}

// SurfacePoint is one decode-itl-curve cell.
type SurfacePoint struct{ Concurrency, OSL, ITL float64 }

// SurfaceParams configure decode_itl_surface.json; zero values take the
// decode-itl-curve defaults.
type SurfaceParams struct {
	ConcurrencyParam string // phases.profiling.concurrency
	OSLParam         string // datasets.main.prompts.osl
	Metric           string // inter_token_latency
	Stat             string // avg
}

// DecodeITLSurface writes decode_itl_surface.json: the measured grid
// itl_grid[concurrency][osl] over the distinct measured axes, null where
// a cell was not measured (no interpolation). Non-finite or negative ITLs
// are left out; fewer than 2 rows left give an empty surface with
// surface_fit_failed and error_reason.
func DecodeITLSurface(p SurfaceParams, points []SurfacePoint) ([]byte, error) {
	p.ConcurrencyParam = cmp.Or(p.ConcurrencyParam, PathConcurrency)
	p.OSLParam = cmp.Or(p.OSLParam, PathOSL)
	p.Metric = cmp.Or(p.Metric, "inter_token_latency")
	p.Stat = cmp.Or(p.Stat, "avg")
	if len(points) == 0 {
		return nil, fmt.Errorf("decode ITL surface: no cell has %s, %s and %s %s: check that both axes were swept with streaming on", p.ConcurrencyParam, p.OSLParam, p.Metric, p.Stat)
	}
	var rows []SurfacePoint
	nonFinite, negative := 0, 0
	for _, pt := range points {
		switch {
		case !finite(pt.ITL):
			nonFinite++
		case pt.ITL < 0:
			negative++
		default:
			rows = append(rows, pt)
		}
	}
	slices.SortStableFunc(rows, func(a, b SurfacePoint) int {
		return cmp.Or(cmp.Compare(a.Concurrency, b.Concurrency), cmp.Compare(a.OSL, b.OSL))
	})
	raw := make([]any, len(rows))
	for i, r := range rows {
		raw[i] = obj{}.with("concurrency", r.Concurrency).with("osl", r.OSL).with("itl_ms", r.ITL)
	}
	head := obj{}.with("swept_metric", p.Metric).with("stat", p.Stat).
		with("swept_params", []string{p.ConcurrencyParam, p.OSLParam}).with("raw_points", raw)
	if len(rows) < 2 {
		return encode(head.
			with("surface", obj{}.with("concurrency_axis", []any{}).with("osl_axis", []any{}).with("itl_grid", []any{})).
			with("surface_fit_failed", true).
			with("error_reason", fmt.Sprintf("decode ITL surface: fewer than 2 usable rows (kept %d; left out %d non-finite and %d negative): check that streaming was on and the cells had successful requests", len(rows), nonFinite, negative))), nil
	}
	var cAxis, oAxis []float64
	cell := map[[2]float64]float64{}
	for _, r := range rows {
		cAxis, oAxis = append(cAxis, r.Concurrency), append(oAxis, r.OSL)
		cell[[2]float64{r.Concurrency, r.OSL}] = r.ITL // a repeated cell: the last wins
	}
	slices.Sort(cAxis)
	slices.Sort(oAxis)
	cAxis, oAxis = slices.Compact(cAxis), slices.Compact(oAxis)
	grid := make([]any, len(cAxis))
	for i, c := range cAxis {
		row := make([]any, len(oAxis))
		for j, o := range oAxis {
			if v, ok := cell[[2]float64{c, o}]; ok {
				row[j] = v
			}
		}
		grid[i] = row
	}
	return encode(head.
		with("surface", obj{}.with("concurrency_axis", cAxis).with("osl_axis", oAxis).with("itl_grid", grid)).
		with("surface_fit_failed", false)), nil
}

// ParetoCell is one pareto-sweep cell: its shape and load, X its latency
// (lower is better) and Y its throughput (higher is better).
type ParetoCell struct {
	ISL, OSL, Concurrency int
	X, Y                  float64
}

// ParetoParams name pareto_sweep.json's axes; zero values take
// time_to_first_token p95 against output_token_throughput avg.
type ParetoParams struct{ XMetric, XStat, YMetric, YStat string }

// ParetoSweep writes pareto_sweep.json: every cell in input order, each
// marked pareto_optimal when no other cell has x ≤ and y ≥ with one of
// them strict, over all shapes. A cell with a non-finite value is kept
// but never optimal.
func ParetoSweep(p ParetoParams, cells []ParetoCell) ([]byte, error) {
	p.XMetric = cmp.Or(p.XMetric, "time_to_first_token")
	p.XStat = cmp.Or(p.XStat, "p95")
	p.YMetric = cmp.Or(p.YMetric, "output_token_throughput")
	p.YStat = cmp.Or(p.YStat, "avg")
	if len(cells) == 0 {
		return nil, errors.New("pareto sweep: no cell has isl, osl, concurrency and both axes' metrics: check that the recipe ran with streaming on")
	}
	ok := func(c ParetoCell) bool { return finite(c.X) && finite(c.Y) }
	out := make([]any, len(cells))
	for i, c := range cells {
		optimal := ok(c)
		for j, d := range cells {
			if !optimal {
				break
			}
			if i != j && ok(d) && d.X <= c.X && d.Y >= c.Y && (d.X < c.X || d.Y > c.Y) {
				optimal = false
			}
		}
		out[i] = obj{}.with("isl", c.ISL).with("osl", c.OSL).with("concurrency", c.Concurrency).
			with("x", c.X).with("y", c.Y).with("pareto_optimal", optimal)
	}
	return encode(obj{}.
		with("x_metric", p.XMetric).with("x_stat", p.XStat).
		with("y_metric", p.YMetric).with("y_stat", p.YStat).
		with("cells", out)), nil
}
