package client

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/llmbench/llmbench/internal/record"
	"github.com/llmbench/llmbench/internal/servertiming"
)

// h1Transport is a lean HTTP/1.1 transport for one server: the request is
// written and its response read on the caller's goroutine, over a pool of
// kept-alive connections. net/http's Transport hands every request to two
// goroutines of the connection (a writer and a reader) and back through
// channels; at thousands of requests a second those hand-offs cost more
// client CPU than the HTTP itself, and each one is a scheduling delay
// inside the measured times. Proxies and anything else this transport
// does not speak go through net/http (see Client.New).
type h1Transport struct {
	addr string // host:port to dial
	tls  *tls.Config
	dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// head is the request line and the headers every request carries,
	// encoded once.
	head    []byte
	maxIdle int
	// keepDate keeps each response's Date header (Options.ServerDates).
	keepDate bool

	// requests holds buffers a request is assembled in before its one
	// write; a connection keeps no write buffer of its own (4,096
	// connections would hold 4,096 of them).
	requests sync.Pool // *[]byte

	mu   sync.Mutex
	idle []*h1Conn
	// closed is set by closeIdle: connections freed later are closed.
	closed bool
}

// h1Conn is one kept-alive connection.
type h1Conn struct {
	conn net.Conn
	br   *bufio.Reader
	// idleSince is when the connection went back to the pool.
	idleSince time.Time
}

// newH1Transport prepares requests to u (an http or https URL) carrying
// header; ok is false when u needs what only net/http does (a proxy).
func newH1Transport(u *url.URL, header http.Header, tlsConfig *tls.Config, dial func(context.Context, string, string) (net.Conn, error), maxIdle int) (*h1Transport, bool) {
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, false
	}
	if proxy, err := http.ProxyFromEnvironment(&http.Request{URL: u}); err != nil || proxy != nil {
		return nil, false
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	t := &h1Transport{addr: net.JoinHostPort(u.Hostname(), port), dial: dial, maxIdle: maxIdle}
	if u.Scheme == "https" {
		cfg := tlsConfig.Clone()
		if cfg.ServerName == "" {
			cfg.ServerName = u.Hostname()
		}
		cfg.NextProtos = []string{"http/1.1"}
		t.tls = cfg
	}
	// A Host given with --header names the virtual host; the URL's
	// otherwise.
	header, host := header.Clone(), u.Host
	if h := header.Get("Host"); h != "" {
		host = h
		header.Del("Host")
	}
	var b bytes.Buffer
	b.WriteString("POST " + u.RequestURI() + " HTTP/1.1\r\nHost: " + host + "\r\nUser-Agent: llmbench\r\n")
	_ = header.Write(&b)
	t.head = b.Bytes()
	return t, true
}

// idleCheckAfter is how long a connection may sit idle before it is
// checked (alive) when taken again: servers close kept-alive connections
// after their own idle timeout (uvicorn's, under vLLM and SGLang, is 5 s),
// and a request written to such a connection would fail. net/http notices
// because a goroutine reads every idle connection; this transport peeks
// instead, only at connections idle long enough to matter.
const idleCheckAfter = 50 * time.Millisecond

// roundTrip sends one POST with body, its X-Request-ID and
// X-Correlation-ID when set, and returns the response with its headers
// read; its Body must be closed. tr hears the connection events. A request
// is never sent twice: a POST the server may have begun is not replayed
// (net/http's rule too). The request, its dial included, ends with an
// error at deadline.
func (t *h1Transport) roundTrip(ctx context.Context, deadline time.Time, tr *traceRecorder, requestID, correlationID string, body []byte) (*http.Response, error) {
	tr.set(func(h *record.HTTPTrace) *int64 { return &h.GetConn })
	pc, err := t.conn(ctx, deadline, tr)
	if err != nil {
		return nil, err
	}
	return t.exchange(ctx, deadline, pc, tr, requestID, correlationID, body)
}

