package servertiming

import "net/http"

// NIM reads the "stats" object of NVIDIA NIM for LLMs
// (NIM_PER_REQ_METRICS_ENABLE=1).
type NIM struct{}

// Name implements Format.
func (NIM) Name() string { return "nim" }

// Ask implements Format: enabled by the server's environment only.
func (NIM) Ask(bool) Ask { return Ask{} }

// FromHeaders implements Format: NIM's per-request metrics are in the body.
func (NIM) FromHeaders(http.Header) (Timings, bool) { return Unknown(), false }

// FromBody implements Format.
func (NIM) FromBody(body []byte) (Timings, bool) {
	t := Unknown()
	obj, ok := topValue(body, "stats")
	if !ok {
		return t, false
	}
	found := false
	eachMember(obj, func(k, v []byte) {
		switch string(k) {
		case "time_in_queue_in_ms":
			found = t.setMs(&t.QueueMs, v, 1) || found
		case "generation_time_in_ms":
			found = t.setMs(&t.InferenceMs, v, 1) || found
		case "llm_input_token_length":
			found = t.setCount(&t.PromptTokens, v) || found
		case "llm_output_token_length":
			found = t.setCount(&t.OutputTokens, v) || found
		case "response_tokens":
			eachMember(v, func(k, v []byte) {
				switch string(k) {
				case "time_to_first_token_in_ms":
					found = t.setMs(&t.PrefillMs, v, 1) || found
				case "response_token_length":
					if t.OutputTokens < 0 {
						found = t.setCount(&t.OutputTokens, v) || found
					}
				}
			})
		}
	})
	if !found {
		return Unknown(), false
	}
	t.Source = "nim"
	t.DecodeMs = derived(t.InferenceMs - t.PrefillMs)
	return t, true
}
