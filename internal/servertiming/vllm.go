package servertiming

import "net/http"

// VLLM reads the "metrics" object of vLLM --enable-per-request-metrics.
type VLLM struct{}

// Name implements Format.
func (VLLM) Name() string { return "vllm" }

// Ask asks, when streaming, for the final usage chunk, which is where vLLM
// puts metrics. stream_options is an OpenAI field; vLLM rejects it on
// non-streaming requests, so it is only asked for streams.
func (VLLM) Ask(stream bool) Ask {
	if !stream {
		return Ask{}
	}
	return Ask{Body: map[string]any{"stream_options": map[string]any{"include_usage": true}}}
}

// FromHeaders implements Format: vLLM sends no timing headers.
func (VLLM) FromHeaders(http.Header) (Timings, bool) { return Unknown(), false }

// FromBody implements Format.
func (VLLM) FromBody(body []byte) (Timings, bool) {
	t := Unknown()
	obj, ok := topValue(body, "metrics")
	if !ok {
		return t, false
	}
	found := false
	// All fields are null when vLLM lacks the data, and the object itself is
	// null when n > 1: both leave everything unknown.
	eachMember(obj, func(k, v []byte) {
		switch string(k) {
		case "queue_time_ms":
			found = t.setMs(&t.QueueMs, v, 1) || found
		case "time_to_first_token_ms":
			found = t.setMs(&t.PrefillMs, v, 1) || found
		case "generation_time_ms":
			found = t.setMs(&t.DecodeMs, v, 1) || found
		case "mean_itl_ms":
			found = t.setMs(&t.MeanITLMs, v, 1) || found
		}
	})
	if !found {
		return Unknown(), false
	}
	t.Source = "vllm"
	t.InferenceMs = derived(t.PrefillMs + t.DecodeMs)
	return t, true
}
