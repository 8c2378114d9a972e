package servertiming

import (
	"encoding/binary"
	"math"
	"math/bits"
	"net/http"
)

// MaxMs is the largest duration accepted from a server (about 11.6 days);
// anything above is taken as garbage and rejected.
const MaxMs = 1e9

// maxTokens bounds token counts accepted from a server.
const maxTokens = 1 << 40

// Timings is what a server said about one request. A duration is NaN and a
// count is -1 when the server did not say.
type Timings struct {
	// Source names the format the values came from ("vllm", "llamacpp",
	// "sglang", "tgi", "nim"); after Merge, the last one that said anything.
	Source string

	// QueueMs is the time waiting to be scheduled: from arrival (TGI: from the
	// end of validation) to the start of prefill.
	QueueMs float64
	// PrefillMs is from scheduling to the first token (prompt processing).
	PrefillMs float64
	// DecodeMs is from the first token to the last.
	DecodeMs float64
	// InferenceMs is from scheduling to the last token (prefill + decode),
	// for servers that only report the sum (TGI) or derived from the parts.
	InferenceMs float64
	// TotalMs is the server's whole time for the request, when it gives one.
	TotalMs float64
	// MeanITLMs is the server's mean inter-token latency, when it gives one.
	MeanITLMs float64

	PromptTokens       int // prompt tokens, cached ones included
	CachedPromptTokens int // prompt tokens served from a prefix cache
	OutputTokens       int // generated tokens

	// Rejected counts values the server sent that were unusable (wrong type,
	// negative, NaN, infinite or over MaxMs / maxTokens) and were dropped.
	Rejected int
}

// Unknown returns Timings with nothing known.
func Unknown() Timings {
	nan := math.NaN()
	return Timings{
		QueueMs: nan, PrefillMs: nan, DecodeMs: nan,
		InferenceMs: nan, TotalMs: nan, MeanITLMs: nan,
		PromptTokens: -1, CachedPromptTokens: -1, OutputTokens: -1,
	}
}

// TTFTMs is the server-side time to first token, QueueMs + PrefillMs, NaN
// unless both are known. It excludes what comes before the queue (HTTP
// parsing, validation, tokenization) and the network, so client TTFT minus
// TTFTMs is the client, network and front-end share.
func (t Timings) TTFTMs() float64 {
	if math.IsNaN(t.QueueMs) || math.IsNaN(t.PrefillMs) {
		return math.NaN()
	}
	return t.QueueMs + t.PrefillMs
}

// Merge returns a with every field that b knows replaced by b's value: call
// it with the earlier chunk's Timings first. Rejected counts add up.
func Merge(a, b Timings) Timings {
	if b.Source != "" {
		a.Source = b.Source
	}
	mergeF(&a.QueueMs, b.QueueMs)
	mergeF(&a.PrefillMs, b.PrefillMs)
	mergeF(&a.DecodeMs, b.DecodeMs)
	mergeF(&a.InferenceMs, b.InferenceMs)
	mergeF(&a.TotalMs, b.TotalMs)
	mergeF(&a.MeanITLMs, b.MeanITLMs)
	mergeI(&a.PromptTokens, b.PromptTokens)
	mergeI(&a.CachedPromptTokens, b.CachedPromptTokens)
	mergeI(&a.OutputTokens, b.OutputTokens)
	a.Rejected += b.Rejected
	return a
}

func mergeF(dst *float64, v float64) {
	if !math.IsNaN(v) {
		*dst = v
	}
}

func mergeI(dst *int, v int) {
	if v >= 0 {
		*dst = v
	}
}

// Ask is what a request must carry for a server to send its timings.
type Ask struct {
	// Body holds top-level JSON fields to merge into the request body; a
	// nested object must be merged into one the body already has, not
	// replace it.
	Body map[string]any
	// Header holds request headers to add.
	Header http.Header
}

// Format reads one engine's way of reporting per-request timings.
type Format interface {
	// Name is the engine's short name, also used as Timings.Source.
	Name() string
	// Ask returns what to add to a request so the server sends its timings;
	// zero when nothing is needed. Nothing returned may make a server that
	// does not know it reject the request.
	Ask(stream bool) Ask
	// FromHeaders reads response headers; ok is false when they carry none
	// of this format's timings.
	FromHeaders(h http.Header) (t Timings, ok bool)
	// FromBody reads a response body or one SSE data payload; ok is false
	// when it carries none of this format's timings.
	FromBody(body []byte) (t Timings, ok bool)
}

// AsksForUsage reports whether a request (a stream, or not) must ask for
// its usage (OpenAI's stream_options.include_usage) for some format's
// timings to come: vLLM streams its metrics on the usage chunk alone. It is
// the only thing any format asks of a request (TestAskOnlyUsage).
func AsksForUsage(stream bool) bool {
	for _, f := range Formats() {
		if so, ok := f.Ask(stream).Body["stream_options"].(map[string]any); ok && so["include_usage"] == true {
			return true
		}
	}
	return false
}

