// Package client sends one request to an inference server and records what
// happened: httptrace timings, the arrival of every content chunk, the text
// and usage that came back, and any failure, as a record.Record.
package client

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmbench/llmbench/internal/endpoint"
	"github.com/llmbench/llmbench/internal/record"
	"github.com/llmbench/llmbench/internal/sse"
)

// Options configure a Client.
type Options struct {
	// URL is the full endpoint URL, e.g. http://127.0.0.1:8000/v1/chat/completions.
	URL  string
	Kind endpoint.Kind
	// Type is Kind's type as the run configured it (endpoint.Configure);
	// nil: Kind's own.
	Type      endpoint.Type
	Streaming bool
	// Timeout bounds each request, from send to last byte.
	Timeout time.Duration
	// APIKey, when set, is sent as "Authorization: Bearer <key>".
	APIKey string
	// Headers are extra "Name:Value" headers.
	Headers []string
	// User, when set, is sent as Basic auth unless an API key or an
	// Authorization header is given (precedence: -H Authorization, then
	// --api-key, then the URL's credentials): the credentials of a URL like
	// http://user:pw@host, which is never sent or shown with them.
	User *url.Userinfo
	// MaxConns sizes the connection pool (the most requests in flight).
	MaxConns int
	Clock    record.Clock
	// DrainWait bounds the wait for the end of a stream after its [DONE]
	// (see drain); 0 means 10 ms.
	DrainWait time.Duration
	// DialContext replaces the default dialer (tests, connection
	// instrumentation); nil for a plain TCP dial.
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)
	// StdlibTransport sends through net/http's Transport rather than the
	// lean HTTP/1.1 transport (which proxies always use).
	StdlibTransport bool
	// ServerTimings reads the server's per-request timings, when it
	// sends them, into Record.ServerTimings (servertimings.go).
	ServerTimings bool
	// ServerDates reads each response's Date header into
	// Record.ServerDate (a shard bounds its clock against the server's).
	ServerDates bool
	// KeepRaw keeps each request's body and response parts in its record
	// (record.RawExchange), for --export-level raw.
	KeepRaw bool
	// VideoPoll is how often a video job's status is asked for (0: every
	// 100 ms); DownloadVideo also downloads a finished video, inside the
	// request's time (video.go).
	VideoPoll     time.Duration
	DownloadVideo bool
}

// Client sends requests. It is safe for concurrent use.
type Client struct {
	opts Options
	http *http.Client
	// h1 is the lean transport, nil when requests go through http.
	h1     *h1Transport
	header http.Header
	// readers are reused from request to request: their buffers, grown
	// once, read the next response without allocating.
	readers sync.Pool
	// lastChunks and lastText are the content chunks and text bytes of
	// the last stream read: the next stream's record starts with room for
	// as many, rather than growing its slices chunk by chunk.
	lastChunks, lastText atomic.Int64
	// video: answers are video jobs, followed to their end (video.go).
	video bool
}

// responseReader is what reading one response needs: the API's decoder
// and, for streams, the SSE reader over a recorder of the stream's head.
type responseReader struct {
	dec  *endpoint.Decoder
	head headRecorder
	sse  *sse.Reader
	// scratch takes what follows a stream's end (drain).
	scratch [512]byte
	// body holds a whole (non-streamed) response while it is decoded.
	body bytes.Buffer
	// timings gathers the server's per-request timings.
	timings timingsReader
}

// maxPooledBody is the largest response buffer kept for the next response.
const maxPooledBody = 1 << 20

// errTimeout marks a request that ran past Options.Timeout.
var errTimeout = errors.New("request timed out")

// errCancelled marks a request cancelled on purpose
// (--request-cancellation-rate).
var errCancelled = errors.New("request cancelled by the client")

