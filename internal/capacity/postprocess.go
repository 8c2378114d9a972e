package capacity

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/llmbench/llmbench/internal/export"
	"github.com/llmbench/llmbench/internal/search"
	"github.com/llmbench/llmbench/internal/sweep"
)

// cellValue is a cell's statistic: the mean over its successful trials
// of each trial's own statistic (the percentile asked for, where AIPerf's
// post-processing of a single-trial sweep reads the run's average).
func cellValue(oc sweep.CellOutcome, tag, stat string) float64 {
	xs := make([]float64, len(oc.Runs))
	for i, rs := range oc.Runs {
		xs[i] = statOf(rs, tag, stat)
	}
	return mean(xs)
}

// paramOf is a cell's value of a swept path (or a scenario's name for it).
func paramOf(c sweep.Cell, path string) (float64, bool) {
	for _, a := range c.Assign {
		if a.Path == path {
			return a.Value.F, true
		}
	}
	return 0, false
}

// postProcess writes the recipe's answer file in the sweep aggregate
// directory and says what it found.
func postProcess(rr *recipeRun, res *sweepResult) (file, answer string, err error) {
	se := rr.profile.Search
	var data []byte
	name := rr.recipe.OutputFor(rr.style)
	switch rr.recipe.Name {
	case "concurrency-ramp":
		var pts []search.Point
		for _, oc := range res.outcomes {
			if x, ok := paramOf(oc.Cell, search.PathConcurrency); ok && len(oc.Runs) > 0 {
				pts = append(pts, search.Point{X: x, Y: cellValue(oc, se.DegradationMetric, se.DegradationStat)})
			}
		}
		kp := search.KneeParams{Metric: se.DegradationMetric, Stat: se.DegradationStat, Threshold: se.DegradationThreshold}
		if data, err = search.DegradationKnee(kp, pts); err == nil {
			answer = kneeAnswer(kp, data)
		}
	case "max-concurrency-under-sla": // --search-style grid
		var rows []search.BreachRow
		for _, oc := range res.outcomes {
			x, ok := paramOf(oc.Cell, search.PathConcurrency)
			if !ok {
				continue
			}
			row := search.BreachRow{Value: x}
			for _, f := range rr.sla.Filters {
				row.Observed = append(row.Observed, cellValue(oc, f.Tag, f.Stat))
			}
			rows = append(rows, row)
		}
		if data, err = search.SLABreach(search.PathConcurrency, rr.sla.Filters, rows); err == nil {
			answer = breachAnswer(rr, data)
		}
	case "prefill-ttft-curve":
		var pts []search.Point
		for _, oc := range res.outcomes {
			if x, ok := paramOf(oc.Cell, search.PathISL+".mean"); ok && len(oc.Runs) > 0 {
				pts = append(pts, search.Point{X: x, Y: cellValue(oc, "time_to_first_token", "avg")})
			}
		}
		if data, err = search.PrefillCurve(search.CurveParams{}, pts); err == nil {
			answer = curveAnswer(data)
		}
	case "decode-itl-curve":
		var pts []search.SurfacePoint
		for _, oc := range res.outcomes {
			c, ok1 := paramOf(oc.Cell, search.PathConcurrency)
			o, ok2 := paramOf(oc.Cell, search.PathOSL+".mean")
			if ok1 && ok2 && len(oc.Runs) > 0 {
				pts = append(pts, search.SurfacePoint{Concurrency: c, OSL: o, ITL: cellValue(oc, "inter_token_latency", "avg")})
			}
		}
		if data, err = search.DecodeITLSurface(search.SurfaceParams{}, pts); err == nil {
			answer = surfaceAnswer(pts)
		}
	case "pareto-sweep":
		var cells []search.ParetoCell
		for _, oc := range res.outcomes {
			isl, _ := paramOf(oc.Cell, "isl")
			osl, _ := paramOf(oc.Cell, "osl")
			c, _ := paramOf(oc.Cell, "concurrency")
			if len(oc.Runs) == 0 {
				continue
			}
			cells = append(cells, search.ParetoCell{ISL: int(isl), OSL: int(osl), Concurrency: int(c),
				X: cellValue(oc, "time_to_first_token", "p95"), Y: cellValue(oc, "output_token_throughput", "avg")})
		}
		if data, err = search.ParetoSweep(search.ParetoParams{}, cells); err == nil {
			answer = paretoAnswer(data)
		}
	default:
		return "", "", nil
	}
	if err != nil {
		// The sweep's own aggregates stand; the recipe's reading of them
		// failed, and says why where AIPerf puts it.
		msg, _ := json.MarshalIndent(map[string]any{"recipe": rr.recipe.Name, "output": name, "error": err.Error()}, "", "  ")
		_ = export.WriteFile(res.dir, "post_process_errors.json", append(msg, '\n'))
		return filepath.Join(res.dir, "post_process_errors.json"), "", fmt.Errorf("recipe %s: %w", rr.recipe.Name, err)
	}
	if err := export.WriteFile(res.dir, name, data); err != nil {
		return "", answer, err
	}
	return filepath.Join(res.dir, name), answer, nil
}

