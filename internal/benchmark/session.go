package benchmark

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmbench/llmbench/internal/client"
	"github.com/llmbench/llmbench/internal/config"
	"github.com/llmbench/llmbench/internal/dataset"
	"github.com/llmbench/llmbench/internal/endpoint"
	"github.com/llmbench/llmbench/internal/record"
	"github.com/llmbench/llmbench/internal/schedule"
	"github.com/llmbench/llmbench/internal/tokenizer"
	"github.com/llmbench/llmbench/internal/ui"
)

// requester runs the sessions the schedule starts: each conversation's
// turns one after the other, each with the conversation so far, and hands
// every request's record over.
type requester struct {
	p        config.Profile
	in       *inputs
	clients  clients
	tok      tokenizer.Tokenizer
	counters *ui.Counters
	records  chan<- *record.Record
	clock    record.Clock
	// requests numbers the process's requests when the plan does not
	// (requestNumber).
	requests atomic.Int64
	mu       sync.Mutex
	rng      *rand.Rand // ids, models, cancellations
}

func newRequester(p config.Profile, in *inputs, cl clients, tok tokenizer.Tokenizer, clock record.Clock, counters *ui.Counters, c *collector, seed uint64) *requester {
	q := &requester{p: p, in: in, clients: cl, tok: tok, clock: clock, counters: counters, records: c.done,
		rng: rand.New(rand.NewPCG(seed, 0x7265717565737473))} // "requests"
	return q
}

// draw is what one request decides at random, under one lock.
type draw struct {
	requestID, correlationID string
	cancel                   bool
}

func (q *requester) draw(n int64, session bool) draw {
	q.mu.Lock()
	defer q.mu.Unlock()
	var d draw
	d.requestID = record.UUID(q.rng.Uint64(), q.rng.Uint64())
	if session {
		d.correlationID = record.UUID(q.rng.Uint64(), q.rng.Uint64())
	}
	if rate := q.p.Loadgen.CancellationRate; rate > 0 {
		d.cancel = q.rng.Float64()*100 < rate
	}
	return d
}

// send runs one session. Turns after the first wait for the previous
// answer and then their delay (or, on a fixed schedule, their
// timestamp); a session stops early when the run ends, its phase stops
// issuing (--benchmark-duration); a --request-count budget may cut its
// turns short (inputs.turnCaps). A failed turn does not end it: the next
// turn carries whatever answer arrived.
func (q *requester) send(ctx context.Context, job schedule.Job) {
	ci := q.in.conversation(job.Phase, job.PhaseIndex)
	conv := &q.in.convs[ci]
	turns := q.in.turns(job.Phase, job.PhaseIndex)
	var history []endpoint.Message
	historyTokens := conv.SystemTokens
	var correlationID string
	for t := range turns {
		turn := &conv.Turns[t]
		due, scheduled := job.Due, job.Scheduled
		if t > 0 {
			due, scheduled = q.turnDue(job, turn)
			if !sleepUntil(job.Issuing, due) { // Issuing ends with ctx too
				return
			}
		}
		n := q.requestNumber(job)
		d := q.draw(n, t == 0)
		if t == 0 {
			correlationID = d.correlationID
		}
		var body []byte
		var err error
		if t == 0 {
			body = q.in.firstBodies[ci] // built once, before the run
		} else {
			body, err = q.in.body(q.p, q.in.turnModels[ci][t], ci, t, history)
		}
		// A prefill cap (--prefill-concurrency) holds the request until a
		// slot frees, as AIPerf's gate holds its credit: the credit is
		// issued then, and the request is no longer on a fixed schedule.
		release, waited, ok := job.Prefill.Acquire(job.Issuing)
		if !ok {
			return
		}
		if waited {
			due, scheduled = time.Now(), false
		}
		r := &record.Record{
			SessionNum: int(n), ConversationID: conv.ID, CorrelationID: correlationID, TurnIndex: t, XRequestID: d.requestID, Phase: job.Phase,
			InputTokens: historyTokens + turn.InputTokens, RequestedOutputTokens: turn.MaxTokens, Scheduled: scheduled,
			InputImages: len(turn.Images), InputAudioSeconds: audioSeconds(turn.Audios),
		}
		if !due.IsZero() {
			r.CreditIssuedPerf = q.clock.Perf(due)
		}
		q.counters.Sent.Add(1)
		switch {
		case err != nil:
			// A body that cannot be built is a failed request, recorded
			// like any other (extras were checked before the run).
			r.StartPerf, r.EndPerf = q.clock.Now(), q.clock.Now()
			r.Err = &record.Error{Type: record.ErrMalformed, Message: "build the request body: " + err.Error()}
		case d.cancel:
			q.clients.pick(n).DoCancelAfter(prefillContext(ctx, job, release), r, body, q.p.Loadgen.CancellationDelay)
		default:
			q.clients.pick(n).Do(prefillContext(ctx, job, release), r, body)
		}
		release() // no first token came
		if r.Valid() {
			q.counters.Completed.Add(1)
		} else {
			q.counters.Errors.Add(1)
		}
		if t+1 < turns && !conv.Standalone {
			history = append(history, endpoint.Message{Role: "user", Content: turn.Text}, endpoint.Message{Role: "assistant", Content: r.OutputText})
			historyTokens += turn.InputTokens + q.tok.Count(r.OutputText)
		}
		q.records <- r
		if ctx.Err() != nil {
			return
		}
	}
}

// prefillContext is ctx, whose request frees its prefill slot at its
// first token when the job passes a prefill gate.
func prefillContext(ctx context.Context, job schedule.Job, release func()) context.Context {
	if job.Prefill == nil {
		return ctx
	}
	return client.WithFirstToken(ctx, release)
}

// audioSeconds is the length of the clips a request sends.
func audioSeconds(clips []endpoint.MediaItem) float64 {
	total := 0.0
	for _, c := range clips {
		total += c.Seconds
	}
	return total
}

// requestNumber is a request's session_num. A single-turn run numbers
// each request by its session's place in the plan (job.Index), so request
// i sends the sampler's draw i whatever order the slots raced in, and
// the shards of a run number alike. Multi-turn requests (and a sharded
// run after a warm-up by duration, whose count each shard knows only of
// itself) are numbered as they go out; across shards request n of shard
// i of N is n·N+i.
func (q *requester) requestNumber(job schedule.Job) int64 {
	if q.in.planNumbers {
		return int64(job.Index)
	}
	n := q.requests.Add(1) - 1
	if sh := q.p.Shard; sh.Sharded() {
		n = n*int64(sh.Count) + int64(sh.Index)
	}
	return n
}

// turnDue is when a later turn goes out: at its timestamp on a fixed
// schedule (never before the previous answer), else its delay after now.
func (q *requester) turnDue(job schedule.Job, turn *dataset.Turn) (time.Time, bool) {
	if q.in.times != nil && job.Phase == record.PhaseProfiling && turn.HasTimestamp {
		if at := job.PhaseStart.Add(q.in.offset(turn.TimestampMs)); at.After(time.Now()) {
			return at, true
		}
		return time.Now(), false
	}
	return time.Now().Add(time.Duration(turn.DelayMs * float64(time.Millisecond))), false
}

// sleepUntil waits until t; false when ctx ended first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}
