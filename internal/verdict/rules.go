package verdict

import (
	"fmt"
	"math"
	"slices"

	"github.com/llmbench/llmbench/internal/stats"
)

// Rule codes, as written in run_verdict's reasons, checked and skipped.
const (
	CodeClientCPU         = "client_cpu_saturated"
	CodeTimerDelay        = "client_timer_delay"
	CodeScheduleLateness  = "schedule_lateness"
	CodeConnectionWait    = "connection_wait"
	CodeErrorRate         = "error_rate"
	CodeUsageMismatch     = "usage_mismatch"
	CodeRate              = "achieved_rate"
	CodeWarmup            = "warmup_too_short"
	CodeServerMetrics     = "server_metrics"
	CodeServerMetricsFail = "server_metrics_failed"
)

// Thresholds. Each is where the numbers reported stop meaning what they
// say, not where a run merely looks unusual.
const (
	// InvalidErrorRate: over half the requests failed, so the latencies
	// describe the minority that succeeded, often the cheap ones.
	InvalidErrorRate = 0.50
	// SuspectErrorRate: over 1 in 20 failed: enough to bias the
	// throughput and the percentiles' tails.
	SuspectErrorRate = 0.05
	// MinRateRatio: sent at under 90 % of the rate the schedule asked
	// for, the server saw a lighter load than the one reported.
	MinRateRatio = 0.90
	// MinRateRequests is how many requests the rate needs to be judged.
	MinRateRequests = 10
	// MaxUsageDiffPct: the server's usage and the client's token counts
	// differ by over 10 % at the median, so the token metrics (ISL, OSL,
	// ITL, token throughputs) count other tokens than the server did: a
	// tokenizer other than the served model's, or a server that ignores
	// max_tokens.
	MaxUsageDiffPct = 10.0
	// MaxLatenessShare: requests sent late by over a tenth of the mean
	// gap between arrivals (p99) no longer follow the arrival process
	// asked for (a Poisson process bunches up; a constant one jitters).
	MaxLatenessShare = 0.10
	// MaxConnWaitShare and MinConnWaitMs: a p99 wait for a pooled
	// connection over a tenth of the latency it is part of (TTFT or
	// request latency, p50) and over 1 ms means the client, not the
	// server, held requests back.
	MaxConnWaitShare = 0.10
	MinConnWaitMs    = 1.0
	// WarmupP, MinWarmupShift, MinSlices and MinSliceSamples: the first
	// time slice differs from the rest when a Mann-Whitney test says so at
	// p < 0.01 and its median is over 10 % off theirs (with thousands of
	// requests any difference is significant; 10 % is one that shows in
	// the figures). It takes 3 slices or more and 20 values a side for
	// the test's normal approximation.
	WarmupP         = 0.01
	MinWarmupShift  = 0.10
	MinSlices       = 3
	MinSliceSamples = 20
)

func suspect(code, format string, args ...any) []Reason {
	return []Reason{{Code: code, Level: Suspect, Message: fmt.Sprintf(format, args...)}}
}

func clientCPU(in *Inputs) ([]Reason, bool) {
	c := in.Client
	if c == nil {
		return nil, false
	}
	if !c.Saturated {
		return nil, true
	}
	used := fmt.Sprintf("%.0f%%", 100*c.CPUUsed)
	if c.CPUWait >= 0.005 {
		used += fmt.Sprintf(" and waited for another %.0f%%", 100*c.CPUWait)
	}
	return suspect(CodeClientCPU, "client CPU saturated: it used %s of its %d core(s); its latency figures include its own queueing (lower --concurrency or --request-rate, or give it more cores)", used, c.Cores), true
}

func timerDelay(in *Inputs) ([]Reason, bool) {
	c := in.Client
	if c == nil || !c.TimersJudged || c.LatencyP50Ms <= 0 {
		return nil, false
	}
	if !c.DelayMatters || c.Saturated { // a saturated client is the other rule's
		return nil, true
	}
	cause := "the host's scheduler"
	if c.NoisyHost {
		cause = "a noisy host (other processes), not a saturated client"
	}
	return suspect(CodeTimerDelay, "client timers fired %.2f ms late at p99 while it used %.0f%% of its cores: %s; that is %.0f%% of the %s p50 (%.2f ms)",
		c.TimerDelayP99Ms, 100*c.CPUUsed, cause, 100*c.TimerDelayP99Ms/c.LatencyP50Ms, c.LatencyCompared, c.LatencyP50Ms), true
}

func scheduleLateness(in *Inputs) ([]Reason, bool) {
	if in.RequestRate <= 0 || in.ScheduleLatenessP99Ms == nil {
		return nil, false
	}
	gapMs := 1000 / in.RequestRate
	if late := *in.ScheduleLatenessP99Ms; late > MaxLatenessShare*gapMs {
		return suspect(CodeScheduleLateness, "requests were sent %.2f ms late at p99, %.0f%% of the %.2f ms mean gap between arrivals (over %.0f%%): the load did not follow the schedule",
			late, 100*late/gapMs, gapMs, 100*MaxLatenessShare), true
	}
	return nil, true
}