// conn takes the most recently used idle connection still open, or
// dials one.
func (t *h1Transport) conn(ctx context.Context, deadline time.Time, tr *traceRecorder) (*h1Conn, error) {
	for {
		t.mu.Lock()
		n := len(t.idle)
		if n == 0 {
			t.mu.Unlock()
			break
		}
		pc := t.idle[n-1]
		t.idle = t.idle[:n-1]
		t.mu.Unlock()
		if time.Since(pc.idleSince) < idleCheckAfter || alive(pc.conn) {
			tr.gotConn(pc.conn, true)
			return pc, nil
		}
		pc.conn.Close()
	}
	// The dial reports its DNS and connect events to the request's trace.
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	dctx := httptrace.WithClientTrace(ctx, tr.hooks())
	conn, err := t.dial(dctx, "tcp", t.addr)
	if err != nil {
		return nil, err
	}
	if t.tls != nil {
		tr.set(func(h *record.HTTPTrace) *int64 { return &h.TLSStart })
		tc := tls.Client(conn, t.tls)
		err := tc.HandshakeContext(ctx)
		tr.set(func(h *record.HTTPTrace) *int64 { return &h.TLSDone })
		if err != nil {
			conn.Close()
			return nil, err
		}
		conn = tc
	}
	tr.gotConn(conn, false)
	return &h1Conn{conn: conn, br: bufio.NewReaderSize(conn, readBufferSize)}, nil
}

// readBufferSize is each connection's read buffer: a streamed event or a
// response head fits, and a larger body is read through it into the
// caller's buffer directly (bufio does so when the buffer is empty).
const readBufferSize = 8 << 10

// maxPooledRequest is the largest request buffer kept for reuse; a larger
// one (a long prompt) is left to the garbage collector.
const maxPooledRequest = 64 << 10

// aLongTimeAgo is a deadline in the past: it ends a blocked read or write.
var aLongTimeAgo = time.Unix(1, 0)

// exchange writes the request on pc and reads the response head.
func (t *h1Transport) exchange(ctx context.Context, deadline time.Time, pc *h1Conn, tr *traceRecorder, requestID, correlationID string, body []byte) (*http.Response, error) {
	// The request's reads and writes fail at its deadline; a cancelled
	// request unblocks them at once.
	if err := pc.conn.SetDeadline(deadline); err != nil {
		pc.conn.Close()
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { _ = pc.conn.SetDeadline(aLongTimeAgo) })
	b := &h1Body{t: t, pc: pc, stop: stop}
	fail := func(err error) (*http.Response, error) {
		stop()
		pc.conn.Close()
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, err
	}
	if err := t.write(pc.conn, requestID, correlationID, body); err != nil {
		// A server may answer before it has read the whole request (413
		// for a body over its limit, 401) and close the connection, which
		// fails the write; its answer is the request's outcome, not the
		// failed write, when it came (net/http reads it on another
		// goroutine and often loses that race).
		if ctx.Err() == nil && t.earlyAnswer(ctx, deadline, pc, b) {
			return &b.resp, nil
		}
		return fail(err)
	}
	tr.set(func(h *record.HTTPTrace) *int64 { return &h.WroteRequest })
	if tr.wrote != nil {
		tr.wrote()
	}
	for {
		if _, err := pc.br.Peek(1); err != nil {
			if err == io.EOF {
				err = errors.New("the server closed the connection without a response")
			}
			return fail(err)
		}
		tr.set(func(h *record.HTTPTrace) *int64 { return &h.FirstByte })
		if err := readResponseHead(pc.br, &b.resp, t.keepDate); err != nil {
			return fail(err)
		}
		if code := b.resp.StatusCode; code >= 100 && code < 200 && code != http.StatusSwitchingProtocols {
			continue // 100 Continue and other interim answers
		}
		b.start()
		return &b.resp, nil
	}
}

// earlyAnswerWait bounds the wait for a server's answer once writing the
// request has failed.
const earlyAnswerWait = 100 * time.Millisecond

