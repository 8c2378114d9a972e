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
	seedCells(p, plan.cells) // as runSweep seeds them
	ovs := make([][][2]string, len(plan.cells))
	for i, c := range plan.cells {
		if ovs[i], err = overrides(c); err != nil {
			return nil, nil, err
		}
	}
	return plan.cells, ovs, nil
}
