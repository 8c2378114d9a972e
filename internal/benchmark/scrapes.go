package benchmark

import (
	"context"
	"io"
	"sync"

	"github.com/llmbench/llmbench/internal/config"
	"github.com/llmbench/llmbench/internal/record"
	"github.com/llmbench/llmbench/internal/servermetrics"
)

// startScrapes prepares server metrics and GPU telemetry, then starts both
// at once: their baseline scrapes run side by side, so a slow endpoint of
// one does not add to the other's. Either is nil when it is off. est, when
// set, replaces --histogram-estimator's.
func startScrapes(ctx context.Context, p config.Profile, targets []target, gpuURLs []string, dir string, clock record.Clock, log io.Writer, est servermetrics.Estimator) (*serverMetrics, *gpuTelemetry, error) {
	sm, err := newServerMetrics(p, targets, dir, clock, log, est)
	if err != nil {
		return nil, nil, err
	}
	gpu, err := newGPUTelemetry(p, gpuURLs, dir, clock, log)
	if err != nil {
		if sm != nil && sm.jsonl != nil {
			_ = sm.jsonl.Close()
		}
		return nil, nil, err
	}
	var wg sync.WaitGroup
	if sm != nil {
		wg.Go(func() { sm.collector.Start(ctx) })
	}
	if gpu != nil {
		wg.Go(func() { gpu.collector.Start(ctx) })
	}
	wg.Wait()
	if gpu != nil {
		gpu.started()
	}
	return sm, gpu, nil
}
