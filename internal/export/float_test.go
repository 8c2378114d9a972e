package export

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestAppendFloat: values are written as strconv writes them ('f', the
// shortest digits that read back the same; 'e' from 1e21), whole numbers
// included (they take a faster path), and a value that is not finite is
// null.
func TestAppendFloat(t *testing.T) {
	want := func(v float64) string {
		if math.Abs(v) < 1e21 {
			return strconv.FormatFloat(v, 'f', -1, 64)
		}
		return strconv.FormatFloat(v, 'e', -1, 64)
	}
	values := []float64{0, math.Copysign(0, -1), 1, -1, 64, 3.788515, 0.1, 1e15, 1<<53 - 1, 1 << 53, 1<<53 + 2, -(1 << 53),
		1e20, 1e21, 1.5e300, math.SmallestNonzeroFloat64, 4223.2906561014015, -2.5}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		values = append(values, float64(rng.Int64N(1<<40)-1<<39), rng.NormFloat64()*1e6, math.Float64frombits(rng.Uint64()))
	}
	for _, v := range values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		if got := string(AppendJSONNumber(nil, v)); got != want(v) {
			t.Fatalf("%v (bits %x): %q, want %q", v, math.Float64bits(v), got, want(v))
		}
	}
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if got := string(AppendJSONNumber(nil, v)); got != "null" {
			t.Fatalf("%v: %q, want null", v, got)
		}
	}
}
