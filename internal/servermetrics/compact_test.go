package servermetrics

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/internal/scrape"
)

// bitString renders the bits a writer holds, for comparing with codes
// written out by hand.
func bitString(w *bitWriter) string {
	var b strings.Builder
	for i := range w.nbit {
		b.WriteByte('0' + w.buf[i>>3]>>(7-i&7)&1)
	}
	return b.String()
}

// TestBitCodes: the bits each code writes, worked out by hand from its
// definition, and that they read back.
func TestBitCodes(t *testing.T) {
	ones := func(n int) string { return strings.Repeat("1", n) }
	zeros := func(n int) string { return strings.Repeat("0", n) }
	type code struct {
		kind string // "bits", "rice" or "small"
		v    uint64
		n    int // bits: width; rice: k
	}
	for _, tc := range []struct {
		name  string
		codes []code
		want  string
	}{
		{"bits across bytes", []code{{"bits", 0b101, 3}, {"bits", 0xff, 8}, {"bits", 1, 1}}, "101" + "11111111" + "1"},
		{"bits wider than a word's window", []code{{"bits", 1, 3}, {"bits", 1<<63 | 1, 64}}, "001" + "1" + zeros(62) + "1"},
		{"bits: only the n low ones", []code{{"bits", 0xff, 4}}, "1111"},
		// Rice: z>>k ones, a zero, the k low bits of z.
		{"rice 0", []code{{"rice", 0, 0}}, "0"},
		{"rice 5 k0", []code{{"rice", 5, 0}}, "111110"},
		{"rice 5 k1", []code{{"rice", 5, 1}}, "110" + "1"},
		{"rice 5 k3", []code{{"rice", 5, 3}}, "0" + "101"},
		{"rice longest unary", []code{{"rice", 15, 0}}, ones(15) + "0"},
		// Escapes: 16 ones, the bit length less one in 6 bits, the bits
		// below the leading one.
		{"rice escape 16", []code{{"rice", 16, 0}}, ones(16) + "000100" + "0000"},
		{"rice escape max", []code{{"rice", math.MaxUint64, 0}}, ones(16) + "111111" + ones(63)},
		{"rice escape k2", []code{{"rice", 64 + 3, 2}}, ones(16) + "000110" + "000011"},
		{"rice 64 bits", []code{{"rice", 3 << 60, 60}}, "1110" + zeros(60)},
		{"rice 66 bits", []code{{"rice", 7<<58 | 1, 58}}, "11111110" + zeros(57) + "1"},
		// Elias gamma of u+1.
		{"small 0", []code{{"small", 0, 0}}, "1"},
		{"small 1 2", []code{{"small", 1, 0}, {"small", 2, 0}}, "010" + "011"},
		{"small 3 6 7", []code{{"small", 3, 0}, {"small", 6, 0}, {"small", 7, 0}}, "00100" + "00111" + "0001000"},
	} {
		var w bitWriter
		for _, c := range tc.codes {
			switch c.kind {
			case "bits":
				w.writeBits(c.v, c.n)
			case "rice":
				w.writeRice(c.v, uint(c.n))
			default:
				w.writeSmall(c.v)
			}
		}
		if got := bitString(&w); got != tc.want {
			t.Errorf("%s: wrote\n%s\nwant\n%s", tc.name, got, tc.want)
			continue
		}
		// Read back both from the writer's buffer (zeros past its end up
		// to its capacity) and from one cut at its last byte.
		for _, r := range []bitReader{newBitReader(&w), {buf: append([]byte(nil), w.buf...)}} {
			for i, c := range tc.codes {
				var got uint64
				switch c.kind {
				case "bits":
					got = r.readBits(c.n)
					if c.n < 64 {
						c.v &= 1<<c.n - 1
					}
				case "rice":
					got = r.readRice(uint(c.n))
				default:
					got = r.readSmall()
				}
				if got != c.v {
					t.Errorf("%s: code %d read %#x, want %#x", tc.name, i, got, c.v)
				}
			}
			if r.pos != w.nbit {
				t.Errorf("%s: read %d bits, wrote %d", tc.name, r.pos, w.nbit)
			}
		}
	}
}

