package client

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmbench/llmbench/internal/endpoint"
	"github.com/llmbench/llmbench/internal/record"
)

// TestLateDialHooksIgnored (net/http's transport) sets up the race net/http really has: request B
// starts a dial, then takes the connection request A just released, and
// returns; B's dial finishes afterwards and fires ConnectStart and
// ConnectDone with B's trace. Those late hooks must not touch B's record
// (under -race the old code fails here with a data race) and B, on a
// reused connection, must show no connect time.
func TestLateDialHooksIgnored(t *testing.T) {
	releaseA := make(chan struct{})
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if requests.Add(1) == 1 {
			<-releaseA
		}
		io.WriteString(w, okWhole)
	}))
	defer srv.Close()

	dialEntered := make(chan struct{})
	releaseDial := make(chan struct{})
	dialDone := make(chan struct{})
	var dials atomic.Int64
	var d net.Dialer
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		if dials.Add(1) == 1 {
			return d.DialContext(ctx, network, addr)
		}
		close(dialEntered)
		<-releaseDial
		defer close(dialDone)
		return d.DialContext(ctx, network, addr) // fires B's ConnectStart/Done now
	}
	c := New(Options{URL: srv.URL, Kind: endpoint.Chat, Timeout: 10 * time.Second, MaxConns: 4, Clock: record.NewClock(), DialContext: dial, StdlibTransport: true})
	defer c.Close()

	recA, recB := &record.Record{}, &record.Record{}
	doneA, doneB := make(chan struct{}), make(chan struct{})
	go func() { c.Do(context.Background(), recA, []byte(`{}`)); close(doneA) }()
	for requests.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	go func() { c.Do(context.Background(), recB, []byte(`{}`)); close(doneB) }()
	<-dialEntered // B is dialling; its dial is held back
	close(releaseA)
	<-doneA
	<-doneB // B went out on A's connection
	before := recB.Trace
	close(releaseDial)
	<-dialDone
	time.Sleep(20 * time.Millisecond) // let the hooks of the late dial run
	after := recB.Trace

	if !recA.Valid() || !recB.Valid() {
		t.Fatalf("errors: A %+v, B %+v", recA.Err, recB.Err)
	}
	if !after.ConnReused || after.ConnectStart != 0 || after.ConnectDone != 0 {
		t.Fatalf("B on a reused connection: reused %v, connect %d..%d", after.ConnReused, after.ConnectStart, after.ConnectDone)
	}
	if before != after {
		t.Fatalf("B's trace changed after it was recorded:\n before %+v\n after  %+v", before, after)
	}
	if recA.Trace.ConnReused || recA.Trace.ConnectDone <= recA.Trace.ConnectStart {
		t.Fatalf("A dialled a new connection: %+v", recA.Trace)
	}
}

func TestTraceSealDropsBackgroundDialOnReuse(t *testing.T) {
	tr := &traceRecorder{clock: record.NewClock()}
	h := tr.hooks()
	h.GetConn("x")
	h.ConnectStart("tcp", "x")
	h.GotConn(gotConnInfo(true))
	var dst record.HTTPTrace
	dst.LastByte = 42
	tr.seal(&dst)
	h.ConnectDone("tcp", "x", nil)
	h.GotFirstResponseByte()
	if dst.ConnectStart != 0 || dst.ConnectDone != 0 || !dst.ConnReused || dst.GetConn == 0 || dst.FirstByte != 0 || dst.LastByte != 42 {
		t.Fatalf("sealed trace %+v", dst)
	}
}

func gotConnInfo(reused bool) httptrace.GotConnInfo { return httptrace.GotConnInfo{Reused: reused} }
