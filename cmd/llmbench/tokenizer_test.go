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

// byteTokenizerJSON is a byte-level BPE tokenizer.json with no merges:
// every byte is one token, so a text's count is its length in bytes, a
// value known without any tokenizer.
func byteTokenizerJSON(t *testing.T) []byte {
	t.Helper()
	// GPT-2's bytes_to_unicode, written out here independently.
	vocab := map[string]int{}
	n := 0
	for b := range 256 {
		r := rune(b)
		if !('!' <= b && b <= '~' || 0xA1 <= b && b <= 0xAC || 0xAE <= b && b <= 0xFF) {
			r = rune(256 + n)
			n++
		}
		vocab[string(r)] = b
	}
	doc := map[string]any{
		"version":        "1.0",
		"added_tokens":   []any{},
		"normalizer":     nil,
		"pre_tokenizer":  map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false},
		"post_processor": nil,
		"decoder":        map[string]any{"type": "ByteLevel"},
		"model":          map[string]any{"type": "BPE", "vocab": vocab, "merges": []string{}},
	}
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// promptsOf reads the prompts of inputs.json.
func promptsOf(t *testing.T, dir string) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "inputs.json"))
	if err != nil {
		t.Fatal(err)
	}
	var in struct {
		Data []struct {
			Payloads []struct {
				Messages []struct {
					Content string `json:"content"`
				} `json:"messages"`
			} `json:"payloads"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		t.Fatal(err)
	}
	var prompts []string
	for _, d := range in.Data {
		prompts = append(prompts, d.Payloads[0].Messages[0].Content)
	}
	return prompts
}

// checkByteCounts: every prompt is corpus text of exactly isl bytes, and
// every record's ISL and OSL are the byte counts asked for.
func checkByteCounts(t *testing.T, dir string, isl, osl int) {
	t.Helper()
	prompts := promptsOf(t, dir)
	if len(prompts) == 0 {
		t.Fatal("no prompts in inputs.json")
	}
	for _, p := range prompts {
		if len(p) != isl {
			t.Errorf("prompt %q is %d bytes, want %d", p, len(p), isl)
		}
	}
	_, lines := readArtifacts(t, dir)
	for _, l := range lines {
		if got := string(l.Metrics["input_sequence_length"].Value); got != jsonInt(isl) {
			t.Errorf("ISL %s, want %d", got, isl)
		}
		if got := string(l.Metrics["output_sequence_length"].Value); got != jsonInt(osl) {
			t.Errorf("OSL %s, want %d", got, osl)
		}
	}
}

func jsonInt(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestTokenizerFile: --tokenizer path/to/tokenizer.json counts with it, in
// the prompts made, the records and the exported configuration.
func TestTokenizerFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokenizer.json")
	if err := os.WriteFile(path, byteTokenizerJSON(t), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := run([]string{"llmbench", "profile", "-m", "m", "--mock", "--tokenizer", path, "--request-count", "6", "--isl", "40", "--osl", "12",
		"--random-seed", "3", "--mock-ttft-ms", "0", "--mock-itl-ms", "0", "--artifact-dir", dir, "--ui-type", "none"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	checkByteCounts(t, dir, 40, 12)
	agg, _ := readArtifacts(t, dir)
	var cfg struct {
		Tokenizer struct{ Name, Revision string } `json:"tokenizer"`
	}
	if err := json.Unmarshal(agg["input_config"], &cfg); err != nil || cfg.Tokenizer.Name != path || cfg.Tokenizer.Revision != "main" {
		t.Errorf("input_config tokenizer %+v (%v), want %s at main", cfg.Tokenizer, err, path)
	}
}

// TestTokenizerFromHub: a model id missing from the cache is downloaded
// from HF_ENDPOINT (a fake Hub here) with HF_TOKEN, used, and cached; the
// token is in no artifact.
func TestTokenizerFromHub(t *testing.T) {
	const token = "hf_e2eSECRETtoken"
	data := byteTokenizerJSON(t)
	hub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/acme/bytes/resolve/main/tokenizer.json" || r.Header.Get("Authorization") != "Bearer "+token {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("X-Repo-Commit", strings.Repeat("c", 40))
		_, _ = w.Write(data)
	}))
	defer hub.Close()
	home := t.TempDir()
	t.Setenv("HF_HOME", home)
	t.Setenv("HF_HUB_CACHE", "")
	t.Setenv("HF_ENDPOINT", hub.URL)
	t.Setenv("HF_TOKEN", token)
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := run([]string{"llmbench", "profile", "-m", "acme/bytes", "--mock", "--tokenizer", "acme/bytes", "--request-count", "4", "--isl", "25", "--osl", "5",
		"--mock-ttft-ms", "0", "--mock-itl-ms", "0", "--artifact-dir", dir, "--ui-type", "none"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	checkByteCounts(t, dir, 25, 5)
	cached := filepath.Join(home, "hub", "models--acme--bytes", "snapshots", strings.Repeat("c", 40), "tokenizer.json")
	if got, err := os.ReadFile(cached); err != nil || !bytes.Equal(got, data) {
		t.Errorf("cache file %s: %v", cached, err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if b, _ := os.ReadFile(filepath.Join(dir, e.Name())); bytes.Contains(b, []byte(token)) {
			t.Errorf("%s holds HF_TOKEN", e.Name())
		}
	}
	if strings.Contains(stdout.String()+stderr.String(), token) {
		t.Error("the console shows HF_TOKEN")
	}
}

// TestTokenizerNotFound: a model with no tokenizer anywhere stops the run
// before anything is sent, in one line saying what was tried and the fixes.
func TestTokenizerNotFound(t *testing.T) {
	t.Setenv("HF_HOME", t.TempDir())
	t.Setenv("HF_HUB_CACHE", "")
	t.Setenv("HF_HUB_OFFLINE", "1")
	var stdout, stderr bytes.Buffer
	code := run([]string{"llmbench", "profile", "-m", "acme/unknown", "--mock", "--tokenizer", "acme/unknown", "--artifact-dir", t.TempDir(), "--ui-type", "none"}, &stdout, &stderr)
	msg := strings.TrimSpace(stderr.String())
	if code == 0 || strings.Count(msg, "\n") > 0 {
		t.Fatalf("exit %d, stderr %q: want a failure in one line", code, msg)
	}
	for _, want := range []string{"models--acme--unknown", "HF_HUB_OFFLINE", "huggingface-cli download acme/unknown tokenizer.json", "--tokenizer builtin"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q lacks %q", msg, want)
		}
	}
}
