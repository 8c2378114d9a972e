package sweep

import (
	"fmt"
	"path/filepath"
)

// Layout places a sweep's artifacts as AIPerf does (its orchestrator's
// _resolve_artifact_dir and _sweep_aggregate): Base is the run's artifact
// directory, Trials the runs per cell (--num-profile-runs), Independent
// the --parameter-sweep-mode (false: repeated, the default).
type Layout struct {
	Base        string
	Trials      int
	Independent bool
}

// TrialLabel names trial t (0-based) as AIPerf does: trial_0001, …
func TrialLabel(t int) string { return fmt.Sprintf("trial_%04d", t+1) }

// Mode is the sweep_mode AIPerf records: "repeated" or "independent".
func (l Layout) Mode() string { return mode(l.Independent) }

func mode(independent bool) string {
	if independent {
		return "independent"
	}
	return "repeated"
}

// RunDir is where trial t (0-based) of cell c writes its artifacts:
// <base>/<dir> with one trial; with several, repeated
// <base>/profile_runs/trial_NNNN/<dir> and independent
// <base>/<dir>/profile_runs/trial_NNNN.
func (l Layout) RunDir(c Cell, t int) string {
	switch {
	case l.Trials <= 1:
		return filepath.Join(l.Base, c.Dir)
	case l.Independent:
		return filepath.Join(l.Base, c.Dir, "profile_runs", TrialLabel(t))
	default:
		return filepath.Join(l.Base, "profile_runs", TrialLabel(t), c.Dir)
	}
}

// CellAggregateDir is where cell c's confidence aggregate goes, whatever
// the trial count (AIPerf writes one for single-trial sweeps too):
// repeated <base>/aggregate/<dir>, independent <base>/<dir>/aggregate.
func (l Layout) CellAggregateDir(c Cell) string {
	if l.Independent {
		return filepath.Join(l.Base, c.Dir, "aggregate")
	}
	return filepath.Join(l.Base, "aggregate", c.Dir)
}

// SweepAggregateDir is where profile_export_aiperf_sweep.{json,csv} go:
// <base>/aggregate/sweep_aggregate with several trials in repeated order,
// <base>/sweep_aggregate otherwise.
func (l Layout) SweepAggregateDir() string {
	if l.Trials > 1 && !l.Independent {
		return filepath.Join(l.Base, "aggregate", "sweep_aggregate")
	}
	return filepath.Join(l.Base, "sweep_aggregate")
}
