package compare

import (
	"math"
	"testing"
)

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol }

// TestWelchHandComputed: x = 10, 12, 14 and y = 17, 19, 21, 23.
//
//	mean x = 12, s²x = (4+0+4)/2 = 4,        s²x/nx = 4/3
//	mean y = 20, s²y = (9+1+1+9)/3 = 20/3,   s²y/ny = 5/3
//	diff = 8, se² = 4/3 + 5/3 = 3, se = √3 = 1.7320508
//	df = 3² / ((4/3)²/2 + (5/3)²/3) = 9 / (8/9 + 25/27) = 243/49 = 4.9591837
//	t(0.975, 4.9591837) = 2.5769584 (numerical integration of the t
//	density; between the tables' t(0.975, 5) = 2.5706 and t(0.975, 4) = 2.7764)
//	interval = 8 ± 2.5769584·√3 = 8 ± 4.4634230 = [3.5365770, 12.4634230]
func TestWelchHandComputed(t *testing.T) {
	diff, low, high, ok := welch([]float64{10, 12, 14}, []float64{17, 19, 21, 23}, 0.95)
	if !ok || diff != 8 || !near(low, 3.5365770, 1e-6) || !near(high, 12.4634230, 1e-6) {
		t.Errorf("welch: diff %v [%v, %v] ok=%v; want 8 [3.5365770, 12.4634230]", diff, low, high, ok)
	}
	// Over runs, relative to the base mean 12: [+29.47%, +103.86%], a
	// regression of a latency.
	e := welchEntry(metricDefs[0], "p99", "ms", []float64{10, 12, 14}, []float64{17, 19, 21, 23}, 0.95, EntryWelchRuns)
	if e.Verdict != Regressed || !near(float64(e.CIRelLow), 3.5365770/12, 1e-7) || !near(float64(e.CIRelHigh), 12.4634230/12, 1e-7) ||
		e.ChangeRel != Num(8.0/12) || e.NBase != 3 || e.NNew != 4 {
		t.Errorf("entry %+v", e)
	}
	// Equal spreads, no variance: the interval is the difference itself.
	if d, lo, hi, _ := welch([]float64{5, 5}, []float64{7, 7}, 0.95); d != 2 || lo != 2 || hi != 2 {
		t.Errorf("no variance: %v [%v, %v]", d, lo, hi)
	}
	if _, _, _, ok := welch([]float64{1}, []float64{1, 2}, 0.95); ok {
		t.Error("an interval from one value")
	}
}

// TestNewcombe: Newcombe (1998), "Interval estimation for the difference
// between independent proportions: comparison of eleven methods", Stat
// Med 17:873–890, Table II, method 10 (hybrid score, no continuity
// correction), 95%. The paper's examples are p1 − p2; here the first
// proportion is BASE, so the difference is negated.
func TestNewcombe(t *testing.T) {
	for _, tc := range []struct {
		x1, n1, x2, n2 int
		low, high      float64 // of x1/n1 − x2/n2, as published
	}{
		{56, 70, 48, 80, 0.0524, 0.3339},
		{9, 10, 3, 10, 0.1705, 0.8090},
		{6, 7, 2, 7, 0.0582, 0.8062},
		{5, 56, 0, 29, -0.0381, 0.1926},
		{0, 10, 0, 20, -0.1611, 0.2775},
		{0, 10, 0, 10, -0.2775, 0.2775},
		{10, 10, 0, 20, 0.6791, 1.0000},
		{10, 10, 0, 10, 0.6075, 1.0000},
	} {
		// BASE = x2/n2, NEW = x1/n1: the difference NEW − BASE is p1 − p2.
		_, low, high := newcombe(tc.x2, tc.n2, tc.x1, tc.n1, 0.95)
		if !near(low, tc.low, 5e-5) || !near(high, tc.high, 5e-5) {
			t.Errorf("%d/%d − %d/%d: [%.4f, %.4f], want [%.4f, %.4f]", tc.x1, tc.n1, tc.x2, tc.n2, low, high, tc.low, tc.high)
		}
	}
	// Wilson's interval for 0/10: [0, 0.2775] (Newcombe 1998, "Two-sided
	// confidence intervals for the single proportion", Stat Med 17:857–872,
	// Table I).
	if lo, hi := wilson(0, 10, 0.95); lo != 0 || !near(hi, 0.2775, 5e-5) {
		t.Errorf("wilson(0/10) = [%v, %v]", lo, hi)
	}
}

// TestErrorRateEntry: the error rate in percent, its change in points.
func TestErrorRateEntry(t *testing.T) {
	// 48/80 → 56/70 errors: 60% → 80%, +20 points, [+5.24, +33.39].
	e := errorRateProportions(48, 80, 56, 70, 0.95)
	if e.Verdict != Regressed || !near(float64(e.Base), 60, 1e-9) || !near(float64(e.New), 80, 1e-9) ||
		!near(float64(e.ChangeAbs), 20, 1e-9) || !near(float64(e.CIAbsLow), 5.24, 5e-3) || !near(float64(e.CIAbsHigh), 33.39, 5e-3) ||
		e.Unit != "%" || e.NBase != 80 || e.NNew != 70 || e.Method != EntryNewcombe {
		t.Errorf("%+v", e)
	}
	// No errors on either side: nothing to say, and no relative change.
	e = errorRateProportions(0, 64, 0, 64, 0.95)
	if e.Verdict != NoChange || e.ChangeAbs != 0 || !math.IsNaN(float64(e.ChangeRel)) {
		t.Errorf("no errors: %+v", e)
	}
	// 0/1000 → 20/1000 errors: a significant rise of 2 points.
	if e = errorRateProportions(0, 1000, 20, 1000, 0.95); e.Verdict != Regressed {
		t.Errorf("0 → 2%% errors: %+v", e)
	}
}

// TestVerdict: the interval of new−base and the direction decide.
func TestVerdict(t *testing.T) {
	for _, tc := range []struct {
		better    Direction
		low, high float64
		want      string
	}{
		{Lower, 1, 2, Regressed},
		{Lower, -2, -1, Improved},
		{Higher, 1, 2, Improved},
		{Higher, -2, -1, Regressed},
		{Lower, -1, 1, NoChange},
		{Lower, 0, 1, NoChange},
		{Lower, 0, 0, NoChange},
		{"", 1, 2, Changed},
		{"", -1, 2, NoChange},
		{Lower, math.NaN(), 1, NotTested},
	} {
		if got := verdictOf(tc.better, tc.low, tc.high); got != tc.want {
			t.Errorf("%q [%v, %v]: %s, want %s", tc.better, tc.low, tc.high, got, tc.want)
		}
	}
}
