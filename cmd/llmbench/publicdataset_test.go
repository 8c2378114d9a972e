package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	shareGPTRepoFolder = "datasets--anon8231489123--ShareGPT_Vicuna_unfiltered"
	shareGPTFile       = "ShareGPT_V3_unfiltered_cleaned_split.json"
	fakeCommit         = "89abcdef0123456789abcdef0123456789abcdef"
)

func shareGPTTestdata(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "internal", "dataset", "testdata", "public", "sharegpt.json"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// profileShareGPT runs 10 requests of --public-dataset sharegpt against the
// built-in server and returns the exit code, stderr and the payloads of
// inputs.json.
func profileShareGPT(t *testing.T, extra ...string) (int, string, []map[string]any) {
	t.Helper()
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	args := append([]string{"llmbench", "profile", "--model", "mock-model", "--mock", "--endpoint-type", "chat",
		"--public-dataset", "sharegpt", "--tokenizer", "llmbench:words", "--request-count", "10", "--random-seed", "1",
		"--mock-ttft-ms", "1", "--mock-itl-ms", "0", "--artifact-dir", dir, "--ui-type", "none", "--no-server-metrics"}, extra...)
	code := run(args, &stdout, &stderr)
	if code != 0 {
		return code, stderr.String(), nil
	}
	var inputs struct {
		Data []struct {
			Payloads []map[string]any `json:"payloads"`
		} `json:"data"`
	}
	raw, err := os.ReadFile(filepath.Join(dir, "inputs.json"))
	if err != nil || json.Unmarshal(raw, &inputs) != nil {
		t.Fatalf("inputs.json: %v", err)
	}
	var payloads []map[string]any
	for _, s := range inputs.Data {
		payloads = append(payloads, s.Payloads...)
	}
	_, lines := readArtifacts(t, dir)
	if len(lines) != 10 {
		t.Fatalf("%d requests recorded, want 10", len(lines))
	}
	return code, stderr.String(), payloads
}

// checkShareGPTPayloads checks the two entries the filter keeps, each
// asking for its reply's length (hand-counted with llmbench:words).
func checkShareGPTPayloads(t *testing.T, payloads []map[string]any) {
	t.Helper()
	want := []struct {
		prompt string
		max    float64
	}{
		{"Summarize the plot of Hamlet in two sentences.", 13},
		{"Hello! How can I help you today?", 8},
	}
	if len(payloads) != len(want) {
		t.Fatalf("%d payloads in inputs.json, want %d: %v", len(payloads), len(want), payloads)
	}
	for i, w := range want {
		msgs, _ := payloads[i]["messages"].([]any)
		if len(msgs) != 1 {
			t.Fatalf("payload %d: messages %v", i, payloads[i]["messages"])
		}
		if got := msgs[0].(map[string]any)["content"]; got != w.prompt {
			t.Errorf("payload %d: prompt %q, want %q", i, got, w.prompt)
		}
		if got := payloads[i]["max_completion_tokens"]; got != w.max {
			t.Errorf("payload %d: max_completion_tokens %v, want %v", i, got, w.max)
		}
	}
}

func TestProfilePublicDatasetFromCache(t *testing.T) {
	cache := t.TempDir()
	snap := filepath.Join(cache, shareGPTRepoFolder, "snapshots", fakeCommit)
	if err := os.MkdirAll(snap, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(snap, shareGPTFile), shareGPTTestdata(t), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(cache, shareGPTRepoFolder, "refs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cache, shareGPTRepoFolder, "refs", "main"), []byte(fakeCommit), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HF_HUB_CACHE", cache)
	t.Setenv("HF_HUB_OFFLINE", "1")
	code, stderr, payloads := profileShareGPT(t)
	if code != 0 {
		t.Fatalf("exit %d\nstderr: %s", code, stderr)
	}
	checkShareGPTPayloads(t, payloads)
}

func TestProfilePublicDatasetDownloads(t *testing.T) {
	data := shareGPTTestdata(t)
	hub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/datasets/anon8231489123/ShareGPT_Vicuna_unfiltered/resolve/main/"+shareGPTFile {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("X-Repo-Commit", fakeCommit)
		_, _ = w.Write(data)
	}))
	defer hub.Close()
	cache := t.TempDir()
	t.Setenv("HF_HUB_CACHE", cache)
	t.Setenv("HF_HUB_OFFLINE", "")
	t.Setenv("HF_ENDPOINT", hub.URL)
	code, stderr, payloads := profileShareGPT(t)
	if code != 0 {
		t.Fatalf("exit %d\nstderr: %s", code, stderr)
	}
	checkShareGPTPayloads(t, payloads)
	if got, _ := os.ReadFile(filepath.Join(cache, shareGPTRepoFolder, "snapshots", fakeCommit, shareGPTFile)); !bytes.Equal(got, data) {
		t.Error("the download is not in the cache")
	}
}

func TestProfilePublicDatasetPath(t *testing.T) {
	t.Setenv("HF_HUB_CACHE", t.TempDir())
	t.Setenv("HF_HUB_OFFLINE", "1")
	path := filepath.Join("..", "..", "internal", "dataset", "testdata", "public", "sharegpt.json")
	code, stderr, payloads := profileShareGPT(t, "--public-dataset-path", path)
	if code != 0 {
		t.Fatalf("exit %d\nstderr: %s", code, stderr)
	}
	checkShareGPTPayloads(t, payloads)
}

func TestProfilePublicDatasetRefusals(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("HF_HUB_CACHE", cache)
	t.Setenv("HF_HUB_OFFLINE", "1")
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"not cached, offline", nil, []string{"--public-dataset sharegpt", filepath.Join(cache, shareGPTRepoFolder, "refs", "main"), "--public-dataset-path"}},
		{"with --input-file", []string{"--input-file", "x.jsonl"}, []string{"--public-dataset sharegpt brings its own prompts"}},
		{"with --custom-dataset-type", []string{"--custom-dataset-type", "single_turn"}, []string{"drop --input-file and --custom-dataset-type"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stderr, _ := profileShareGPT(t, tc.args...)
			if code != exitUsage {
				t.Fatalf("exit %d, want %d\nstderr: %s", code, exitUsage, stderr)
			}
			msg := strings.TrimSpace(stderr)
			if lines := strings.Split(msg, "\n"); len(lines) != 1 {
				t.Errorf("stderr has %d lines, want one: %q", len(lines), msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("%q lacks %q", msg, w)
				}
			}
		})
	}
	for name, want := range map[string]string{
		"librispeech": "--public-dataset librispeech is not supported: its clips are streamed audio",
		"spec_bench":  "download it and pass it with --public-dataset-path",
	} {
		var stdout, stderr bytes.Buffer
		code := run([]string{"llmbench", "profile", "--model", "m", "--mock", "--public-dataset", name}, &stdout, &stderr)
		if code != exitUsage || !strings.Contains(stderr.String(), want) {
			t.Errorf("%s: exit %d, stderr %q; want %d and %q", name, code, stderr.String(), exitUsage, want)
		}
	}
}
