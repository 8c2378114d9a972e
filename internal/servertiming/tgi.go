package servertiming

import "net/http"

// TGI reads the timing headers of Hugging Face text-generation-inference.
type TGI struct{}

// Name implements Format.
func (TGI) Name() string { return "tgi" }

// Ask implements Format: TGI always sends the headers on non-streaming
// responses.
func (TGI) Ask(bool) Ask { return Ask{} }

// Canonical names: the Go HTTP client canonicalizes response header keys, so
// direct map lookups work and skip CanonicalMIMEHeaderKey.
const (
	hdrQueue     = "X-Queue-Time"
	hdrInference = "X-Inference-Time"
	hdrTotal     = "X-Total-Time"
	hdrPrompt    = "X-Prompt-Tokens"
	hdrGenerated = "X-Generated-Tokens"
)

// headerNames are the headers TGI carries its timings in.
var headerNames = [...]string{hdrQueue, hdrInference, hdrTotal, hdrPrompt, hdrGenerated}

// HeaderNames are the response headers that carry a server's timings, for
// a transport that keeps only the headers it needs. Read-only.
func HeaderNames() []string { return headerNames[:] }

// hasTGIHeaders is Read's cheap gate: TGI sets all its timing headers
// together.
func hasTGIHeaders(h http.Header) bool {
	return h[hdrQueue] != nil || h[hdrTotal] != nil
}

// FromHeaders implements Format.
func (TGI) FromHeaders(h http.Header) (Timings, bool) {
	t := Unknown()
	found := false
	found = t.headerMs(&t.QueueMs, h, hdrQueue) || found
	found = t.headerMs(&t.InferenceMs, h, hdrInference) || found
	found = t.headerMs(&t.TotalMs, h, hdrTotal) || found
	found = t.headerCount(&t.PromptTokens, h, hdrPrompt) || found
	found = t.headerCount(&t.OutputTokens, h, hdrGenerated) || found
	if !found {
		return Unknown(), false
	}
	t.Source = "tgi"
	return t, true
}

// FromBody implements Format: TGI puts no timings in bodies.
func (TGI) FromBody([]byte) (Timings, bool) { return Unknown(), false }

func (t *Timings) headerMs(dst *float64, h http.Header, key string) bool {
	v := h[key]
	if len(v) == 0 {
		return false
	}
	x, st := parseNum(v[0])
	if st != numOK || !validMs(x) {
		t.Rejected++
		return true
	}
	*dst = x
	return true
}

func (t *Timings) headerCount(dst *int, h http.Header, key string) bool {
	v := h[key]
	if len(v) == 0 {
		return false
	}
	x, st := parseNum(v[0])
	if st != numOK || x < 0 || x > maxTokens || x != float64(int64(x)) {
		t.Rejected++
		return true
	}
	*dst = int(x)
	return true
}
