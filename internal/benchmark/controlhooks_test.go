package benchmark

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmbench/llmbench/internal/config"
)

// TestResetKVCache: one POST per origin (two base URLs of one server make
// one), at the path asked, with the run's credentials and headers; a
// non-2xx answer stops the run with a message naming the path.
func TestResetKVCache(t *testing.T) {
	var mu sync.Mutex
	var got []string
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization")+" "+r.Header.Get("X-Team"))
		mu.Unlock()
		w.WriteHeader(status)
	}))
	defer srv.Close()
	p := config.Default()
	p.Endpoint.APIKey = "sk-secret"
	p.Endpoint.Headers = []string{"X-Team: infra"}
	p.Endpoint.ResetKVCachePath = "/flush_cache"
	p.Endpoint.ResetKVCacheTimeout = 5 * time.Second
	targets := []target{{base: srv.URL + "/v1"}, {base: srv.URL + "/other"}}
	if err := resetKVCache(context.Background(), p, targets, io.Discard); err != nil {
		t.Fatal(err)
	}
	if want := []string{"POST /flush_cache Bearer sk-secret infra"}; len(got) != 1 || got[0] != want[0] {
		t.Errorf("requests %q, want %q", got, want)
	}
	status = http.StatusNotFound
	err := resetKVCache(context.Background(), p, targets[:1], io.Discard)
	if err == nil || !strings.Contains(err.Error(), "/flush_cache: HTTP 404") || strings.Contains(err.Error(), "sk-secret") {
		t.Errorf("404: %v", err)
	}
}
