package search

import (
	"math"
	"slices"
	"testing"

	"github.com/llmbench/llmbench/internal/sla"
)

var e2e5000 = sla.Filter{Tag: "request_latency", Stat: "p99", Op: sla.LT, Threshold: 5000}

// marginOutcome reports margins ms (feasible when every one is negative).
func marginOutcome(c int, ms ...float64) Outcome {
	o := Outcome{Value: c, Feasible: true, Margins: ms, Objective: float64(c)}
	for _, m := range ms {
		if !(m < 0) {
			o.Feasible = false
		}
	}
	return o
}

// TestSmoothLinear: TTFT 2c against 100 (margin 2c − 100, zero at 50),
// a loose second filter. Bracket 1…32 pass, 64 fails; fit probes 40, 48,
// 56 (k/4 of the gap 32); the spline is the line itself, its root 50;
// with no spread at 64 there are no replicates, so 50 is probed once
// (it fails: 100 is not < 100); the refit proposes 49, and the gap
// 2/50 = 4 % ends the search.
func TestSmoothLinear(t *testing.T) {
	s, err := NewSmoothIsotonic(1, 1000, 30, SmoothOptions{Filters: []sla.Filter{ttft100, e2e5000}})
	if err != nil {
		t.Fatal(err)
	}
	probes, flagged := run(t, s, func(c, _ int) Outcome {
		return marginOutcome(c, float64(2*c)-100, float64(c)-5000)
	})
	if want := []int{1, 2, 4, 8, 16, 32, 64, 40, 48, 56, 50}; !slices.Equal(probes, want) || len(flagged) > 0 {
		t.Errorf("probes %v flagged %v, want %v", probes, flagged, want)
	}
	if s.Reason() != "smooth_isotonic_precision_reached" {
		t.Errorf("reason %q", s.Reason())
	}
	b := s.Boundary()
	checkBounds(t, b, 48, 8, 50, 10)
	if b.BoundaryType != "smooth" || b.BindingConstraint != "0:time_to_first_token.p95.lt.100.0" || b.BoundaryCI != nil {
		t.Errorf("type %q binding %q ci %+v", b.BoundaryType, b.BindingConstraint, b.BoundaryCI)
	}
}

// spike is a margin curve that drops back after a spike at 40…47: the
// PAVA fit pools the spike with the three highest values, 3 σ_local off
// them, which the cliff guard reads as a cliff.
func spike(c int) float64 {
	switch {
	case c <= 35:
		return -50
	case c < 40:
		return 1
	case c < 48:
		return 80
	case c < 56:
		return 1
	case c < 64:
		return 1.1
	}
	return 1.2
}

// TestSmoothCliff: on [1, 70] the bracket ends at 32/64; fit probes 40,
// 48, 56 leave a 2-level PAVA fit, so refit probes 33 and 37 (1/8 and 5/8
// of the gap 8) follow; the next fit has 3 levels, the residual at 64 is
// 19.6 against 3 σ_local = 0.24, and the gap 4 exceeds 5 % of 70: a
// cliff. Plain bisection 35, 36 ends at gap 1.
func TestSmoothCliff(t *testing.T) {
	s, _ := NewSmoothIsotonic(1, 70, 30, SmoothOptions{Filters: []sla.Filter{ttft100}})
	probes, _ := run(t, s, func(c, _ int) Outcome { return marginOutcome(c, spike(c)) })
	if want := []int{1, 2, 4, 8, 16, 32, 64, 40, 48, 56, 33, 37, 35, 36}; !slices.Equal(probes, want) {
		t.Errorf("probes %v, want %v", probes, want)
	}
	if s.Reason() != "smooth_isotonic_cliff_precision_reached" {
		t.Errorf("reason %q", s.Reason())
	}
	b := s.Boundary()
	checkBounds(t, b, 35, 12, 36, 13)
	if b.BoundaryType != "cliff" {
		t.Errorf("type %q", b.BoundaryType)
	}
}

