package trial

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmbench/llmbench/internal/benchmark"
	"github.com/llmbench/llmbench/internal/config"
	"github.com/llmbench/llmbench/internal/mockserver"
)

func options(t *testing.T, errorEvery int) benchmark.Options {
	t.Helper()
	p := config.Default()
	p.Endpoint.ModelNames = []string{"m"}
	p.Endpoint.Mock = true
	p.Loadgen.Concurrency, p.Loadgen.RequestCount = 2, 6
	p.ServerMetrics.Disabled = true
	if err := p.Finish(); err != nil {
		t.Fatal(err)
	}
	mock := mockserver.DefaultConfig()
	mock.TTFT, mock.ITL, mock.OutputMean, mock.ErrorEvery = time.Millisecond, time.Millisecond, 4, errorEvery
	return benchmark.Options{Profile: p, Mock: mock, Version: "test"}
}

// TestRunJudgesTheOutcome: a run with results is usable, in its own
// directory and with its label in run_info; a run whose every request
// failed is not, and says so; an interrupted run is not either.
func TestRunJudgesTheOutcome(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cell")
	o, err := Run(context.Background(), Spec{Options: options(t, 0), Dir: dir, Label: "trial_0002/concurrency_2", Index: 1})
	if err != nil || !o.OK() || o.Cancelled {
		t.Fatalf("usable run: %+v, %v", o, err)
	}
	if o.Result.ArtifactDir != dir || o.Result.Summary.RunInfo.RunLabel != "trial_0002/concurrency_2" || o.Result.Summary.RunInfo.Trial != 1 {
		t.Errorf("dir %s, run_info %+v", o.Result.ArtifactDir, o.Result.Summary.RunInfo)
	}
	o, err = Run(context.Background(), Spec{Options: options(t, 1), Dir: filepath.Join(t.TempDir(), "x"), Label: "x"})
	if err != nil || o.OK() || !strings.Contains(o.Err.Error(), "every request failed (6 errors)") {
		t.Errorf("all failed: %+v, %v", o, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	o, err = Run(ctx, Spec{Options: options(t, 0), Dir: filepath.Join(t.TempDir(), "y"), Label: "y"})
	if err != nil || o.OK() || !o.Cancelled {
		t.Errorf("interrupted: %+v, %v", o, err)
	}
}
