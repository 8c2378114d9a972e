package search

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/llmbench/llmbench/internal/sla"
)

// curve is a synthetic server: the TTFT p95 (ms) at each concurrency.
type curve func(c int) float64

var ttft100 = sla.Filter{Tag: "time_to_first_token", Stat: "p95", Op: sla.LT, Threshold: 100}

// cliff: 20 ms up to 8, 190 ms beyond.
func cliffCurve(c int) float64 {
	if c <= 8 {
		return 20
	}
	return 190
}

// outcome is what the orchestrator would report for value c of curve f
// against ttft100: feasibility, verdict, margin and breach.
func outcome(f curve, c int) Outcome {
	v := f(c)
	o := Outcome{Value: c, Feasible: ttft100.Holds(v), Margins: []float64{ttft100.Margin(v)}, Objective: float64(10 * c)}
	o.Verdict = Fail
	if o.Feasible {
		o.Verdict = Pass
	} else {
		o.FirstBreach = BreachOf(ttft100, v)
	}
	return o
}

// run drives p with tell until it stops, returning the probed values
// and the iterations flagged non-monotonic.
func run(t *testing.T, p Planner, tell func(c, i int) Outcome) (probes, flagged []int) {
	t.Helper()
	for i := 0; ; i++ {
		c, ok := p.Next()
		if !ok {
			return probes, flagged
		}
		if again, _ := p.Next(); again != c {
			t.Fatalf("Next changed its answer without Tell: %d then %d", c, again)
		}
		if i > 500 {
			t.Fatalf("no end after %d probes: %v", i, probes)
		}
		probes = append(probes, c)
		nm, err := p.Tell(tell(c, i))
		if err != nil {
			t.Fatal(err)
		}
		if nm {
			flagged = append(flagged, i)
		}
	}
}

func checkBounds(t *testing.T, b *BoundarySummary, fmax, fmaxIter, imin, iminIter int) {
	t.Helper()
	if b == nil {
		t.Fatal("no boundary summary")
	}
	if fmax == 0 {
		if b.FeasibleMax != nil {
			t.Errorf("feasible_max %+v, want none", *b.FeasibleMax)
		}
	} else if b.FeasibleMax == nil || b.FeasibleMax.Value != fmax || b.FeasibleMax.Iteration != fmaxIter {
		t.Errorf("feasible_max %+v, want value %d at iteration %d", b.FeasibleMax, fmax, fmaxIter)
	}
	if imin == 0 {
		if b.InfeasibleMin != nil {
			t.Errorf("infeasible_min %+v, want none", *b.InfeasibleMin)
		}
	} else if b.InfeasibleMin == nil || b.InfeasibleMin.Value != imin || b.InfeasibleMin.Iteration != iminIter {
		t.Errorf("infeasible_min %+v, want value %d at iteration %d", b.InfeasibleMin, imin, iminIter)
	}
}

// TestMonotonicCliff: every value is asked twice (stability 2); the
// bracket 1…16, then bisection 12, 10, 9 ends on gap 1.
func TestMonotonicCliff(t *testing.T) {
	m, err := NewMonotonic(1, 64, 30, MonotonicOptions{})
	if err != nil {
		t.Fatal(err)
	}
	probes, flagged := run(t, m, func(c, _ int) Outcome { return outcome(cliffCurve, c) })
	want := []int{1, 1, 2, 2, 4, 4, 8, 8, 16, 16, 12, 12, 10, 10, 9, 9}
	if !slices.Equal(probes, want) || len(flagged) > 0 {
		t.Errorf("probes %v flagged %v, want %v", probes, flagged, want)
	}
	if m.Reason() != "monotonic_precision_reached" {
		t.Errorf("reason %q", m.Reason())
	}
	b := m.Boundary()
	checkBounds(t, b, 8, 7, 9, 15)
	if b.InfeasibleMin.FirstBreach == nil || b.InfeasibleMin.FirstBreach.Observed != 190 {
		t.Errorf("first breach %+v", b.InfeasibleMin.FirstBreach)
	}
	if b.FeasibleMax.Objective != 80 {
		t.Errorf("objective %g, want 80", b.FeasibleMax.Objective)
	}
}

