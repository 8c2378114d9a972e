package stats

// goldenMin narrows [lo, hi] around a minimum of f, unimodal there, by
// golden-section search until the bracket is at most tol wide. It returns
// the final bracket and the better of its two inner points with f there.
func goldenMin(f func(float64) float64, lo, hi, tol float64) (a, b, x, fx float64) {
	const g = 0.6180339887498949
	x1, x2 := hi-g*(hi-lo), lo+g*(hi-lo)
	f1, f2 := f(x1), f(x2)
	for hi-lo > tol {
		if f1 < f2 {
			hi, x2, f2 = x2, x1, f1
			x1 = hi - g*(hi-lo)
			f1 = f(x1)
		} else {
			lo, x1, f1 = x1, x2, f2
			x2 = lo + g*(hi-lo)
			f2 = f(x2)
		}
	}
	if f2 < f1 {
		return lo, hi, x2, f2
	}
	return lo, hi, x1, f1
}
