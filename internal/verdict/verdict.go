// Package verdict judges whether a run's numbers can be trusted: from what
// the run measured about itself (the client's CPU and timers, its
// schedule, its connections, its errors, the server's own token counts,
// the rate it reached, its first time slice, its server-metrics scrapes)
// it gives PASS, SUSPECT or INVALID and the reasons. It is pure: the run
// hands in plain numbers.
package verdict

import (
	"fmt"
	"net/url"
	"strings"
)

// Level is how far a run can be trusted; a higher level is worse.
type Level int

// The levels, from best to worst.
const (
	Pass Level = iota
	Suspect
	Invalid
)

var levelNames = [...]string{"PASS", "SUSPECT", "INVALID"}

func (l Level) String() string {
	if l < Pass || l > Invalid {
		return fmt.Sprintf("Level(%d)", int(l))
	}
	return levelNames[l]
}

// MarshalText writes the level as PASS, SUSPECT or INVALID.
func (l Level) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// UnmarshalText reads PASS, SUSPECT or INVALID, in any case.
func (l *Level) UnmarshalText(b []byte) error {
	v, err := ParseLevel(string(b))
	if err == nil {
		*l = v
	}
	return err
}

// ParseLevel reads a level's name in any case (suspect, INVALID).
func ParseLevel(s string) (Level, error) {
	for i, n := range levelNames {
		if strings.EqualFold(s, n) {
			return Level(i), nil
		}
	}
	return Pass, fmt.Errorf("verdict %q: use pass, suspect or invalid", s)
}

// Reason is one rule's finding.
type Reason struct {
	Code    string `json:"code"`
	Level   Level  `json:"level"`
	Message string `json:"message"`
}

// Verdict is the run's level (its worst reason's, PASS without any), the
// reasons, and which rules were checked and which skipped for want of
// their input: a skipped rule is not a pass.
type Verdict struct {
	Level   Level    `json:"verdict"`
	Reasons []Reason `json:"reasons"`
	Checked []string `json:"checked"`
	Skipped []string `json:"skipped"`
}

// Client is the client's own load (see package clientload).
type Client struct {
	Cores int
	// CPUUsed is the share of its cores the process used; CPUWait the
	// share it waited for a core, negative when unknown.
	CPUUsed, CPUWait float64
	Saturated        bool
	// NoisyHost: timers late while the client was not saturated.
	NoisyHost bool
	// TimersJudged: there were timer samples enough to judge the delay.
	TimersJudged    bool
	TimerDelayP99Ms float64
	// DelayMatters: the timer delay p99 exceeds a tenth of the finest
	// latency's p50 (LatencyCompared, LatencyP50Ms).
	DelayMatters    bool
	LatencyCompared string
	LatencyP50Ms    float64
}

// Endpoint is one server-metrics endpoint's collection.
type Endpoint struct {
	URL string
	// Status is "ok", "partial" (answered, then stopped) or "failed"
	// (never answered).
	Status string
	// Explicit: asked for with --server-metrics, not the --url server's
	// /metrics probed by default.
	Explicit bool
}

// Inputs are everything the rules need. A zero or nil field is "not
// measured": its rule is skipped.
type Inputs struct {
	// Completed and Errors are the profiling requests that succeeded and
	// failed.
	Completed, Errors int
	// Client is the client's load; nil when not watched or too short to
	// judge its CPU by (under a second).
	Client *Client
	// RequestRate is --request-rate (0 without). ScheduledRate is the rate
	// the schedule's due instants drew for the RateRequests requests sent,
	// and AchievedRate the rate they were sent at (first send to last).
	RequestRate                 float64
	ScheduledRate, AchievedRate float64
	RateRequests                int
	// ScheduleLatenessP99Ms is schedule_lateness's p99 with --request-rate.
	ScheduleLatenessP99Ms *float64
	// ConnWaitP99Ms is http_req_blocked's p99: time spent waiting for a
	// connection from the pool.
	ConnWaitP99Ms *float64
	// Latency names the latency connection waits fall inside (TTFT when
	// streaming, else request latency) and LatencyP50Ms is its p50.
	Latency      string
	LatencyP50Ms *float64
	// UsagePromptDiffP50Pct and UsageCompletionDiffP50Pct are the p50 of
	// |server usage − client count| / client count, in %.
	UsagePromptDiffP50Pct, UsageCompletionDiffP50Pct *float64
	// Slices are the values of SliceMetric (ms) by time slice of the
	// profiling phase, in order.
	Slices      [][]float64
	SliceMetric string
	// Endpoints are the server-metrics endpoints scraped.
	Endpoints []Endpoint
}

// rule checks one input: ok is false when its input is missing; reasons
// are its findings (none: it passed).
type rule struct {
	code  string
	check func(in *Inputs) (reasons []Reason, ok bool)
}

// rules are checked in this order; their reasons come out in it.
var rules = []rule{
	{CodeClientCPU, clientCPU},
	{CodeTimerDelay, timerDelay},
	{CodeScheduleLateness, scheduleLateness},
	{CodeConnectionWait, connectionWait},
	{CodeErrorRate, errorRate},
	{CodeUsageMismatch, usageMismatch},
	{CodeRate, achievedRate},
	{CodeWarmup, warmup},
	{CodeServerMetrics, serverMetrics},
}

// Judge applies every rule to in.
func Judge(in Inputs) Verdict {
	v := Verdict{Reasons: []Reason{}, Checked: []string{}, Skipped: []string{}}
	for _, r := range rules {
		reasons, ok := r.check(&in)
		if !ok {
			v.Skipped = append(v.Skipped, r.code)
			continue
		}
		v.Checked = append(v.Checked, r.code)
		for _, rs := range reasons {
			v.Level = max(v.Level, rs.Level)
			v.Reasons = append(v.Reasons, rs)
		}
	}
	return v
}

// RedactURL keeps a URL's scheme, host and path: credentials and a query
// (where tokens travel) are left out.
func RedactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return "<url>"
	}
	u.User, u.RawQuery, u.Fragment, u.ForceQuery = nil, "", "", false
	return u.String()
}
