package benchmark

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/llmbench/llmbench/internal/config"
	"github.com/llmbench/llmbench/internal/dataset"
	"github.com/llmbench/llmbench/internal/endpoint"
	"github.com/llmbench/llmbench/internal/mockserver"
	"github.com/llmbench/llmbench/internal/record"
	"github.com/llmbench/llmbench/internal/tokenizer"
)

// Shared is what the runs of one process reuse when it runs many (the
// cells of a sweep, the probes of a search, the trials of a multi-run):
// the tokenizer and its tokenized corpus, the built-in server (started
// once, never restarted between runs), and the HTTP clients with their
// open connections. One clock times every run. Close it after the last
// run. Runs sharing it must run one after another.
type Shared struct {
	// MaxConns sizes the shared clients' connection pools: the highest
	// concurrency of the runs to come (0: each run's own).
	MaxConns int

	mu      sync.Mutex
	clock   record.Clock
	texts   map[string]text
	mock    *startedTargets
	clients map[string]*clientSet
}

type text struct {
	tok    tokenizer.Tokenizer
	corpus *dataset.Corpus
}

// startedTargets is the built-in server as startTargets started it.
type startedTargets struct {
	targets []target
	gpuURLs []string
	stop    func()
	server  *mockserver.Server
}

type clientSet struct{ cs clients }

// NewShared makes an empty Shared: everything is made by the first run
// that needs it.
func NewShared() *Shared {
	return &Shared{clock: record.NewClock(), texts: map[string]text{}, clients: map[string]*clientSet{}}
}

// Close stops the built-in server and closes the connections.
func (s *Shared) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.clients {
		c.cs.Close()
	}
	s.clients = map[string]*clientSet{}
	if s.mock != nil {
		s.mock.stop()
		s.mock = nil
	}
}

// loadText is the run's tokenizer and corpus, loaded once per tokenizer.
func (s *Shared) loadText(ctx context.Context, p config.Profile, log io.Writer) (tokenizer.Tokenizer, *dataset.Corpus, error) {
	if s == nil {
		return loadText(ctx, p, log)
	}
	key := p.Tokenizer.Name + "@" + p.Tokenizer.Revision
	s.mu.Lock()
	t, ok := s.texts[key]
	s.mu.Unlock()
	if ok {
		return t.tok, t.corpus, nil
	}
	tok, corpus, err := loadText(ctx, p, log)
	if err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	s.texts[key] = text{tok, corpus}
	s.mu.Unlock()
	return tok, corpus, nil
}

// startTargets is startTargets, with the built-in server started by the
// first run and kept for the others; stop does nothing then (Close does).
func (s *Shared) startTargets(p config.Profile, mock mockserver.Config, log io.Writer) ([]target, []string, func(), error) {
	if s == nil || !p.Endpoint.Mock {
		return startTargets(p, mock, log)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mock == nil {
		srv, targets, gpuURLs, stop, err := startMock(mock)
		if err != nil {
			return nil, nil, nil, err
		}
		s.mock = &startedTargets{targets, gpuURLs, stop, srv}
	} else {
		// Each run meets the built-in server as a freshly started one:
		// an empty prefix cache, not the prompts of the run before (a
		// real server keeps them unless --reset-kv-cache).
		s.mock.server.ResetPrefixCache()
	}
	return s.mock.targets, s.mock.gpuURLs, func() {}, nil
}

// runClock is the clock of a run: the shared one, or a new one.
func (s *Shared) runClock() record.Clock {
	if s == nil {
		return record.NewClock()
	}
	return s.clock
}

// newClients is newClients, with the clients (and their idle connections)
// kept for the next run that sends the same way to the same servers; close
// does nothing then.
func (s *Shared) newClients(p config.Profile, targets []target, kind endpoint.Kind, typ endpoint.Type, clock record.Clock) (clients, func()) {
	if s == nil {
		cs := newClients(p, targets, kind, typ, clock)
		return cs, cs.Close
	}
	if s.MaxConns > p.Loadgen.Concurrency {
		p.Loadgen.Concurrency = s.MaxConns
	}
	e := p.Endpoint
	key := strings.Join([]string{
		strings.Join(bases(targets), " "), string(kind), strings.Join(e.ExtraInputs, "\n"), kind.Path(p.Endpoint.Streaming), e.Custom, fmt.Sprint(e.Streaming, e.RequestTimeout, e.HTTPClient, e.ServerTimings, p.Loadgen.Concurrency),
		e.APIKey, strings.Join(e.Headers, "\n"),
	}, "\x00")
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clients[key]
	if !ok {
		c = &clientSet{newClients(p, targets, kind, typ, clock)}
		s.clients[key] = c
	}
	return c.cs, func() {}
}
