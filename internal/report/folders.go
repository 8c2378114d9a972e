package report

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/llmbench/llmbench/internal/artifacts"
)

// Build makes the page of artifact folders, as `llmbench plot` is given
// them. One folder is drawn as what it holds: a search (search_history.json),
// a sweep (its sweep aggregate), a multi-run (aggregate/ and
// profile_runs/), a single run, or else every run found beneath it. Several
// folders are runs set side by side.
func Build(dirs []string, generator string) (*Page, error) {
	if len(dirs) == 1 {
		dir := dirs[0]
		switch {
		case regular(filepath.Join(dir, "search_history.json")):
			return Search(dir, generator)
		case regular(filepath.Join(dir, "sweep_aggregate", sweepSummaryFile)) || regular(filepath.Join(dir, "aggregate", "sweep_aggregate", sweepSummaryFile)):
			return Sweep(dir, generator)
		case regular(filepath.Join(dir, "aggregate", confidenceFile)):
			return MultiRun(dir, generator)
		}
	}
	var runs []*artifacts.Run
	for _, dir := range dirs {
		found, err := findRuns(dir)
		if err != nil {
			return nil, err
		}
		runs = append(runs, found...)
	}
	switch len(runs) {
	case 0:
		return nil, fmt.Errorf("no run found in %v: a run's folder holds %s or %s (files written with --profile-export-prefix are not found)", dirs, artifacts.RecordsFile, artifacts.ExportFile)
	case 1:
		return SingleRun(runs[0], generator), nil
	}
	return Runs(runs, generator), nil
}

// findRuns loads dir when it is a run's folder, else every run folder
// beneath it, in path order.
func findRuns(dir string) ([]*artifacts.Run, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("plot %s: %w", dir, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("plot %s: not a folder: give artifact folders", dir)
	}
	var dirs []string
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (regular(filepath.Join(path, artifacts.RecordsFile)) || regular(filepath.Join(path, artifacts.ExportFile))) {
			dirs = append(dirs, path)
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("plot %s: %w", dir, err)
	}
	slices.Sort(dirs)
	var out []*artifacts.Run
	for _, d := range dirs {
		r, err := artifacts.LoadRun(d, artifacts.DefaultNames, RecordTags...)
		if errors.Is(err, artifacts.ErrNotARun) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}
