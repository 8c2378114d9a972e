package benchmark

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/llmbench/llmbench/internal/config"
	"github.com/llmbench/llmbench/internal/endpoint"
)

// waitForModel, with --wait-for-model-timeout, probes the server until it
// answers as ready: GET /v1/models listing the model (models), a one-token
// request answered with 200 (inference), or both in that order. A server
// still not ready at the timeout fails the run before anything is
// measured, with the last probe's answer.
func waitForModel(ctx context.Context, p config.Profile, baseURL string, in *inputs, log io.Writer) error {
	e := p.Endpoint
	if e.WaitForModel <= 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, e.WaitForModel)
	defer cancel()
	hc := &http.Client{Timeout: max(e.WaitInterval, 5*time.Second)}
	probes := []func() error{}
	if e.WaitMode == config.WaitModels || e.WaitMode == config.WaitBoth {
		probes = append(probes, func() error { return probeModels(ctx, hc, p, baseURL) })
	}
	if e.WaitMode == config.WaitInference || e.WaitMode == config.WaitBoth {
		probes = append(probes, func() error { return probeInference(ctx, hc, p, baseURL, in) })
	}
	start := time.Now()
	for {
		var err error
		for _, probe := range probes {
			if err = probe(); err != nil {
				break
			}
		}
		if err == nil {
			if waited := time.Since(start); waited > time.Second {
				fmt.Fprintf(log, "the server is ready after %.1f s\n", waited.Seconds())
			}
			return nil
		}
		if !sleepUntil(ctx, time.Now().Add(e.WaitInterval)) {
			return fmt.Errorf("the server at %s was not ready within --wait-for-model-timeout %gs (%s probe): %v", baseURL, e.WaitForModel.Seconds(), e.WaitMode, err)
		}
	}
}

func authorize(req *http.Request, p config.Profile) {
	if p.Endpoint.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+p.Endpoint.APIKey)
	}
	if u := p.Endpoint.User; u != nil {
		pw, _ := u.Password()
		req.SetBasicAuth(u.Username(), pw)
	}
	for _, h := range p.Endpoint.Headers {
		if k, v, ok := strings.Cut(h, ":"); ok {
			req.Header.Set(strings.TrimSpace(k), strings.TrimSpace(v))
		}
	}
}

// probeModels wants /v1/models to list every model of the run.
func probeModels(ctx context.Context, hc *http.Client, p config.Profile, baseURL string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, config.JoinURL(baseURL, "/v1/models"), nil)
	if err != nil {
		return err
	}
	authorize(req, p)
	resp, err := hc.Do(req)
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

// probeInference sends a one-token request for the first model.
func probeInference(ctx context.Context, hc *http.Client, p config.Profile, baseURL string, in *inputs) error {
	body, err := in.kind.Body(endpointProbe(p))
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, targetURL(p, baseURL, in.kind), strings.NewReader(string(body)))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	authorize(req, p)
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("a one-token request: %s", resp.Status)
	}
	return nil
}

func endpointProbe(p config.Profile) endpoint.Input {
	return endpoint.Input{Model: p.Endpoint.ModelNames[0], Prompt: "ping", MaxTokens: 1, LegacyMaxTokens: p.Endpoint.LegacyMaxTokens}
}
