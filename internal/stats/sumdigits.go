package stats

import (
	"math"
	"strconv"
)

// How far may a scrape's _sum be off its observations' true total? The Go,
// Python and Rust Prometheus clients print a float64 in full (its shortest
// exact form), so a sum is off only by its own float rounding, a relative
// 1e-9 at most. Not every exporter does: prometheus-cpp (Triton's, and so
// TensorRT-LLM's behind Triton) prints six decimals, and a C++ stream left
// at its default precision six significant digits. Such a sum is off by
// up to half its last printed digit, which can exceed the whole sum of a
// quiet interval: read as exact, it would make an interval look torn, or
// let the allowed range (allowed.go) exclude the sample the server saw.
//
// The digits a series was printed with show in its sums themselves. Each
// sum's shortest decimal form has some significant digits and some
// decimals; the most of either over the series is what the printer kept:
// at six decimals no sum shows a seventh, at six significant digits none
// shows a seventh digit, and its large sums none of their decimals. A
// series printed in full shows 16 or 17 digits from its first sum on,
// which ends the reading: nothing is allowed beyond the float's rounding.
//
// A handful of sums cannot tell a printer's digits from a sample's (a
// test's 1.75 and 3.5): under eight that are not zero, they are taken
// as printed in full (sums repeated by idle scrapes counted once). What
// that risks is small: a short run's sums are small, and so is half
// their last digit.
//
// Sums that are all integers are taken as exact: the observations are
// counts (tokens) far more often than a time printed without decimals.
// Only when several of them are too large for the significant digits the
// others show (ending in zeros where counts would not) are they read as
// rounded to those digits.

// sumDigits is what a series' sums show of the digits they were printed
// with: the most significant digits and the most decimals of any sum's
// shortest decimal form. The zero value means printed in full.
type sumDigits struct {
	significant int
	decimals    int
}

// roundedIntegersSeen is how many integer sums too large for the
// significant digits the others show (ending in zeros) it takes to read
// integer sums as rounded rather than as exact counts: by chance alone,
// four exact counts all end in zero once in 10,000 series.
const roundedIntegersSeen = 4

// inFull is the significant digits past which a printer is taken to
// have printed in full: a float64 shows 16 or 17, and the first sum that
// shows 16 stops the reading. Sums grow, so a printer of fixed decimals
// has shown its decimals on the smaller sums before: unless half their
// last unit is below 10⁻¹² of the smallest sum, they are kept.
const inFull = 16

// sumsToReadDigits is how many sums, not zero and each unlike the one
// before, it takes to read their printing.
const sumsToReadDigits = 8

// readSumDigits reads the digits the sums were printed with.
func readSumDigits(sums []float64) sumDigits {
	var d sumDigits
	var buf [32]byte
	seen, smallest := 0, math.Inf(1)
	eachSum(sums, func(s float64) bool {
		seen++
		smallest = math.Min(smallest, math.Abs(s))
		significant, exponent := decimalDigits(strconv.AppendFloat(buf[:0], math.Abs(s), 'e', -1, 64))
		d.significant = max(d.significant, significant)
		d.decimals = max(d.decimals, significant-1-exponent)
		return significant < inFull
	})
	switch {
	case d.significant >= inFull && 0.5*math.Pow10(-d.decimals) <= 1e-12*smallest:
		return sumDigits{} // in full: half a unit is below the float's own rounding
	case d.significant >= inFull:
		return d // six decimals, say, on sums past 10⁹: read before them
	case seen < sumsToReadDigits:
		return sumDigits{}
	}
	if d.decimals == 0 {
		// Integers: exact counts, unless several end in the zeros of a
		// rounding to d.significant digits.
		above, ceiling := 0, math.Pow10(d.significant)
		eachSum(sums, func(s float64) bool {
			if math.Abs(s) >= ceiling {
				above++
			}
			return above < roundedIntegersSeen
		})
		if above < roundedIntegersSeen {
			return sumDigits{}
		}
	}
	return d
}

// eachSum calls fn with each sum that tells something of the printing
// (not zero, finite, and unlike the one before: idle scrapes repeat it),
// for as long as fn asks for more.
func eachSum(sums []float64, fn func(float64) bool) {
	last := 0.0
	for _, s := range sums {
		if s == 0 || s == last || math.IsInf(s, 0) || math.IsNaN(s) {
			continue
		}
		last = s
		if !fn(s) {
			return
		}
	}
}

// decimalDigits returns the significant digits and the decimal exponent of
// a number in strconv's 'e' form ("1.2345e+03": 5 and 3), trailing zeros
// of the mantissa not counted.
func decimalDigits(e []byte) (significant, exponent int) {
	i := 0
	last := 0 // the mantissa's digits up to its last non-zero one
	for ; i < len(e) && e[i] != 'e'; i++ {
		if e[i] >= '0' && e[i] <= '9' {
			significant++
			if e[i] != '0' {
				last = significant
			}
		}
	}
	sign := 1
	for _, c := range e[min(i+1, len(e)):] {
		switch {
		case c == '-':
			sign = -1
		case c >= '0' && c <= '9':
			exponent = 10*exponent + int(c-'0')
		}
	}
	return last, sign * exponent
}

// halfUnit is how far the printed s may be off the value it was printed
// from: half a unit of its last printed digit, whichever of the decimals
// or the significant digits ended it.
func (d sumDigits) halfUnit(s float64) float64 {
	if d.significant == 0 || math.IsInf(s, 0) || math.IsNaN(s) {
		return 0
	}
	u := 0.0
	if d.decimals > 0 {
		u = 0.5 * math.Pow10(-d.decimals) // a zero printed "0.000" too
	}
	if s == 0 {
		return u
	}
	exponent := int(math.Floor(math.Log10(math.Abs(s))))
	return math.Max(u, 0.5*math.Pow10(exponent-d.significant+1))
}

// sumRounding is how far the interval closing at scrape t may sum off
// its observations' true total: the cumulative sums' float rounding,
// relative to their size, and what their printing dropped.
func (d sumDigits) sumRounding(h HistogramSeries, t int) float64 {
	float := 1e-9 * (math.Abs(h.Sum[t]) + math.Abs(h.Sum[t-1]))
	return float + d.halfUnit(h.Sum[t]) + d.halfUnit(h.Sum[t-1])
}
