package benchmark

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/llmbench/llmbench/internal/client"
	"github.com/llmbench/llmbench/internal/config"
	"github.com/llmbench/llmbench/internal/endpoint"
	"github.com/llmbench/llmbench/internal/mockserver"
	"github.com/llmbench/llmbench/internal/record"
)

// target is one server the run sends requests to.
type target struct {
	// base is the server's base URL, without credentials.
	base string
	// user holds the credentials that came with the URL, if any.
	user *url.Userinfo
}

// startTargets returns the servers to benchmark: every --url, or the
// built-in server started for the run, with the DCGM exporter URL it
// poses as when it simulates GPUs. stop shuts the built-in server down.
func startTargets(p config.Profile, mock mockserver.Config, log io.Writer) (targets []target, gpuURLs []string, stop func(), err error) {
	for _, w := range p.Endpoint.AuthWarnings() {
		fmt.Fprintln(log, "WARNING  "+w)
	}
	if !p.Endpoint.Mock {
		if n := len(p.Endpoint.URLs); n > 1 {
			fmt.Fprintf(log, "Load balancing: %d URLs, %s (request n goes to URL n mod %d)\n", n, p.Endpoint.URLStrategy, n)
		}
		for i, base := range p.Endpoint.URLs {
			// A server being waited for may not listen yet.
			if p.Endpoint.WaitForModel == 0 {
				if err := checkListening(base); err != nil {
					return nil, nil, nil, err
				}
			}
			targets = append(targets, target{base: base, user: p.Endpoint.Users[i]})
		}
		return targets, nil, func() {}, nil
	}
	_, targets, gpuURLs, stop, err = startMock(mock)
	return targets, gpuURLs, stop, err
}

// startMock starts the built-in server, and its DCGM exporter when it
// simulates GPUs.
func startMock(mock mockserver.Config) (srv *mockserver.Server, targets []target, gpuURLs []string, stop func(), err error) {
	srv, err = mockserver.New(mock)
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("start the built-in server: %w", err)
	}
	// The server outlives the run's context so that requests cancelled by
	// Ctrl-C end on the client side, where they are recorded.
	base, stopServer, err := srv.Start(context.Background(), "127.0.0.1:0")
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("start the built-in server: %w", err)
	}
	if mock.GPUs == 0 {
		return srv, []target{{base: base}}, nil, stopServer, nil
	}
	gpuURL, stopGPUs, err := srv.StartGPUs(context.Background(), "127.0.0.1:0")
	if err != nil {
		stopServer()
		return nil, nil, nil, nil, fmt.Errorf("start the built-in server's DCGM exporter: %w", err)
	}
	return srv, []target{{base: base}}, []string{gpuURL}, func() { stopGPUs(); stopServer() }, nil
}

// bases are the targets' base URLs.
func bases(targets []target) []string {
	out := make([]string, len(targets))
	for i, t := range targets {
		out[i] = t.base
	}
	return out
}

// targetURL is the URL requests are sent to: the base URL and the endpoint
// type's path, or --endpoint's.
func targetURL(p config.Profile, baseURL string, kind endpoint.Kind) string {
	path := kind.Path(p.Endpoint.Streaming)
	if p.Endpoint.Custom != "" {
		path = "/" + strings.TrimLeft(p.Endpoint.Custom, "/")
	}
	return config.JoinURL(baseURL, path)
}

// newClient makes the HTTP client for one target.
func newClient(p config.Profile, t target, kind endpoint.Kind, typ endpoint.Type, clock record.Clock) *client.Client {
	maxConns := p.Loadgen.Concurrency
	if maxConns == 0 {
		maxConns = 256
	}
	return client.New(client.Options{
		URL: targetURL(p, t.base, kind), Kind: kind, Type: typ, Streaming: p.Endpoint.Streaming, Timeout: p.Endpoint.RequestTimeout,
		APIKey: p.Endpoint.APIKey, Headers: p.Endpoint.Headers, User: t.user, MaxConns: maxConns, Clock: clock,
		StdlibTransport: p.Endpoint.HTTPClient == config.HTTPClientStdlib,
		ServerTimings:   p.Endpoint.ServerTimings == config.ServerTimingsAuto,
		ServerDates:     p.Shard.Sharded(),
		KeepRaw:         p.Output.ExportLevel == config.ExportRaw,
		DownloadVideo:   p.Input.Media.DownloadVideoContent,
	})
}

// clients are the run's HTTP clients, one per target, in --url order:
// request n goes to client n mod their number (--url-strategy
// round_robin, AIPerf's per-request assignment). Each has its own
// connection pool, as AIPerf applies connection reuse per URL.
type clients []*client.Client

func newClients(p config.Profile, targets []target, kind endpoint.Kind, typ endpoint.Type, clock record.Clock) clients {
	cs := make(clients, len(targets))
	for i, t := range targets {
		cs[i] = newClient(p, t, kind, typ, clock)
	}
	return cs
}

// pick is the client request n goes to.
func (cs clients) pick(n int64) *client.Client {
	return cs[n%int64(len(cs))]
}

func (cs clients) Close() {
	for _, c := range cs {
		c.Close()
	}
}

// checkListening fails fast, in one line, when nothing listens at the
// server's address, which is what a forgotten --url or --mock looks like;
// otherwise every request would fail with the same connection error. A
// proxy in the environment may reach what a direct dial cannot, so the
// check is skipped when one applies.
func checkListening(base string) error {
	u, err := url.Parse(base)
	if err != nil {
		return fmt.Errorf("--url %q: %w", base, err)
	}
	if proxy, err := http.ProxyFromEnvironment(&http.Request{URL: u}); err != nil || proxy != nil {
		return nil
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	conn, err := net.DialTimeout("tcp", net.JoinHostPort(u.Hostname(), port), 5*time.Second)
	if err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) {
			return fmt.Errorf("no server is listening at %s: start it or point --url at it, or add --mock to benchmark the built-in simulated server", base)
		}
		return fmt.Errorf("cannot reach the server at %s (%v): check --url, or add --mock to benchmark the built-in simulated server", base, err)
	}
	return conn.Close()
}