// New makes a Client with a connection pool sized for opts.MaxConns.
func New(opts Options) *Client {
	h := http.Header{}
	if opts.Type == nil {
		opts.Type = opts.Kind.Type()
	}
	caps := endpoint.Caps{}
	if opts.Type != nil {
		caps = opts.Type.Caps()
	}
	h.Set("Content-Type", caps.ContentType())
	if opts.Streaming {
		h.Set("Accept", "text/event-stream")
	} else {
		h.Set("Accept", "application/json")
	}
	switch {
	case opts.APIKey != "" && caps.APIKeyHeader != "":
		h.Set(caps.APIKeyHeader, opts.APIKey)
	case opts.APIKey != "":
		h.Set("Authorization", "Bearer "+opts.APIKey)
	}
	for _, kv := range caps.Headers {
		h.Set(kv[0], kv[1])
	}
	for _, kv := range opts.Headers {
		name, value, _ := strings.Cut(kv, ":")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if strings.EqualFold(name, "Authorization") {
			// One Authorization header: an explicit -H wins over
			// --api-key (config.Endpoint.AuthWarnings says so).
			h.Set(name, value)
			continue
		}
		h.Add(name, value)
	}
	if u := opts.User; u != nil && h.Get("Authorization") == "" {
		pw, _ := u.Password()
		h.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(u.Username()+":"+pw)))
	}
	dial := opts.DialContext
	if dial == nil {
		dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	}
	conns := max(opts.MaxConns, 1)
	tr := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         countingDialer(dial),
		MaxIdleConns:        conns + 16,
		MaxIdleConnsPerHost: conns + 16,
		IdleConnTimeout:     90 * time.Second,
		// Measure the bytes as the server sends them.
		DisableCompression:  true,
		TLSHandshakeTimeout: 30 * time.Second,
		TLSClientConfig:     &tls.Config{MinVersion: tls.VersionTLS12},
		WriteBufferSize:     32 << 10,
		ReadBufferSize:      32 << 10,
	}
	c := &Client{opts: opts, http: &http.Client{Transport: tr, CheckRedirect: checkRedirect}, header: h, video: caps.ProducesVideo}
	if u, err := url.Parse(opts.URL); err == nil && !opts.StdlibTransport {
		if t, ok := newH1Transport(u, h, tr.TLSClientConfig, tr.DialContext, tr.MaxIdleConnsPerHost); ok {
			t.keepDate = opts.ServerDates
			c.h1 = t
		}
	}
	c.readers.New = func() any {
		rr := &responseReader{dec: endpoint.NewDecoderFor(opts.Kind, opts.Type)}
		rr.sse = sse.NewReader(&rr.head)
		return rr
	}
	return c
}

// Header is a copy of the headers every request carries (content type,
// auth, --header), for other calls to the same server.
func (c *Client) Header() http.Header { return c.header.Clone() }

// Close releases idle connections.
func (c *Client) Close() {
	c.http.CloseIdleConnections()
	if c.h1 != nil {
		c.h1.closeIdle()
	}
}

// Do sends body and fills rec's timings, content, usage and error. rec's
// identity fields (SessionNum, XRequestID, …) are the caller's. Do never
// fails: every outcome is recorded in rec.
func (c *Client) Do(ctx context.Context, rec *record.Record, body []byte) {
	c.DoCancelAfter(ctx, rec, body, -1)
}

