// Package hfhub finds a model's tokenizer.json as Hugging Face's own
// libraries do: a local path, else the local Hugging Face cache, else a
// download from the Hub into that cache.
package hfhub

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// TokenizerFile is the file fetched for a model.
const TokenizerFile = "tokenizer.json"

// DefaultEndpoint is the Hub's address unless HF_ENDPOINT says otherwise.
const DefaultEndpoint = "https://huggingface.co"

// Options say where to look. Getenv reads the environment (os.Getenv when
// nil): HF_HUB_CACHE, HF_HOME, XDG_CACHE_HOME, HOME, HF_ENDPOINT,
// HF_TOKEN (or HUGGING_FACE_HUB_TOKEN) and HF_HUB_OFFLINE.
type Options struct {
	Revision string // branch, tag or commit; "" is main
	Getenv   func(string) string
	Client   *http.Client
}

func (o Options) env(key string) string {
	if o.Getenv == nil {
		return os.Getenv(key)
	}
	return o.Getenv(key)
}

// CacheDir is the hub cache: HF_HUB_CACHE, else HF_HOME/hub, else
// $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub.
func (o Options) CacheDir() string {
	if d := o.env("HF_HUB_CACHE"); d != "" {
		return d
	}
	if d := o.env("HF_HOME"); d != "" {
		return filepath.Join(d, "hub")
	}
	if d := o.env("XDG_CACHE_HOME"); d != "" {
		return filepath.Join(d, "huggingface", "hub")
	}
	home := o.env("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return filepath.Join(home, ".cache", "huggingface", "hub")
}

func (o Options) revision() string {
	if o.Revision == "" {
		return "main"
	}
	return o.Revision
}

var commitHash = regexp.MustCompile(`^[0-9a-f]{40}$`)

// repoID checks a model id: "name" or "org/name", of the Hub's characters.
var repoID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?$`)

// Resolve returns the path of the tokenizer.json for spec: a file, a
// folder holding tokenizer.json, or a Hub model id (found in the cache, or
// downloaded into it). The error, when nothing is found, names every place
// tried and how to fix it.
func Resolve(ctx context.Context, spec string, o Options) (string, error) {
	if st, err := os.Stat(spec); err == nil {
		if !st.IsDir() {
			return spec, nil
		}
		p := filepath.Join(spec, TokenizerFile)
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("tokenizer %q: the folder has no %s (llmbench reads the fast-tokenizer file, not tokenizer.model or vocab.json)", spec, TokenizerFile)
		}
		return p, nil
	}
	if !repoID.MatchString(spec) || strings.Contains(spec, "..") {
		return "", fmt.Errorf("tokenizer %q: no such file or folder, and not a Hugging Face model id", spec)
	}
	cached, tried := o.cached(hubFile{repo: spec, name: TokenizerFile})
	if cached != "" {
		return cached, nil
	}
	fix := fmt.Sprintf("download it (huggingface-cli download %s %s), pass its path with --tokenizer, or use --tokenizer builtin", spec, TokenizerFile)
	if off := o.env("HF_HUB_OFFLINE"); off != "" && off != "0" && !strings.EqualFold(off, "false") {
		return "", fmt.Errorf("tokenizer %q: not in the Hugging Face cache (tried %s) and HF_HUB_OFFLINE is set: %s", spec, tried, fix)
	}
	path, err := o.download(ctx, hubFile{repo: spec, name: TokenizerFile})
	if err != nil {
		return "", fmt.Errorf("tokenizer %q: not in the Hugging Face cache (tried %s), and %v: %s", spec, tried, err, fix)
	}
	return path, nil
}

// hubFile is one file of a Hub repository: a model's, or a dataset's
// when dataset is set.
type hubFile struct {
	repo, name string
	dataset    bool
}

// repoFolder is the cache folder of a repository: models--org--name, or
// datasets--org--name.
func (o Options) repoFolder(f hubFile) string {
	kind := "models--"
	if f.dataset {
		kind = "datasets--"
	}
	return filepath.Join(o.CacheDir(), kind+strings.ReplaceAll(f.repo, "/", "--"))
}

// cached looks the file up in the cache layout huggingface_hub writes:
// refs/<revision> holds the commit, snapshots/<commit>/ the files.
func (o Options) cached(f hubFile) (path, tried string) {
	folder := o.repoFolder(f)
	rev := o.revision()
	commit := rev
	if !commitHash.MatchString(rev) {
		refFile := filepath.Join(folder, "refs", filepath.FromSlash(rev))
		data, err := os.ReadFile(refFile)
		if err != nil {
			return "", refFile
		}
		commit = strings.TrimSpace(string(data))
	}
	p := filepath.Join(folder, "snapshots", commit, filepath.FromSlash(f.name))
	if _, err := os.Stat(p); err != nil {
		return "", p
	}
	return p, p
}

// download fetches the file from the Hub (HF_ENDPOINT) into the cache,
// sending HF_TOKEN when set. The token goes only into the request header:
// never into a file, a log or an error.
func (o Options) download(ctx context.Context, f hubFile) (string, error) {
	endpoint := strings.TrimRight(o.env("HF_ENDPOINT"), "/")
	if endpoint == "" {
		endpoint = DefaultEndpoint
	}
	rev := o.revision()
	u := endpoint + "/" + f.repo + "/resolve/" + url.PathEscape(rev) + "/" + f.name
	if f.dataset {
		u = endpoint + "/datasets/" + f.repo + "/resolve/" + url.PathEscape(rev) + "/" + f.name
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", fmt.Errorf("download from %s failed: %w", endpoint, err)
	}
	token := o.env("HF_TOKEN")
	if token == "" {
		token = o.env("HUGGING_FACE_HUB_TOKEN")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("User-Agent", "llmbench")
	client := o.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is said once, below
		}
		return "", fmt.Errorf("download from %s failed: %w", endpoint, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		hint := "set HF_TOKEN to a token with access to it"
		if token != "" {
			hint = "the HF_TOKEN given has no access to it"
		}
		return "", fmt.Errorf("the Hub refused the download from %s (HTTP %d: a gated or private %s; %s)", endpoint, resp.StatusCode, f.kind(), hint)
	case resp.StatusCode == http.StatusNotFound:
		return "", fmt.Errorf("the Hub at %s has no %s for revision %q (HTTP 404)", endpoint, f.name, rev)
	case resp.StatusCode != http.StatusOK:
		return "", fmt.Errorf("download from %s failed: HTTP %d", endpoint, resp.StatusCode)
	}
	commit := resp.Header.Get("X-Repo-Commit")
	if !commitHash.MatchString(commit) {
		if commitHash.MatchString(rev) {
			commit = rev
		} else {
			return "", fmt.Errorf("download from %s failed: the answer has no X-Repo-Commit header", endpoint)
		}
	}
	folder := o.repoFolder(f)
	dst := filepath.Join(folder, "snapshots", commit, filepath.FromSlash(f.name))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", fmt.Errorf("cache: %w", err)
	}
	if err := writeAtomically(dst, resp.Body); err != nil {
		return "", fmt.Errorf("download from %s failed: %w", endpoint, err)
	}
	if !commitHash.MatchString(rev) {
		ref := filepath.Join(folder, "refs", filepath.FromSlash(rev))
		if err := os.MkdirAll(filepath.Dir(ref), 0o755); err != nil {
			return "", fmt.Errorf("cache: %w", err)
		}
		if err := os.WriteFile(ref, []byte(commit), 0o644); err != nil {
			return "", fmt.Errorf("cache: %w", err)
		}
	}
	return dst, nil
}

// writeAtomically writes r to path through a temporary file, so that an
// interrupted download never leaves a half file in the cache.
func writeAtomically(path string, r io.Reader) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".incomplete-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, r); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
