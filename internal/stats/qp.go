package stats

import "math"

// boxQP minimises ½xᵀAx − bᵀx subject to lo ≤ x ≤ hi and aᵀx = s, for a
// symmetric positive definite A and a > 0, by a primal active-set method:
// solve the equality-constrained problem on the free variables, fix the
// most violated bound, and release a fixed variable whose multiplier says
// the objective would improve inside its bounds. The problems here have a
// few dozen variables, so each step is a dense solve. When s is out of
// reach of the bounds the nearest corner is returned.
func boxQP(A [][]float64, b, lo, hi, a []float64, s float64) []float64 {
	n := len(b)
	x := make([]float64, n)
	minSum, maxSum := 0.0, 0.0
	for i := range n {
		minSum += a[i] * lo[i]
		maxSum += a[i] * hi[i]
	}
	switch {
	case s <= minSum:
		copy(x, lo)
		return x
	case s >= maxSum:
		copy(x, hi)
		return x
	}
	const (
		free = iota
		atLo
		atHi
	)
	state := make([]int, n)
	var lambda float64
	for iter := 0; iter < 8*n+16; iter++ {
		var freeIdx []int
		for i := range n {
			switch state[i] {
			case atLo:
				x[i] = lo[i]
			case atHi:
				x[i] = hi[i]
			default:
				freeIdx = append(freeIdx, i)
			}
		}
		if len(freeIdx) == 0 {
			// Every variable sits on a bound but the sum is reachable:
			// free the one whose bound costs the most.
			release(state, x, A, b, a, 0, lo, hi)
			continue
		}
		lambda = solveFree(A, b, a, s, x, freeIdx)
		worst, worstBy := -1, 0.0
		for _, i := range freeIdx {
			width := hi[i] - lo[i]
			if math.IsInf(width, 1) || width <= 0 {
				width = math.Max(math.Abs(lo[i]), 1)
			}
			if by := (lo[i] - x[i]) / width; by > 1e-12 && by > worstBy {
				worst, worstBy = i, by
			}
			if by := (x[i] - hi[i]) / width; by > 1e-12 && by > worstBy {
				worst, worstBy = i, by
			}
		}
		if worst >= 0 {
			if x[worst] < lo[worst] {
				state[worst] = atLo
			} else {
				state[worst] = atHi
			}
			continue
		}
		if !release(state, x, A, b, a, lambda, lo, hi) {
			break
		}
	}
	for i := range x {
		x[i] = math.Min(math.Max(x[i], lo[i]), hi[i])
	}
	return x
}

// release frees the fixed variable whose multiplier most favours moving it
// inside its bounds; it reports whether there was one.
func release(state []int, x []float64, A [][]float64, b, a []float64, lambda float64, lo, hi []float64) bool {
	best, bestBy := -1, 1e-12
	for i := range x {
		if state[i] == 0 {
			continue
		}
		// The gradient of the Lagrangian: Ax − b − λa.
		g := -b[i] - lambda*a[i]
		for j := range x {
			g += A[i][j] * x[j]
		}
		// Scale: how much the gradient moves across the whole bucket.
		width := hi[i] - lo[i]
		if math.IsInf(width, 1) || width <= 0 {
			width = math.Max(math.Abs(lo[i]), 1)
		}
		scale := math.Max(A[i][i]*width, 1e-300)
		if state[i] == 1 && -g/scale > bestBy || state[i] == 2 && g/scale > bestBy {
			best, bestBy = i, math.Abs(g)/scale
		}
	}
	if best < 0 {
		return false
	}
	state[best] = 0
	return true
}

// solveFree solves the KKT system for the free variables, the others held
// at their values in x:
//
//	A_FF x_F − λ a_F = b_F − A_FB x_B
//	a_Fᵀ x_F         = s − a_Bᵀ x_B
//
// It writes x_F into x and returns λ.
func solveFree(A [][]float64, b, a []float64, s float64, x []float64, freeIdx []int) float64 {
	m := len(freeIdx)
	isFree := make([]bool, len(x))
	for _, i := range freeIdx {
		isFree[i] = true
	}
	kkt := make([][]float64, m+1)
	for r := range kkt {
		kkt[r] = make([]float64, m+2) // the last column is the right-hand side
	}
	restSum := 0.0
	for i := range x {
		if !isFree[i] {
			restSum += a[i] * x[i]
		}
	}
	for r, i := range freeIdx {
		rhs := b[i]
		for j := range x {
			if !isFree[j] {
				rhs -= A[i][j] * x[j]
			}
		}
		for c, j := range freeIdx {
			kkt[r][c] = A[i][j]
		}
		kkt[r][m] = -a[i]
		kkt[r][m+1] = rhs
		kkt[m][r] = a[i]
	}
	kkt[m][m+1] = s - restSum
	sol := gaussSolve(kkt)
	for r, i := range freeIdx {
		x[i] = sol[r]
	}
	return sol[m]
}

// gaussSolve solves the augmented system [M | y] by Gaussian elimination
// with partial pivoting; a singular pivot leaves its unknown at 0.
func gaussSolve(aug [][]float64) []float64 {
	n := len(aug)
	for col := range n {
		p := col
		for r := col + 1; r < n; r++ {
			if math.Abs(aug[r][col]) > math.Abs(aug[p][col]) {
				p = r
			}
		}
		aug[col], aug[p] = aug[p], aug[col]
		if aug[col][col] == 0 {
			continue
		}
		for r := col + 1; r < n; r++ {
			f := aug[r][col] / aug[col][col]
			if f == 0 {
				continue
			}
			for c := col; c <= n; c++ {
				aug[r][c] -= f * aug[col][c]
			}
		}
	}
	out := make([]float64, n)
	for r := n - 1; r >= 0; r-- {
		if aug[r][r] == 0 {
			continue
		}
		v := aug[r][n]
		for c := r + 1; c < n; c++ {
			v -= aug[r][c] * out[c]
		}
		out[r] = v / aug[r][r]
	}
	return out
}
