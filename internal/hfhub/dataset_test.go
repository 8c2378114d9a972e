package hfhub

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// fakeDatasetHub serves acme/chat's data.json at main and its Parquet
// conversion's first shard, under /datasets/ as the Hub does.
func fakeDatasetHub(t *testing.T) (*httptest.Server, *atomic.Int32) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch r.URL.EscapedPath() {
		case "/datasets/acme/chat/resolve/main/data.json", "/datasets/acme/chat/resolve/refs%2Fconvert%2Fparquet/default/train/0000.parquet":
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

func TestResolveDatasetFromCache(t *testing.T) {
	cache := t.TempDir()
	folder := filepath.Join(cache, "datasets--acme--chat")
	want := filepath.Join(folder, "snapshots", commit, "data.json")
	if err := os.MkdirAll(filepath.Dir(want), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(want, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(folder, "refs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(folder, "refs", "main"), []byte(commit), 0o644); err != nil {
		t.Fatal(err)
	}
	srv, hits := fakeDatasetHub(t)
	o := Options{Getenv: envOf(map[string]string{"HF_HUB_CACHE": cache, "HF_ENDPOINT": srv.URL})}
	got, err := ResolveDataset(context.Background(), "acme/chat", "data.json", o)
	if err != nil || got != want || hits.Load() != 0 {
		t.Fatalf("got %s, %v after %d downloads; want %s from the cache", got, err, hits.Load(), want)
	}
	// A model of the same name is another folder: not found there.
	if _, tried := o.cached(hubFile{repo: "acme/chat", name: "data.json"}); !strings.Contains(tried, "models--acme--chat") {
		t.Errorf("model lookup tried %s", tried)
	}
}

func TestResolveDatasetDownloads(t *testing.T) {
	cache := t.TempDir()
	srv, hits := fakeDatasetHub(t)
	o := Options{Revision: "refs/convert/parquet", Getenv: envOf(map[string]string{"HF_HUB_CACHE": cache, "HF_ENDPOINT": srv.URL})}
	got, err := ResolveDataset(context.Background(), "acme/chat", "default/train/0000.parquet", o)
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(cache, "datasets--acme--chat", "snapshots", commit, "default", "train", "0000.parquet")
	if got != want {
		t.Errorf("path %s, want %s", got, want)
	}
	if data, _ := os.ReadFile(got); string(data) != body {
		t.Errorf("cached %q, want %q", data, body)
	}
	// huggingface_hub keeps a ref named with slashes as nested folders.
	if ref, _ := os.ReadFile(filepath.Join(cache, "datasets--acme--chat", "refs", "refs", "convert", "parquet")); string(ref) != commit {
		t.Errorf("ref holds %q, want %s", ref, commit)
	}
	if again, err := ResolveDataset(context.Background(), "acme/chat", "default/train/0000.parquet", o); err != nil || again != want || hits.Load() != 1 {
		t.Errorf("second lookup: %s, %v after %d downloads; want the cached file, 1 download", again, err, hits.Load())
	}
}

func TestResolveDatasetNotFound(t *testing.T) {
	cache := t.TempDir()
	srv, hits := fakeDatasetHub(t)
	tried := filepath.Join(cache, "datasets--acme--chat", "refs", "main")
	tests := []struct {
		name string
		env  map[string]string
		want []string
	}{
		{"offline", map[string]string{"HF_HUB_CACHE": cache, "HF_ENDPOINT": srv.URL, "HF_HUB_OFFLINE": "1"}, []string{"other.json of dataset acme/chat", tried, "HF_HUB_OFFLINE is set"}},
		{"not on the Hub", map[string]string{"HF_HUB_CACHE": cache, "HF_ENDPOINT": srv.URL}, []string{tried, "has no other.json", "HTTP 404"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ResolveDataset(context.Background(), "acme/chat", "other.json", Options{Getenv: envOf(tc.env)})
			var nf *NotFoundError
			if !errors.As(err, &nf) || nf.Tried != tried {
				t.Fatalf("error %v, want a NotFoundError that tried %s", err, tried)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q lacks %q", err, w)
				}
			}
		})
	}
	if hits.Load() != 1 {
		t.Errorf("%d requests to the Hub, want 1 (none offline)", hits.Load())
	}
}
