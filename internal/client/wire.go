package client

import (
	"context"
	"net"
	"sync/atomic"

	"github.com/llmbench/llmbench/internal/record"
)

// wireCounts are one request's bytes and transport operations, counted as
// the connection carries them: what the http_req_data_* and
// http_req_chunks_* metrics report (measured, not estimated from bodies).
type wireCounts struct {
	bytesSent, bytesReceived atomic.Int64
	writes, reads            atomic.Int64
	// counted is set when the request's connection was one counted: zero
	// bytes from a connection nobody counted must not read as 0 KB.
	counted atomic.Bool
}

// copyTo stores the counts into t, if they were counted.
func (w *wireCounts) copyTo(t *record.HTTPTrace) {
	if !w.counted.Load() {
		return
	}
	t.BytesSent, t.BytesReceived = w.bytesSent.Load(), w.bytesReceived.Load()
	t.Writes, t.Reads = w.writes.Load(), w.reads.Load()
	t.HaveWire = true
}

// countingConn counts what passes through a connection for the request
// that currently owns it. HTTP/1.1 carries one request at a time, and a
// request takes the connection (GotConn) before it writes anything, so the
// owner is switched there; reads of the previous response have all
// returned by then, since the connection goes back to the pool only after
// its response's last byte was read. A read still pending then (the
// transport waiting for the next response) returns after the next request
// was written, and is counted for it.
type countingConn struct {
	net.Conn
	owner atomic.Pointer[wireCounts]
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if w := c.owner.Load(); w != nil && n > 0 {
		w.bytesReceived.Add(int64(n))
		w.reads.Add(1)
	}
	return n, err
}

func (c *countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if w := c.owner.Load(); w != nil && n > 0 {
		w.bytesSent.Add(int64(n))
		w.writes.Add(1)
	}
	return n, err
}

// countingDialer wraps every connection dial makes in a countingConn.
func countingDialer(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &countingConn{Conn: conn}, nil
	}
}

// claim makes w the owner of conn's counts, looking through TLS (whose
// NetConn is the counted TCP connection).
func claim(conn net.Conn, w *wireCounts) {
	for conn != nil {
		if c, ok := conn.(*countingConn); ok {
			c.owner.Store(w)
			w.counted.Store(true)
			return
		}
		inner, ok := conn.(interface{ NetConn() net.Conn })
		if !ok {
			return
		}
		conn = inner.NetConn()
	}
}
