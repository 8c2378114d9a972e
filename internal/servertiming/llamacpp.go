package servertiming

import "net/http"

// LlamaCpp reads the "timings" object of the llama.cpp server.
type LlamaCpp struct{}

// Name implements Format.
func (LlamaCpp) Name() string { return "llamacpp" }

// Ask implements Format: the final response and the final stream chunk carry
// timings without any option. timings_per_token would add them to every
// chunk, which costs and gives nothing more here.
func (LlamaCpp) Ask(bool) Ask { return Ask{} }

// FromHeaders implements Format: llama.cpp sends no timing headers.
func (LlamaCpp) FromHeaders(http.Header) (Timings, bool) { return Unknown(), false }

// FromBody implements Format.
func (LlamaCpp) FromBody(body []byte) (Timings, bool) {
	t := Unknown()
	obj, ok := topValue(body, "timings")
	if !ok {
		return t, false
	}
	found := false
	processed := -1
	eachMember(obj, func(k, v []byte) {
		switch string(k) {
		case "prompt_ms":
			found = t.setMs(&t.PrefillMs, v, 1) || found
		case "predicted_ms":
			found = t.setMs(&t.DecodeMs, v, 1) || found
		case "prompt_n":
			found = t.setCount(&processed, v) || found
		case "cache_n":
			found = t.setCount(&t.CachedPromptTokens, v) || found
		case "predicted_n":
			found = t.setCount(&t.OutputTokens, v) || found
		}
	})
	if !found {
		return Unknown(), false
	}
	t.Source = "llamacpp"
	t.InferenceMs = derived(t.PrefillMs + t.DecodeMs)
	// prompt_n counts only the tokens processed, not those reused from the
	// cache; without cache_n (older servers) the prompt size is unknown.
	if processed >= 0 && t.CachedPromptTokens >= 0 && processed+t.CachedPromptTokens <= maxTokens {
		t.PromptTokens = processed + t.CachedPromptTokens
	}
	return t, true
}
