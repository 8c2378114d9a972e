package scrape

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmbench/llmbench/internal/record"
)

// Options configure a Collector.
type Options struct {
	// URLs are the normalised metrics URLs to scrape.
	URLs []string
	// Interval between scrapes (AIPERF_SERVER_METRICS_COLLECTION_INTERVAL).
	Interval time.Duration
	// Flush is the wait after profiling before the final scrape
	// (AIPERF_SERVER_METRICS_COLLECTION_FLUSH_PERIOD).
	Flush time.Duration
	// ReachabilityTimeout bounds the first scrape of each endpoint and every
	// later one (AIPERF_SERVER_METRICS_REACHABILITY_TIMEOUT).
	ReachabilityTimeout time.Duration
	Clock               record.Clock
	// Log receives the few lines a person should see (warnings).
	Log io.Writer
	// Sink receives every successful snapshot, one at a time.
	Sink func(*Snapshot)
	// Users are Basic auth credentials by URL (from user:pw@ in a URL,
	// which is never shown); an endpoint without one sends none.
	Users map[string]*url.Userinfo
	// Subject names what is collected in warnings ("Server metrics", the
	// default; "GPU telemetry") and Suppress the flag that turns it off
	// ("--no-server-metrics", the default).
	Subject, Suppress string
	// Optional are URLs probed in case something answers there (AIPerf's
	// default DCGM exporter ports): one that does not answer its first
	// scrape is dropped without a warning.
	Optional map[string]bool
	// NoFallback turns off the TensorRT-LLM /prometheus/metrics probe for
	// non-Prometheus answers (a DCGM exporter has no such path).
	NoFallback bool
	// Wanted, when set, must accept an Optional URL's first snapshot (a
	// DCGM exporter's fields, say), or that endpoint is dropped silently:
	// an unrelated service on a default port is not scraped all run.
	Wanted func(*Snapshot) bool
}

// optionalProbe bounds the first scrape of an Optional URL: a default port
// that holds a connection without answering must not hold the run.
const optionalProbe = time.Second

// stoppedAfter is how many intervals without an answer make an endpoint
// one that stopped answering: warned about, and reported as "partial".
const stoppedAfter = 3

// Collector scrapes endpoints concurrently and independently: a slow or
// dead endpoint delays neither the others nor the benchmark.
type Collector struct {
	opts      Options
	hc        *http.Client
	endpoints []*endpoint
	sinkMu    sync.Mutex
	logMu     sync.Mutex
	cancel    context.CancelFunc
	loops     sync.WaitGroup
	// checkpoints are Checkpoint's scrapes, which may outlive its wait;
	// Finish waits for them, and closed turns away any that had not
	// started, so no snapshot arrives after Finish returns.
	checkpoints sync.WaitGroup
	closed      atomic.Bool
	// hashSeed keys the body hashes that tell a changed exposition.
	hashSeed maphash.Seed
}

type endpoint struct {
	mu         sync.Mutex
	configured string
	url        string
	user       *url.Userinfo
	// parser and body read e's scrapes, under mu.
	parser *Parser
	body   bytes.Buffer
	// live is the URL in use while the endpoint is scraped, nil once it is
	// disabled: readable without waiting for a scrape that holds mu.
	live      atomic.Pointer[string]
	disabled  bool
	probed    bool
	errLogged bool
	lastHash  uint64
	hasHash   bool
	// nonFiniteWarned names the metrics already warned about.
	nonFiniteWarned map[string]bool
	info            Info
	updates         []int64
	latencySum      int64
	// consecutive counts failed scrapes since the last success.
	consecutive int
	// lastAnswer is the perf time of the last successful scrape, read by
	// the watchdog without waiting for a scrape in flight; stalled is set
	// once the endpoint went stoppedAfter intervals without one.
	lastAnswer atomic.Int64
	stalled    atomic.Bool
}