// TestSmoothReplicates: three replicates of the candidate 50 with noisy
// margins −3, 5, 4: the two failures sit at feasible_max and are flagged
// non-monotonic; the bootstrap interval of their mean holds 0, so refit
// probes 51 and 54 follow. The refit's root (≈ 49.3, where the mean
// margin goes from −4 at 48 to 2 at 50) lies below feasible_max, so the
// fit falls back to bisection, which has no room in [50, 51]: AIPerf's
// smooth_isotonic_pchip_fallback_bisection. The same seed replays the
// same interval.
func TestSmoothReplicates(t *testing.T) {
	var cis []Interval
	for range 2 {
		s, _ := NewSmoothIsotonic(1, 1000, 40, SmoothOptions{Filters: []sla.Filter{ttft100}, Replicates: 3, Seed: 7, Resamples: 2000})
		noise := []float64{-3, 5, 4}
		probes, flagged := run(t, s, func(c, _ int) Outcome {
			if c == 50 {
				m := noise[0]
				noise = noise[1:]
				return marginOutcome(c, m)
			}
			return marginOutcome(c, float64(2*c)-100)
		})
		if want := []int{1, 2, 4, 8, 16, 32, 64, 40, 48, 56, 50, 50, 50, 51, 54}; !slices.Equal(probes, want) {
			t.Errorf("probes %v, want %v", probes, want)
		}
		if !slices.Equal(flagged, []int{11, 12}) {
			t.Errorf("flagged %v, want [11 12]", flagged)
		}
		b := s.Boundary()
		checkBounds(t, b, 50, 10, 51, 13)
		if s.Reason() != "smooth_isotonic_pchip_fallback_bisection" || b.BoundaryCI == nil || !(b.BoundaryCI.Lo <= 0 && 0 <= b.BoundaryCI.Hi) {
			t.Fatalf("reason %q ci %+v", s.Reason(), b.BoundaryCI)
		}
		cis = append(cis, *b.BoundaryCI)
	}
	if cis[0] != cis[1] {
		t.Errorf("not replayable: %+v vs %+v", cis[0], cis[1])
	}
}

// TestSmoothEdges: no pass, no failure, a filter never measured (no
// curve, no room to bisect), bad input.
func TestSmoothEdges(t *testing.T) {
	opt := SmoothOptions{Filters: []sla.Filter{ttft100}}
	s, _ := NewSmoothIsotonic(4, 100, 30, opt)
	probes, _ := run(t, s, func(c, _ int) Outcome { return marginOutcome(c, 1) })
	if !slices.Equal(probes, []int{4}) || s.Reason() != "smooth_isotonic_no_pass_in_range" {
		t.Errorf("probes %v reason %q", probes, s.Reason())
	}
	if b := s.Boundary(); b.BoundaryType != "" || b.InfeasibleMin.Value != 4 {
		t.Errorf("boundary %+v", b)
	}

	s, _ = NewSmoothIsotonic(1, 10, 30, opt)
	probes, _ = run(t, s, func(c, _ int) Outcome { return marginOutcome(c, -1) })
	if !slices.Equal(probes, []int{1, 2, 4, 8, 10}) || s.Reason() != "smooth_isotonic_no_failure_in_range" {
		t.Errorf("probes %v reason %q", probes, s.Reason())
	}

	s, _ = NewSmoothIsotonic(1, 10, 30, opt)
	run(t, s, func(c, _ int) Outcome {
		o := marginOutcome(c, nan())
		o.Feasible = c == 1
		return o
	})
	if s.Reason() != "smooth_isotonic_pchip_fallback_bisection" {
		t.Errorf("reason %q", s.Reason())
	}

	s, _ = NewSmoothIsotonic(1, 10, 30, opt)
	s.Next()
	if _, err := s.Tell(Outcome{Value: 1}); err == nil {
		t.Error("an outcome without margins accepted")
	}
	if _, err := NewSmoothIsotonic(1, 10, 30, SmoothOptions{}); err == nil {
		t.Error("no filters accepted")
	}
}

func nan() float64 { return math.NaN() }

// TestPyFloat: Python's repr of a float.
func TestPyFloat(t *testing.T) {
	for v, want := range map[float64]string{100: "100.0", 0.5: "0.5", -2: "-2.0", 1e-5: "1e-05", 1e16: "1e+16", 0.0001: "0.0001", 123.25: "123.25", 0: "0.0"} {
		if got := pyFloat(v); got != want {
			t.Errorf("pyFloat(%g) = %q, want %q", v, got, want)
		}
	}
}