// earlyAnswer reads a final answer the server sent before the request's
// write failed into b, and reports whether there was one; its body is
// read by the request's deadline. The connection is not reused after it.
func (t *h1Transport) earlyAnswer(ctx context.Context, deadline time.Time, pc *h1Conn, b *h1Body) bool {
	_ = pc.conn.SetReadDeadline(time.Now().Add(earlyAnswerWait))
	for {
		if err := readResponseHead(pc.br, &b.resp, t.keepDate); err != nil {
			return false
		}
		if code := b.resp.StatusCode; code >= 200 || code == http.StatusSwitchingProtocols {
			break
		}
	}
	_ = pc.conn.SetReadDeadline(deadline)
	if ctx.Err() != nil {
		_ = pc.conn.SetDeadline(aLongTimeAgo) // cancelled meanwhile
	}
	b.resp.Close = true
	b.start()
	return true
}

// write sends the request (head, per-request headers, body) in one write.
func (t *h1Transport) write(conn net.Conn, requestID, correlationID string, body []byte) error {
	bp, _ := t.requests.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	b := append((*bp)[:0], t.head...)
	b = appendHeader(b, "X-Request-Id: ", requestID)
	b = appendHeader(b, "X-Correlation-Id: ", correlationID)
	b = append(b, "Content-Length: "...)
	b = strconv.AppendInt(b, int64(len(body)), 10)
	b = append(b, "\r\n\r\n"...)
	b = append(b, body...)
	_, err := conn.Write(b)
	if cap(b) <= maxPooledRequest {
		*bp = b
		t.requests.Put(bp)
	}
	return err
}

// appendHeader appends "Name: value" and its CRLF, when value is set.
func appendHeader(b []byte, name, value string) []byte {
	if value == "" {
		return b
	}
	b = append(b, name...)
	b = append(b, value...)
	return append(b, "\r\n"...)
}

// readResponseHead reads the status line and the headers the client looks
// at into resp (the rest are skipped without being stored). The usual
// values (200 OK, HTTP/1.1, the API's content types) are not copied.
func readResponseHead(br *bufio.Reader, resp *http.Response, keepDate bool) error {
	line, err := readLine(br)
	if err != nil {
		return fmt.Errorf("read the response's status line: %w", err)
	}
	// HTTP/1.1 200 OK
	proto, rest, ok := bytes.Cut(line, []byte{' '})
	if !ok || len(proto) != 8 || !bytes.HasPrefix(proto, []byte("HTTP/1.")) || (proto[7] != '0' && proto[7] != '1') || len(rest) < 3 || (len(rest) > 3 && rest[3] != ' ') {
		return fmt.Errorf("malformed HTTP status line %q", truncate(line))
	}
	code, err := strconv.Atoi(string(rest[:3]))
	if err != nil || code < 100 || code > 999 {
		return fmt.Errorf("malformed HTTP status code in %q", truncate(line))
	}
	*resp = http.Response{StatusCode: code, Status: intern(rest), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: int(proto[7] - '0'), Header: http.Header{}, ContentLength: -1}
	if resp.ProtoMinor == 0 {
		resp.Proto = "HTTP/1.0"
	}
	resp.Close = resp.ProtoMinor == 0
	for {
		line, err := readLine(br)
		if err != nil {
			return fmt.Errorf("read the response's headers: %w", err)
		}
		if len(line) == 0 {
			return nil
		}
		name, value, ok := bytes.Cut(line, []byte{':'})
		if !ok {
			return fmt.Errorf("malformed HTTP header line %q", truncate(line))
		}
		value = bytes.TrimSpace(value)
		switch {
		case asciiEqualFold(name, "Content-Type"):
			resp.Header["Content-Type"] = []string{intern(value)}
		case asciiEqualFold(name, "Content-Encoding"):
			resp.Header["Content-Encoding"] = []string{string(value)}
		case keepDate && asciiEqualFold(name, "Date"):
			// Kept for a shard's clock bound (Options.ServerDates).
			resp.Header["Date"] = []string{string(value)}
		case asciiEqualFold(name, "Location"):
			// Kept for redirects, which the client follows or names.
			resp.Header["Location"] = []string{string(value)}
		case asciiEqualFold(name, "Content-Length"):
			n, err := strconv.ParseInt(string(value), 10, 64)
			if err != nil || n < 0 {
				return fmt.Errorf("bad Content-Length %q", truncate(value))
			}
			resp.ContentLength = n
		case asciiEqualFold(name, "Transfer-Encoding") && resp.ProtoMinor > 0: // HTTP/1.0 has none
			if asciiEqualFold(value, "chunked") {
				resp.TransferEncoding = chunkedEncoding
			} else {
				return fmt.Errorf("unsupported Transfer-Encoding %q", truncate(value))
			}
		case len(name) > 2 && name[1] == '-' && (name[0] == 'X' || name[0] == 'x') && keepTimingHeader(resp.Header, name, value):
			// A server's timing (servertimings.go).
		case asciiEqualFold(name, "Connection"):
			if bytes.Contains(bytes.ToLower(value), []byte("close")) {
				resp.Close = true
			} else if bytes.Contains(bytes.ToLower(value), []byte("keep-alive")) {
				resp.Close = false
			}
		}
	}
}