// DoCancelAfter is Do, except that a request still unanswered cancelAfter
// after it was fully sent is cancelled, as a user who gives up (it is
// recorded as cancelled); a negative cancelAfter never cancels.
func (c *Client) DoCancelAfter(ctx context.Context, rec *record.Record, body []byte, cancelAfter time.Duration) {
	rec.Streaming = c.opts.Streaming
	if c.opts.KeepRaw {
		rec.Raw = &record.RawExchange{Payload: body}
	}
	a := attempt{ctx: ctx, deadline: time.Now().Add(c.opts.Timeout)}
	// The lean transport bounds the request by a deadline on its
	// connection: no context, timer and channel made and dropped per
	// request. net/http has only the request's context for it.
	abort := func() {}
	if c.h1 == nil {
		var cancel context.CancelFunc
		a.ctx, cancel = context.WithDeadlineCause(ctx, a.deadline, errTimeout)
		defer cancel()
		abort = cancel
	}

	tr := &traceRecorder{clock: c.opts.Clock}
	if cancelAfter >= 0 {
		var giveUp context.CancelCauseFunc
		a.ctx, giveUp = context.WithCancelCause(a.ctx)
		var once sync.Once
		var timer *time.Timer
		tr.wrote = func() {
			once.Do(func() { timer = time.AfterFunc(cancelAfter, func() { giveUp(errCancelled) }) })
		}
		defer func() {
			once.Do(func() {}) // no timer after this point
			if timer != nil {
				timer.Stop()
			}
			giveUp(nil)
		}()
	}
	// Last, after the body is closed: every byte of the response is in.
	defer tr.wire.copyTo(&rec.Trace)
	resp, err := c.roundTrip(a, tr, rec, body)
	// From here on the trace belongs to this goroutine alone.
	tr.seal(&rec.Trace)
	if err != nil {
		c.fail(a, rec, record.ErrConnect, 0, err.Error())
		return
	}
	defer resp.Body.Close()
	if rec.Raw != nil {
		rec.Raw.Status = resp.StatusCode
	}

	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		if rec.Raw != nil {
			rec.Raw.Responses = append(rec.Raw.Responses, record.RawResponse{Perf: c.opts.Clock.Now(), Body: string(msg), ContentType: resp.Header.Get("Content-Type"), Whole: true})
		}
		text := strings.TrimSpace(string(msg))
		if text == "" {
			text = resp.Status
		}
		if loc := resp.Header.Get("Location"); resp.StatusCode >= 300 && resp.StatusCode < 400 && loc != "" {
			// Name the target: --url probably wants to be it.
			text = fmt.Sprintf("%s, a redirect to %s that a POST does not follow (llmbench follows 307 and 308 only; 301, 302 and 303 would turn it into a GET): point --url at the target", resp.Status, loc)
		}
		if resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed {
			// Name the URL: a wrong path is the usual reason.
			text = fmt.Sprintf("%s for POST %s (check --url, --endpoint-type and --endpoint): %s", resp.Status, c.opts.URL, text)
		}
		c.fail(a, rec, httpErrorType(resp.StatusCode), resp.StatusCode, text)
		return
	}
	if c.invalidHeaders(a, rec, resp) {
		return
	}
	rr := c.readers.Get().(*responseReader)
	defer func() {
		rr.head.r = nil // let the response go
		if rr.body.Cap() > maxPooledBody {
			rr.body = bytes.Buffer{} // a rare large body is not kept
		}
		c.readers.Put(rr)
	}()
	if c.opts.ServerDates {
		if d, err := http.ParseTime(resp.Header.Get("Date")); err == nil {
			rec.ServerDate = d.Unix()
		}
	}
	if c.opts.ServerTimings {
		rr.timings.reset()
		rr.timings.read(resp.Header, nil)
		defer rr.timings.store(rec)
	}
	rr.dec.Reset()
	if c.opts.Streaming {
		rr.head = headRecorder{r: resp.Body, head: rr.head.head[:0]}
		rr.sse.Reset(&rr.head)
		c.readStream(a, rec, rr)
		drain(resp.Body, abort, c.opts.DrainWait, rr.scratch[:])
	} else {
		c.readWhole(a, rec, resp.Body, rr)
		if rec.Raw != nil && len(rec.Raw.Responses) > 0 {
			rec.Raw.Responses[0].ContentType = resp.Header.Get("Content-Type")
		}
	}
}

// attempt is one request's end conditions: the caller's context (a
// cancellation) and the time it times out.
type attempt struct {
	ctx      context.Context
	deadline time.Time
}

// timedOut reports whether the request failed for its timeout: its
// context says so (net/http), or the deadline on its connection has come
// (the lean transport) while the caller had not cancelled it.
func (a attempt) timedOut() bool {
	if errors.Is(context.Cause(a.ctx), errTimeout) {
		return true
	}
	return a.ctx.Err() == nil && !time.Now().Before(a.deadline)
}

// roundTrip sends the request, through the lean transport or net/http,
// setting rec.StartPerf as it is handed over; errors read as net/http's
// (Post "url": …).
func (c *Client) roundTrip(a attempt, tr *traceRecorder, rec *record.Record, body []byte) (*http.Response, error) {
	ctx := a.ctx
	if c.h1 != nil {
		rec.StartPerf = c.opts.Clock.Now()
		resp, err := c.h1.roundTrip(ctx, a.deadline, tr, rec.XRequestID, rec.CorrelationID, body)
		if err != nil {
			return nil, &url.Error{Op: "Post", URL: c.opts.URL, Err: err}
		}
		if !followed(resp.StatusCode) || resp.Header.Get("Location") == "" {
			return resp, nil
		}
		// A 307 or 308: the lean transport serves one URL, so net/http
		// takes the request on from the new location (and any further
		// hop), as a browser does for a POST: same method, same body.
		base, err := url.Parse(c.opts.URL)
		var target *url.URL
		if err == nil {
			target, err = base.Parse(resp.Header.Get("Location"))
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("redirect %s to %q: %w", resp.Status, resp.Header.Get("Location"), err)
		}
		return c.send(ctx, tr, rec, target, body, 1)
	}
	u, err := url.Parse(c.opts.URL)
	if err != nil {
		rec.StartPerf = c.opts.Clock.Now()
		return nil, fmt.Errorf("build request: %w", err)
	}
	rec.StartPerf = c.opts.Clock.Now()
	return c.send(ctx, tr, rec, u, body, 0)
}