// TestMonotonicLatching: TTFT 4c (boundary 24); 32 passes on its first
// run by luck, then fails twice and latches a fail on its third
// iteration; bisection then finds 24/25.
func TestMonotonicLatching(t *testing.T) {
	m, _ := NewMonotonic(1, 100, 40, MonotonicOptions{})
	seen := map[int]int{}
	probes, _ := run(t, m, func(c, _ int) Outcome {
		seen[c]++
		o := outcome(func(c int) float64 { return float64(c) * 4 }, c)
		if c == 32 && seen[c] == 1 {
			o.Feasible = true
		}
		return o
	})
	want := []int{1, 1, 2, 2, 4, 4, 8, 8, 16, 16, 32, 32, 32, 24, 24, 28, 28, 26, 26, 25, 25}
	if !slices.Equal(probes, want) || m.Reason() != "monotonic_precision_reached" {
		t.Errorf("probes %v reason %q, want %v", probes, m.Reason(), want)
	}
	checkBounds(t, m.Boundary(), 24, 14, 25, 20)
}

// TestMonotonicPrecision: a boundary at 700 on [1, 1000] stops once the
// gap is under 5 % of infeasible_min.
func TestMonotonicPrecision(t *testing.T) {
	m, _ := NewMonotonic(1, 1000, 100, MonotonicOptions{Stability: 1})
	probes, _ := run(t, m, func(c, _ int) Outcome {
		return outcome(func(c int) float64 { return float64(c) / 7 }, c) // passes below 700
	})
	// 1…512 pass, 1000 fails; bisection 756 F, 634 P, 695 P, 725 F, then
	// gap 30/725 = 4.1 % < 5 %.
	want := []int{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1000, 756, 634, 695, 725}
	if !slices.Equal(probes, want) || m.Reason() != "monotonic_precision_reached" {
		t.Errorf("probes %v reason %q, want %v", probes, m.Reason(), want)
	}
	checkBounds(t, m.Boundary(), 695, 13, 725, 14)
}

// TestMonotonicEdges: no pass, no failure, the budget, misuse.
func TestMonotonicEdges(t *testing.T) {
	m, _ := NewMonotonic(1, 10, 30, MonotonicOptions{})
	run(t, m, func(c, _ int) Outcome { return outcome(func(int) float64 { return 500 }, c) })
	if m.Reason() != "monotonic_no_pass_in_range" {
		t.Errorf("reason %q", m.Reason())
	}
	checkBounds(t, m.Boundary(), 0, 0, 1, 1)

	m, _ = NewMonotonic(1, 10, 30, MonotonicOptions{})
	probes, _ := run(t, m, func(c, _ int) Outcome { return outcome(func(int) float64 { return 5 }, c) })
	if !slices.Equal(probes, []int{1, 1, 2, 2, 4, 4, 8, 8, 10, 10}) || m.Reason() != "monotonic_no_failure_in_range" {
		t.Errorf("probes %v reason %q", probes, m.Reason())
	}
	checkBounds(t, m.Boundary(), 10, 9, 0, 0)

	m, _ = NewMonotonic(1, 1000, 5, MonotonicOptions{})
	probes, _ = run(t, m, func(c, _ int) Outcome { return outcome(cliffCurve, c) })
	if len(probes) != 5 || m.Reason() != "max_iterations" {
		t.Errorf("probes %v reason %q, want 5 and max_iterations", probes, m.Reason())
	}

	m, _ = NewMonotonic(1, 10, 5, MonotonicOptions{})
	if m.Boundary() != nil {
		t.Error("boundary before any verdict")
	}
	if _, err := m.Tell(Outcome{Value: 1}); err == nil {
		t.Error("Tell without Next accepted")
	}
	m.Next()
	if _, err := m.Tell(Outcome{Value: 3}); err == nil {
		t.Error("Tell of another value accepted")
	}
	for _, bad := range [][3]int{{0, 10, 5}, {5, 4, 5}, {1, 10, 0}} {
		if _, err := NewMonotonic(bad[0], bad[1], bad[2], MonotonicOptions{}); err == nil {
			t.Errorf("NewMonotonic%v accepted", bad)
		}
	}
}