// kneeAnswer reads degradation_knee.json back into one sentence.
func kneeAnswer(kp search.KneeParams, data []byte) string {
	var k map[string]any
	_ = json.Unmarshal(data, &k)
	stat := kp.Stat
	base := fmt.Sprintf("%s %s at concurrency %v is %s", kp.Metric, stat, k["baseline_concurrency"], jsonNum(k["baseline_"+stat]))
	if k["knee_concurrency"] == nil {
		return fmt.Sprintf("Degradation knee: none; %s and stays within +%g %% at every concurrency measured.\n", base, kp.Threshold*100)
	}
	return fmt.Sprintf("Degradation knee: concurrency %v, where %s %s reaches %s (more than +%g %% over the baseline: %s).\n",
		k["knee_concurrency"], kp.Metric, stat, jsonNum(k["knee_"+stat]), kp.Threshold*100, base)
}

// breachAnswer reads sla_breach.json back into one sentence.
func breachAnswer(rr *recipeRun, data []byte) string {
	var k map[string]any
	_ = json.Unmarshal(data, &k)
	names := make([]string, len(rr.sla.Filters))
	for i, f := range rr.sla.Filters {
		names[i] = describeFilter(f)
	}
	s := fmt.Sprintf("Grid of concurrencies with %s: highest passing %v, first failing %v", strings.Join(names, " and "), orNone(k["max_passing_concurrency"]), orNone(k["first_failing_concurrency"]))
	if m, _ := k["monotonicity_check"].(bool); !m {
		s += " (not monotonic: a passing value follows a failing one)"
	}
	return s + ".\n"
}

// curveAnswer reads prefill_curve.json back into one sentence.
func curveAnswer(data []byte) string {
	var k struct {
		Form   string    `json:"fit_form"`
		Coef   []float64 `json:"coefficients"`
		R2     float64   `json:"r_squared"`
		Below  bool      `json:"below_floor"`
		Reason string    `json:"error_reason"`
	}
	_ = json.Unmarshal(data, &k)
	if k.Reason != "" {
		return "Prefill curve: " + k.Reason + "\n"
	}
	terms := make([]string, len(k.Coef))
	for i, c := range k.Coef {
		switch deg := len(k.Coef) - 1 - i; deg {
		case 0:
			terms[i] = fmt.Sprintf("%.4g", c)
		case 1:
			terms[i] = fmt.Sprintf("%.4g·ISL", c)
		default:
			terms[i] = fmt.Sprintf("%.4g·ISL^%d", c, deg)
		}
	}
	s := fmt.Sprintf("Prefill curve (%s): TTFT ≈ %s ms, r² = %.3f", k.Form, strings.Join(terms, " + "), k.R2)
	if k.Below {
		s += " (below the r² floor: the fit explains the data poorly)"
	}
	return s + ".\n"
}

// paretoAnswer lists the Pareto-optimal cells of pareto_sweep.json.
func paretoAnswer(data []byte) string {
	var k struct {
		Cells []struct {
			ISL, OSL, Concurrency int
			X, Y                  *float64
			Optimal               bool `json:"pareto_optimal"`
		} `json:"cells"`
	}
	_ = json.Unmarshal(data, &k)
	var opt []string
	for _, c := range k.Cells {
		if c.Optimal {
			opt = append(opt, fmt.Sprintf("isl %d / osl %d at concurrency %d", c.ISL, c.OSL, c.Concurrency))
		}
	}
	return fmt.Sprintf("Pareto-optimal (TTFT p95 against output tokens/s), %d of %d cells: %s.\n", len(opt), len(k.Cells), strings.Join(opt, "; "))
}

// surfaceAnswer says where the decode ITL is lowest and highest.
func surfaceAnswer(pts []search.SurfacePoint) string {
	lo, hi := -1, -1
	for i, p := range pts {
		if math.IsNaN(p.ITL) {
			continue
		}
		if lo < 0 || p.ITL < pts[lo].ITL {
			lo = i
		}
		if hi < 0 || p.ITL > pts[hi].ITL {
			hi = i
		}
	}
	if lo < 0 {
		return "Decode ITL surface: no cell measured an inter-token latency.\n"
	}
	return fmt.Sprintf("Decode ITL surface over %d cells: inter_token_latency avg from %.2f ms (concurrency %g, OSL %g) to %.2f ms (concurrency %g, OSL %g).\n",
		len(pts), pts[lo].ITL, pts[lo].Concurrency, pts[lo].OSL, pts[hi].ITL, pts[hi].Concurrency, pts[hi].OSL)
}

func orNone(v any) any {
	if v == nil {
		return "none"
	}
	return v
}

// jsonNum writes a decoded JSON number with 2 decimals.
func jsonNum(v any) string {
	f, ok := v.(float64)
	if !ok || math.IsNaN(f) {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", f)
}
