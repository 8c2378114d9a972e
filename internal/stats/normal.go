package stats

import "math"

// The standard normal law's functions, and a normal law's mass on a
// bucket, each computed where it stays exact (the upper tail by its
// survival function).

// normalCDF is the standard normal distribution function Φ(z).
func normalCDF(z float64) float64 {
	return 0.5 * math.Erfc(-z/math.Sqrt2)
}

// normalSurvival is 1 − Φ(z), exact far in the upper tail.
func normalSurvival(z float64) float64 {
	return 0.5 * math.Erfc(z/math.Sqrt2)
}

// normalDensity is φ(z).
func normalDensity(z float64) float64 {
	if math.IsInf(z, 0) {
		return 0
	}
	return math.Exp(-z*z/2) / math.Sqrt(2*math.Pi)
}

// normalQuantile is Φ⁻¹(p).
func normalQuantile(p float64) float64 {
	return math.Sqrt2 * math.Erfinv(2*p-1)
}

// normalMass is the probability N(mu, s²) gives (lower, upper].
func normalMass(lower, upper, mu, s float64) float64 {
	a, b := (lower-mu)/s, (upper-mu)/s
	if a > 0 {
		return normalSurvival(a) - normalSurvival(b)
	}
	return normalCDF(b) - normalCDF(a)
}
