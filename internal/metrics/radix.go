package metrics

import "math"

// keyed is a value sorted by an unsigned key.
type keyed struct {
	k uint64
	x float64
}

// radixSort sorts a by key, stably, in linear time: six passes of 11
// bits each, skipping the digits every key shares (the high bits of times
// within one run). tmp must be as long as a; the result is a or tmp.
func radixSort(a, tmp []keyed) []keyed {
	const bits, passes = 11, 6
	const mask = 1<<bits - 1
	counts := new([passes][1 << bits]int)
	for _, e := range a {
		for p := range passes {
			counts[p][e.k>>(bits*p)&mask]++
		}
	}
	for p := range passes {
		c := &counts[p]
		shift := bits * p
		if c[a[0].k>>shift&mask] == len(a) {
			continue // every key has this digit
		}
		pos := 0
		for i := range c {
			c[i], pos = pos, pos+c[i]
		}
		for _, e := range a {
			d := e.k >> shift & mask
			tmp[c[d]] = e
			c[d]++
		}
		a, tmp = tmp, a
	}
	return a
}

// floatKey maps a float to a key in the same order (no NaN).
func floatKey(v float64) uint64 {
	b := math.Float64bits(v)
	if b>>63 == 1 {
		return ^b
	}
	return b | 1<<63
}

func keyFloat(k uint64) float64 {
	if k>>63 == 1 {
		return math.Float64frombits(k &^ (1 << 63))
	}
	return math.Float64frombits(^k)
}
