package benchmark

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/llmbench/llmbench/internal/config"
	"github.com/llmbench/llmbench/internal/endpoint"
	"github.com/llmbench/llmbench/internal/export"
	"github.com/llmbench/llmbench/internal/metrics"
	"github.com/llmbench/llmbench/internal/record"
	"github.com/llmbench/llmbench/internal/tokenizer"
)

// collector turns finished records into metrics and JSONL lines. Record
// processors, one per usable core (AIPerf runs several too), redact each
// record and compute its metrics, the costly part (its output tokens are
// counted), side by side; writing its JSONL line, tallying and
// aggregating take turns under mu. With one core there is one processor,
// and records are handled in the order they finished.
type collector struct {
	done    chan *record.Record
	wg      sync.WaitGroup
	records *export.RecordWriter

	mu  sync.Mutex
	agg *metrics.Aggregator
	// slices, with --slice-duration, are the profiling records by time.
	slices *timeslices
	// verdict keeps what the run verdict needs beyond the aggregates.
	verdict *verdictSamples
	invalid invalidTally
	// samples keeps the per-request values Options.Samples asks for.
	samples *sampleKeeper
	// win is the profiling window the time-weighted metrics span.
	win *window
	// shard, on a shard of a sharded run, keeps every record for the
	// merge; nil otherwise.
	shard    *shardLog
	writeErr error
	// spill keeps the per-request values within the memory budget
	// (--records-memory-budget), the rest on disk; close removes its files.
	spill *metrics.Spill
}

func startCollector(records *export.RecordWriter, tok tokenizer.Tokenizer, clock record.Clock, p config.Profile, red *config.Redactor, win *window, samples []string) *collector {
	c := newCollector(records, p, win, samples)
	mopts := metrics.DefaultOptions()
	mopts.UseServerTokenCount = p.Tokenizer.UseServerTokenCount
	mopts.SLOs = p.SLOs
	mopts.OSLMismatchPct, mopts.OSLMismatchMaxTokens = p.OSLMismatchPct, p.OSLMismatchMaxTokens
	caps := endpoint.Kind(p.Endpoint.Type).Caps()
	mopts.NoOutputTokens, mopts.NoInputTokens = !caps.ProducesTokens, !caps.TokenizesInput
	for range runtime.GOMAXPROCS(0) {
		c.wg.Go(func() {
			for r := range c.done {
				if r.Err != nil {
					r.Err.Message = red.Redact(r.Err.Message)
				}
				v := metrics.Compute(r, tok, clock, mopts)
				c.keep(r, &v)
			}
		})
	}
	return c
}

// newCollector is a collector without its processors: the aggregates,
// time slices and tallies that records are kept in (startCollector's, or
// a merge's replaying shards' records).
func newCollector(records *export.RecordWriter, p config.Profile, win *window, samples []string) *collector {
	goodput := len(p.SLOs) > 0
	caps := endpoint.Kind(p.Endpoint.Type).Caps()
	sp := metrics.NewSpill(p.Output.ArtifactDir, p.Output.RecordsMemoryBudgetBytes())
	c := &collector{done: make(chan *record.Record, 4096), records: records, verdict: newVerdictSamples(p.Endpoint.Streaming),
		agg: metrics.NewAggregator(goodput).ForTokens(caps.ProducesTokens, caps.TokenizesInput).WithSpill(sp), spill: sp}
	if len(samples) > 0 {
		c.samples = newSampleKeeper(samples)
	}
	c.win = win
	if width := int64(p.ServerMetrics.SliceSeconds * 1e9); width > 0 {
		c.slices = &timeslices{origin: &win.profilingStart, width: width, goodput: goodput, caps: caps, spill: sp}
	}
	return c
}

// keep writes r's JSONL line and adds it to the tallies and aggregates.
func (c *collector) keep(r *record.Record, v *metrics.Values) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.invalid.add(r)
	if err := c.records.Write(r, v); err != nil && c.writeErr == nil {
		c.writeErr = err
	}
	c.shard.add(r, v)
	if r.Phase == record.PhaseProfiling {
		c.agg.Add(r, v)
		c.verdict.add(r, v)
		c.samples.add(r, v)
		if c.slices != nil {
			c.slices.add(r, v)
		}
	}
}

// finish waits for every record handed over and returns the results.
func (c *collector) finish() (metrics.Results, error) {
	close(c.done)
	c.wg.Wait()
	// The schedule has returned: the profiling phase's bounds, set on
	// this goroutine, are final.
	if w := c.win; w != nil && w.profiled && w.endNs > w.startNs {
		c.agg.SetWindow(w.startNs, w.endNs)
	}
	results := c.agg.Results()
	if c.writeErr == nil {
		c.writeErr = c.spill.Err()
	}
	return results, c.writeErr
}

// close removes the spilled values' files (after the time slices'
// results, which read them); the first error spilling, if any.
func (c *collector) close() error {
	err := c.spill.Err()
	if cerr := c.spill.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("removing the spilled per-request values: %w", cerr)
	}
	return err
}

// timeslices returns the time slices' metrics (after finish), or nil
// without --slice-duration; endNs is when profiling ended.
func (c *collector) timeslices(endNs int64) []export.Timeslice {
	if c.slices == nil {
		return nil
	}
	return c.slices.results(endNs, c.agg)
}
