package benchmark

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/llmbench/llmbench/internal/config"
	"github.com/llmbench/llmbench/internal/mockserver"
)

// onFirstWrite is a writer that calls f when first written to.
func onFirstWrite(f func()) io.Writer { return &firstWrite{f: f} }

type firstWrite struct {
	once sync.Once
	f    func()
}

func (w *firstWrite) Write(p []byte) (int, error) {
	w.once.Do(w.f)
	return len(p), nil
}

// TestCancelWritesEverything is Ctrl-C: the run stops, requests in flight
// are recorded as cancelled, and every artifact is still written.
func TestCancelWritesEverything(t *testing.T) {
	dir := t.TempDir()
	p := config.Default()
	p.Endpoint.ModelNames = []string{"m"}
	p.Tokenizer.Name = "builtin"
	p.Endpoint.Streaming = true
	p.Loadgen.Concurrency = 4
	p.Endpoint.Mock = true
	p.Loadgen.RequestCount = 100000
	p.Output.ArtifactDir = dir
	p.ServerMetrics.Disabled = true
	if err := p.Finish(); err != nil {
		t.Fatal(err)
	}
	mock := mockserver.DefaultConfig()
	mock.TTFT, mock.ITL = 5*time.Millisecond, 5*time.Millisecond
	mock.OutputMean = 20 // ~100 ms per request

	// The cancel comes 350 ms into the load, timed from the first progress
	// line, not from Run's start: loading the tokenizer and tokenizing the
	// corpus take a while, much longer under the race detector.
	ctx, cancel := context.WithCancel(context.Background())
	startCancel := onFirstWrite(func() { time.AfterFunc(350*time.Millisecond, cancel) })
	res, err := Run(ctx, Options{Profile: p, Mock: mock, Version: "test", Progress: startCancel, ProgressInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Summary.WasCancelled {
		t.Fatal("want was_cancelled")
	}
	f, err := os.Open(filepath.Join(dir, "profile_export.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var total, cancelled int
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l struct {
			Metadata struct {
				WasCancelled bool   `json:"was_cancelled"`
				CancelNs     *int64 `json:"cancellation_time_ns"`
			} `json:"metadata"`
			Error *struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		total++
		if l.Metadata.WasCancelled {
			cancelled++
			if l.Error == nil || l.Error.Code != 499 || l.Metadata.CancelNs == nil {
				t.Fatalf("cancelled request without a 499 error and time: %s", sc.Bytes())
			}
		}
	}
	rs := res.Summary.Results
	// Up to 4 were in flight at the cancel (a worker may have been between
	// two requests); each is recorded as cancelled, and every error is one.
	if cancelled < 1 || cancelled > 4 || cancelled != rs.ErrorCount || total != rs.RequestCount+rs.ErrorCount || rs.RequestCount < 4 {
		t.Fatalf("%d lines, %d cancelled; results %d ok + %d errors", total, cancelled, rs.RequestCount, rs.ErrorCount)
	}
	for _, name := range []string{"profile_export_aiperf.json", "profile_export_aiperf.csv", "inputs.json"} {
		if st, err := os.Stat(filepath.Join(dir, name)); err != nil || st.Size() == 0 {
			t.Fatalf("%s not written: %v", name, err)
		}
	}
}

// TestDeadEndpoint: a server that drops every connection fails every
// request, and the run still ends cleanly with each one accounted for.
func TestDeadEndpoint(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	dir := t.TempDir()
	p := config.Default()
	p.Endpoint.ModelNames = []string{"m"}
	p.Tokenizer.Name = "builtin"
	p.Endpoint.URLs = []string{"http://" + ln.Addr().String()}
	p.Loadgen.Concurrency = 2
	p.Loadgen.RequestCount = 6
	p.Output.ArtifactDir = dir
	p.ServerMetrics.ReachabilityTimeout = time.Second
	if err := p.Finish(); err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), Options{Profile: p, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	rs := res.Summary.Results
	if rs.RequestCount != 0 || rs.ErrorCount != 6 {
		t.Fatalf("results %+v", rs)
	}
	// EOF or a reset, depending on timing: connection errors either way.
	n := 0
	for _, e := range rs.Errors {
		if e.Error.Type != "ConnectionError" {
			t.Fatalf("error %+v", e)
		}
		n += e.Count
	}
	if n != 6 {
		t.Fatalf("error summary %+v counts %d", rs.Errors, n)
	}
}

// TestNoServerListening: with nothing at --url (AIPerf's default
// localhost:8000 when the user forgot --url or --mock), the run does not
// start and says in one line what to do.
func TestNoServerListening(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // a port nobody listens on
	p := config.Default()
	p.Endpoint.ModelNames = []string{"m"}
	p.Tokenizer.Name = "builtin"
	p.Endpoint.URLs = []string{addr}
	p.Output.ArtifactDir = t.TempDir()
	if err := p.Finish(); err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), Options{Profile: p, Version: "test"})
	want := "no server is listening at http://" + addr + ": start it or point --url at it, or add --mock to benchmark the built-in simulated server"
	if err == nil || err.Error() != want {
		t.Fatalf("error %v\nwant %s", err, want)
	}
}
