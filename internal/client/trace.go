package client

import (
	"crypto/tls"
	"net"
	"net/http/httptrace"
	"sync"

	"github.com/llmbench/llmbench/internal/record"
)

// traceRecorder collects one request's httptrace events. net/http calls the
// hooks from its own goroutines, and some may fire after the response was
// handed back: a dial started for this request keeps running in the
// background when an idle connection frees up first, and its ConnectDone
// arrives whenever the dial ends. So the recorder owns the timestamps under
// a lock until seal copies them into the record; later hooks are ignored.
type traceRecorder struct {
	clock record.Clock
	// wire counts the request's bytes once it owns a connection.
	wire   wireCounts
	mu     sync.Mutex
	sealed bool
	t      record.HTTPTrace
	// wrote, when set, runs once the request is fully sent.
	wrote func()
}

// set stores now into the field f picks, unless the trace is sealed.
func (tr *traceRecorder) set(f func(*record.HTTPTrace) *int64) {
	now := tr.clock.Now()
	tr.mu.Lock()
	if !tr.sealed {
		*f(&tr.t) = now
	}
	tr.mu.Unlock()
}

// gotConn notes that the request has its connection, and makes the
// request the owner of the connection's byte counts.
func (tr *traceRecorder) gotConn(conn net.Conn, reused bool) {
	now := tr.clock.Now()
	tr.mu.Lock()
	if !tr.sealed {
		tr.t.GotConn, tr.t.ConnReused = now, reused
		claim(conn, &tr.wire)
	}
	tr.mu.Unlock()
}

func (tr *traceRecorder) hooks() *httptrace.ClientTrace {
	return &httptrace.ClientTrace{
		GetConn:           func(string) { tr.set(func(t *record.HTTPTrace) *int64 { return &t.GetConn }) },
		GotConn:           func(info httptrace.GotConnInfo) { tr.gotConn(info.Conn, info.Reused) },
		DNSStart:          func(httptrace.DNSStartInfo) { tr.set(func(t *record.HTTPTrace) *int64 { return &t.DNSStart }) },
		DNSDone:           func(httptrace.DNSDoneInfo) { tr.set(func(t *record.HTTPTrace) *int64 { return &t.DNSDone }) },
		ConnectStart:      func(string, string) { tr.set(func(t *record.HTTPTrace) *int64 { return &t.ConnectStart }) },
		ConnectDone:       func(string, string, error) { tr.set(func(t *record.HTTPTrace) *int64 { return &t.ConnectDone }) },
		TLSHandshakeStart: func() { tr.set(func(t *record.HTTPTrace) *int64 { return &t.TLSStart }) },
		TLSHandshakeDone:  func(tls.ConnectionState, error) { tr.set(func(t *record.HTTPTrace) *int64 { return &t.TLSDone }) },
		WroteRequest: func(httptrace.WroteRequestInfo) {
			tr.set(func(t *record.HTTPTrace) *int64 { return &t.WroteRequest })
			if tr.wrote != nil {
				tr.wrote()
			}
		},
		GotFirstResponseByte: func() { tr.set(func(t *record.HTTPTrace) *int64 { return &t.FirstByte }) },
	}
}

// seal stops recording and copies the trace into dst. On a reused
// connection the request dialled nothing, so any DNS, connect or TLS time
// seen belongs to a background dial that lost the race for this request
// and is dropped.
func (tr *traceRecorder) seal(dst *record.HTTPTrace) {
	tr.mu.Lock()
	tr.sealed = true
	t := tr.t
	tr.mu.Unlock()
	if t.ConnReused {
		t.DNSStart, t.DNSDone, t.ConnectStart, t.ConnectDone, t.TLSStart, t.TLSDone = 0, 0, 0, 0, 0, 0
	}
	lastByte := dst.LastByte
	*dst = t
	dst.LastByte = lastByte
}