// TestBitWriterGrowth: the buffer grows by an eighth, not double, and keeps
// zeros past the written bits.
func TestBitWriterGrowth(t *testing.T) {
	var w bitWriter
	for range 100_000 {
		w.writeBits(0b1011, 4)
	}
	if len(w.buf) != 50_000 {
		t.Fatalf("%d bytes for 400,000 bits", len(w.buf))
	}
	if spare := cap(w.buf) - len(w.buf); spare > len(w.buf)/8+16+8192 {
		t.Errorf("capacity %d for %d bytes: more than an eighth and a page to spare", cap(w.buf), len(w.buf))
	}
	for _, b := range w.buf[len(w.buf):cap(w.buf)] {
		if b != 0 {
			t.Fatal("a byte past the written ones is not zero")
		}
	}
}

// roundTripValues adds vs to a gauge series and checks that it decodes
// them bit for bit; it returns the bits they took.
func roundTripValues(t *testing.T, name string, vs []float64) int {
	t.Helper()
	var ss storedSeries
	ss.meta.Type = scrape.Gauge
	var sc rowScratch
	for _, v := range vs {
		ss.addValue(v, &sc)
	}
	s := &Series{Type: scrape.Gauge}
	ss.decodeValues(&decodeBuffers{}, s)
	if len(s.V) != len(vs) {
		t.Fatalf("%s: %d values back, want %d", name, len(s.V), len(vs))
	}
	for i := range vs {
		if math.Float64bits(s.V[i]) != math.Float64bits(vs[i]) {
			t.Fatalf("%s: value %d = %v (%#x), want %v (%#x)", name, i, s.V[i], math.Float64bits(s.V[i]), vs[i], math.Float64bits(vs[i]))
		}
	}
	return ss.w.nbit
}

// TestColumnRoundTrip: every value comes back bit for bit, whole numbers
// and floats, a column turning to floats midway, and the floats a
// whole-number column cannot hold (-0, ±2^53, NaN payloads, ±Inf).
func TestColumnRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	random := make([]float64, 5000)
	for i := range random {
		random[i] = math.Float64frombits(rng.Uint64())
	}
	latencySum := make([]float64, 5000)
	for i := 1; i < len(latencySum); i++ {
		latencySum[i] = latencySum[i-1] + rng.ExpFloat64()*0.7
	}
	jumpy := make([]float64, 5000)
	for i := range jumpy {
		jumpy[i] = float64(rng.IntN(3) * int(rng.Int64N(1<<52)))
	}
	negZero, nanPayload := math.Copysign(0, -1), math.Float64frombits(0x7ff8_0000_0000_0001)
	for _, tc := range []struct {
		name string
		vs   []float64
	}{
		{"empty", nil},
		{"one value", []float64{3.5}},
		{"counter with resets", []float64{0, 5, 12, 12, 3, 9, 0, 1e15, 7}},
		{"whole bounds", []float64{maxExactInt - 1, -(maxExactInt - 1), 0, maxExactInt - 1}},
		{"then fraction", []float64{1, 2, 3, 3.5, 4, 5}},
		{"fraction first", []float64{0.25, 1, 2}},
		{"specials", []float64{5, math.NaN(), nanPayload, 6, math.Inf(1), math.Inf(-1), negZero, 0, negZero, maxExactInt, -maxExactInt, math.MaxFloat64, math.SmallestNonzeroFloat64, -1e300, 0.1, 0.2, 0.30000000000000004}},
		{"negative zero first", []float64{negZero, 1, 2}},
		// 3's average step decays to 0 in 4 samples, while the miss of
		// the first still keeps k at 1: the fifth 3 is a column at rest,
		// coded with k 1, and the moves after it must read in step.
		{"held while k is up", []float64{3, 3, 3, 3, 3, 3, 3, 3, 9, 3, 7, 7}},
		{"random bits", random},
		{"latency sum", latencySum},
		{"jumpy whole numbers", jumpy},
	} {
		roundTripValues(t, tc.name, tc.vs)
	}
}