// Info is an endpoint's collection record: the endpoint_info of the JSON export.
type Info struct {
	URL             string
	TotalFetches    int
	FirstFetchNs    int64
	LastFetchNs     int64
	AvgFetchLatency float64 // ms
	UniqueUpdates   int
	FirstUpdateNs   int64
	LastUpdateNs    int64
	DurationSeconds float64
	AvgUpdateMs     float64
	MedianUpdateMs  *float64 // nil with fewer than 2 intervals
	Failures        int
	Disabled        bool
	// ConsecutiveFailures are the failed scrapes since the last success;
	// Status is "ok", "partial" (answered, then went stoppedAfter
	// intervals without an answer, or failed its final scrape: its
	// statistics cover the time it answered) or "failed" (never answered,
	// or not Prometheus).
	ConsecutiveFailures int
	Status              string
	UpdateIntervalNs    int64 // median, for the time-slice fallback; 0 when unknown
}

// NewCollector prepares a collector; nothing is fetched until Start.
func NewCollector(opts Options) *Collector {
	if opts.Interval <= 0 {
		opts.Interval = 333 * time.Millisecond
	}
	if opts.ReachabilityTimeout <= 0 {
		opts.ReachabilityTimeout = 10 * time.Second
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if opts.Subject == "" {
		opts.Subject, opts.Suppress = "Server metrics", "--no-server-metrics"
	}
	c := &Collector{opts: opts, hashSeed: maphash.MakeSeed(), hc: &http.Client{Transport: &http.Transport{
		DialContext:         (&net.Dialer{Timeout: opts.ReachabilityTimeout}).DialContext,
		MaxIdleConnsPerHost: 2,
		IdleConnTimeout:     30 * time.Second,
	}}}
	seen := map[string]bool{}
	for _, u := range opts.URLs {
		if !seen[u] {
			seen[u] = true
			e := &endpoint{configured: u, url: u, user: opts.Users[u], parser: NewParser()}
			e.live.Store(&u)
			c.endpoints = append(c.endpoints, e)
		}
	}
	return c
}

// Live lists the endpoints still scraped (not disabled), by the URL in use.
func (c *Collector) Live() []string {
	var out []string
	for _, e := range c.endpoints {
		if u := e.live.Load(); u != nil {
			out = append(out, *u)
		}
	}
	return out
}

// Configured lists the endpoints as configured.
func (c *Collector) Configured() []string {
	out := make([]string, len(c.endpoints))
	for i, e := range c.endpoints {
		out[i] = e.configured
	}
	return out
}

// Start tests every endpoint (the baseline scrape, bounded by the
// reachability timeout, all at once) and returns when every one has
// answered or failed. Each endpoint then scrapes on its own schedule,
// from its own baseline on, until Finish: one whose first scrape hangs
// delays neither the others' schedules nor their liveness. Unreachable or
// non-Prometheus endpoints are disabled with one warning each.
func (c *Collector) Start(ctx context.Context) {
	loopCtx, cancel := context.WithCancel(ctx)
	c.cancel = cancel
	var baselines sync.WaitGroup
	for _, e := range c.endpoints {
		baselines.Add(1)
		c.loops.Go(func() {
			c.scrape(ctx, e, true)
			start := time.Now()
			baselines.Done()
			if !e.isDisabled() {
				c.loop(loopCtx, e, start)
			}
		})
	}
	baselines.Wait()
	c.loops.Go(func() { c.watch(loopCtx) })
}

// watch checks every interval how long each live endpoint has gone without
// an answer, even while a scrape hangs (a scrape may take up to the
// reachability timeout), and warns once per endpoint that went
// stoppedAfter intervals without one.
func (c *Collector) watch(ctx context.Context) {
	t := time.NewTicker(c.opts.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, e := range c.endpoints {
			if e.live.Load() != nil && c.stalled(e) && !e.stalled.Swap(true) {
				c.logf("WARNING  %s endpoint %s has not answered for %d intervals (%v); its statistics cover only the time it answered. Still retrying on schedule.",
					c.opts.Subject, e.url, stoppedAfter, time.Duration(stoppedAfter)*c.opts.Interval)
			}
		}
	}
}

// stalled reports an endpoint that answered once and not for the last
// stoppedAfter intervals.
func (c *Collector) stalled(e *endpoint) bool {
	last := e.lastAnswer.Load()
	return last > 0 && c.opts.Clock.Now()-last >= int64(stoppedAfter)*int64(c.opts.Interval)
}

// Checkpoint scrapes every live endpoint now, outside the schedule, and
// waits for them at most maxWait: called between warm-up and profiling, it
// makes the profiling reference the state at the boundary rather than a
// scrape up to one interval older. An endpoint slower than maxWait finishes
// in the background and delays nothing.
func (c *Collector) Checkpoint(ctx context.Context, maxWait time.Duration) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for _, e := range c.endpoints {
		wg.Add(1)
		c.checkpoints.Go(func() {
			defer wg.Done()
			c.scrape(ctx, e, false)
		})
	}
	go func() {
		wg.Wait()
		close(done)
	}()
	t := time.NewTimer(maxWait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	case <-ctx.Done():
	}
}

