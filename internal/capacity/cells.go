package capacity

import (
	"github.com/llmbench/llmbench/internal/config"
	"github.com/llmbench/llmbench/internal/sweep"
)

// Cells are the cells the comma lists of p sweep, in the order they run,
// with the seeds they run with, and for each the flag values that make it
// from p's command line: what 'llmbench config expand' lists. A profile
// without comma lists has none.
func Cells(p config.Profile) ([]sweep.Cell, [][][2]string, error) {
	if !p.Swept() {
		return nil, nil, nil
	}
	plan, err := plainSweep(p)
	if err != nil {
		return nil, nil, err
	}
	// runSweep's rule: --set-consistent-seed with several trials and no
	// --random-seed seeds from 42.
	base := p.Input.RandomSeed
	if base == nil && p.MultiRun.NumRuns > 1 && p.MultiRun.ConsistentSeed {
		s := int64(42)
		base = &s
	}
	sweep.AssignSeeds(plan.cells, base, p.Sweep.SameSeed)
	ovs := make([][][2]string, len(plan.cells))
	for i, c := range plan.cells {
		if ovs[i], err = overrides(c); err != nil {
			return nil, nil, err
		}
	}
	return plan.cells, ovs, nil
}