// TestConfidentCliff: one probe per value, 8 probes for the cliff.
func TestConfidentCliff(t *testing.T) {
	c, _ := NewConfident(1, 64, 30)
	c.Level = 0.95
	probes, _ := run(t, c, func(v, _ int) Outcome { return outcome(cliffCurve, v) })
	if want := []int{1, 2, 4, 8, 16, 12, 10, 9}; !slices.Equal(probes, want) {
		t.Errorf("probes %v, want %v", probes, want)
	}
	if c.Reason() != "confident_boundary_found" {
		t.Errorf("reason %q", c.Reason())
	}
	b := c.Boundary()
	checkBounds(t, b, 8, 3, 9, 7)
	if b.BoundaryCI == nil || *b.BoundaryCI != (Interval{8, 9}) || b.ConfidenceLevel != 0.95 || b.UncertainValues != nil {
		t.Errorf("ci %+v level %g uncertain %v", b.BoundaryCI, b.ConfidenceLevel, b.UncertainValues)
	}
}

// TestConfidentEveryBoundary: for each step boundary b in [1, 63] of
// [1, 64] the search ends on exactly (b, b+1) within 12 probes.
func TestConfidentEveryBoundary(t *testing.T) {
	for b := 1; b < 64; b++ {
		c, _ := NewConfident(1, 64, 30)
		probes, _ := run(t, c, func(v, _ int) Outcome {
			return outcome(func(v int) float64 { return map[bool]float64{true: 20, false: 190}[v <= b] }, v)
		})
		bs := c.Boundary()
		if len(probes) > 12 || bs.FeasibleMax.Value != b || bs.InfeasibleMin.Value != b+1 || c.Reason() != "confident_boundary_found" {
			t.Errorf("boundary %d: %d probes %v, found [%d, %d] %q", b, len(probes), probes, bs.FeasibleMax.Value, bs.InfeasibleMin.Value, c.Reason())
		}
	}
}

// TestConfidentUncertain: passes up to 20, uncertain 21…30, fails above.
// 32 fails; 24, 22, 21 are uncertain: the search stops between 20 and 21,
// infeasible_min stays 32 and the uncertain values are listed.
func TestConfidentUncertain(t *testing.T) {
	c, _ := NewConfident(1, 64, 30)
	probes, _ := run(t, c, func(v, _ int) Outcome {
		o := Outcome{Value: v, Verdict: Pass, Objective: math.NaN()}
		switch {
		case v > 30:
			o.Verdict = Fail
		case v > 20:
			o.Verdict = Uncertain
		}
		return o
	})
	if want := []int{1, 2, 4, 8, 16, 32, 24, 20, 22, 21}; !slices.Equal(probes, want) {
		t.Errorf("probes %v, want %v", probes, want)
	}
	b := c.Boundary()
	checkBounds(t, b, 20, 7, 32, 5)
	if !slices.Equal(b.UncertainValues, []int{21, 22, 24}) || *b.BoundaryCI != (Interval{20, 32}) || c.Reason() != "confident_boundary_found" {
		t.Errorf("uncertain %v ci %+v reason %q", b.UncertainValues, b.BoundaryCI, c.Reason())
	}
}