// Finish waits the flush period (cut short if ctx ends), stops the
// periodic scrapes and takes the final scrape of every live endpoint,
// bounded by the reachability timeout and cut short if abort ends.
func (c *Collector) Finish(ctx, abort context.Context) {
	// Read without e.mu: a hung scrape holds it for up to the reachability
	// timeout, and must not hold the end of the run with it.
	live := len(c.Live()) > 0
	if c.opts.Flush > 0 && live {
		t := time.NewTimer(c.opts.Flush)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
	if c.cancel != nil {
		c.cancel()
	}
	c.loops.Wait()
	// The final scrape must happen even after a first Ctrl-C: it is what
	// the totals are measured to. Only abort (a second one) skips it. An
	// endpoint failing at this point gets one interval, not the
	// reachability timeout, so a hung server cannot hold the run's end.
	var wg sync.WaitGroup
	for _, e := range c.endpoints {
		limit := c.opts.ReachabilityTimeout
		if c.stalled(e) {
			limit = min(limit, c.opts.Interval)
		}
		wg.Go(func() {
			final, cancel := context.WithTimeout(abort, limit)
			defer cancel()
			c.scrape(final, e, false)
		})
	}
	wg.Wait()
	c.closed.Store(true)
	c.checkpoints.Wait()
	c.hc.CloseIdleConnections()
}

// loop scrapes e at start + k·interval. A scrape that overruns skips the
// ticks it missed instead of piling up, so the schedule never drifts.
func (c *Collector) loop(ctx context.Context, e *endpoint, start time.Time) {
	iv := c.opts.Interval
	timer := time.NewTimer(iv)
	defer timer.Stop()
	for k := int64(1); ; k++ {
		next := start.Add(time.Duration(k) * iv)
		if late := time.Since(next); late > 0 {
			k += int64(late / iv)
			next = start.Add(time.Duration(k) * iv)
			if time.Until(next) <= 0 {
				k++
				next = next.Add(iv)
			}
		}
		timer.Reset(time.Until(next))
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		if !c.scrape(ctx, e, false) && e.isDisabled() {
			return
		}
	}
}

// setDisabled stops scraping e; mu must be held.
func (e *endpoint) setDisabled() {
	e.disabled = true
	e.live.Store(nil)
}

func (e *endpoint) isDisabled() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.disabled
}

// scrape fetches e once; it reports whether a snapshot was delivered.
func (c *Collector) scrape(ctx context.Context, e *endpoint, first bool) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.disabled || c.closed.Load() {
		return false
	}
	optional := first && c.opts.Optional[e.configured]
	timeout := c.opts.ReachabilityTimeout
	if optional {
		timeout = min(timeout, optionalProbe)
	}
	fctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	snap, err := fetch(fctx, c.hc, c.opts.Clock, e.url, e)
	if err != nil && errors.Is(err, ErrNotPrometheus) {
		snap, err = c.notPrometheus(fctx, e, err)
		if err != nil {
			return false
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			return false // stopping: not the endpoint's fault
		}
		e.info.Failures++
		e.consecutive++
		if first {
			e.setDisabled()
			if !c.opts.Optional[e.configured] {
				c.logf("WARNING  %s endpoint %s did not answer its first scrape (%v); not collecting from it. To suppress this warning, pass %s.", c.opts.Subject, e.url, err, c.opts.Suppress)
			}
		}
		return false
	}
	if optional && c.opts.Wanted != nil && !c.opts.Wanted(snap) {
		e.setDisabled() // something else answers on that port
		return false
	}
	e.consecutive = 0
	e.lastAnswer.Store(c.opts.Clock.Now())
	c.record(e, snap)
	return true
}

