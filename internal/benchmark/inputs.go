package benchmark

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/llmbench/llmbench/internal/config"
	"github.com/llmbench/llmbench/internal/dataset"
	"github.com/llmbench/llmbench/internal/endpoint"
	"github.com/llmbench/llmbench/internal/export"
	"github.com/llmbench/llmbench/internal/hfhub"
	"github.com/llmbench/llmbench/internal/mockserver"
	"github.com/llmbench/llmbench/internal/tokenizer"
)

// inputs are the run's requests, built before anything is sent: the
// dataset entries, their request bodies, and inputs.json's view of them.
type inputs struct {
	kind     endpoint.Kind
	entries  []dataset.Entry
	payloads [][]byte
	sessions []export.InputSession
}

// seedOf returns the run's seed, drawing one (and recording it in p, so
// the exported configuration reproduces the run) when none was given.
func seedOf(p *config.Profile) uint64 {
	if p.Input.RandomSeed == nil {
		s := int64(rand.Uint64() >> 1)
		p.Input.RandomSeed = &s
	}
	return uint64(*p.Input.RandomSeed)
}

// loadText loads the run's tokenizer and tokenizes the corpus that prompts
// (and the built-in server's answers) are cut from.
func loadText(ctx context.Context, p config.Profile) (tokenizer.Tokenizer, *dataset.Corpus, error) {
	tok, err := tokenizer.Load(ctx, p.Tokenizer.Name, hfhub.Options{Revision: p.Tokenizer.Revision})
	if err != nil {
		return nil, nil, err
	}
	return tok, dataset.NewCorpus(tok), nil
}

func buildInputs(p config.Profile, seed uint64, corpus *dataset.Corpus) (*inputs, error) {
	kind, err := endpoint.Parse(p.Endpoint.Type)
	if err != nil {
		return nil, err
	}
	extra, err := endpoint.ParseExtraInputs(p.Endpoint.ExtraInputs)
	if err != nil {
		return nil, err
	}
	entries, err := dataset.Synthetic{
		Entries:      p.Input.NumDatasetEntries,
		InputMean:    p.Input.Prompt.InputTokens.Mean,
		InputStddev:  p.Input.Prompt.InputTokens.Stddev,
		OutputMean:   p.Input.Prompt.OutputTokens.Mean,
		OutputStddev: p.Input.Prompt.OutputTokens.Stddev,
		Seed:         seed,
	}.Generate(corpus)
	if err != nil {
		return nil, err
	}
	in := &inputs{kind: kind, entries: entries, payloads: make([][]byte, len(entries)), sessions: make([]export.InputSession, len(entries))}
	model := p.Endpoint.ModelNames[0]
	for i, e := range entries {
		in.payloads[i], err = kind.Body(endpoint.Input{
			Model: model, Prompt: e.Prompt, MaxTokens: e.MaxTokens, Streaming: p.Endpoint.Streaming, Extra: extra,
			LegacyMaxTokens: p.Endpoint.LegacyMaxTokens, IncludeUsage: p.Tokenizer.UseServerTokenCount,
		})
		if err != nil {
			return nil, err
		}
		in.sessions[i] = export.InputSession{SessionID: e.ConversationID, Payloads: []json.RawMessage{in.payloads[i]}}
	}
	return in, nil
}

// startTarget returns the base URL to benchmark: --url, or the built-in
// server started for the run. stop shuts the built-in server down.
func startTarget(p config.Profile, mock mockserver.Config) (baseURL string, stop func(), err error) {
	if !p.Endpoint.Mock {
		if err := checkListening(p.Endpoint.URL); err != nil {
			return "", nil, err
		}
		return p.Endpoint.URL, func() {}, nil
	}
	srv, err := mockserver.New(mock)
	if err != nil {
		return "", nil, fmt.Errorf("start the built-in server: %w", err)
	}
	// The server outlives the run's context so that requests cancelled by
	// Ctrl-C end on the client side, where they are recorded.
	url, stop, err := srv.Start(context.Background(), "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("start the built-in server: %w", err)
	}
	return url, stop, nil
}

// targetURL is the URL requests are sent to: the base URL and the endpoint
// type's path, or --endpoint's.
func targetURL(p config.Profile, baseURL string, kind endpoint.Kind) string {
	path := kind.Path()
	if p.Endpoint.Custom != "" {
		path = "/" + strings.TrimLeft(p.Endpoint.Custom, "/")
	}
	return config.JoinURL(baseURL, path)
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