// maxRedirects is how many 307/308 hops a request follows, as browsers.
const maxRedirects = 10

// followed reports a redirect a POST follows with its method and body.
func followed(status int) bool {
	return status == http.StatusTemporaryRedirect || status == http.StatusPermanentRedirect
}

// send POSTs body to target through net/http, which follows further
// 307/308 hops (hops were already taken); rec.RedirectedTo names where a
// redirect led. Credentials go only to the configured host.
func (c *Client) send(ctx context.Context, tr *traceRecorder, rec *record.Record, target *url.URL, body []byte, hops int) (*http.Response, error) {
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, tr.hooks()), http.MethodPost, target.String(), bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	req.Header = c.header.Clone()
	if origin, err := url.Parse(c.opts.URL); err != nil || !sameSite(origin, target) {
		for _, h := range []string{"Authorization", "Proxy-Authorization", "Cookie"} {
			req.Header.Del(h)
		}
	}
	if rec.XRequestID != "" {
		req.Header.Set("X-Request-ID", rec.XRequestID)
	}
	if rec.CorrelationID != "" {
		req.Header.Set("X-Correlation-ID", rec.CorrelationID)
	}
	if hops > 0 {
		req = req.WithContext(context.WithValue(req.Context(), hopsKey{}, hops))
	}
	resp, err := c.http.Do(req)
	if err == nil && (hops > 0 || resp.Request.URL.String() != target.String()) {
		rec.RedirectedTo = resp.Request.URL.String()
	}
	return resp, err
}

// sameSite is net/http's rule for keeping credentials across a redirect:
// the target's host name is the origin's or a subdomain of it (ports
// aside).
func sameSite(origin, target *url.URL) bool {
	o, t := strings.ToLower(origin.Hostname()), strings.ToLower(target.Hostname())
	return t == o || strings.HasSuffix(t, "."+o)
}

// hopsKey carries the hops a request took before net/http had it.
type hopsKey struct{}

// checkRedirect lets net/http follow 307 and 308 (method and body kept)
// up to maxRedirects hops in all, and stops at any other redirect, which
// would turn the POST into a GET: that answer is recorded as the error it
// is, its target named.
func checkRedirect(req *http.Request, via []*http.Request) error {
	hops := len(via)
	if n, ok := via[0].Context().Value(hopsKey{}).(int); ok {
		hops += n
	}
	if hops >= maxRedirects {
		return fmt.Errorf("stopped after %d redirects, the last to %s", maxRedirects, req.URL.Redacted())
	}
	if req.Response != nil && !followed(req.Response.StatusCode) {
		return http.ErrUseLastResponse
	}
	return nil
}

// defaultDrainWait is Options.DrainWait's default: the end of a stream
// comes within microseconds of its [DONE] from a server that ends it.
const defaultDrainWait = 10 * time.Millisecond

// drain reads what follows a stream's [DONE] (the chunked encoding's
// terminator) so the connection goes back to the pool: a body closed
// before its end takes its connection with it, and the next request would
// pay a new TCP (and TLS) handshake inside its measured time. The record
// is complete already; a server that keeps the stream open after [DONE]
// is given wait before the read is ended (by a read deadline on the lean
// transport's connection, by abort on net/http's) and the connection is
// dropped.
func drain(body io.Reader, abort func(), wait time.Duration, buf []byte) {
	if wait <= 0 {
		wait = defaultDrainWait
	}
	if b, ok := body.(*h1Body); ok {
		b.drain(wait, buf)
		return
	}
	t := time.AfterFunc(wait, abort)
	_, _ = io.Copy(io.Discard, io.LimitReader(body, 64<<10))
	t.Stop()
}

