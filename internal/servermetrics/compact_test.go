package servermetrics

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

func roundTripFloats(t *testing.T, name string, vs []float64) int {
	t.Helper()
	var s xorStream
	for _, v := range vs {
		s.add(v)
	}
	got := s.decode(nil)
	if len(got) != len(vs) {
		t.Fatalf("%s: %d values back, want %d", name, len(got), len(vs))
	}
	for i := range vs {
		if math.Float64bits(got[i]) != math.Float64bits(vs[i]) {
			t.Fatalf("%s: value %d = %v (%x), want %v (%x)", name, i, got[i], math.Float64bits(got[i]), vs[i], math.Float64bits(vs[i]))
		}
	}
	return len(s.w.buf)
}

// TestXORStreamRoundTrip: every float comes back bit for bit, and the
// sequences a scrape produces cost a few bytes per value.
func TestXORStreamRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	random := make([]float64, 5000)
	for i := range random {
		random[i] = math.Float64frombits(rng.Uint64())
	}
	counter := make([]float64, 5000)
	for i := 1; i < len(counter); i++ {
		counter[i] = counter[i-1] + float64(rng.IntN(40))
	}
	latencySum := make([]float64, 5000)
	for i := 1; i < len(latencySum); i++ {
		latencySum[i] = latencySum[i-1] + rng.ExpFloat64()*0.7
	}
	special := []float64{0, math.Copysign(0, -1), 1, -1, math.Inf(1), math.Inf(-1), math.NaN(), math.MaxFloat64, math.SmallestNonzeroFloat64, 1e-300, 42, 42, 42, 0.1, 0.2, 0.30000000000000004}
	constant := make([]float64, 5000)
	for i := range constant {
		constant[i] = 7
	}
	roundTripFloats(t, "random bits", random)
	roundTripFloats(t, "special values", special)
	roundTripFloats(t, "one value", []float64{3.5})
	roundTripFloats(t, "empty", nil)
	if n := roundTripFloats(t, "constant", constant); n > 5000/8+16 {
		t.Errorf("constant: %d bytes for 5000 values, want about one bit each", n)
	}
	if n := roundTripFloats(t, "counter", counter); n > 5000*4 {
		t.Errorf("counter: %d bytes for 5000 values, want under 4 each", n)
	}
	roundTripFloats(t, "latency sum", latencySum)
}

func TestTimeStreamRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	ts := []int64{1_763_700_000_000_000_000}
	for range 5000 {
		ts = append(ts, ts[len(ts)-1]+333_000_000+int64(rng.IntN(200_000))-100_000)
	}
	ts = append(ts, ts[len(ts)-1]-5, math.MaxInt64/4, 0) // out of order and far jumps survive
	var s timeStream
	for _, x := range ts {
		s.add(x)
	}
	got := s.decode(nil)
	for i := range ts {
		if got[i] != ts[i] {
			t.Fatalf("timestamp %d = %d, want %d", i, got[i], ts[i])
		}
	}
	if per := float64(len(s.buf)) / float64(len(ts)); per > 4 {
		t.Errorf("%.1f bytes per timestamp of a 333 ms schedule with 0.1 ms jitter, want at most 4", per)
	}
}

// FuzzXORStream: any byte sequence, read as floats, round-trips.
func FuzzXORStream(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0, 0, 0, 0, 0, 0, 0, 0x40})
	f.Add([]byte("llmbench"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var vs []float64
		for len(b) >= 8 {
			vs = append(vs, math.Float64frombits(binary.LittleEndian.Uint64(b)))
			b = b[8:]
		}
		roundTripFloats(t, "fuzz", vs)
	})
}

// TestNumStreamRoundTrip: whole numbers as varint deltas, then, from the
// first value that is not one, XOR floats, every value back bit for bit
// (a negative zero included).
func TestNumStreamRoundTrip(t *testing.T) {
	for name, vs := range map[string][]float64{
		"counts":         {0, 3, 3, 10, 4, 1e15, -7, 0},
		"then fraction":  {1, 2, 3, 3.5, 4, 5},
		"specials":       {5, math.NaN(), 6, math.Inf(1), math.Copysign(0, -1), 9007199254740993, -1e300},
		"fraction first": {0.25, 1, 2},
		"empty":          nil,
	} {
		var s numStream
		for _, v := range vs {
			s.add(v)
		}
		got := s.decode(nil)
		if len(got) != len(vs) {
			t.Fatalf("%s: %d values back", name, len(got))
		}
		for i := range vs {
			if math.Float64bits(got[i]) != math.Float64bits(vs[i]) {
				t.Fatalf("%s: value %d = %v, want %v", name, i, got[i], vs[i])
			}
		}
	}
	var s numStream
	for i := range 5000 {
		s.add(float64(i * 3))
	}
	if s.xor != nil || len(s.buf) > 5000+10 {
		t.Fatalf("5000 small increments took %d bytes (xor %v), want one each", len(s.buf), s.xor != nil)
	}
}
