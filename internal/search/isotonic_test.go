package search

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestPAVA: hand-pooled fits. [1,3,2,4]: 3 and 2 pool to 2.5;
// [-2,-0.9,-1.1,1,2]: -0.9 and -1.1 pool to -1 (AIPerf's docstring
// example); [3,2,1]: all pool to 2; [80,1,1.1,1.2] pools step by step to
// 20.825.
func TestPAVA(t *testing.T) {
	for _, c := range []struct{ in, want []float64 }{
		{[]float64{1, 3, 2, 4}, []float64{1, 2.5, 2.5, 4}},
		{[]float64{-2, -0.9, -1.1, 1, 2}, []float64{-2, -1, -1, 1, 2}},
		{[]float64{3, 2, 1}, []float64{2, 2, 2}},
		{[]float64{-50, 80, 1, 1.1, 1.2}, []float64{-50, 20.825, 20.825, 20.825, 20.825}},
		{[]float64{5}, []float64{5}},
		{nil, []float64{}},
	} {
		got := pava(c.in)
		if len(got) != len(c.want) {
			t.Fatalf("pava(%v) = %v, want %v", c.in, got, c.want)
		}
		for i := range got {
			if !near(got[i], c.want[i], 1e-12) {
				t.Errorf("pava(%v) = %v, want %v", c.in, got, c.want)
				break
			}
		}
	}
	if n := distinctLevels(pava([]float64{-50, 80, 1, 1.1, 1.2})); n != 2 {
		t.Errorf("distinct levels %d, want 2", n)
	}
}

// TestStrictify: ε = 1e-9 × span, or 1e-9 on a flat fit.
func TestStrictify(t *testing.T) {
	got := strictify([]float64{0, 0, 10})
	want := []float64{0, 1e-8, 10 + 2e-8}
	for i := range got {
		if !near(got[i], want[i], 1e-15) {
			t.Errorf("strictify: %v, want %v", got, want)
		}
	}
	got = strictify([]float64{1, 1, 1})
	if !near(got[1]-got[0], 1e-9, 1e-15) || !near(got[2]-got[0], 2e-9, 1e-15) {
		t.Errorf("flat strictify: %v", got)
	}
}

// TestPCHIP against hand-computed Fritsch–Carlson slopes. Through
// (0,0), (1,1), (2,4): secants 1 and 3, interior slope
// (3+3)/(3/1+3/3) = 1.5, end slopes ((2+1)·1−3)/2 = 0 and
// ((2+1)·3−1)/2 = 4. Then p(0.5) = 0.5·1 − 0.125·1.5 = 0.3125 and
// p(1.5) = 0.5·1 + 0.125·1.5 + 0.5·4 − 0.125·4 = 2.1875.
func TestPCHIP(t *testing.T) {
	p := newPCHIP([]float64{0, 1, 2}, []float64{0, 1, 4})
	if want := []float64{0, 1.5, 4}; !slices.Equal(p.ds, want) {
		t.Errorf("slopes %v, want %v", p.ds, want)
	}
	for _, c := range [][2]float64{{0.5, 0.3125}, {1.5, 2.1875}, {0, 0}, {2, 4}, {-1, 0}, {3, 4}} {
		if got := p.at(c[0]); !near(got, c[1], 1e-12) {
			t.Errorf("p(%g) = %g, want %g", c[0], got, c[1])
		}
	}
	// A local maximum gets slope 0; an end slope against its secant's
	// sign is zeroed; one steeper than 3 secants is capped at 3 secants.
	q := newPCHIP([]float64{0, 1, 2}, []float64{0, 2, 1})
	if q.ds[1] != 0 {
		t.Errorf("slope at a maximum %g, want 0", q.ds[1])
	}
	if got := pchipEdge(1, 1, 1, -5); got != 3 {
		t.Errorf("edge slope %g, want capped 3", got)
	}
	// Two points: a straight line.
	line := newPCHIP([]float64{0, 4}, []float64{-1, 3})
	if got := line.at(1); got != 0 {
		t.Errorf("line(1) = %g, want 0", got)
	}
}

// TestPCHIPRoot: the zero of a line is exact; on a curve the root is
// where the curve is 0; outside [lo, hi] or without a crossing there is none.
func TestPCHIPRoot(t *testing.T) {
	line := newPCHIP([]float64{0, 4}, []float64{-1, 3})
	if x, ok := line.root(0, 4); !ok || !near(x, 1, 1e-12) {
		t.Errorf("line root %g %v, want 1", x, ok)
	}
	if _, ok := line.root(2, 4); ok {
		t.Error("root outside [2, 4] reported")
	}
	c := newPCHIP([]float64{1, 2, 4, 8}, []float64{-3, -2, 1, 5})
	x, ok := c.root(1, 8)
	if !ok || x <= 2 || x >= 4 || !near(c.at(x), 0, 1e-9) {
		t.Errorf("curve root %g %v (p = %g)", x, ok, c.at(x))
	}
	if x, ok := c.root(2, 2); ok {
		t.Errorf("root %g inside a point interval", x)
	}
	if _, ok := newPCHIP([]float64{1, 2}, []float64{1, 2}).root(1, 2); ok {
		t.Error("root of a positive curve reported")
	}
	if x, ok := newPCHIP([]float64{1, 2, 3}, []float64{-1, 0, 1}).root(1, 3); !ok || x != 2 {
		t.Errorf("root on a knot %g %v, want 2", x, ok)
	}
}

// TestBootstrap: a constant sample gives a point interval; a seeded
// generator replays; the interval holds the sample mean and sits inside
// the sample's range.
func TestBootstrap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	if lo, hi := bootstrapMeanCI([]float64{3, 3, 3}, 0.95, 1000, rng); lo != 3 || hi != 3 {
		t.Errorf("constant: [%g, %g]", lo, hi)
	}
	if lo, hi := bootstrapMeanCI([]float64{7}, 0.95, 1000, rng); lo != 7 || hi != 7 {
		t.Errorf("single: [%g, %g]", lo, hi)
	}
	xs := []float64{-3, -1, 0, 2, 5, 1, -2, 4}
	a1, b1 := bootstrapMeanCI(xs, 0.95, 2000, rand.New(rand.NewPCG(9, 9)))
	a2, b2 := bootstrapMeanCI(xs, 0.95, 2000, rand.New(rand.NewPCG(9, 9)))
	if a1 != a2 || b1 != b2 {
		t.Errorf("not replayable: [%g, %g] vs [%g, %g]", a1, b1, a2, b2)
	}
	if !(a1 < 0.75 && 0.75 < b1) || a1 < -3 || b1 > 5 || math.IsNaN(a1) {
		t.Errorf("interval [%g, %g] for mean 0.75", a1, b1)
	}
}