// invalidHeaders records a 200 whose headers already show it cannot be
// the answer asked for, and reports whether it did.
func (c *Client) invalidHeaders(a attempt, rec *record.Record, resp *http.Response) bool {
	if enc := resp.Header.Get("Content-Encoding"); enc != "" && !strings.EqualFold(enc, "identity") {
		c.invalid(a, rec, record.CauseProxy, compressedMessage(strings.ToLower(enc)))
		return true
	}
	mt := mediaType(resp.Header.Get("Content-Type"))
	switch {
	case mt == "text/html":
		c.invalid(a, rec, record.CauseWrongPath, htmlMessage)
		return true
	case c.opts.Streaming && mt == "application/json":
		// A server error object is still a server error, not a mismatch.
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if _, err := endpoint.NewDecoderFor(c.opts.Kind, c.opts.Type).Response(data); err != nil && endpoint.IsServerError(err) {
			c.fail(a, rec, record.ErrServer, 0, err.Error())
			return true
		}
		c.invalid(a, rec, record.CauseStreamingMismatch, plainJSONMessage)
		return true
	case !c.opts.Streaming && mt == "text/event-stream":
		c.invalid(a, rec, record.CauseStreamingMismatch, sseMessage)
		return true
	}
	return false
}

// mediaType is a Content-Type's media type, lower-cased, without its
// parameters (mime.ParseMediaType's answer for the types the client
// tells apart, without its allocations).
func mediaType(contentType string) string {
	mt, _, _ := strings.Cut(contentType, ";")
	mt = strings.TrimSpace(mt)
	for _, known := range [...]string{"text/event-stream", "application/json", "text/html"} {
		if strings.EqualFold(mt, known) {
			return known
		}
	}
	return strings.ToLower(mt)
}

const htmlMessage = "the server answered with an HTML page, not an API response: check --url, --endpoint-type and --endpoint, or a proxy in between"

func (c *Client) readStream(a attempt, rec *record.Record, rr *responseReader) {
	clock := c.opts.Clock
	var text, reasoning strings.Builder
	if n := c.lastChunks.Load(); n > 0 && rec.ResponsePerfs == nil {
		rec.ResponsePerfs = make([]int64, 0, n+n/8+1)
	}
	if n := c.lastText.Load(); n > 0 {
		text.Grow(int(n + n/8 + 1))
	}
	defer func() {
		c.lastChunks.Store(int64(len(rec.ResponsePerfs)))
		c.lastText.Store(int64(len(rec.OutputText)))
	}()
	head, sr, dec := &rr.head, rr.sse, rr.dec
	events, done, finish := 0, false, ""
	firstToken := firstTokenHook(a.ctx)
	// usageLast: the last chunk carried usage, which a server sends after
	// the content (OpenAI's stream_options.include_usage): a stream that
	// ends cleanly right after it arrived whole, [DONE] or not.
	usageLast := false
	for {
		ev, err := sr.Next()
		now := clock.Now()
		if err == io.EOF {
			break
		}
		if err != nil {
			rec.OutputText, rec.ReasoningText = text.String(), reasoning.String()
			c.fail(a, rec, record.ErrConnect, 0, fmt.Sprintf("read stream: %v", err))
			return
		}
		events++
		if rec.Raw != nil {
			rec.Raw.Responses = append(rec.Raw.Responses, record.RawResponse{Perf: now, Event: string(ev.Name), Data: string(ev.Data)})
		}
		ch, err := dec.Chunk(ev.Data)
		if err == nil && string(ev.Name) == "error" {
			err = &endpoint.ServerError{Message: string(ev.Data)}
		}
		if err != nil {
			rec.OutputText, rec.ReasoningText = text.String(), reasoning.String()
			rec.Trace.LastByte = now
			c.fail(a, rec, parseErrorType(err), 0, err.Error())
			return
		}
		if ch.FinishReason != "" {
			finish = ch.FinishReason
		}
		if !ch.Done || ch.Usage != nil {
			usageLast = ch.Usage != nil
		}
		if ch.Usage != nil {
			rec.Usage = ch.Usage
		}
		if c.opts.ServerTimings && !ch.Done && (!ch.HasContent() || ch.FinishReason != "") {
			rr.timings.read(nil, ev.Data)
		}
		if ch.HasContent() {
			rec.ResponsePerfs = append(rec.ResponsePerfs, now)
			if firstToken != nil {
				firstToken()
				firstToken = nil
			}
			if len(ch.Text) > 0 && rec.FirstOutputPerf == 0 {
				rec.FirstOutputPerf = now
			}
			text.Write(ch.Text)
			reasoning.Write(ch.Reasoning)
			rec.Items += ch.Items
		}
		if ch.Done {
			// [DONE], or a type's last event, which may carry content
			// and usage (an image's completed event, Responses'
			// response.completed).
			done = true
			break
		}
	}
	rec.EndPerf = clock.Now()
	rec.Trace.LastByte = rec.EndPerf
	rec.OutputText, rec.ReasoningText = text.String(), reasoning.String()
	switch {
	case events == 0:
		cause, msg := head.emptyStream()
		c.invalid(a, rec, cause, msg)
	case len(rec.ResponsePerfs) == 0:
		c.invalid(a, rec, record.CauseNoContent, "no content in the stream: every chunk had empty choices or empty content")
	case !done && finish == "" && !usageLast:
		// The tokens received so far stay in the record.
		c.invalid(a, rec, record.CauseTruncated, "the stream ended without [DONE] and without a finish_reason: truncated by a closed connection")
	}
}

