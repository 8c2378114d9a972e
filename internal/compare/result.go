package compare

// Result is a comparison: everything compare.json holds.
type Result struct {
	Inputs  Inputs       `json:"inputs"`
	Metrics []Entry      `json:"metrics"`
	Gates   []GateResult `json:"gates"`
	Summary Summary      `json:"summary"`
	// Notes explain what the numbers rest on: methods not applied, data
	// missing or inconsistent.
	Notes []string `json:"notes"`
}

// Inputs describe what was compared, and how.
type Inputs struct {
	Base      Input   `json:"base"`
	New       Input   `json:"new"`
	Method    string  `json:"method"`
	Level     float64 `json:"level"`
	Resamples int     `json:"resamples"`
	Seed      uint64  `json:"seed"`
}

// Input is one side's folder.
type Input struct {
	Path string `json:"path"`
	// Layout is "single_run" or "multi_run".
	Layout string `json:"layout"`
	Runs   int    `json:"runs"`
	// Requests counts the profiling requests, failed ones included.
	Requests int `json:"requests"`
}

// Entry is the comparison of one metric's statistic.
type Entry struct {
	Tag  string `json:"tag"`
	Stat string `json:"stat"`
	Unit string `json:"unit"`
	Base Num    `json:"base"`
	New  Num    `json:"new"`
	// ChangeAbs is New−Base in Unit (percentage points for error_rate);
	// ChangeRel is (New−Base)/Base, a fraction.
	ChangeAbs Num `json:"change_abs"`
	ChangeRel Num `json:"change_rel"`
	// The confidence interval of the change, relative and absolute.
	CIRelLow  Num       `json:"ci_rel_low"`
	CIRelHigh Num       `json:"ci_rel_high"`
	CIAbsLow  Num       `json:"ci_abs_low"`
	CIAbsHigh Num       `json:"ci_abs_high"`
	Verdict   string    `json:"verdict"`
	Better    Direction `json:"better"`
	Method    string    `json:"method"`
	// NBase and NNew count what the interval rests on: requests for a
	// bootstrap or a two-proportion interval, runs for Welch's.
	NBase int `json:"n_base"`
	NNew  int `json:"n_new"`
	// Note says why an entry is not tested, or what to read it with.
	Note string `json:"note,omitempty"`
}

// Summary counts the verdicts and the failed gates.
type Summary struct {
	Improved            int `json:"improved"`
	Regressed           int `json:"regressed"`
	NoSignificantChange int `json:"no_significant_change"`
	Changed             int `json:"changed"`
	NotTested           int `json:"not_tested"`
	Gates               int `json:"gates"`
	GatesFailed         int `json:"gates_failed"`
}

// Failed reports whether a gate failed (including a gate that could not
// be checked).
func (r *Result) Failed() bool { return r.Summary.GatesFailed > 0 }
