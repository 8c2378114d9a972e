package servertiming

import (
	"math"
	"net/http"
)

// SGLang reads the "meta_info" object of SGLang's native /generate API.
type SGLang struct{}

// Name implements Format.
func (SGLang) Name() string { return "sglang" }

// Ask implements Format: e2e_latency needs nothing; the timestamps need the
// server flag --enable-metrics, which no request field can turn on.
func (SGLang) Ask(bool) Ask { return Ask{} }

// FromHeaders implements Format: SGLang sends no timing headers.
func (SGLang) FromHeaders(http.Header) (Timings, bool) { return Unknown(), false }

// FromBody implements Format.
func (SGLang) FromBody(body []byte) (Timings, bool) {
	t := Unknown()
	obj, ok := topValue(body, "meta_info")
	if !ok {
		return t, false
	}
	found := false
	prefillTs, decodeTs := math.NaN(), math.NaN()
	eachMember(obj, func(k, v []byte) {
		switch string(k) {
		case "e2e_latency":
			found = t.setMs(&t.TotalMs, v, 1000) || found
		case "queue_time":
			found = t.setMs(&t.QueueMs, v, 1000) || found
		case "inference_time":
			found = t.setMs(&t.InferenceMs, v, 1000) || found
		case "prefill_finished_ts":
			found = t.setTimestamp(&prefillTs, v) || found
		case "decode_finished_ts":
			found = t.setTimestamp(&decodeTs, v) || found
		case "prompt_tokens":
			found = t.setCount(&t.PromptTokens, v) || found
		case "cached_tokens":
			found = t.setCount(&t.CachedPromptTokens, v) || found
		case "completion_tokens":
			found = t.setCount(&t.OutputTokens, v) || found
		}
	})
	if !found {
		return Unknown(), false
	}
	t.Source = "sglang"
	if !math.IsNaN(prefillTs) && !math.IsNaN(decodeTs) {
		// Both stamps come from the same clock; a negative gap is the
		// server's inconsistency, so it counts as rejected.
		if d := (decodeTs - prefillTs) * 1000; validMs(d) {
			t.DecodeMs = d
		} else {
			t.Rejected++
		}
	}
	t.PrefillMs = derived(t.InferenceMs - t.DecodeMs)
	return t, true
}

// setTimestamp stores a Unix time in seconds if it is usable (1e11 s is
// the year 5138).
func (t *Timings) setTimestamp(dst *float64, v []byte) bool {
	return t.setNumber(v, func(x float64) bool { return x > 0 && x <= 1e11 }, func(x float64) { *dst = x })
}
