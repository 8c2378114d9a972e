// Package record defines the raw per-request record the HTTP client produces
// and everything downstream reads: when a request started, when each content
// chunk arrived, what came back, and how it failed. It computes nothing.
package record

import (
	"time"
)

// Phase is the benchmark phase a request belongs to.
type Phase string

// The phases, named as AIPerf names them in benchmark_phase.
const (
	PhaseWarmup    Phase = "warmup"
	PhaseProfiling Phase = "profiling"
)

// Clock turns monotonic readings into nanoseconds since the run started
// (perf time, for every duration) and, for reporting only, into wall-clock
// epoch nanoseconds anchored at the same instant. Wall times derived this
// way never jump with NTP.
type Clock struct {
	base     time.Time
	baseWall int64
}

// NewClock starts a clock at now.
func NewClock() Clock {
	now := time.Now()
	return Clock{base: now, baseWall: now.UnixNano()}
}

// ClockAt starts a clock now whose wall time reads wallNs; for tests and
// replays that need known timestamps.
func ClockAt(wallNs int64) Clock {
	return Clock{base: time.Now(), baseWall: wallNs}
}

// Now is the perf time: monotonic nanoseconds since the clock started.
func (c Clock) Now() int64 { return int64(time.Since(c.base)) }

// Perf converts a time.Time carrying a monotonic reading to perf time.
func (c Clock) Perf(t time.Time) int64 { return int64(t.Sub(c.base)) }

// Wall converts a perf time to wall-clock epoch nanoseconds.
func (c Clock) Wall(perf int64) int64 { return c.baseWall + perf }

// Usage is the token usage a server reported.
type Usage struct {
	PromptTokens     int
	CompletionTokens int
	TotalTokens      int
	ReasoningTokens  int
	HasReasoning     bool
	// CacheReadTokens and CacheCreationTokens are the prompt tokens read
	// from and written to the server's prompt cache, as Anthropic reports
	// them (HasCache: the server said).
	CacheReadTokens, CacheCreationTokens int
	HasCache                             bool
}

// Error describes why a request failed, in AIPerf's ErrorDetails shape.
type Error struct {
	Code    int    `json:"code,omitempty"`
	Type    string `json:"type"`
	Message string `json:"message"`
}

// Error types recorded for failed requests.
const (
	ErrHTTP      = "HTTPError"
	ErrConnect   = "ConnectionError"
	ErrTimeout   = "TimeoutError"
	ErrCancelled = "RequestCancellationError"
	ErrMalformed = "ResponseParseError"
	ErrServer    = "ServerError" // an error object inside a 200 response
	// ErrInvalidResult is a response that arrived but carried no usable
	// content (an empty body, an HTML page, chunks without text, a stream
	// cut short), named as AIPerf names it.
	ErrInvalidResult = "InvalidInferenceResultError"
)

// Cause is the likely reason behind an invalid result, for the one warning
// a run prints when most of its requests fail that way.
type Cause string

// The causes an invalid result is attributed to.
const (
	CauseNone Cause = ""
	// CauseStreamingMismatch: the server answered a stream to a
	// non-streaming request, or a plain body to a streaming one.
	CauseStreamingMismatch Cause = "streaming mismatch"
	// CauseWrongPath: an HTML page or similar, not an API at all.
	CauseWrongPath Cause = "wrong endpoint path or a proxy"
	// CauseProxy: a body encoded or cut in a way the server would not do.
	CauseProxy Cause = "a proxy between llmbench and the server"
	// CauseNoContent: a well-formed answer with nothing in it.
	CauseNoContent Cause = "no content from the server"
	// CauseTruncated: a stream that ended without its finish.
	CauseTruncated Cause = "streams cut short"
)

// HTTPTrace holds connection-level timestamps in perf ns; zero means the
// event did not happen (for example no DNS lookup on a reused connection).
type HTTPTrace struct {
	GetConn, GotConn          int64
	DNSStart, DNSDone         int64
	ConnectStart, ConnectDone int64
	TLSStart, TLSDone         int64
	WroteRequest              int64
	FirstByte                 int64
	LastByte                  int64
	ConnReused                bool
	// BytesSent and BytesReceived are the bytes the connection carried for
	// this request, headers included; Writes and Reads the transport
	// operations. HaveWire says they were measured.
	BytesSent, BytesReceived int64
	Writes, Reads            int64
	HaveWire                 bool
}