func (c *Client) readWhole(a attempt, rec *record.Record, body io.Reader, rr *responseReader) {
	clock := c.opts.Clock
	rr.body.Reset()
	_, err := rr.body.ReadFrom(body)
	data := rr.body.Bytes()
	dec := rr.dec
	now := clock.Now()
	rec.Trace.LastByte = now
	if rec.Raw != nil {
		rec.Raw.Responses = append(rec.Raw.Responses, record.RawResponse{Perf: now, Body: string(data), Whole: true})
	}
	if err != nil {
		c.fail(a, rec, record.ErrConnect, 0, fmt.Sprintf("read response: %v", err))
		return
	}
	if cause, msg, bad := sniffBody(data); bad {
		c.invalid(a, rec, cause, msg)
		return
	}
	ch, err := dec.Response(data)
	if err != nil {
		c.fail(a, rec, parseErrorType(err), 0, err.Error())
		return
	}
	rec.OutputText, rec.ReasoningText, rec.Usage = string(ch.Text), string(ch.Reasoning), ch.Usage
	if c.opts.ServerTimings {
		rr.timings.read(nil, data)
	}
	if msg := dec.Empty(ch); msg != "" {
		c.invalid(a, rec, record.CauseNoContent, msg)
		return
	}
	rec.Items = ch.Items
	if c.video {
		c.pollVideo(a, rec, ch.Video, dec)
		return
	}
	rec.EndPerf = now
	rec.ResponsePerfs = append(rec.ResponsePerfs, now)
	if len(ch.Text) > 0 {
		rec.FirstOutputPerf = now
	}
}

// invalid records a response that arrived but is not a usable result.
func (c *Client) invalid(a attempt, rec *record.Record, cause record.Cause, msg string) {
	c.fail(a, rec, record.ErrInvalidResult, 0, "Invalid inference result: "+msg)
	if rec.Err.Type == record.ErrInvalidResult {
		rec.Cause = cause
	}
}

// fail records a failure; a failure caused by the request's context is
// recorded as a timeout or a cancellation whatever the transport said.
func (c *Client) fail(a attempt, rec *record.Record, typ string, code int, msg string) {
	now := c.opts.Clock.Now()
	rec.EndPerf = now
	switch {
	case a.timedOut():
		typ, code, msg = record.ErrTimeout, 408, fmt.Sprintf("request timed out after %g seconds", c.opts.Timeout.Seconds())
	case a.ctx.Err() != nil:
		// No elapsed time in the message, so the error summary groups them.
		typ, code, msg = record.ErrCancelled, 499, "request was cancelled before it completed"
		rec.Cancelled, rec.CancelledPerf = true, now
	}
	rec.Err = &record.Error{Code: code, Type: typ, Message: msg}
}

func parseErrorType(err error) string {
	if endpoint.IsServerError(err) {
		return record.ErrServer
	}
	return record.ErrMalformed
}

// httpErrorType names an HTTP status as AIPerf does ("InternalServerError").
func httpErrorType(code int) string {
	if t := strings.ReplaceAll(http.StatusText(code), " ", ""); t != "" {
		return strings.ReplaceAll(t, "-", "")
	}
	return record.ErrHTTP
}
