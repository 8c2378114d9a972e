package verdict

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func f(v float64) *float64 { return &v }

// repeat is n copies of v.
func repeat(v float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// spread is n values from lo, step apart.
func spread(lo, step float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = lo + float64(i)*step
	}
	return out
}

func TestRules(t *testing.T) {
	idle := &Client{Cores: 2, CPUUsed: 0.02, CPUWait: 0.01, TimersJudged: true, TimerDelayP99Ms: 0.05, LatencyCompared: "inter_token_latency", LatencyP50Ms: 10}
	tests := []struct {
		name  string
		rule  func(*Inputs) ([]Reason, bool)
		in    Inputs
		skip  bool
		level Level  // of the single reason, Pass for none
		want  string // in its message
	}{
		{"cpu: unknown", clientCPU, Inputs{}, true, Pass, ""},
		{"cpu: idle", clientCPU, Inputs{Client: idle}, false, Pass, ""},
		{"cpu: saturated", clientCPU, Inputs{Client: &Client{Cores: 1, CPUUsed: 0.93, CPUWait: 0.05, Saturated: true}}, false, Suspect,
			"client CPU saturated: it used 93% and waited for another 5% of its 1 core(s)"},
		{"cpu: saturated, wait unknown", clientCPU, Inputs{Client: &Client{Cores: 2, CPUUsed: 0.9, CPUWait: -1, Saturated: true}}, false, Suspect,
			"it used 90% of its 2 core(s)"},

		{"timers: no latency to compare", timerDelay, Inputs{Client: &Client{Cores: 1, NoisyHost: true, TimersJudged: true, TimerDelayP99Ms: 5}}, true, Pass, ""},
		{"timers: too few samples", timerDelay, Inputs{Client: &Client{Cores: 1, TimerDelayP99Ms: 5, LatencyCompared: "inter_token_latency", LatencyP50Ms: 1}}, true, Pass, ""},
		// 5 ms late against 600 ms: the noisy host does not matter.
		{"timers: noisy, slow latencies", timerDelay, Inputs{Client: &Client{Cores: 1, CPUUsed: 0.02, NoisyHost: true, TimersJudged: true, TimerDelayP99Ms: 5, LatencyCompared: "time_to_first_token", LatencyP50Ms: 600}}, false, Pass, ""},
		// 5 ms against a 10 ms ITL: 50 %.
		{"timers: noisy, fast ITL", timerDelay, Inputs{Client: &Client{Cores: 1, CPUUsed: 0.02, NoisyHost: true, TimersJudged: true, TimerDelayP99Ms: 5, DelayMatters: true, LatencyCompared: "inter_token_latency", LatencyP50Ms: 10}}, false, Suspect,
			"5.00 ms late at p99 while it used 2% of its cores: a noisy host (other processes), not a saturated client; that is 50% of the inter_token_latency p50 (10.00 ms)"},
		{"timers: saturated is the CPU rule's", timerDelay, Inputs{Client: &Client{Cores: 1, CPUUsed: 0.95, Saturated: true, TimersJudged: true, TimerDelayP99Ms: 300, DelayMatters: true, LatencyCompared: "inter_token_latency", LatencyP50Ms: 5}}, false, Pass, ""},

		{"lateness: no rate", scheduleLateness, Inputs{ScheduleLatenessP99Ms: f(50)}, true, Pass, ""},
		{"lateness: not measured", scheduleLateness, Inputs{RequestRate: 10}, true, Pass, ""},
		// 10 requests/s: 100 ms mean gap; 10 ms is exactly a tenth.
		{"lateness: a tenth of the gap", scheduleLateness, Inputs{RequestRate: 10, ScheduleLatenessP99Ms: f(10)}, false, Pass, ""},
		{"lateness: over a tenth", scheduleLateness, Inputs{RequestRate: 10, ScheduleLatenessP99Ms: f(25)}, false, Suspect,
			"25.00 ms late at p99, 25% of the 100.00 ms mean gap"},

		{"conn wait: not measured", connectionWait, Inputs{Latency: "time_to_first_token", LatencyP50Ms: f(20)}, true, Pass, ""},
		{"conn wait: no latency", connectionWait, Inputs{ConnWaitP99Ms: f(5)}, true, Pass, ""},
		// 5 ms against 20 ms: 25 %.
		{"conn wait: long", connectionWait, Inputs{ConnWaitP99Ms: f(5), Latency: "time_to_first_token", LatencyP50Ms: f(20)}, false, Suspect,
			"waited 5.00 ms for a connection at p99 (http_req_blocked), 25% of the time_to_first_token p50 (20.00 ms)"},
		// 5 ms against 600 ms: under a tenth.
		{"conn wait: small against latency", connectionWait, Inputs{ConnWaitP99Ms: f(5), Latency: "request_latency", LatencyP50Ms: f(600)}, false, Pass, ""},
		// 0.5 ms against 2 ms: a quarter, but under the 1 ms floor.
		{"conn wait: under 1 ms", connectionWait, Inputs{ConnWaitP99Ms: f(0.5), Latency: "time_to_first_token", LatencyP50Ms: f(2)}, false, Pass, ""},

		{"errors: no requests", errorRate, Inputs{}, true, Pass, ""},
		{"errors: 5 of 100", errorRate, Inputs{Completed: 95, Errors: 5}, false, Pass, ""},
		{"errors: 6 of 100", errorRate, Inputs{Completed: 94, Errors: 6}, false, Suspect, "6 of 100 requests failed (6.0%, over 5%)"},
		{"errors: half", errorRate, Inputs{Completed: 50, Errors: 50}, false, Suspect, "50 of 100 requests failed (50.0%, over 5%)"},
		{"errors: 51 of 100", errorRate, Inputs{Completed: 49, Errors: 51}, false, Invalid, "51 of 100 requests failed (51.0%, over 50%)"},
		{"errors: all", errorRate, Inputs{Errors: 3}, false, Invalid, "3 of 3 requests failed (100.0%"},

		{"usage: none", usageMismatch, Inputs{}, true, Pass, ""},
		{"usage: close", usageMismatch, Inputs{UsagePromptDiffP50Pct: f(0), UsageCompletionDiffP50Pct: f(10)}, false, Pass, ""},
		{"usage: completion off", usageMismatch, Inputs{UsageCompletionDiffP50Pct: f(12.5)}, false, Suspect, "usage counts completion tokens 12.5% off the client's"},

		{"rate: no rate", achievedRate, Inputs{AchievedRate: 5, RateRequests: 100}, true, Pass, ""},
		{"rate: too few", achievedRate, Inputs{ScheduledRate: 10, AchievedRate: 5, RateRequests: 9}, true, Pass, ""},
		{"rate: 90 %", achievedRate, Inputs{ScheduledRate: 10, AchievedRate: 9, RateRequests: 100}, false, Pass, ""},
		{"rate: 80 %", achievedRate, Inputs{RequestRate: 10, ScheduledRate: 10, AchievedRate: 8, RateRequests: 100}, false, Suspect,
			"sent at 8.00 requests/s, 80% of the 10.00 requests/s the schedule asked for (--request-rate 10)"},

		{"warm-up: 2 slices", warmup, Inputs{Slices: [][]float64{repeat(200, 50), repeat(100, 50)}}, true, Pass, ""},
		{"warm-up: few in the first", warmup, Inputs{Slices: [][]float64{repeat(200, 19), repeat(100, 50), repeat(100, 50)}}, true, Pass, ""},
		// First slice 150…169 (median 159.5), the rest 100…119 twice
		// (median 109.5): every value of the first above the rest,
		// U = 800 of 20·40, p ≈ 1e-9; shift +46 %.
		{"warm-up: slow first slice", warmup, Inputs{SliceMetric: "time_to_first_token", Slices: [][]float64{spread(150, 1, 20), spread(100, 1, 20), spread(100, 1, 20)}}, false, Suspect,
			"first of 3 time slices has a time_to_first_token median of 159.50 ms against 109.50 ms for the rest (+46%"},
		// Same shape, 5 % apart: significant but too small to matter.
		{"warm-up: small shift", warmup, Inputs{SliceMetric: "time_to_first_token", Slices: [][]float64{spread(105, 0.01, 20), spread(100, 0.01, 20), spread(100, 0.01, 20)}}, false, Pass, ""},
		// Medians far apart (300 against 105), but two values each side,
		// in near-equal shares: U = 530 of 800, z = 2.22, p = 0.026, not
		// under 0.01.
		{"warm-up: shifted median, not significant", warmup, Inputs{SliceMetric: "request_latency", Slices: [][]float64{append(repeat(10, 9), repeat(300, 11)...), append(repeat(10, 10), repeat(200, 10)...), append(repeat(10, 10), repeat(200, 10)...)}}, false, Pass, ""},
		{"warm-up: same distribution", warmup, Inputs{SliceMetric: "request_latency", Slices: [][]float64{spread(100, 1, 30), spread(100, 1, 30), spread(100, 1, 30)}}, false, Pass, ""},

		{"server metrics: none", serverMetrics, Inputs{}, true, Pass, ""},
		{"server metrics: ok", serverMetrics, Inputs{Endpoints: []Endpoint{{URL: "http://h:8000/metrics", Status: "ok"}}}, false, Pass, ""},
		{"server metrics: partial", serverMetrics, Inputs{Endpoints: []Endpoint{{URL: "http://u:pw@h:8000/metrics?token=s3cret", Status: "partial"}}}, false, Suspect,
			"server metrics endpoint http://h:8000/metrics stopped answering"},
		{"server metrics: explicit failed", serverMetrics, Inputs{Endpoints: []Endpoint{{URL: "http://u:pw@h:9400/metrics?k=v", Status: "failed", Explicit: true}}}, false, Suspect,
			"server metrics endpoint http://h:9400/metrics never answered"},
		// The --url server's /metrics, probed by default: many servers
		// have none, which says nothing about the run.
		{"server metrics: default probe failed", serverMetrics, Inputs{Endpoints: []Endpoint{{URL: "http://h:8000/metrics", Status: "failed"}}}, false, Pass, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reasons, ok := tc.rule(&tc.in)
			if ok == tc.skip {
				t.Fatalf("checked %v, want skipped %v (reasons %v)", ok, tc.skip, reasons)
			}
			if tc.level == Pass {
				if len(reasons) != 0 {
					t.Fatalf("reasons %v, want none", reasons)
				}
				return
			}
			if len(reasons) != 1 || reasons[0].Level != tc.level || !strings.Contains(reasons[0].Message, tc.want) {
				t.Fatalf("reasons %+v\nwant one %v with %q", reasons, tc.level, tc.want)
			}
			if strings.Contains(reasons[0].Message, "pw") || strings.Contains(reasons[0].Message, "s3cret") {
				t.Fatalf("message carries a secret: %q", reasons[0].Message)
			}
		})
	}
}