// notPrometheus handles a non-Prometheus answer: probe the TensorRT-LLM
// path once and switch to it, or disable the endpoint with one warning.
func (c *Collector) notPrometheus(ctx context.Context, e *endpoint, cause error) (*Snapshot, error) {
	if !e.probed && !c.opts.NoFallback {
		e.probed = true
		if alt, ok := fallbackURL(e.url); ok {
			if snap, err := fetch(ctx, c.hc, c.opts.Clock, alt, e); err == nil {
				c.logf("INFO  %s endpoint %s is not Prometheus; using %s instead.", c.opts.Subject, e.url, alt)
				e.url = alt
				e.live.Store(&alt)
				return snap, nil
			}
		}
	}
	e.setDisabled()
	e.info.Failures++
	if !c.opts.Optional[e.configured] {
		c.logf("%s", disableWarning(c.opts.Subject, c.opts.Suppress, e.url, cause))
	}
	return nil, cause
}

func (c *Collector) record(e *endpoint, snap *Snapshot) {
	for _, f := range snap.Families {
		if f.NonFinite > 0 && !e.nonFiniteWarned[f.Name] {
			if e.nonFiniteWarned == nil {
				e.nonFiniteWarned = map[string]bool{}
			}
			e.nonFiniteWarned[f.Name] = true
			c.logf("WARNING  %s %s from %s has NaN or infinite values; those samples are left out of its statistics (warned once per metric).", strings.TrimSuffix(c.opts.Subject, "s"), f.Name, e.url)
		}
	}
	ts := snap.TimestampNs()
	in := &e.info
	in.TotalFetches++
	if in.FirstFetchNs == 0 {
		in.FirstFetchNs = ts
	}
	in.LastFetchNs = ts
	e.latencySum += snap.LatencyNs()
	h := maphash.Bytes(c.hashSeed, snap.Raw)
	snap.Changed = !e.hasHash || h != e.lastHash
	e.lastHash, e.hasHash = h, true
	if snap.Changed {
		e.updates = append(e.updates, ts)
	}
	c.sinkMu.Lock()
	c.opts.Sink(snap)
	c.sinkMu.Unlock()
}

func (c *Collector) logf(format string, args ...any) {
	c.logMu.Lock()
	defer c.logMu.Unlock()
	fmt.Fprintf(c.opts.Log, format+"\n", args...)
}

// Infos reports every endpoint's collection record; call it after Finish.
func (c *Collector) Infos() []Info {
	out := make([]Info, 0, len(c.endpoints))
	for _, e := range c.endpoints {
		e.mu.Lock()
		in := e.info
		in.URL, in.Disabled, in.ConsecutiveFailures = e.url, e.disabled, e.consecutive
		switch {
		case e.disabled || in.TotalFetches == 0:
			in.Status = "failed"
		case e.consecutive > 0 || e.stalled.Load():
			in.Status = "partial" // it stopped answering, for a while or to the end
		default:
			in.Status = "ok"
		}
		if in.TotalFetches > 0 {
			in.AvgFetchLatency = float64(e.latencySum) / float64(in.TotalFetches) / 1e6
		}
		in.UniqueUpdates = len(e.updates)
		if n := len(e.updates); n > 0 {
			in.FirstUpdateNs, in.LastUpdateNs = e.updates[0], e.updates[n-1]
			in.DurationSeconds = float64(in.LastUpdateNs-in.FirstUpdateNs) / 1e9
		}
		if n := len(e.updates); n >= 2 {
			in.AvgUpdateMs = (float64(e.updates[n-1]-e.updates[0]) / 1e6) / float64(n-1)
		}
		// The median needs at least two intervals, so three updates.
		if n := len(e.updates); n >= 3 {
			iv := make([]float64, n-1)
			for i := 1; i < n; i++ {
				iv[i-1] = float64(e.updates[i]-e.updates[i-1]) / 1e6
			}
			slices.Sort(iv)
			med := iv[len(iv)/2]
			if len(iv)%2 == 0 {
				med = (iv[len(iv)/2-1] + iv[len(iv)/2]) / 2
			}
			in.MedianUpdateMs = &med
			in.UpdateIntervalNs = int64(med * 1e6)
		}
		e.mu.Unlock()
		out = append(out, in)
	}
	return out
}
