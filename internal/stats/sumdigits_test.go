package stats

import (
	"math"
	"strconv"
	"testing"
)

// TestReadSumDigits: the digits each printer keeps, read back from the
// sums it printed, and the half-unit each sum may then be off by.
func TestReadSumDigits(t *testing.T) {
	// A run's cumulative sums: latencies around 0.05 s, growing from one
	// observation's worth to a few thousand seconds' worth.
	latencies := make([]float64, 40)
	for i := range latencies {
		latencies[i] = 0.0487213 * math.Pow(1.31, float64(i)) * (1 + 0.01*math.Sin(float64(i)))
	}
	// Token counts: integers, exact.
	tokens := make([]float64, 40)
	for i := range tokens {
		tokens[i] = float64(1370*i*i + 11*i) // past a million from the 28th
	}
	scaled := func(sums []float64, by float64) []float64 {
		out := make([]float64, len(sums))
		for i, s := range sums {
			out[i] = s * by
		}
		return out
	}
	print := func(sums []float64, format byte, digits int) []float64 {
		out := make([]float64, len(sums))
		for i, s := range sums {
			out[i], _ = strconv.ParseFloat(strconv.FormatFloat(s, format, digits, 64), 64)
		}
		return out
	}
	sixDecimals := print(latencies, 'f', 6)
	largest := sixDecimals[len(sixDecimals)-1] // 1,8xx.xxxxxx: ten digits
	for _, c := range []struct {
		name string
		sums []float64
		want sumDigits
		// at is a sum and its half-unit: how far the printed sum may be
		// off the value it was printed from.
		at, halfUnit float64
	}{
		// In full, a float64 shows 16 or 17 digits: nothing is left to
		// allow for beyond its own rounding.
		{"printed in full (Go, Python, Rust clients)", latencies, sumDigits{}, 1234.56, 0},
		// Sums up to 1.8·10⁹ at six decimals: the largest show 16 digits,
		// and the decimals were read before them.
		{"six decimals past a billion", print(scaled(latencies, 1e6), 'f', 6), sumDigits{16, 6}, 48721.3, 5e-7},
		{"six significant digits (a C++ stream's default)", print(latencies, 'g', 6), sumDigits{6, 7}, 1234.56, 0.005},
		{"six significant digits, a small sum", print(latencies, 'g', 6), sumDigits{6, 7}, 0.0638273, 5e-8},
		{"six decimals (prometheus-cpp)", sixDecimals, sumDigits{10, 6}, 0.063827, 5e-7},
		{"six decimals, the largest sum", sixDecimals, sumDigits{10, 6}, largest, 5e-7},
		{"three decimals", print(latencies, 'f', 3), sumDigits{7, 3}, 12.5, 5e-4},
		{"three decimals, a sum printed 0.000", print(latencies, 'f', 3), sumDigits{7, 3}, 0, 5e-4},
		{"token counts: integers, exact", tokens, sumDigits{}, 2134567, 0},
		{"token counts past a million at six significant digits", print(tokens, 'g', 6), sumDigits{6, 0}, 213456, 0.5}, // exact below a million
		{"token counts past a million at six significant digits, large", print(tokens, 'g', 6), sumDigits{6, 0}, 2.13456e6, 5},
		{"seven sums: too few to tell", print(latencies[:7], 'g', 6), sumDigits{}, 0.5, 0},
		{"idle scrapes repeat a sum: counted once", print(append(append([]float64{}, latencies[:7]...), latencies[6], latencies[6], 0, 0), 'g', 6), sumDigits{}, 0.5, 0},
		{"nothing observed", make([]float64, 30), sumDigits{}, 0, 0},
	} {
		got := readSumDigits(c.sums)
		if got != c.want {
			t.Errorf("%s: read %+v, want %+v", c.name, got, c.want)
			continue
		}
		if c.at != 0 || c.halfUnit != 0 {
			if u := got.halfUnit(c.at); math.Abs(u-c.halfUnit) > 1e-12*c.halfUnit {
				t.Errorf("%s: half-unit of %g is %g, want %g", c.name, c.at, u, c.halfUnit)
			}
		}
	}
}

// TestDecimalDigits: strconv's 'e' form read as significant digits and a
// decimal exponent.
func TestDecimalDigits(t *testing.T) {
	for _, c := range []struct {
		in                    string
		significant, exponent int
	}{
		{"1.2345e+03", 5, 3},
		{"5e-07", 1, -7},
		{"1.0500e+00", 3, 0},
		{"3.0000000000000004e-01", 17, -1},
		{"1e+21", 1, 21},
	} {
		s, e := decimalDigits([]byte(c.in))
		if s != c.significant || e != c.exponent {
			t.Errorf("%s: %d digits, exponent %d; want %d, %d", c.in, s, e, c.significant, c.exponent)
		}
	}
}
