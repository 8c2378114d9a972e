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
	var got []float64
	for d := s.decoder(); len(got) < s.n; {
		got = append(got, d.next())
	}
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
	if s.xor != nil || len(s.w.buf) > 5000+10 {
		t.Fatalf("5000 small increments took %d bytes (xor %v), want one each", len(s.w.buf), s.xor != nil)
	}
	var still numStream
	for range 8000 {
		still.add(42)
	}
	if len(still.w.buf) > 1000+2 {
		t.Fatalf("8000 unchanged values took %d bytes, want a bit each", len(still.w.buf))
	}
}

// FuzzNumStream: any sequence of whole numbers and others, taken from the
// fuzzer's bytes as deltas of every size the code has, round-trips.
func FuzzNumStream(f *testing.F) {
	f.Add([]byte{0, 1, 2, 0x80, 0xff, 0x7f, 0x40, 0x3f})
	f.Add([]byte("llmbench counts"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var vs []float64
		last := 0.0
		for len(b) >= 2 {
			kind, x := b[0], b[1]
			b = b[2:]
			switch kind % 6 {
			case 0:
			case 1:
				last += float64(int8(x))
			case 2:
				last += float64(int16(x)<<6 - 5000)
			case 3:
				last = float64(int64(x)<<45) * float64(int8(x)|1)
			case 4:
				last = float64(x) + 0.5
			default:
				last = math.Float64frombits(uint64(x) * 0x0101010101010101)
			}
			vs = append(vs, last)
		}
		var s numStream
		for _, v := range vs {
			s.add(v)
		}
		got := s.decode(nil)
		if len(got) != len(vs) {
			t.Fatalf("%d values back, want %d", len(got), len(vs))
		}
		for i := range vs {
			if math.Float64bits(got[i]) != math.Float64bits(vs[i]) {
				t.Fatalf("value %d = %v, want %v", i, got[i], vs[i])
			}
		}
	})
}
