package benchmark

import (
	"context"
	"math/rand/v2"
	"sync"

	"github.com/llmbench/llmbench/internal/client"
	"github.com/llmbench/llmbench/internal/config"
	"github.com/llmbench/llmbench/internal/export"
	"github.com/llmbench/llmbench/internal/metrics"
	"github.com/llmbench/llmbench/internal/record"
	"github.com/llmbench/llmbench/internal/schedule"
	"github.com/llmbench/llmbench/internal/tokenizer"
	"github.com/llmbench/llmbench/internal/ui"
)

// collector turns finished records into metrics and JSONL lines on one
// goroutine, in arrival order: redacted, written, tallied, aggregated.
type collector struct {
	done    chan *record.Record
	wg      sync.WaitGroup
	records *export.RecordWriter
	agg     *metrics.Aggregator
	// slices, with --slice-duration, are the profiling records by time.
	slices   *timeslices
	invalid  invalidTally
	writeErr error
}

func startCollector(records *export.RecordWriter, tok tokenizer.Tokenizer, clock record.Clock, p config.Profile, red *config.Redactor, win *window) *collector {
	goodput := len(p.SLOs) > 0
	c := &collector{done: make(chan *record.Record, 4096), records: records, agg: metrics.NewAggregator(goodput)}
	if width := int64(p.ServerMetrics.SliceSeconds * 1e9); width > 0 {
		c.slices = &timeslices{origin: &win.profilingStart, width: width, goodput: goodput}
	}
	mopts := metrics.DefaultOptions()
	mopts.UseServerTokenCount = p.Tokenizer.UseServerTokenCount
	mopts.SLOs = p.SLOs
	mopts.OSLMismatchPct, mopts.OSLMismatchMaxTokens = p.OSLMismatchPct, p.OSLMismatchMaxTokens
	c.wg.Go(func() {
		for r := range c.done {
			if r.Err != nil {
				r.Err.Message = red.Redact(r.Err.Message)
			}
			c.invalid.add(r)
			v := metrics.Compute(r, tok, clock, mopts)
			if err := records.Write(r, &v); err != nil && c.writeErr == nil {
				c.writeErr = err
			}
			if r.Phase == record.PhaseProfiling {
				c.agg.Add(r, &v)
				if c.slices != nil {
					c.slices.add(r, &v)
				}
			}
		}
	})
	return c
}

// finish waits for every record handed over and returns the results.
func (c *collector) finish() (metrics.Results, error) {
	close(c.done)
	c.wg.Wait()
	return c.agg.Results(), c.writeErr
}

// timeslices returns the time slices' metrics (after finish), or nil
// without --slice-duration; endNs is when profiling ended.
func (c *collector) timeslices(endNs int64) []export.Timeslice {
	if c.slices == nil {
		return nil
	}
	return c.slices.results(endNs)
}

// requester sends one scheduled request and hands its record over.
type requester struct {
	in       *inputs
	client   *client.Client
	counters *ui.Counters
	records  chan<- *record.Record
	clock    record.Clock
	idMu     sync.Mutex
	idRNG    *rand.Rand
}

func newRequester(in *inputs, cl *client.Client, clock record.Clock, counters *ui.Counters, c *collector, seed uint64) *requester {
	return &requester{in: in, client: cl, clock: clock, counters: counters, records: c.done, idRNG: rand.New(rand.NewPCG(seed, 0x7265717565737473))} // "requests"
}

func (q *requester) send(ctx context.Context, job schedule.Job) {
	i := job.Index % len(q.in.entries)
	e := q.in.entries[i]
	q.idMu.Lock()
	reqID := record.UUID(q.idRNG.Uint64(), q.idRNG.Uint64())
	// Each request is its own conversation instance (single turn).
	correlationID := record.UUID(q.idRNG.Uint64(), q.idRNG.Uint64())
	q.idMu.Unlock()
	r := &record.Record{
		SessionNum: job.Index, ConversationID: e.ConversationID, CorrelationID: correlationID, XRequestID: reqID, Phase: job.Phase,
		InputTokens: e.InputTokens, RequestedOutputTokens: e.MaxTokens, Scheduled: job.Scheduled,
	}
	if !job.Due.IsZero() {
		r.CreditIssuedPerf = q.clock.Perf(job.Due)
	}
	q.counters.Sent.Add(1)
	q.client.Do(ctx, r, q.in.payloads[i])
	if r.Valid() {
		q.counters.Completed.Add(1)
	} else {
		q.counters.Errors.Add(1)
	}
	q.records <- r
}
