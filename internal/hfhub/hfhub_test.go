package hfhub

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

const (
	secret = "hf_secretTOKEN123"
	commit = "0123456789abcdef0123456789abcdef01234567"
	body   = `{"model":{"type":"BPE"}}`
)

// fakeHub serves acme/tiny's tokenizer.json at main as the Hub does,
// requiring the token for acme/gated, and counts downloads.
func fakeHub(t *testing.T) (*httptest.Server, *atomic.Int32) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch r.URL.Path {
		case "/acme/tiny/resolve/main/tokenizer.json", "/acme/tiny/resolve/" + commit + "/tokenizer.json":
		case "/acme/gated/resolve/main/tokenizer.json":
			if r.Header.Get("Authorization") != "Bearer "+secret {
				http.Error(w, "gated", http.StatusUnauthorized)
				return
			}
		default:
			http.NotFound(w, r)
			return
		}
		w.Header().Set("X-Repo-Commit", commit)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestCacheDir(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"HF_HUB_CACHE": "/c", "HF_HOME": "/h", "HOME": "/home/u"}, "/c"},
		{map[string]string{"HF_HOME": "/h", "HOME": "/home/u"}, "/h/hub"},
		{map[string]string{"XDG_CACHE_HOME": "/x", "HOME": "/home/u"}, "/x/huggingface/hub"},
		{map[string]string{"HOME": "/home/u"}, "/home/u/.cache/huggingface/hub"},
	}
	for _, tc := range tests {
		if got := (Options{Getenv: envOf(tc.env)}).CacheDir(); got != tc.want {
			t.Errorf("%v: %s, want %s", tc.env, got, tc.want)
		}
	}
}

// writeSnapshot lays out a cache as huggingface_hub writes it.
func writeSnapshot(t *testing.T, cache, repo, ref, commit, content string) string {
	t.Helper()
	folder := filepath.Join(cache, "models--"+strings.ReplaceAll(repo, "/", "--"))
	snap := filepath.Join(folder, "snapshots", commit)
	if err := os.MkdirAll(snap, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(snap, TokenizerFile)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if ref != "" {
		if err := os.MkdirAll(filepath.Join(folder, "refs"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(folder, "refs", ref), []byte(commit+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

func TestResolveFromCache(t *testing.T) {
	cache := t.TempDir()
	mainPath := writeSnapshot(t, cache, "org/model", "main", commit, "main")
	other := strings.Repeat("b", 40)
	otherPath := writeSnapshot(t, cache, "org/model", "v2", other, "v2")
	srv, hits := fakeHub(t)
	env := envOf(map[string]string{"HF_HUB_CACHE": cache, "HF_ENDPOINT": srv.URL})
	for _, tc := range []struct{ rev, want string }{
		{"", mainPath}, {"main", mainPath}, {"v2", otherPath}, {other, otherPath},
	} {
		got, err := Resolve(context.Background(), "org/model", Options{Revision: tc.rev, Getenv: env})
		if err != nil || got != tc.want {
			t.Errorf("revision %q: %q, %v; want %q", tc.rev, got, err, tc.want)
		}
	}
	if hits.Load() != 0 {
		t.Errorf("the Hub was asked %d times for cached files", hits.Load())
	}
}

func TestResolveLocalPaths(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, TokenizerFile)
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, spec := range []string{dir, file} {
		if got, err := Resolve(context.Background(), spec, Options{}); err != nil || got != file {
			t.Errorf("%s: %q, %v", spec, got, err)
		}
	}
	empty := t.TempDir()
	if _, err := Resolve(context.Background(), empty, Options{}); err == nil || !strings.Contains(err.Error(), "has no tokenizer.json") {
		t.Errorf("folder without tokenizer.json: %v", err)
	}
}

func TestResolveDownloadsIntoCache(t *testing.T) {
	cache := t.TempDir()
	srv, hits := fakeHub(t)
	o := Options{Getenv: envOf(map[string]string{"HF_HOME": cache, "HF_ENDPOINT": srv.URL + "/", "HF_TOKEN": secret})}
	got, err := Resolve(context.Background(), "acme/gated", o)
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(cache, "hub", "models--acme--gated", "snapshots", commit, TokenizerFile)
	if got != want {
		t.Fatalf("path %s, want %s", got, want)
	}
	if data, _ := os.ReadFile(got); string(data) != body {
		t.Errorf("content %q", data)
	}
	if ref, _ := os.ReadFile(filepath.Join(cache, "hub", "models--acme--gated", "refs", "main")); string(ref) != commit {
		t.Errorf("refs/main = %q", ref)
	}
	// The second time comes from the cache.
	if again, err := Resolve(context.Background(), "acme/gated", o); err != nil || again != want || hits.Load() != 1 {
		t.Errorf("second resolve: %s, %v, %d downloads", again, err, hits.Load())
	}
	// The token is nowhere in the cache.
	_ = filepath.Walk(cache, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			if data, _ := os.ReadFile(p); strings.Contains(string(data), secret) || strings.Contains(p, secret) {
				t.Errorf("%s holds the token", p)
			}
		}
		return nil
	})
}

func TestResolveErrors(t *testing.T) {
	srv, _ := fakeHub(t)
	cache := t.TempDir()
	base := map[string]string{"HF_HUB_CACHE": cache, "HF_ENDPOINT": srv.URL}
	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for a, b := range base {
			m[a] = b
		}
		m[k] = v
		return m
	}
	tried := filepath.Join(cache, "models--acme--gated", "refs", "main")
	tests := []struct {
		name, spec string
		env        map[string]string
		want       []string
	}{
		{"gated without a token", "acme/gated", base, []string{tried, "HTTP 401", "set HF_TOKEN", "huggingface-cli download acme/gated tokenizer.json", "--tokenizer builtin"}},
		{"wrong token", "acme/gated", with("HF_TOKEN", "hf_wrong"), []string{"has no access"}},
		{"missing", "acme/none", base, []string{"no tokenizer.json", "HTTP 404"}},
		{"offline", "acme/tiny", with("HF_HUB_OFFLINE", "1"), []string{"HF_HUB_OFFLINE", filepath.Join(cache, "models--acme--tiny")}},
		{"hub down", "acme/tiny", with("HF_ENDPOINT", "http://127.0.0.1:1"), []string{"download from http://127.0.0.1:1 failed", "connection refused"}},
		{"not an id", "../etc/passwd", base, []string{"not a Hugging Face model id"}},
	}
	for _, tc := range tests {
		_, err := Resolve(context.Background(), tc.spec, Options{Getenv: envOf(tc.env)})
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q lacks %q", tc.name, err, w)
			}
		}
		if strings.Contains(err.Error(), "hf_wrong") || strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %q shows a token or is not one line", tc.name, err)
		}
	}
}
