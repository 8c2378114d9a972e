package search

// MonotonicOptions are monotonic_sla's knobs; zero values take AIPerf's
// defaults.
type MonotonicOptions struct {
	// Stability is monotonic_stability_trials: a value's verdict latches
	// once its passes or its fails reach this count (default 2).
	Stability int
	// Precision is the relative bracket width that ends bisection
	// (default 0.05, AIPERF_SEARCH_PLANNER_SLA_PRECISION_DEFAULT).
	Precision float64
}

// Monotonic is AIPerf's monotonic_sla planner (b3): an exponential probe
// from lo, then bisection of [feasible_max, infeasible_min], every value
// asked again until its verdict latches.
type Monotonic struct {
	probe
	stability int
	precision float64
	bisecting bool
	next      int
	fmax      int // latched feasible_max (noValue: none)
	imin      int // latched infeasible_min (noValue: none)
	tally     map[int]*[2]int
}

// NewMonotonic plans a monotonic_sla search of concurrency in [lo, hi]
// within maxIter iterations.
func NewMonotonic(lo, hi, maxIter int, opt MonotonicOptions) (*Monotonic, error) {
	if err := checkRange(lo, hi, maxIter); err != nil {
		return nil, err
	}
	if opt.Stability < 1 {
		opt.Stability = 2
	}
	if opt.Precision <= 0 {
		opt.Precision = defaultPrecision
	}
	return &Monotonic{
		probe:     probe{lo: lo, hi: hi, maxIter: maxIter},
		stability: opt.Stability,
		precision: opt.Precision,
		next:      lo,
		tally:     map[int]*[2]int{},
	}, nil
}

// Next implements Planner.
func (m *Monotonic) Next() (int, bool) { return m.ask(func() int { return m.next }) }

// Reason implements Planner: monotonic_precision_reached,
// monotonic_no_pass_in_range, monotonic_no_failure_in_range or
// max_iterations.
func (m *Monotonic) Reason() string { return m.reason }

// Boundary implements Planner.
func (m *Monotonic) Boundary() *BoundarySummary { return m.bounds(m.fmax, m.imin) }

// Tell implements Planner. It decides on o.Feasible.
func (m *Monotonic) Tell(o Outcome) (bool, error) {
	if err := m.take(o, o.Feasible); err != nil {
		return false, err
	}
	defer m.told()
	v := o.Value
	t := m.tally[v]
	if t == nil {
		t = new([2]int)
		m.tally[v] = t
	}
	if o.Feasible {
		t[0]++
	} else {
		t[1]++
	}
	var pass bool
	switch {
	case t[0] >= m.stability:
		pass = true
	case t[1] >= m.stability:
		pass = false
	default:
		m.next = v // not latched yet: ask the same value again
		return false, nil
	}
	nonMono := m.absorb(v, pass)
	if !m.bisecting {
		m.planProbe(v, pass)
	} else {
		m.planBisect()
	}
	return nonMono, nil
}

// absorb moves the bracket on a latched verdict, or flags it when it
// contradicts the other bound (the bracket is then kept).
func (m *Monotonic) absorb(v int, pass bool) (nonMono bool) {
	if pass {
		nonMono = m.imin != noValue && v >= m.imin
		if (m.fmax == noValue || v > m.fmax) && (m.imin == noValue || v < m.imin) {
			m.fmax = v
		}
		return nonMono
	}
	nonMono = m.fmax != noValue && v <= m.fmax
	if (m.imin == noValue || v < m.imin) && (m.fmax == noValue || v > m.fmax) {
		m.imin = v
	}
	return nonMono
}

func (m *Monotonic) planProbe(v int, pass bool) {
	if m.bracketStep("monotonic", v, pass, &m.fmax, &m.next) {
		m.bisecting = true
		m.planBisect()
	}
}

func (m *Monotonic) planBisect() {
	if m.fmax == noValue {
		m.stop("monotonic_no_pass_in_range")
		return
	}
	if m.imin == noValue {
		m.stop("monotonic_no_failure_in_range")
		return
	}
	if precisionReached(m.fmax, m.imin, m.precision) {
		m.stop("monotonic_precision_reached")
		return
	}
	m.next = m.fmax + (m.imin-m.fmax)/2 // gap ≥ 2: strictly inside
}
