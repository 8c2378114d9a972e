package report

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/llmbench/llmbench/internal/artifacts"
)

// runConfig reads a run's input_config as llmbench and AIPerf up to 0.12
// write it (endpoint, input, loadgen, output) and as AIPerf's newest
// writes it (models, phases.profiling).
type runConfig struct {
	raw map[string]json.RawMessage
}

func inputConfig(r *artifacts.Run) runConfig {
	c := runConfig{}
	_ = json.Unmarshal(orNull(r.Export["input_config"]), &c.raw)
	return c
}

// value follows a path of keys.
func (c runConfig) value(path ...string) json.RawMessage {
	cur := c.raw
	for i, k := range path {
		v, ok := cur[k]
		if !ok {
			return nil
		}
		if i == len(path)-1 {
			return v
		}
		cur = nil
		if json.Unmarshal(v, &cur) != nil {
			return nil
		}
	}
	return nil
}

func (c runConfig) str(path ...string) string {
	var s string
	_ = json.Unmarshal(orNull(c.value(path...)), &s)
	return s
}

func (c runConfig) num(path ...string) float64 {
	var f float64
	_ = json.Unmarshal(orNull(c.value(path...)), &f)
	return f
}

func (c runConfig) boolean(path ...string) bool {
	var b bool
	_ = json.Unmarshal(orNull(c.value(path...)), &b)
	return b
}

func (c runConfig) models() string {
	var names []string
	if json.Unmarshal(orNull(c.value("endpoint", "model_names")), &names) == nil && len(names) > 0 {
		return strings.Join(names, ", ")
	}
	var models []struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(orNull(c.value("models")), &models) == nil {
		for _, m := range models {
			names = append(names, m.Name)
		}
	}
	return strings.Join(names, ", ")
}

// endpoint is the server benchmarked, its type and streaming.
func (c runConfig) endpoint() string {
	var urls []string
	if json.Unmarshal(orNull(c.value("endpoint", "urls")), &urls) != nil || len(urls) == 0 {
		if u := c.str("endpoint", "url"); u != "" {
			urls = []string{u}
		}
	}
	if c.boolean("endpoint", "mock") {
		urls = []string{"built-in simulated server (--mock)"}
	}
	parts := urls
	if t := c.str("endpoint", "type"); t != "" {
		kind := t
		if c.boolean("endpoint", "streaming") {
			kind += ", streaming"
		}
		parts = append(parts, "("+kind+")")
	}
	return strings.Join(parts, " ")
}

// load says how the load was shaped: concurrency, rate, count, duration.
func (c runConfig) load() string {
	var parts []string
	get := func(key string) float64 {
		return max(c.num("loadgen", key), c.num("phases", "profiling", key))
	}
	if n := get("concurrency"); n > 0 {
		parts = append(parts, fmt.Sprintf("concurrency %g", n))
	}
	if r := get("request_rate"); r > 0 {
		parts = append(parts, fmt.Sprintf("%g requests/s", r))
	}
	if n := get("request_count"); n > 0 {
		parts = append(parts, fmt.Sprintf("%g requests", n))
	}
	if d := get("benchmark_duration"); d > 0 {
		parts = append(parts, fmt.Sprintf("%g s", d))
	}
	return strings.Join(parts, ", ")
}