// ServerTimings is a server's own account of one request's time, in ms;
// a part it did not give is NaN.
type ServerTimings struct {
	// Source names the format it came in ("vllm", "llamacpp", ...).
	Source string
	// Queue is from the request's arrival to its scheduling; Prefill from
	// then to the first token; Decode from the first token to the last;
	// Total the server's whole time for the request, when given apart.
	Queue, Prefill, Decode, Total float64
	// Rejected counts values the server gave that cannot be times
	// (negative, not a number, absurdly large): left out, not guessed.
	Rejected int
}

// Video is a video generation job's figures by the server's account
// (SGLang's); a figure not given is NaN.
type Video struct {
	ID               string
	InferenceSeconds float64
	PeakMemoryMB     float64
}

// Record is everything measured about one request.
type Record struct {
	// SessionNum is the request's index across the whole run, warm-up first.
	SessionNum int
	// Raw, with --export-level raw, is the request and response as they
	// went over the wire, dropped once written out; nil otherwise.
	Raw *RawExchange
	// ConversationID is the dataset conversation's id; CorrelationID
	// (X-Correlation-ID) names this instance of it.
	ConversationID string
	CorrelationID  string
	TurnIndex      int
	XRequestID     string
	Phase          Phase

	// InputTokens is the prompt's length by the client tokenizer.
	InputTokens int
	// RequestedOutputTokens is the max_tokens sent, or 0 if none.
	RequestedOutputTokens int

	// CreditIssuedPerf is when the request was due (schedule.Job.Due), 0
	// when unknown; Scheduled is true when that instant was fixed in
	// advance (rate mode), not set by the previous request's end.
	CreditIssuedPerf int64
	Scheduled        bool
	// StartPerf is when the request was handed to the transport.
	StartPerf int64
	// EndPerf is when the last byte (or the failure) was seen.
	EndPerf int64
	// ResponsePerfs are the arrival times of the content-bearing responses:
	// each streaming chunk with non-empty text or reasoning, or the one
	// non-streaming response.
	ResponsePerfs []int64
	// FirstOutputPerf is the arrival of the first non-reasoning content, or 0.
	FirstOutputPerf int64

	OutputText    string
	ReasoningText string
	Usage         *Usage
	// Items counts what a non-text answer carried: embedding vectors,
	// ranking scores, generated images.
	Items int
	// InputImages is the number of images the request sent;
	// InputAudioSeconds the length of the audio it sent.
	InputImages       int
	InputAudioSeconds float64
	// Video is what a video job's server reported, nil for other types.
	Video *Video

	Trace     HTTPTrace
	Streaming bool

	Err *Error
	// Cause is set with ErrInvalidResult errors.
	Cause         Cause
	Cancelled     bool
	CancelledPerf int64
	// ServerTimings is what the server said of this request's time
	// (--server-timings), nil when it said nothing.
	ServerTimings *ServerTimings
	// RedirectedTo is the URL that answered when the server redirected
	// the request (307 or 308), empty otherwise.
	RedirectedTo string
	// ServerDate is the response's Date header, Unix seconds, when the
	// client was asked to read it (client.Options.ServerDates); 0
	// otherwise.
	ServerDate int64
}

// Valid reports whether the request succeeded.
func (r *Record) Valid() bool { return r.Err == nil }

// UUID formats 128 random bits as a version-4 UUID string.
func UUID(hi, lo uint64) string {
	var b [16]byte
	for i := range 8 {
		b[i] = byte(hi >> (8 * i))
		b[8+i] = byte(lo >> (8 * i))
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	// Every request draws one: hex by hand, not through fmt.
	const hexDigits = "0123456789abcdef"
	var out [36]byte
	j := 0
	for i, x := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out[j] = '-'
			j++
		}
		out[j], out[j+1] = hexDigits[x>>4], hexDigits[x&0xf]
		j += 2
	}
	return string(out[:])
}