// chunkedEncoding is every chunked response's TransferEncoding (read only).
var chunkedEncoding = []string{"chunked"}

// intern returns b as a string, without a copy for the values nearly
// every response of an inference server carries.
func intern(b []byte) string {
	switch string(b) {
	case "200 OK":
		return "200 OK"
	case "text/event-stream":
		return "text/event-stream"
	case "text/event-stream; charset=utf-8":
		return "text/event-stream; charset=utf-8"
	case "application/json":
		return "application/json"
	case "application/json; charset=utf-8":
		return "application/json; charset=utf-8"
	}
	return string(b)
}

// readLine reads one CRLF- (or LF-) terminated line without its end; the
// slice is valid until the next read.
func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		return nil, fmt.Errorf("a line longer than %d bytes", br.Size())
	}
	if err != nil {
		if err == io.EOF && len(line) > 0 {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return bytes.TrimRight(line, "\r\n"), nil
}

func truncate(b []byte) []byte {
	if len(b) > 80 {
		return b[:80]
	}
	return b
}

// asciiEqualFold compares b with s ignoring ASCII case.
func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		x, y := b[i], s[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// h1Body reads a response body (chunked, sized, or to the connection's
// end) and gives the connection back to the pool once the body's end was
// read, or closes it.
type h1Body struct {
	// resp is the response this is the body of, kept here so that one
	// allocation holds both.
	resp http.Response
	t    *h1Transport
	pc   *h1Conn
	stop func() bool
	// remaining is what is left of a sized body or the current chunk.
	remaining int64
	chunked   bool
	// chunkOpen: a chunk's data was read, its CRLF not yet.
	chunkOpen bool
	toEOF     bool
	done      bool
	keep      bool
	err       error
}

// start prepares the body of the response head just read into b.resp.
func (b *h1Body) start() {
	resp := &b.resp
	resp.Body = b
	b.keep = !resp.Close
	switch {
	case resp.StatusCode == http.StatusNoContent || resp.StatusCode == http.StatusNotModified:
		b.done = true
	case len(resp.TransferEncoding) > 0:
		b.chunked = true
	case resp.ContentLength >= 0:
		b.remaining = resp.ContentLength
		b.done = b.remaining == 0
	default:
		b.toEOF, b.keep = true, false
	}
}

func (b *h1Body) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.done {
		return 0, io.EOF
	}
	if b.chunked && b.remaining == 0 {
		if err := b.nextChunk(); err != nil {
			return 0, b.fail(err)
		}
		if b.done {
			return 0, io.EOF
		}
	}
	if !b.toEOF && int64(len(p)) > b.remaining {
		p = p[:b.remaining]
	}
	n, err := b.pc.br.Read(p)
	b.remaining -= int64(n)
	switch {
	case err == io.EOF && b.toEOF:
		b.done = true
		return n, io.EOF
	case err == io.EOF:
		return n, b.fail(io.ErrUnexpectedEOF)
	case err != nil:
		return n, b.fail(err)
	}
	if b.chunked && b.remaining == 0 {
		// The chunk's closing CRLF is read with the next chunk's size, not
		// now: waiting for it here would hold back data already received
		// (an SSE event and its arrival time) until it came.
		b.chunkOpen = true
	}
	if !b.chunked && !b.toEOF && b.remaining == 0 {
		b.done = true
	}
	return n, nil
}

// nextChunk reads a chunk-size line; a zero size ends the body (its
// trailers are read and dropped).
func (b *h1Body) nextChunk() error {
	if b.chunkOpen {
		if line, err := readLine(b.pc.br); err != nil || len(line) != 0 {
			if err == nil {
				err = errors.New("malformed chunked encoding: no CRLF after a chunk")
			}
			return err
		}
		b.chunkOpen = false
	}
	line, err := readLine(b.pc.br)
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	if i := bytes.IndexByte(line, ';'); i >= 0 {
		line = line[:i] // chunk extensions
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(line)), 16, 64)
	if err != nil || n < 0 {
		return fmt.Errorf("malformed chunked encoding: chunk size %q", truncate(line))
	}
	if n > 0 {
		b.remaining = n
		return nil
	}
	for {
		line, err := readLine(b.pc.br)
		if err != nil {
			return err
		}
		if len(line) == 0 {
			b.done = true
			return nil
		}
	}
}

