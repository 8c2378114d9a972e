package compare

import (
	"math"
	"strings"
	"testing"
)

func TestParseGate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Gate
	}{
		{"time_to_first_token:p99:+5%", Gate{Tag: "time_to_first_token", Stat: "p99", Relative: true, Allowance: 0.05}},
		{"request_latency:avg:+3ms", Gate{Tag: "request_latency", Stat: "avg", Allowance: 3, Unit: "ms"}},
		{"request_latency:p50:0.5s", Gate{Tag: "request_latency", Stat: "p50", Allowance: 0.5, Unit: "s"}},
		{"inter_token_latency:p90:+0.5", Gate{Tag: "inter_token_latency", Stat: "p90", Allowance: 0.5}},
		{"inter_token_latency:p95:+250us", Gate{Tag: "inter_token_latency", Stat: "p95", Allowance: 250, Unit: "us"}},
		{"request_throughput:avg:+5%", Gate{Tag: "request_throughput", Stat: "avg", Relative: true, Allowance: 0.05}},
		{"output_token_throughput_per_user:p50:+2", Gate{Tag: "output_token_throughput_per_user", Stat: "p50", Allowance: 2}},
		{"error_rate:+1", Gate{Tag: ErrorRateTag, Stat: ErrorRateStat, Allowance: 1, Unit: "pp"}},
		{"error_rate:0.5pp", Gate{Tag: ErrorRateTag, Stat: ErrorRateStat, Allowance: 0.5, Unit: "pp"}},
		{"time_to_first_token:p99:+0%", Gate{Tag: "time_to_first_token", Stat: "p99", Relative: true, Allowance: 0}},
	} {
		got, err := ParseGate(tc.in)
		tc.want.Expr = tc.in
		if err != nil || got != tc.want {
			t.Errorf("ParseGate(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ in, why string }{
		{"time_to_frist_token:p99:+5%", `unknown metric "time_to_frist_token"`},
		{"time_to_first_token:p42:+5%", `unknown statistic "p42"`},
		{"time_to_first_token:max:+5%", `unknown statistic "max"`},
		{"request_throughput:p99:+5%", "use one of avg"},
		{"input_sequence_length:avg:+5%", "describes the workload"},
		{"time_to_first_token:p99:-5%", "write it with +"},
		{"time_to_first_token:p99:+5furlongs", `unknown unit "furlongs"`},
		{"request_throughput:avg:+3ms", `unit "ms"`},
		{"time_to_first_token:p99:+abc", `unknown unit "abc"`},
		{"time_to_first_token:p99:+ms", "not a number"},
		{"time_to_first_token:p99:+1.2.3", "not a number"},
		{"time_to_first_token:p99:", "not a number"},
		{"time_to_first_token:p99", "TAG:STAT:+ALLOWANCE"},
		{"time_to_first_token:p99:+5%:x", "TAG:STAT:+ALLOWANCE"},
		{"error_rate:+1%", "percentage points"},
		{"error_rate:avg:+1", "error_rate:+N"},
		{"", "TAG:STAT:+ALLOWANCE"},
	} {
		_, err := ParseGate(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.why) || !strings.Contains(err.Error(), `"`+tc.in+`"`) {
			t.Errorf("ParseGate(%q): error %v, want it to name the value and say %q", tc.in, err, tc.why)
		}
	}
}

// entry is a latency's p99 entry with a change and its interval.
func gateEntry(better Direction, base, change, low, high float64) *Entry {
	e := newEntry(metricDef{tag: "time_to_first_token", better: better}, "p99", "ms", base, base+change)
	e.CIAbsLow, e.CIAbsHigh = Num(low), Num(high)
	e.CIRelLow, e.CIRelHigh = Num(low/base), Num(high/base)
	e.Verdict = verdictOf(better, low, high)
	return &e
}

func TestGateDecision(t *testing.T) {
	pct5, _ := ParseGate("time_to_first_token:p99:+5%")
	ms3, _ := ParseGate("time_to_first_token:p99:+3ms")
	sec, _ := ParseGate("time_to_first_token:p99:+0.003s")
	for _, tc := range []struct {
		name   string
		g      Gate
		e      *Entry
		status string
	}{
		// Base 100 ms.
		{"significant, within the allowance", pct5, gateEntry(Lower, 100, 2, 1, 3), GatePass},
		{"beyond the allowance, not significant", pct5, gateEntry(Lower, 100, 10, -2, 22), GatePass},
		{"significant and beyond", pct5, gateEntry(Lower, 100, 10, 6, 14), GateFail},
		{"improved a lot", pct5, gateEntry(Lower, 100, -10, -14, -6), GatePass},
		{"exactly the allowance", pct5, gateEntry(Lower, 100, 5, 1, 9), GatePass},
		{"absolute, significant and beyond", ms3, gateEntry(Lower, 100, 4, 1, 7), GateFail},
		{"absolute, significant, within", ms3, gateEntry(Lower, 100, 2.5, 1, 4), GatePass},
		{"in seconds", sec, gateEntry(Lower, 100, 4, 1, 7), GateFail},
		// A throughput: worse is down.
		{"throughput dropped significantly, beyond", pct5, gateEntry(Higher, 100, -10, -14, -6), GateFail},
		{"throughput rose", pct5, gateEntry(Higher, 100, 10, 6, 14), GatePass},
		{"missing", pct5, nil, GateNotTested},
	} {
		gr := tc.g.evaluate(tc.e)
		if gr.Status != tc.status || gr.Passed != (tc.status == GatePass) {
			t.Errorf("%s: %s (%s), want %s", tc.name, gr.Status, gr.Reason, tc.status)
		}
	}
	// Not tested: an entry without an interval fails its gate, saying why.
	e := untested(metricDef{tag: "request_throughput", better: Higher}, "avg", "requests/sec", 10, 5, notTestedAggregate)
	thr, _ := ParseGate("request_throughput:avg:+5%")
	if gr := thr.evaluate(&e); gr.Passed || gr.Status != GateNotTested || !strings.Contains(gr.Reason, "--num-profile-runs") {
		t.Errorf("untested: %+v", gr)
	}
	// The change is reported in the allowance's terms, positive = worse.
	if gr := pct5.evaluate(gateEntry(Lower, 100, 10, 6, 14)); math.Abs(float64(gr.Change)-0.1) > 1e-12 {
		t.Errorf("relative change %v, want 0.1", gr.Change)
	}
	if gr := sec.evaluate(gateEntry(Lower, 100, 4, 1, 7)); math.Abs(float64(gr.Change)-0.004) > 1e-12 {
		t.Errorf("change in s %v, want 0.004", gr.Change)
	}
}
