// Package client sends one request to an inference server and records what
// happened: httptrace timings, the arrival of every content chunk, the text
// and usage that came back, and any failure, as a record.Record.
package client

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"time"

	"github.com/llmbench/llmbench/internal/endpoint"
	"github.com/llmbench/llmbench/internal/record"
	"github.com/llmbench/llmbench/internal/sse"
)

// Options configure a Client.
type Options struct {
	// URL is the full endpoint URL, e.g. http://127.0.0.1:8000/v1/chat/completions.
	URL       string
	Kind      endpoint.Kind
	Streaming bool
	// Timeout bounds each request, from send to last byte.
	Timeout time.Duration
	// APIKey, when set, is sent as "Authorization: Bearer <key>".
	APIKey string
	// Headers are extra "Name:Value" headers.
	Headers []string
	// MaxConns sizes the connection pool (the most requests in flight).
	MaxConns int
	Clock    record.Clock
}

// Client sends requests. It is safe for concurrent use.
type Client struct {
	opts   Options
	http   *http.Client
	header http.Header
}

// errTimeout marks a request that ran past Options.Timeout.
var errTimeout = errors.New("request timed out")

// New makes a Client with a connection pool sized for opts.MaxConns.
func New(opts Options) *Client {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	if opts.Streaming {
		h.Set("Accept", "text/event-stream")
	} else {
		h.Set("Accept", "application/json")
	}
	if opts.APIKey != "" {
		h.Set("Authorization", "Bearer "+opts.APIKey)
	}
	for _, kv := range opts.Headers {
		name, value, _ := strings.Cut(kv, ":")
		h.Add(strings.TrimSpace(name), strings.TrimSpace(value))
	}
	conns := max(opts.MaxConns, 1)
	tr := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
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
	return &Client{opts: opts, http: &http.Client{Transport: tr}, header: h}
}

// Close releases idle connections.
func (c *Client) Close() { c.http.CloseIdleConnections() }

// Do sends body and fills rec's timings, content, usage and error. rec's
// identity fields (SessionNum, XRequestID, …) are the caller's. Do never
// fails: every outcome is recorded in rec.
func (c *Client) Do(ctx context.Context, rec *record.Record, body []byte) {
	clock := c.opts.Clock
	rec.Streaming = c.opts.Streaming
	ctx, cancel := context.WithTimeoutCause(ctx, c.opts.Timeout, errTimeout)
	defer cancel()

	tr := &rec.Trace
	trace := &httptrace.ClientTrace{
		GetConn: func(string) { tr.GetConn = clock.Now() },
		GotConn: func(info httptrace.GotConnInfo) {
			tr.GotConn = clock.Now()
			tr.ConnReused = info.Reused
		},
		DNSStart:             func(httptrace.DNSStartInfo) { tr.DNSStart = clock.Now() },
		DNSDone:              func(httptrace.DNSDoneInfo) { tr.DNSDone = clock.Now() },
		ConnectStart:         func(string, string) { tr.ConnectStart = clock.Now() },
		ConnectDone:          func(string, string, error) { tr.ConnectDone = clock.Now() },
		TLSHandshakeStart:    func() { tr.TLSStart = clock.Now() },
		TLSHandshakeDone:     func(tls.ConnectionState, error) { tr.TLSDone = clock.Now() },
		WroteRequest:         func(httptrace.WroteRequestInfo) { tr.WroteRequest = clock.Now() },
		GotFirstResponseByte: func() { tr.FirstByte = clock.Now() },
	}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodPost, c.opts.URL, bytes.NewReader(body))
	if err != nil {
		rec.StartPerf = clock.Now()
		c.fail(ctx, rec, record.ErrConnect, 0, fmt.Sprintf("build request: %v", err))
		return
	}
	req.Header = c.header.Clone()
	if rec.XRequestID != "" {
		req.Header.Set("X-Request-ID", rec.XRequestID)
	}
	if rec.ConversationID != "" {
		req.Header.Set("X-Correlation-ID", rec.ConversationID)
	}

	rec.StartPerf = clock.Now()
	resp, err := c.http.Do(req)
	if err != nil {
		c.fail(ctx, rec, record.ErrConnect, 0, err.Error())
		return
	}
	defer resp.Body.Close()

	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		text := strings.TrimSpace(string(msg))
		if text == "" {
			text = resp.Status
		}
		c.fail(ctx, rec, httpErrorType(resp.StatusCode), resp.StatusCode, text)
		return
	}

	if c.opts.Streaming {
		c.readStream(ctx, rec, resp.Body)
	} else {
		c.readWhole(ctx, rec, resp.Body)
	}
}

func (c *Client) readStream(ctx context.Context, rec *record.Record, body io.Reader) {
	clock := c.opts.Clock
	var text, reasoning strings.Builder
	sr := sse.NewReader(body)
	for {
		ev, err := sr.Next()
		now := clock.Now()
		if err == io.EOF {
			break
		}
		if err != nil {
			rec.OutputText, rec.ReasoningText = text.String(), reasoning.String()
			c.fail(ctx, rec, record.ErrConnect, 0, fmt.Sprintf("read stream: %v", err))
			return
		}
		ch, err := c.opts.Kind.ParseChunk(ev.Data)
		if err == nil && string(ev.Name) == "error" {
			err = &endpoint.ServerError{Message: string(ev.Data)}
		}
		if err != nil {
			rec.OutputText, rec.ReasoningText = text.String(), reasoning.String()
			rec.Trace.LastByte = now
			c.fail(ctx, rec, parseErrorType(err), 0, err.Error())
			return
		}
		if ch.Done {
			break
		}
		if ch.Usage != nil {
			rec.Usage = ch.Usage
		}
		if ch.Text == "" && ch.Reasoning == "" {
			continue
		}
		rec.ResponsePerfs = append(rec.ResponsePerfs, now)
		if ch.Text != "" && rec.FirstOutputPerf == 0 {
			rec.FirstOutputPerf = now
		}
		text.WriteString(ch.Text)
		reasoning.WriteString(ch.Reasoning)
	}
	rec.EndPerf = clock.Now()
	rec.Trace.LastByte = rec.EndPerf
	rec.OutputText, rec.ReasoningText = text.String(), reasoning.String()
}

func (c *Client) readWhole(ctx context.Context, rec *record.Record, body io.Reader) {
	clock := c.opts.Clock
	data, err := io.ReadAll(body)
	now := clock.Now()
	rec.Trace.LastByte = now
	if err != nil {
		c.fail(ctx, rec, record.ErrConnect, 0, fmt.Sprintf("read response: %v", err))
		return
	}
	ch, err := c.opts.Kind.ParseResponse(data)
	if err != nil {
		c.fail(ctx, rec, parseErrorType(err), 0, err.Error())
		return
	}
	rec.EndPerf = now
	rec.ResponsePerfs = append(rec.ResponsePerfs, now)
	if ch.Text != "" {
		rec.FirstOutputPerf = now
	}
	rec.OutputText, rec.ReasoningText, rec.Usage = ch.Text, ch.Reasoning, ch.Usage
}

// fail records a failure; a failure caused by the request's context is
// recorded as a timeout or a cancellation whatever the transport said.
func (c *Client) fail(ctx context.Context, rec *record.Record, typ string, code int, msg string) {
	now := c.opts.Clock.Now()
	rec.EndPerf = now
	switch {
	case errors.Is(context.Cause(ctx), errTimeout):
		typ, code, msg = record.ErrTimeout, 408, fmt.Sprintf("request timed out after %g seconds", c.opts.Timeout.Seconds())
	case ctx.Err() != nil:
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