func (b *h1Body) fail(err error) error {
	if b.err == nil {
		b.err = err
		b.keep = false
	}
	return b.err
}

// Close gives the connection back when the body was read to its end and
// the request was not cancelled; otherwise it closes it.
func (b *h1Body) Close() error {
	if b.pc == nil {
		return nil
	}
	pc := b.pc
	b.pc = nil
	if b.err == nil {
		b.err = errBodyClosed
	}
	if b.stop() && b.done && b.keep && pc.br.Buffered() == 0 {
		_ = pc.conn.SetDeadline(time.Time{})
		if b.t.put(pc) {
			return nil
		}
	}
	return pc.conn.Close()
}

var errBodyClosed = errors.New("read on a closed response body")

// drain reads the rest of the body (up to 64 KB) through buf, for wait at
// most, so its connection can go back to the pool; a body not ended by
// then fails and Close closes its connection.
func (b *h1Body) drain(wait time.Duration, buf []byte) {
	if b.pc == nil || b.err != nil || b.done {
		return
	}
	_ = b.pc.conn.SetReadDeadline(time.Now().Add(wait))
	for n := 0; n < 64<<10 && !b.done && b.err == nil; {
		m, _ := b.Read(buf)
		n += m
	}
	if !b.done {
		b.fail(errors.New("the body did not end in time after the stream's end"))
	}
}

// put returns pc to the idle pool; false when the pool is full or closed.
func (t *h1Transport) put(pc *h1Conn) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed || len(t.idle) >= t.maxIdle {
		return false
	}
	pc.idleSince = time.Now()
	t.idle = append(t.idle, pc)
	return true
}

// closeIdle closes the idle connections.
func (t *h1Transport) closeIdle() {
	t.mu.Lock()
	idle := t.idle
	t.idle, t.closed = nil, true
	t.mu.Unlock()
	for _, pc := range idle {
		pc.conn.Close()
	}
}

// keepTimingHeader keeps name: value in h when name is one of the headers
// that carry a server's timings, and reports whether it was.
func keepTimingHeader(h http.Header, name, value []byte) bool {
	for _, k := range servertiming.HeaderNames() {
		if asciiEqualFold(name, k) {
			h[k] = []string{string(value)}
			return true
		}
	}
	return false
}