// TestConfidentEdges: a first probe that is not a confident pass ends the
// search (an uncertain one is not reported as infeasible); all passes end
// at hi; a non-monotone curve is bracketed where doubling lands; a
// Verdict left zero is read from Feasible.
func TestConfidentEdges(t *testing.T) {
	c, _ := NewConfident(1, 64, 30)
	run(t, c, func(v, _ int) Outcome { return Outcome{Value: v, Verdict: Uncertain} })
	b := c.Boundary()
	if c.Reason() != "confident_lowest_uncertain" || b.InfeasibleMin != nil || !slices.Equal(b.UncertainValues, []int{1}) || b.BoundaryCI != nil {
		t.Errorf("reason %q boundary %+v", c.Reason(), b)
	}

	c, _ = NewConfident(3, 40, 30)
	probes, _ := run(t, c, func(v, _ int) Outcome { return Outcome{Value: v, Feasible: true} })
	if !slices.Equal(probes, []int{3, 6, 12, 24, 40}) || c.Reason() != "confident_no_failure_in_range" {
		t.Errorf("probes %v reason %q", probes, c.Reason())
	}
	if bs := c.Boundary(); bs.FeasibleMax.Value != 40 || !math.IsNaN(bs.BoundaryCI.Hi) {
		t.Errorf("boundary %+v ci %+v", bs.FeasibleMax, bs.BoundaryCI)
	}

	// Passes to 8, fails 9…12, passes 13…40, fails beyond: doubling
	// jumps the dip, and the boundary found is the upper one.
	c, _ = NewConfident(1, 100, 30)
	run(t, c, func(v, _ int) Outcome {
		return Outcome{Value: v, Feasible: v <= 8 || (v >= 13 && v <= 40)}
	})
	if bs := c.Boundary(); bs.FeasibleMax.Value != 40 || bs.InfeasibleMin.Value != 41 {
		t.Errorf("non-monotone: [%d, %d]", bs.FeasibleMax.Value, bs.InfeasibleMin.Value)
	}
}

// TestMonotonicNonMonotone: passes to 8, fails 9…12, passes 13…40:
// doubling jumps the dip and the boundary found is the upper one (to 5 %:
// 40/42), with no verdict contradicting the bracket.
func TestMonotonicNonMonotone(t *testing.T) {
	m, _ := NewMonotonic(1, 100, 40, MonotonicOptions{Stability: 1})
	_, flagged := run(t, m, func(v, _ int) Outcome {
		return Outcome{Value: v, Feasible: v <= 8 || (v >= 13 && v <= 40)}
	})
	b := m.Boundary()
	if b.FeasibleMax.Value != 40 || b.InfeasibleMin.Value != 42 || len(flagged) > 0 {
		t.Errorf("[%d, %d] flagged %v", b.FeasibleMax.Value, b.InfeasibleMin.Value, flagged)
	}
}

// TestConfidentNoisy runs the planner on verdicts Decide reaches from
// simulated requests: TTFT lognormal (σ 0.3) with median 20·e^(c/16) ms,
// so p95 = 20·e^(c/16)·e^(0.3·1.645) crosses 200 ms between 28 and 29;
// 400 requests per probe. A confident pass must be truly passing and a
// confident fail truly failing; undecided values sit near the boundary.
func TestConfidentNoisy(t *testing.T) {
	f := ttft100
	f.Threshold = 200
	rng := rand.New(rand.NewPCG(3, 4))
	c, _ := NewConfident(1, 256, 30)
	run(t, c, func(v, _ int) Outcome {
		xs := make([]float64, 400)
		for i := range xs {
			xs[i] = 20 * math.Exp(float64(v)/16+0.3*rng.NormFloat64())
		}
		d := Decide(f, xs, 0.95)
		return Outcome{Value: v, Verdict: d.Verdict, Feasible: d.Verdict == Pass}
	})
	b := c.Boundary()
	if b.FeasibleMax == nil || b.FeasibleMax.Value > 28 || b.FeasibleMax.Value < 24 {
		t.Errorf("feasible_max %+v, want in [24, 28]", b.FeasibleMax)
	}
	if b.InfeasibleMin != nil && b.InfeasibleMin.Value < 29 {
		t.Errorf("infeasible_min %d below the true boundary 29", b.InfeasibleMin.Value)
	}
	for _, u := range b.UncertainValues {
		if u < 24 || u > 34 {
			t.Errorf("uncertain %d far from the boundary", u)
		}
	}
	t.Logf("found [%d, %+v], uncertain %v, reason %s", b.FeasibleMax.Value, b.InfeasibleMin, b.UncertainValues, c.Reason())
}