// TestJudge: the verdict is the worst reason's level; rules without input
// are listed as skipped, not passed.
func TestJudge(t *testing.T) {
	v := Judge(Inputs{})
	if v.Level != Pass || len(v.Reasons) != 0 || len(v.Checked) != 0 || len(v.Skipped) != len(rules) {
		t.Fatalf("empty inputs: %+v", v)
	}
	v = Judge(Inputs{
		Completed: 40, Errors: 60,
		Client:                    &Client{Cores: 1, CPUUsed: 0.95, CPUWait: -1, Saturated: true},
		UsageCompletionDiffP50Pct: f(1),
	})
	codes := []string{}
	for _, r := range v.Reasons {
		codes = append(codes, r.Code)
	}
	if v.Level != Invalid || !slices.Equal(codes, []string{CodeClientCPU, CodeErrorRate}) {
		t.Fatalf("verdict %+v", v)
	}
	if !slices.Equal(v.Checked, []string{CodeClientCPU, CodeErrorRate, CodeUsageMismatch}) || slices.Contains(v.Skipped, CodeErrorRate) || !slices.Contains(v.Skipped, CodeWarmup) {
		t.Fatalf("checked %v skipped %v", v.Checked, v.Skipped)
	}
	raw, err := json.Marshal(Judge(Inputs{Completed: 10}))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(raw), `{"verdict":"PASS","reasons":[],"checked":["error_rate"],"skipped":["client_cpu_saturated",`) {
		t.Fatalf("JSON %s", raw)
	}
	raw, _ = json.Marshal(v)
	var back Verdict
	if err := json.Unmarshal(raw, &back); err != nil || back.Level != Invalid || back.Reasons[1].Level != Invalid {
		t.Fatalf("round trip %s: %+v %v", raw, back, err)
	}
}

func TestParseLevel(t *testing.T) {
	for s, want := range map[string]Level{"pass": Pass, "SUSPECT": Suspect, "Invalid": Invalid} {
		if got, err := ParseLevel(s); err != nil || got != want {
			t.Errorf("%q: %v %v", s, got, err)
		}
	}
	if _, err := ParseLevel("bad"); err == nil {
		t.Error("bad level accepted")
	}
}
