package export

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// runDir matches the folders of --num-profile-runs (run_0001, …) and of
// a search's probes (search_iter_0000, …).
var runDir = regexp.MustCompile(`^(run|search_iter)_\d{4}$`)

// shardDir matches the folders of a sharded run's shards, which a merge
// into the run's folder reads and never moves.
var shardDir = regexp.MustCompile(`^shard_\d{4,}$`)

// ShardRecordsFile is the file a shard of a sharded run keeps its records
// in for the merge (written by package benchmark).
const ShardRecordsFile = "shard_records.gob"

// previousNames are the names in an artifact folder that an earlier run
// wrote with this export prefix: its files, the folders of a multi-run
// profile, and those of a sweep or search (its cells' folders, each
// holding a run's exports, trials or aggregate; profile_runs/,
// sweep_aggregate/, search_history.json).
func previousNames(dir, prefix string) []string {
	f := ProfileFiles(prefix)
	sm := ServerMetricsFiles(prefix)
	candidates := []string{f.ProfileJSON, f.ProfileCSV, f.Records, f.Raw, f.Inputs, f.TimeslicesJSON, f.TimeslicesCSV, f.Report,
		sm("json"), sm("csv"), sm("jsonl"), sm("parquet"), GPUTelemetryFile(prefix), ShardRecordsFile, "aggregate",
		"profile_runs", "sweep_aggregate", "search_history.json"}
	var out []string
	for _, name := range candidates {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			out = append(out, name)
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !e.IsDir() || slices.Contains(out, e.Name()) || strings.HasPrefix(e.Name(), "previous_") || shardDir.MatchString(e.Name()) {
			continue
		}
		if runDir.MatchString(e.Name()) || isCell(filepath.Join(dir, e.Name()), f.ProfileJSON) {
			out = append(out, e.Name())
		}
	}
	return out
}

// isCell reports whether a folder is a sweep cell's: it holds a run's
// profile export, or trials (profile_runs/), or the cell's aggregate.
func isCell(dir, profileJSON string) bool {
	for _, name := range []string{profileJSON, "profile_runs", "aggregate"} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			return true
		}
	}
	return false
}

// KeepPrevious moves what an earlier run left in dir (with the same
// export prefix) into dir/previous_<time>/, so that a second run with the
// same settings never silently replaces the first's results. Only
// llmbench's own file and folder names move; anything else in dir stays.
// It returns the folder the files went to, "" when there were none.
func KeepPrevious(dir, prefix string, now time.Time) (string, error) {
	names := previousNames(dir, prefix)
	if len(names) == 0 {
		return "", nil
	}
	dest := filepath.Join(dir, "previous_"+now.Format("20060102-150405"))
	for n := 2; ; n++ {
		if _, err := os.Lstat(dest); os.IsNotExist(err) {
			break
		}
		dest = filepath.Join(dir, fmt.Sprintf("previous_%s-%d", now.Format("20060102-150405"), n))
	}
	if err := os.Mkdir(dest, 0o755); err != nil {
		return "", fmt.Errorf("keep the previous run's files: %w", err)
	}
	for _, name := range names {
		if err := os.Rename(filepath.Join(dir, name), filepath.Join(dest, name)); err != nil {
			return "", fmt.Errorf("keep the previous run's files: %w", err)
		}
	}
	return dest, nil
}
