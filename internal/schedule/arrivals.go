package schedule

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Arrival patterns (--arrival-pattern, alias --request-rate-mode).
const (
	PatternConstant = "constant"
	PatternPoisson  = "poisson"
	PatternGamma    = "gamma"
)

// Arrivals draws the gaps between the requests of a rate-driven phase.
// Each pattern is one small type; adding one is one more case in
// NewArrivals.
type Arrivals interface {
	// Gap is the wait before the next request at rate requests/s.
	Gap(rng *rand.Rand, rate float64) time.Duration
}

// NewArrivals returns the pattern's arrivals; smoothness is gamma's shape
// (1: Poisson; larger: more regular; smaller: burstier).
func NewArrivals(pattern string, smoothness float64) (Arrivals, error) {
	switch pattern {
	case PatternConstant:
		return constantArrivals{}, nil
	case PatternPoisson, "":
		return poissonArrivals{}, nil
	case PatternGamma:
		if !(smoothness > 0) || math.IsInf(smoothness, 0) {
			return nil, fmt.Errorf("--arrival-smoothness %g: gamma arrivals need a positive smoothness (1 is Poisson, larger is more regular)", smoothness)
		}
		return gammaArrivals{shape: smoothness}, nil
	}
	return nil, fmt.Errorf("--arrival-pattern %q: use constant, poisson or gamma", pattern)
}

// constantArrivals are evenly spaced, 1/rate apart.
type constantArrivals struct{}

func (constantArrivals) Gap(_ *rand.Rand, rate float64) time.Duration {
	return seconds(1 / rate)
}

// poissonArrivals have exponential gaps of mean 1/rate.
type poissonArrivals struct{}

func (poissonArrivals) Gap(rng *rand.Rand, rate float64) time.Duration {
	return seconds(rng.ExpFloat64() / rate)
}

// gammaArrivals have gamma-distributed gaps of mean 1/rate and
// coefficient of variation 1/√shape, as vLLM's benchmark "burstiness".
type gammaArrivals struct{ shape float64 }

func (g gammaArrivals) Gap(rng *rand.Rand, rate float64) time.Duration {
	return seconds(Gamma(rng, g.shape) / (g.shape * rate))
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// Gamma draws from the gamma distribution of the given shape and scale 1
// (Marsaglia and Tsang's method; shapes below 1 by boosting to shape+1).
func Gamma(rng *rand.Rand, shape float64) float64 {
	if shape < 1 {
		u := rng.Float64()
		for u == 0 {
			u = rng.Float64()
		}
		return Gamma(rng, shape+1) * math.Pow(u, 1/shape)
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := rng.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}

// rampUpdate is how often a ramped rate changes, as AIPerf's; the ramp
// starts at target × rampUpdate / ramp.
const rampUpdate = 100 * time.Millisecond

// rateAt is the request rate at offset at into a phase: target, or on a
// ramp of length ramp the linear climb from target·(0.1 s / ramp) to
// target.
func rateAt(target float64, ramp, at time.Duration) float64 {
	if ramp <= 0 || at >= ramp {
		return target
	}
	start := target * min(1, float64(rampUpdate)/float64(ramp))
	return start + (target-start)*float64(at)/float64(ramp)
}

// slotOpens is when the k-th worker (0-based) of n may start on a
// concurrency ramp: the first at once, then one more at even steps, the
// last at ramp.
func slotOpens(k, n int, ramp time.Duration) time.Duration {
	if ramp <= 0 || n <= 1 || k == 0 {
		return 0
	}
	return time.Duration(float64(ramp) * float64(k) / float64(n-1))
}
