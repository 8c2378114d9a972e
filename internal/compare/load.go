package compare

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"

	"github.com/llmbench/llmbench/internal/artifacts"
)

// The files of one run, as AIPerf and llmbench name them without
// --profile-export-prefix.
const (
	RecordsFile = "profile_export.jsonl"
	ExportFile  = "profile_export_aiperf.json"
)

// runDirName matches the folders of --num-profile-runs: run_0001, …
var runDirName = regexp.MustCompile(`^run_\d{4,}$`)

// Side is one artifact folder, loaded: a single run, or the runs of a
// multi-run profile.
type Side struct {
	// Dir is the folder as given to Load.
	Dir string
	// Runs are the runs that left artifacts, in order (one for a single run).
	Runs []Run
	// Multi is set for a multi-run folder (profile_runs/run_NNNN or, as
	// AIPerf 0.11 wrote it, run_NNNN directly in the folder).
	Multi bool
	// Skipped names run folders that held neither file (a failed run).
	Skipped []string
}

// Run is one run's artifacts.
type Run struct {
	// Dir is the run's folder.
	Dir string
	// HasRecords is set when the run has a profile_export.jsonl.
	HasRecords bool
	// Values holds, per record metric tag, the per-request values of the
	// successful profiling requests, in file order. List-valued metrics
	// (inter_chunk_latency) are left out.
	Values map[string][]float64
	// Units are the record metrics' units, as the records give them.
	Units map[string]string
	// Requests counts the profiling requests, successful or not; Errors
	// those that failed. From the records when there are any, otherwise
	// from the export's request_count and error_request_count.
	Requests, Errors int
	// Export is profile_export_aiperf.json's metrics, nil without the file.
	Export map[string]ExportMetric
}

// ExportMetric is one metric of profile_export_aiperf.json.
type ExportMetric = artifacts.Metric

// Load reads an artifact folder: a single run (profile_export.jsonl
// and/or profile_export_aiperf.json) or a multi-run profile
// (profile_runs/run_0001/…, or run_0001/… as AIPerf 0.11 laid it out).
func Load(dir string) (*Side, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", dir, err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("load %s: not a folder: give the artifact folder of a profile run", dir)
	}
	s := &Side{Dir: dir}
	runDirs, err := findRunDirs(dir)
	if err != nil {
		return nil, err
	}
	if len(runDirs) > 0 {
		s.Multi = true
		for _, rd := range runDirs {
			r, ok, err := loadRun(rd)
			if err != nil {
				return nil, err
			}
			if !ok {
				s.Skipped = append(s.Skipped, rd)
				continue
			}
			s.Runs = append(s.Runs, *r)
		}
		if len(s.Runs) == 0 {
			return nil, fmt.Errorf("load %s: none of its %d run folders holds %s or %s: every run failed, or the files have an export prefix (not supported)",
				dir, len(runDirs), ExportFile, RecordsFile)
		}
		return s, nil
	}
	r, ok, err := loadRun(dir)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("load %s: not an artifact folder: looked for %s or %s (a single run) and for profile_runs/run_0001/ or run_0001/ (a multi-run profile), found none; files written with --profile-export-prefix are not supported",
			dir, RecordsFile, ExportFile)
	}
	s.Runs = []Run{*r}
	return s, nil
}

// findRunDirs lists a multi-run folder's run folders, sorted: those under
// profile_runs/ (AIPerf 0.12) or, failing that, directly in dir (0.11).
func findRunDirs(dir string) ([]string, error) {
	for _, parent := range []string{filepath.Join(dir, "profile_runs"), dir} {
		entries, err := os.ReadDir(parent)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("load %s: %w", dir, err)
		}
		var out []string
		for _, e := range entries {
			if e.IsDir() && runDirName.MatchString(e.Name()) {
				out = append(out, filepath.Join(parent, e.Name()))
			}
		}
		if len(out) > 0 {
			slices.Sort(out)
			return out, nil
		}
	}
	return nil, nil
}

// loadRun reads one run's folder; ok is false when it holds neither file.
func loadRun(dir string) (r *Run, ok bool, err error) {
	r = &Run{Dir: dir}
	export, err := os.ReadFile(filepath.Join(dir, ExportFile))
	switch {
	case err == nil:
		if r.Export, _, err = artifacts.ParseExport(export); err != nil {
			return nil, false, fmt.Errorf("read %s: %w", filepath.Join(dir, ExportFile), err)
		}
		ok = true
	case !errors.Is(err, fs.ErrNotExist):
		return nil, false, fmt.Errorf("read %s: %w", filepath.Join(dir, ExportFile), err)
	}
	f, err := os.Open(filepath.Join(dir, RecordsFile))
	switch {
	case err == nil:
		defer f.Close()
		if err := r.readRecords(f); err != nil {
			return nil, false, fmt.Errorf("read %s: %w", filepath.Join(dir, RecordsFile), err)
		}
		r.HasRecords, ok = true, true
	case !errors.Is(err, fs.ErrNotExist):
		return nil, false, fmt.Errorf("read %s: %w", filepath.Join(dir, RecordsFile), err)
	case r.Export != nil:
		// AIPerf's request_count counts the successful requests only.
		good := int(r.Export["request_count"].Stats["avg"])
		r.Errors = int(r.Export["error_request_count"].Stats["avg"])
		r.Requests = good + r.Errors
	}
	return r, ok, nil
}