// Formats returns every supported format.
func Formats() []Format {
	return []Format{VLLM{}, LlamaCpp{}, SGLang{}, TGI{}, NIM{}}
}

// Read tries every format on a response's headers (may be nil) and a body or
// one SSE data payload, and merges what they found. It is cheap on a body
// without timings: one pass over its bytes looking at what precedes each
// colon, no parsing, no allocation. ok is false when nothing was found.
func Read(h http.Header, body []byte) (t Timings, ok bool) {
	t = Unknown()
	if len(h) != 0 && hasTGIHeaders(h) {
		if u, found := (TGI{}).FromHeaders(h); found {
			t, ok = Merge(t, u), true
		}
	}
	keys := keysIn(body)
	if keys == 0 {
		return t, ok
	}
	for _, f := range bodyFormats {
		if keys&f.key == 0 {
			continue
		}
		if u, found := f.format.FromBody(body); found {
			t, ok = Merge(t, u), true
		}
	}
	return t, ok
}

const (
	hasMetrics uint8 = 1 << iota
	hasTimings
	hasMetaInfo
	hasStats
)

// bodyFormats are the formats that put timings in a body, each with the
// top-level key that announces it.
var bodyFormats = []struct {
	key    uint8
	format Format
}{{hasMetrics, VLLM{}}, {hasTimings, LlamaCpp{}}, {hasMetaInfo, SGLang{}}, {hasStats, NIM{}}}

// keysIn reports which of the keys "metrics", "timings", "meta_info" and
// "stats" appear in body as object keys at any depth: a quoted name followed
// by a colon. It looks only behind each colon, found eight bytes at a time,
// because searching for the keys themselves is slow: they start with a quote,
// the most common byte in JSON. Inside a JSON string a quote is escaped, so
// text that merely quotes "metrics": cannot match (the byte before its
// closing quote is a backslash).
func keysIn(body []byte) (keys uint8) {
	const (
		ones   = 0x0101010101010101
		highs  = 0x8080808080808080
		colons = ':' * ones
	)
	i := 0
	for ; i+8 <= len(body); i += 8 {
		x := binary.LittleEndian.Uint64(body[i:]) ^ colons
		// High bit set in each byte of x that is zero, i.e. each ':'. A
		// borrow can also flag a ';' right after a ':'; keyBefore sorts
		// those out.
		for m := (x - ones) &^ x & highs; m != 0; m &= m - 1 {
			keys |= keyBefore(body, i+bits.TrailingZeros64(m)>>3)
		}
	}
	for ; i < len(body); i++ {
		if body[i] == ':' {
			keys |= keyBefore(body, i)
		}
	}
	return keys
}

// keyBefore returns the flag of the key that ends just before the colon at
// body[p], or 0.
func keyBefore(body []byte, p int) uint8 {
	if body[p] != ':' {
		return 0
	}
	q := p - 1 // the key's closing quote
	for q >= 0 && (body[q] == ' ' || body[q] == '\t' || body[q] == '\n' || body[q] == '\r') {
		q--
	}
	if q < len(`"stats"`)-1 || body[q] != '"' {
		return 0
	}
	switch body[q-1] {
	case 's':
		switch {
		case keyAt(body, q, `"metrics"`):
			return hasMetrics
		case keyAt(body, q, `"timings"`):
			return hasTimings
		case keyAt(body, q, `"stats"`):
			return hasStats
		}
	case 'o':
		if keyAt(body, q, `"meta_info"`) {
			return hasMetaInfo
		}
	}
	return 0
}

// keyAt reports whether key ends at body[q].
func keyAt(body []byte, q int, key string) bool {
	s := q + 1 - len(key)
	return s >= 0 && string(body[s:q+1]) == key
}

// setNumber stores the number v in dst when usable(x) holds for it, and
// reports whether the server said anything: null (or nothing) leaves dst
// alone and says nothing; anything else unusable is counted in t.Rejected.
func (t *Timings) setNumber(v []byte, usable func(float64) bool, store func(float64)) bool {
	x, st := parseNum(v)
	switch {
	case st == numAbsent:
		return false
	case st == numBad || !usable(x):
		t.Rejected++
	default:
		store(x)
	}
	return true
}

// setMs stores v*scale in dst if v is a usable duration.
func (t *Timings) setMs(dst *float64, v []byte, scale float64) bool {
	return t.setNumber(v, func(x float64) bool { return validMs(x * scale) }, func(x float64) { *dst = x * scale })
}

// setCount stores v in dst if it is a usable token count.
func (t *Timings) setCount(dst *int, v []byte) bool {
	return t.setNumber(v, func(x float64) bool { return x >= 0 && x <= maxTokens && x == math.Trunc(x) },
		func(x float64) { *dst = int(x) })
}

func validMs(x float64) bool {
	return x >= 0 && x <= MaxMs // false for NaN
}

// derived returns x if it is a usable duration, else NaN. Derived values
// are ours, so an unusable one is dropped without counting it.
func derived(x float64) float64 {
	if validMs(x) {
		return x
	}
	return math.NaN()
}
