package benchmark

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/llmbench/llmbench/internal/clientload"
	"github.com/llmbench/llmbench/internal/config"
	"github.com/llmbench/llmbench/internal/metrics"
	"github.com/llmbench/llmbench/internal/record"
	"github.com/llmbench/llmbench/internal/stats"
	"github.com/llmbench/llmbench/internal/verdict"
)

// verdictReservoir bounds the latencies kept for the warm-up check: a
// uniform sample of the profiling requests (16 bytes each), so a run of
// millions of requests keeps 320 KB, and each time slice its share.
const verdictReservoir = 20_000

// verdictSlices is how many time slices the warm-up check splits the
// profiling phase into without --slice-duration.
const verdictSlices = 5

// timedValue is one request's latency (ms) by its start, wall-clock ns.
type timedValue struct {
	startWall int64
	ms        float64
}

// verdictSamples keeps what the run verdict needs beyond the aggregates:
// a sample of the latencies by start time (the warm-up check) and the
// span of the scheduled sends and of their due instants (the rate
// achieved against the rate asked for). The collector adds under its lock.
type verdictSamples struct {
	metric metrics.ID
	rng    *rand.Rand
	seen   int
	kept   []timedValue

	scheduled             int
	firstStart, lastStart int64
	firstDue, lastDue     int64
}

func newVerdictSamples(streaming bool) *verdictSamples {
	m := metrics.RequestLatency
	if streaming {
		m = metrics.TimeToFirstToken
	}
	return &verdictSamples{metric: m, rng: rand.New(rand.NewPCG(1, 2))} // a fixed seed: the same records, the same sample
}

// add takes a profiling record.
func (s *verdictSamples) add(r *record.Record, v *metrics.Values) {
	if r.Scheduled && v.CreditWall > 0 {
		if s.scheduled == 0 {
			s.firstStart, s.lastStart, s.firstDue, s.lastDue = v.StartWall, v.StartWall, v.CreditWall, v.CreditWall
		}
		s.scheduled++
		s.firstStart, s.lastStart = min(s.firstStart, v.StartWall), max(s.lastStart, v.StartWall)
		s.firstDue, s.lastDue = min(s.firstDue, v.CreditWall), max(s.lastDue, v.CreditWall)
	}
	if !r.Valid() || !v.Has(s.metric) {
		return
	}
	tv := timedValue{v.StartWall, v.V[s.metric]}
	s.seen++
	if len(s.kept) < verdictReservoir {
		s.kept = append(s.kept, tv)
	} else if i := s.rng.IntN(s.seen); i < verdictReservoir {
		s.kept[i] = tv // reservoir sampling: every request kept with equal chance
	}
}

// slices splits the kept latencies by time slice of width ns from
// startNs to endNs, in order.
func (s *verdictSamples) slices(startNs, endNs, width int64) [][]float64 {
	if width <= 0 || endNs <= startNs {
		return nil
	}
	n := int((endNs - startNs + width - 1) / width)
	out := make([][]float64, n)
	for _, tv := range s.kept {
		i := min(max(int((tv.startWall-startNs)/width), 0), n-1)
		out[i] = append(out[i], tv.ms)
	}
	return out
}

// rates are the rate the due instants drew and the rate the scheduled
// requests were sent at, per second, over the same requests.
func (s *verdictSamples) rates() (scheduled, achieved float64, n int) {
	if s.scheduled < 2 || s.lastDue <= s.firstDue || s.lastStart <= s.firstStart {
		return 0, 0, s.scheduled
	}
	gaps := float64(s.scheduled - 1)
	return gaps / (float64(s.lastDue-s.firstDue) / 1e9), gaps / (float64(s.lastStart-s.firstStart) / 1e9), s.scheduled
}

// finestLatency is the finest latency the run reports, which the timer
// delay is judged against: ITL when streaming, else TTFT, else request
// latency; its tag and p50 (ms), or "" and 0.
func finestLatency(rs *metrics.Results) (string, float64) {
	for _, tag := range []string{"inter_token_latency", "time_to_first_token", "request_latency"} {
		if p50, ok := p50Of(rs, tag); ok && p50 > 0 {
			return tag, p50
		}
	}
	return "", 0
}

// p50Index is the position of p50 in stats.Percentiles.
var p50Index = slices.Index(stats.PercentileNames[:], "p50")

func p50Of(rs *metrics.Results, tag string) (float64, bool) { return percentileOf(rs, tag, p50Index) }

func p99Of(rs *metrics.Results, tag string) (float64, bool) {
	return percentileOf(rs, tag, slices.Index(stats.PercentileNames[:], "p99"))
}

func percentileOf(rs *metrics.Results, tag string, i int) (float64, bool) {
	r, ok := rs.Get(tag)
	if !ok || r.Dist == nil || r.Dist.Count == 0 || i < 0 || math.IsNaN(r.Dist.P[i]) {
		return 0, false
	}
	return r.Dist.P[i], true
}

// judgeRun gathers the verdict's inputs from what the run has and judges
// it.
func judgeRun(p config.Profile, rs *metrics.Results, load *clientload.Report, vs *verdictSamples, win *window, sm *serverMetrics) verdict.Verdict {
	in := verdict.Inputs{Completed: rs.RequestCount, Errors: rs.ErrorCount, RequestRate: p.Loadgen.RequestRate}
	if load != nil && load.CPUJudged() {
		wait := -1.0
		if load.CPUWait != nil {
			wait = *load.CPUWait
		}
		in.Client = &verdict.Client{
			Cores: load.Cores, CPUUsed: load.CPUUtilization, CPUWait: wait, Saturated: load.Saturated, NoisyHost: load.NoisyHost,
			TimersJudged: load.TimersJudged(), TimerDelayP99Ms: load.TimerDelayP99Ms, DelayMatters: load.TimerDelayMatters, LatencyCompared: load.LatencyCompared, LatencyP50Ms: load.LatencyP50Ms,
		}
	}
	if vs != nil {
		in.ScheduledRate, in.AchievedRate, in.RateRequests = vs.rates()
	}
	opt := func(v float64, ok bool) *float64 {
		if !ok {
			return nil
		}
		return &v
	}
	if p.Loadgen.RequestRate > 0 {
		in.ScheduleLatenessP99Ms = opt(p99Of(rs, "schedule_lateness"))
	}
	in.ConnWaitP99Ms = opt(p99Of(rs, "http_req_blocked"))
	in.Latency = "request_latency"
	if p.Endpoint.Streaming {
		in.Latency = "time_to_first_token"
	}
	in.LatencyP50Ms = opt(p50Of(rs, in.Latency))
	if !p.Tokenizer.UseServerTokenCount { // else the client's counts are the server's
		in.UsagePromptDiffP50Pct = opt(p50Of(rs, "usage_prompt_tokens_diff_pct"))
		in.UsageCompletionDiffP50Pct = opt(p50Of(rs, "usage_completion_tokens_diff_pct"))
	}
	if vs != nil && win.profiled {
		width := int64(p.ServerMetrics.SliceSeconds * 1e9)
		if width <= 0 {
			width = (win.endNs - win.startNs + verdictSlices - 1) / verdictSlices
		}
		in.Slices, in.SliceMetric = vs.slices(win.startNs, win.endNs, width), metrics.RecordDefs[vs.metric].Tag
	}
	if sm != nil {
		for _, info := range sm.collector.Infos() {
			in.Endpoints = append(in.Endpoints, verdict.Endpoint{URL: info.URL, Status: info.Status, Explicit: slices.Contains(p.ServerMetrics.URLs, info.URL)})
		}
	}
	return verdict.Judge(in)
}
