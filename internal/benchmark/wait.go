package benchmark

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/llmbench/llmbench/internal/client"
	"github.com/llmbench/llmbench/internal/config"
	"github.com/llmbench/llmbench/internal/endpoint"
	"github.com/llmbench/llmbench/internal/record"
)

// waitForModel, with --wait-for-model-timeout, probes the server until it
// answers as ready: GET /v1/models listing every model (models), a
// one-token request answered with content (inference), or both in that
// order. A server still not ready at the timeout fails the run before
// anything is measured, with the last probe's answer. The probes go
// through a client like the run's, so they carry its auth and headers.
//
// With several servers each is waited for in turn, within the one timeout.
func waitForModel(ctx context.Context, p config.Profile, targets []target, in *inputs, log io.Writer) error {
	e := p.Endpoint
	if e.WaitForModel <= 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, e.WaitForModel)
	defer cancel()
	for _, t := range targets {
		if err := waitForServer(ctx, p, t, in, log); err != nil {
			return err
		}
	}
	return nil
}

// waitForServer probes one server until it is ready or ctx ends.
func waitForServer(ctx context.Context, p config.Profile, t target, in *inputs, log io.Writer) error {
	e, baseURL := p.Endpoint, t.base
	probe := client.New(client.Options{
		URL: targetURL(p, baseURL, in.kind), Kind: in.kind, Type: in.typ, Streaming: e.Streaming, Timeout: max(e.WaitInterval, 5*time.Second),
		APIKey: e.APIKey, Headers: e.Headers, User: t.user, MaxConns: 1, Clock: record.NewClock(), StdlibTransport: e.HTTPClient == config.HTTPClientStdlib,
	})
	defer probe.Close()
	var probes []func() error
	if e.WaitMode == config.WaitModels || e.WaitMode == config.WaitBoth {
		probes = append(probes, func() error { return probeModels(ctx, probe, p, baseURL) })
	}
	if e.WaitMode == config.WaitInference || e.WaitMode == config.WaitBoth {
		probes = append(probes, func() error { return probeInference(ctx, probe, p, in) })
	}
	start := time.Now()
	var last error // the last answer the server gave, not the deadline's cut
	for {
		var err error
		for _, pr := range probes {
			if err = pr(); err != nil {
				break
			}
		}
		if err != nil && (ctx.Err() == nil || last == nil) {
			last = err
		}
		if err == nil {
			if waited := time.Since(start); waited > time.Second {
				fmt.Fprintf(log, "the server at %s is ready after %.1f s\n", baseURL, waited.Seconds())
			}
			return nil
		}
		if !sleepUntil(ctx, time.Now().Add(e.WaitInterval)) {
			return fmt.Errorf("the server at %s was not ready within --wait-for-model-timeout %gs (%s probe): %v", baseURL, e.WaitForModel.Seconds(), e.WaitMode, last)
		}
	}
}

// probeModels wants /v1/models to list every model of the run.
func probeModels(ctx context.Context, probe *client.Client, p config.Profile, baseURL string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, config.JoinURL(baseURL, "/v1/models"), nil)
	if err != nil {
		return err
	}
	req.Header = probe.Header()
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /v1/models: %s", resp.Status)
	}
	for _, m := range p.Endpoint.ModelNames {
		if !strings.Contains(string(body), fmt.Sprintf("%q", m)) {
			return fmt.Errorf("GET /v1/models does not list %q yet", m)
		}
	}
	return nil
}

// probeInference sends a one-token request for the first model and wants
// a valid answer, as the run's requests are judged. Types whose requests
// are more than a prompt (rankings, media, raw payloads) send the run's
// first request instead.
func probeInference(ctx context.Context, probe *client.Client, p config.Profile, in *inputs) error {
	var body []byte
	var err error
	if in.kind.Caps().Input == endpoint.Conversation && in.kind.Caps().Media == 0 || len(in.firstBodies) == 0 {
		body, err = in.typ.Build(endpoint.Input{Model: p.Endpoint.ModelNames[0], Prompt: "ping", MaxTokens: 1, Streaming: p.Endpoint.Streaming, LegacyMaxTokens: p.Endpoint.LegacyMaxTokens})
	} else {
		body = in.firstBodies[0]
	}
	if err != nil {
		return err
	}
	rec := &record.Record{}
	probe.Do(ctx, rec, body)
	if rec.Err != nil {
		return fmt.Errorf("a one-token request: %s", rec.Err.Message)
	}
	return nil
}
