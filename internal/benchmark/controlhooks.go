package benchmark

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/llmbench/llmbench/internal/config"
)

// resetKVCache is AIPerf's --reset-kv-cache control hook: an empty POST of
// the reset path to every unique origin (scheme://host:port) of the
// servers, with the run's credentials and headers, before the run's first
// request. Any 2xx is a success; anything else stops the run, which would
// otherwise measure a cache it was asked to empty.
func resetKVCache(ctx context.Context, p config.Profile, targets []target, log io.Writer) error {
	e := p.Endpoint
	timeout := e.ResetKVCacheTimeout
	if timeout == 0 {
		timeout = e.RequestTimeout
	}
	hc := &http.Client{Timeout: timeout}
	seen := map[string]bool{}
	for _, t := range targets {
		u, err := url.Parse(t.base)
		if err != nil {
			return fmt.Errorf("reset the KV cache: %w", err)
		}
		origin := u.Scheme + "://" + u.Host
		if seen[origin] {
			continue
		}
		seen[origin] = true
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, origin+e.ResetKVCachePath, nil)
		if err != nil {
			return fmt.Errorf("reset the KV cache at %s: %w", origin, err)
		}
		authorize(req, e, t)
		resp, err := hc.Do(req)
		if err != nil {
			return fmt.Errorf("reset the KV cache at %s%s: %w (check --reset-kv-cache-path: vLLM's is /reset_prefix_cache, SGLang's /flush_cache)", origin, e.ResetKVCachePath, err)
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			return fmt.Errorf("reset the KV cache at %s%s: HTTP %d (check --reset-kv-cache-path: vLLM's is /reset_prefix_cache, SGLang's /flush_cache)", origin, e.ResetKVCachePath, resp.StatusCode)
		}
		fmt.Fprintf(log, "INFO  KV cache reset at %s%s\n", origin, e.ResetKVCachePath)
	}
	return nil
}

// authorize gives a control request the run's credentials: --header
// values, the API key (unless a header sets Authorization) or the URL's
// user and password.
func authorize(req *http.Request, e config.Endpoint, t target) {
	for _, kv := range e.Headers {
		name, value, _ := strings.Cut(kv, ":")
		req.Header.Add(strings.TrimSpace(name), strings.TrimSpace(value))
	}
	if req.Header.Get("Authorization") != "" {
		return
	}
	switch {
	case e.APIKey != "":
		req.Header.Set("Authorization", "Bearer "+e.APIKey)
	case t.user != nil:
		pw, _ := t.user.Password()
		req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(t.user.Username()+":"+pw)))
	}
}
