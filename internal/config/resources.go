package config

import (
	"fmt"
	"math"
)

// Machine is what this machine lets a run use, as ReadMachine finds it;
// zero fields are unknown and not checked.
type Machine struct {
	// OpenFiles and OpenFilesMax are the soft and hard RLIMIT_NOFILE (Go
	// raises the soft limit to the hard one at start-up on Linux).
	OpenFiles, OpenFilesMax uint64
	// AvailableMemory is MemAvailable, in bytes.
	AvailableMemory uint64
}

// Memory a synthetic prompt token costs while the dataset is held: the
// prompt text (about 5 bytes a token), its JSON payload and the rendering
// of inputs.json (as much again each), and the token ids while it is made.
const datasetBytesPerToken = 3*5 + 8

// openFilesReserve covers what a run opens besides request connections:
// artifact files, scrape connections, the listener, stdio.
const openFilesReserve = 64

// CheckMachine reports, before anything is generated or sent, a run this
// machine cannot hold: a dataset larger than its memory, or more
// connections than its open-file limit allows.
func (p *Profile) CheckMachine(m Machine) error {
	in := p.Input
	tokens := float64(in.NumDatasetEntries) * (in.Prompt.InputTokens.Mean + 2*in.Prompt.InputTokens.Stddev)
	if err := m.CheckDataset(tokens, fmt.Sprintf("the synthetic dataset (%d prompts of about %.3g tokens)", in.NumDatasetEntries, in.Prompt.InputTokens.Mean),
		"lower --synthetic-input-tokens-mean or --num-dataset-entries"); err != nil {
		return err
	}
	if conc := p.Loadgen.Concurrency; conc > 0 && m.OpenFiles > 0 {
		perRequest := uint64(1)
		if p.Endpoint.Mock {
			perRequest = 2 // the built-in server holds the other end in this process
		}
		needFiles := uint64(conc)*perRequest + openFilesReserve
		if needFiles > m.OpenFiles {
			hint := fmt.Sprintf("raise it with 'ulimit -n %d' before running", needFiles)
			if m.OpenFilesMax > 0 && needFiles > m.OpenFilesMax {
				hint = fmt.Sprintf("that is above the hard limit of %d too: raise it as root (limits.conf, systemd LimitNOFILE, or 'ulimit -Hn %d'), or lower --concurrency", m.OpenFilesMax, needFiles)
			}
			return fmt.Errorf("--concurrency %d needs about %d open files but this process may open %d (ulimit -n): %s", conc, needFiles, m.OpenFiles, hint)
		}
	}
	return nil
}

// CheckDataset refuses prompts of tokens tokens in all that would need
// more than half the available memory, saying what and what to do.
func (m Machine) CheckDataset(tokens float64, what, remedy string) error {
	need := tokens * datasetBytesPerToken
	if m.AvailableMemory > 0 && need > float64(m.AvailableMemory)/2 {
		return fmt.Errorf("%s would need about %s of memory, more than half of the %s available: %s",
			what, bytesText(need), bytesText(float64(m.AvailableMemory)), remedy)
	}
	return nil
}

func bytesText(b float64) string {
	units := []string{"B", "KB", "MB", "GB", "TB", "PB", "EB"}
	i := 0
	for b >= 1000 && i < len(units)-1 {
		b /= 1000
		i++
	}
	if math.IsInf(b, 0) || b >= 1000 {
		return "more than 1000 EB"
	}
	return fmt.Sprintf("%.3g %s", b, units[i])
}