func connectionWait(in *Inputs) ([]Reason, bool) {
	if in.ConnWaitP99Ms == nil || in.LatencyP50Ms == nil || *in.LatencyP50Ms <= 0 {
		return nil, false
	}
	wait, lat := *in.ConnWaitP99Ms, *in.LatencyP50Ms
	if wait > MinConnWaitMs && wait > MaxConnWaitShare*lat {
		return suspect(CodeConnectionWait, "requests waited %.2f ms for a connection at p99 (http_req_blocked), %.0f%% of the %s p50 (%.2f ms): the client's connection pool held them back",
			wait, 100*wait/lat, in.Latency, lat), true
	}
	return nil, true
}

func errorRate(in *Inputs) ([]Reason, bool) {
	n := in.Completed + in.Errors
	if n == 0 {
		return nil, false
	}
	rate := float64(in.Errors) / float64(n)
	level, limit := Invalid, InvalidErrorRate
	switch {
	case rate > InvalidErrorRate:
	case rate > SuspectErrorRate:
		level, limit = Suspect, SuspectErrorRate
	default:
		return nil, true
	}
	return []Reason{{Code: CodeErrorRate, Level: level, Message: fmt.Sprintf("%d of %d requests failed (%.1f%%, over %.0f%%): see error_summary",
		in.Errors, n, 100*rate, 100*limit)}}, true
}

func usageMismatch(in *Inputs) ([]Reason, bool) {
	if in.UsagePromptDiffP50Pct == nil && in.UsageCompletionDiffP50Pct == nil {
		return nil, false
	}
	var out []Reason
	for _, d := range []struct {
		what string
		pct  *float64
	}{{"prompt", in.UsagePromptDiffP50Pct}, {"completion", in.UsageCompletionDiffP50Pct}} {
		if d.pct != nil && *d.pct > MaxUsageDiffPct {
			out = append(out, suspect(CodeUsageMismatch, "the server's usage counts %s tokens %.1f%% off the client's at the median (over %.0f%%): the token metrics count other tokens than the server; use the served model's tokenizer (--tokenizer) or --use-server-token-count",
				d.what, *d.pct, MaxUsageDiffPct)...)
		}
	}
	return out, true
}

func achievedRate(in *Inputs) ([]Reason, bool) {
	if in.ScheduledRate <= 0 || in.AchievedRate <= 0 || in.RateRequests < MinRateRequests {
		return nil, false
	}
	if ratio := in.AchievedRate / in.ScheduledRate; ratio < MinRateRatio {
		asked := fmt.Sprintf("%.2f requests/s the schedule asked for", in.ScheduledRate)
		if in.RequestRate > 0 {
			asked += fmt.Sprintf(" (--request-rate %g)", in.RequestRate)
		}
		return suspect(CodeRate, "requests were sent at %.2f requests/s, %.0f%% of the %s (under %.0f%%): the server saw a lighter load (a --concurrency cap, or a client that could not keep up)",
			in.AchievedRate, 100*ratio, asked, 100*MinRateRatio), true
	}
	return nil, true
}

func warmup(in *Inputs) ([]Reason, bool) {
	if len(in.Slices) < MinSlices {
		return nil, false
	}
	first := in.Slices[0]
	var rest []float64
	for _, s := range in.Slices[1:] {
		rest = append(rest, s...)
	}
	if len(first) < MinSliceSamples || len(rest) < MinSliceSamples {
		return nil, false
	}
	_, _, p := stats.MannWhitney(first, rest)
	m1, m2 := median(first), median(rest)
	if m2 <= 0 {
		return nil, false
	}
	shift := (m1 - m2) / m2
	if p < WarmupP && math.Abs(shift) > MinWarmupShift {
		return suspect(CodeWarmup, "warm-up too short: the first of %d time slices has a %s median of %.2f ms against %.2f ms for the rest (%+.0f%%, Mann-Whitney p = %.2g); add --warmup-request-count or --warmup-duration",
			len(in.Slices), in.SliceMetric, m1, m2, 100*shift, p), true
	}
	return nil, true
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return stats.PercentileSorted(s, 50)
}

func serverMetrics(in *Inputs) ([]Reason, bool) {
	if len(in.Endpoints) == 0 {
		return nil, false
	}
	var out []Reason
	for _, e := range in.Endpoints {
		switch {
		case e.Status == "partial":
			out = append(out, suspect(CodeServerMetrics, "server metrics endpoint %s stopped answering during the run: its metrics cover only part of it", RedactURL(e.URL))...)
		case e.Status == "failed" && e.Explicit:
			out = append(out, suspect(CodeServerMetricsFail, "server metrics endpoint %s never answered: no server metrics from it", RedactURL(e.URL))...)
		}
	}
	return out, true
}
