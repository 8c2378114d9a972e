package export

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"
	"time"
)

// TestKeepPreviousSweep: a sweep's or search's folders move with the
// rest; earlier previous_ folders and foreign files stay.
func TestKeepPreviousSweep(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{
		"concurrency_2/profile_export_aiperf.json",
		"mean_128__concurrency_4/profile_runs/trial_0001/profile_export_aiperf.json",
		"rate_5.0/aggregate/profile_export_aiperf_aggregate.json",
		"profile_runs/trial_0001/concurrency_2/profile_export_aiperf.json",
		"aggregate/sweep_aggregate/profile_export_aiperf_sweep.json",
		"sweep_aggregate/profile_export_aiperf_sweep.json",
		"search_iter_0003/profile_runs/run_0001/profile_export_aiperf.json",
		"search_history.json",
		"previous_20260101-000000/profile_export_aiperf.json",
		"notes/readme.txt",
		"my_plots/plot.png",
	} {
		path := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dest, err := KeepPrevious(dir, "", time.Date(2026, 11, 24, 3, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	moved, _ := os.ReadDir(dest)
	var names []string
	for _, e := range moved {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	want := []string{"aggregate", "concurrency_2", "mean_128__concurrency_4", "profile_runs", "rate_5.0", "search_history.json", "search_iter_0003", "sweep_aggregate"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("moved %v, want %v", names, want)
	}
	for _, stays := range []string{"previous_20260101-000000", "notes", "my_plots"} {
		if _, err := os.Stat(filepath.Join(dir, stays)); err != nil {
			t.Errorf("%s moved: %v", stays, err)
		}
	}
}