// TestColumnRoundTripRandom: random walks that mix every habit a column
// adapts to (holding still, steps of every size, steady growth, jumps and
// resets, fractions) round-trip, each switching habits at random.
func TestColumnRoundTripRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for seq := range 300 {
		vs := make([]float64, 0, 400)
		v, step := 0.0, 0.0
		habit := 0
		for range cap(vs) {
			if rng.IntN(20) == 0 {
				habit, step = rng.IntN(6), float64(rng.IntN(50))
			}
			switch habit {
			case 0: // still
			case 1:
				v += float64(rng.IntN(9) - 4)
			case 2:
				v += step
			case 3:
				if rng.IntN(10) == 0 {
					v = float64(rng.Int64N(1 << 40))
				}
			case 4:
				if rng.IntN(5) == 0 {
					v += float64(rng.IntN(3))
				}
			default:
				if seq%2 == 0 { // half the sequences stay whole
					v += rng.ExpFloat64()
				}
			}
			vs = append(vs, v)
		}
		roundTripValues(t, "random walk", vs)
	}
}

// TestColumnCost: the bits a column takes, worked out by hand from the
// code (compact.go): the first miss costs its size, a prediction that
// stays right soon costs a bit.
func TestColumnCost(t *testing.T) {
	steady := make([]float64, 1000)
	for i := range steady {
		steady[i] = float64(7 * i)
	}
	still := make([]float64, 8000)
	for i := range still {
		still[i] = 42
	}
	for _, tc := range []struct {
		name string
		vs   []float64
		bits int
	}{
		// 7: zigzag 14, k 0: 14 ones and a zero. The miss (capped at
		// 8<<0) sets k to 3, as 1<<3 ≥ 8: the next 7, predicted by the
		// last value, is a zero and 3 bits. Then misses 8 over 2 and 3
		// samples: k 2, 3 bits each.
		{"7 7 7 7", []float64{7, 7, 7, 7}, 15 + 4 + 3 + 3},
		// 42: zigzag 84 escapes: 16 ones, 6 (bit length less one) in 6
		// bits, 6 bits. Misses 8 over n samples: k 3, 2, 2 (n 1 to 3),
		// 1 (n 4 to 7), 0 from n 8 on.
		{"42 × 8000", still, 28 + 4 + 3 + 3 + 4*2 + 7992},
		// 0: a bit. 7: zigzag 14 with k 0, 15 bits; misses 8 over 2
		// samples, k 2. 14: the last value predicts it, 14 with k 2 is
		// '1110' and 2 bits; misses 8+14 over 3, k 3. From 21 on the last
		// step predicts exactly: with misses 22 over n samples, k 3 for
		// n 3 to 5, 2 for n 6 to 10, 1 for n 11 to 18 (halved at 16 to
		// 11 over 8), then 0.
		{"7 a scrape", steady, 1 + 15 + 6 + 3*4 + 5*3 + 8*2 + 981},
	} {
		if n := roundTripValues(t, tc.name, tc.vs); n != tc.bits {
			t.Errorf("%s: %d bits, want %d", tc.name, n, tc.bits)
		}
	}
}

// FuzzColumn: any sequence of values, whole numbers with steps of every
// size the code has, fractions, and any float64 bit pattern, round-trips.
func FuzzColumn(f *testing.F) {
	f.Add([]byte{0, 1, 2, 0x80, 0xff, 0x7f, 0x40, 0x3f})
	f.Add([]byte("llmbench counts"))
	f.Add([]byte{5, 0, 0, 0, 0, 0, 0, 0xf0, 0x7f})
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
				if len(b) >= 8 {
					last = math.Float64frombits(binary.LittleEndian.Uint64(b))
					b = b[8:]
				}
			}
			vs = append(vs, last)
		}
		roundTripValues(t, "fuzz", vs)
	})
}
