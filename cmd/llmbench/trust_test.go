package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/llmbench/llmbench/internal/mockserver"
)

// syncBuffer is a bytes.Buffer safe to write from the run and read from
// the test at the same time.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func startMock(t *testing.T, cfg mockserver.Config) *mockserver.Server {
	t.Helper()
	srv, err := mockserver.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// serveMock starts the simulated server with cfg on a loopback port for
// the test's duration and returns it with its base URL.
func serveMock(t *testing.T, cfg mockserver.Config) (*mockserver.Server, string) {
	t.Helper()
	srv := startMock(t, cfg)
	base, stop, err := srv.Start(context.Background(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return srv, base
}

// basicAuthServer serves h only to the given Basic credentials, and echoes
// every request header back in the 500 body of each fourth generation
// request, as a hostile server might.
func basicAuthServer(t *testing.T, user, pw string, h http.Handler, echoed *atomic.Int64) *httptest.Server {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		if !ok || u != user || p != pw {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		if strings.HasPrefix(r.URL.Path, "/v1/") && n.Add(1)%4 == 0 {
			echoed.Add(1)
			var b strings.Builder
			r.Header.Write(&b)
			http.Error(w, "internal error; your request headers were:\n"+b.String(), http.StatusInternalServerError)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestSecretsNeverWritten runs against servers that demand Basic auth from
// the URL's credentials and echo the request headers back in errors, and
// greps every artifact and the console for every secret.
func TestSecretsNeverWritten(t *testing.T) {
	t.Setenv("AIPERF_SERVER_METRICS_COLLECTION_INTERVAL", "0.05")
	t.Setenv("AIPERF_SERVER_METRICS_COLLECTION_FLUSH_PERIOD", "0")
	cfg := mockserver.DefaultConfig()
	cfg.TTFT, cfg.ITL = time.Millisecond, time.Millisecond
	var echoed atomic.Int64
	api := basicAuthServer(t, "alice", "pw-main-7781", startMock(t, cfg).Handler(), &echoed)
	cfg.MetricsProfile = "sglang"
	side := basicAuthServer(t, "bob", "pw-side-5512", startMock(t, cfg).Handler(), &echoed)

	dir := t.TempDir()
	apiURL := strings.Replace(api.URL, "http://", "http://alice:pw-main-7781@", 1) + "/v1"
	sideURL := strings.Replace(side.URL, "http://", "bob:pw-side-5512@", 1)
	var stdout, stderr bytes.Buffer
	code := run([]string{"llmbench", "profile", "-m", "m", "--tokenizer", "builtin", "--url", apiURL, "--streaming", "--concurrency", "2", "--request-count", "12",
		"--osl", "4", "--isl", "8", "-H", "X-Api-Key: xk-header-9931", "--H=Cookie: session=ck-cookie-4410", "--header", "X-Auth-Token: tk-token-2208",
		"--server-metrics", sideURL, "--server-metrics-formats", "json", "csv", "jsonl", "parquet",
		"--extra-inputs", "api_key:ek-extra-3321", "--extra-inputs", `{"access_token":"at-json-7719","temperature":0}`, "--extra-inputs", "ignore_eos:true",
		"--artifact-dir", dir}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	agg, lines := readArtifacts(t, dir)
	// The API server let 9 of 12 through on Basic auth and echoed 3.
	if got := metric(t, agg, "request_count").Avg; got != 9 || echoed.Load() != 3 || len(lines) != 12 {
		t.Fatalf("request_count %v, %d echoed, %d lines", got, echoed.Load(), len(lines))
	}
	var echo string
	for _, l := range lines {
		if l.Error != nil && l.Error.Code == 500 {
			echo = l.Error.Message
		}
	}
	if !strings.Contains(echo, "X-Api-Key: <redacted>") || !strings.Contains(echo, "Authorization: Basic <redacted>") {
		t.Fatalf("echoed headers not redacted as expected: %q", echo)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "server_metrics_export.json"))
	if !bytes.Contains(raw, []byte(`"endpoints_successful": [`)) || bytes.Count(raw, []byte(`"total_fetches"`)) != 2 {
		t.Fatalf("both metrics endpoints should have answered with Basic auth:\n%.600s", raw)
	}

	secrets := []string{"pw-main-7781", "pw-side-5512", "xk-header-9931", "ck-cookie-4410", "tk-token-2208", "ek-extra-3321", "at-json-7719",
		base64.StdEncoding.EncodeToString([]byte("alice:pw-main-7781")), base64.StdEncoding.EncodeToString([]byte("bob:pw-side-5512"))}
	files, _ := os.ReadDir(dir)
	if len(files) < 8 {
		t.Fatalf("only %d artifacts", len(files))
	}
	sources := map[string][]byte{"stdout": stdout.Bytes(), "stderr": stderr.Bytes()}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(dir, f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		sources[f.Name()] = b
	}
	for name, b := range sources {
		for _, s := range secrets {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s contains the secret %q", name, s)
			}
		}
	}
	if !bytes.Contains(sources["profile_export_aiperf.json"], []byte(`http://alice:xxxxx@127.0.0.1`)) {
		t.Errorf("cli_command should keep the URL with its password hidden")
	}
	// Secret extra inputs are hidden, the others kept, in input_config and
	// in inputs.json's payloads.
	for _, want := range []string{`"api_key:<redacted>"`, `"ignore_eos:true"`, `access_token\":\"<redacted>\"`, `\"temperature\":0`} {
		if !bytes.Contains(sources["profile_export_aiperf.json"], []byte(want)) {
			t.Errorf("input_config lacks %s", want)
		}
	}
	if !bytes.Contains(sources["inputs.json"], []byte(`"ignore_eos": true`)) || !bytes.Contains(sources["inputs.json"], []byte(`"api_key": "<redacted>"`)) {
		t.Errorf("inputs.json payloads: %.400s", sources["inputs.json"])
	}
}

// TestCommandLineErrors: each bad command line gets one line saying what is
// wrong and where the flags are, no usage dump, and exit code 2.
func TestCommandLineErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--concurrency", "0"}, "--concurrency 0: it must be at least 1"},
		{[]string{"--concurrency", "-3"}, "--concurrency -3: it must be at least 1"},
		{[]string{"--request-rate", "0"}, "--request-rate 0: it must be above 0 requests per second"},
		{[]string{"--request-rate", "-1.5"}, "--request-rate -1.5: it must be above 0"},
		{[]string{"--concurrency", "abc"}, `--concurrency: "abc" is not a whole number`},
		{[]string{"--request-rate", "fast"}, `--request-rate: "fast" is not a number`},
		{[]string{"--bogus-flag", "1"}, "unknown flag --bogus-flag"},
		{[]string{"--streaming=maybe"}, "--streaming takes true or false"},
		{[]string{"--isl", "1e12"}, "would need about"},
		{[]string{"--mock", "--concurrency", "5000000"}, "needs about 10000064 open files"},
		{[]string{"extra"}, `unexpected argument "extra"`},
		{[]string{"--url", "ftp://host"}, "scheme must be http or https"},
		{[]string{"-m"}, "-m needs a value"},
		{[]string{"--goodput", "time_to_first_token:200"}, "--goodput: time_to_first_token is measured only with --streaming"},
		{[]string{"--goodput", "ttft:200"}, `--goodput: unknown metric tag "ttft"`},
		{[]string{"--goodput", "request_latency:-5"}, "--goodput request_latency: -5 cannot be negative"},
		{[]string{"--mock-ttft-ms", "5"}, "--mock-ttft-ms configures the built-in simulated server: add --mock to benchmark it"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			args := append([]string{"llmbench", "profile"}, tc.args...)
			if tc.args[0] != "-m" {
				args = append(args[:2], append([]string{"-m", "m"}, tc.args...)...)
			}
			var stdout, stderr bytes.Buffer
			code := run(args, &stdout, &stderr)
			lines := strings.Split(strings.TrimRight(stderr.String(), "\n"), "\n")
			if code != exitUsage || len(lines) != 1 || !strings.Contains(lines[0], tc.want) ||
				!strings.HasSuffix(lines[0], "Run 'llmbench profile --help' for the flags.") || stdout.Len() != 0 {
				t.Fatalf("exit %d, stdout %q, stderr:\n%s\nwant one line with %q", code, stdout.String(), stderr.String(), tc.want)
			}
		})
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"llmbench", "profile", "--help"}, &stdout, &stderr); code != exitOK || !strings.Contains(stdout.String(), "-concurrency") {
		t.Fatalf("--help: exit %d, %q", code, stdout.String())
	}
}

// TestURLWithV1 is a --url that already ends in /v1, as OpenAI clients take it.
func TestURLWithV1(t *testing.T) {
	cfg := mockserver.DefaultConfig()
	cfg.TTFT, cfg.ITL = 0, 0
	url, stop, err := startMock(t, cfg).Start(context.Background(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := run([]string{"llmbench", "profile", "-m", "m", "--tokenizer", "builtin", "--url", url + "/v1/", "--request-count", "3", "--osl", "2",
		"--no-server-metrics", "--artifact-dir", dir, "--ui-type", "none"}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if agg, _ := readArtifacts(t, dir); metric(t, agg, "request_count").Avg != 3 {
		t.Fatalf("request_count %v", metric(t, agg, "request_count").Avg)
	}
}

// TestCtrlCTwice sends the process two real SIGINTs. The first stops the
// run and says at once what it waits for (a metrics endpoint, healthy until
// then, whose final scrape hangs); the second stops the waiting: every
// artifact is written with what there is and the exit code is 130.
func TestCtrlCTwice(t *testing.T) {
	var hang atomic.Bool
	hanging := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hang.Load() {
			<-r.Context().Done() // from the stop on
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprint(w, "# TYPE up gauge\nup 1\n")
	}))
	defer hanging.Close()
	// An endpoint silent for 3 intervals counts as stopped and gets one
	// interval for its final scrape; 0.2 s intervals keep this one, which
	// answered until the stop, well clear of that.
	t.Setenv("AIPERF_SERVER_METRICS_COLLECTION_INTERVAL", "0.2")
	t.Setenv("AIPERF_SERVER_METRICS_COLLECTION_FLUSH_PERIOD", "0")
	t.Setenv("AIPERF_SERVER_METRICS_REACHABILITY_TIMEOUT", "20")

	dir := t.TempDir()
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	exit := make(chan int, 1)
	go func() {
		exit <- run([]string{"llmbench", "profile", "-m", "m", "--mock", "--streaming", "--concurrency", "3", "--request-count", "100000",
			"--osl", "20", "--mock-ttft-ms", "5", "--mock-itl-ms", "5", "--server-metrics", hanging.URL,
			"--artifact-dir", dir, "--ui-type", "none"}, stdout, stderr)
	}()
	// Signals are caught once records reach the disk: the run is under way.
	waitFor(t, 10*time.Second, "a first record on disk", func() bool {
		b, _ := os.ReadFile(filepath.Join(dir, "profile_export.jsonl"))
		return bytes.Count(b, []byte("\n")) >= 3
	})
	hang.Store(true)
	syscall.Kill(os.Getpid(), syscall.SIGINT)
	waitFor(t, 2*time.Second, "the stopping message", func() bool { return strings.Contains(stderr.String(), "stopping:") })
	msg := stderr.String()
	for _, part := range []string{"requests in flight", "waiting up to 20s for the final server-metrics scrape of", hanging.URL + "/metrics", "press Ctrl-C again to stop now"} {
		if !strings.Contains(msg, part) {
			t.Errorf("stopping message lacks %q:\n%s", part, msg)
		}
	}
	// The run is now held by the hanging final scrape.
	time.Sleep(300 * time.Millisecond)
	select {
	case code := <-exit:
		t.Fatalf("run ended (exit %d) while its final scrape hangs", code)
	default:
	}
	second := time.Now()
	syscall.Kill(os.Getpid(), syscall.SIGINT)
	var code int
	select {
	case code = <-exit:
	case <-time.After(10 * time.Second):
		t.Fatal("the second Ctrl-C did not end the run")
	}
	// The promise is one second; the bound leaves a loaded CI machine its
	// scheduling slack while staying far below the 20 s the scrape would take.
	if took := time.Since(second); took > 3*time.Second {
		t.Errorf("the run took %v to end after the second Ctrl-C", took)
	}
	if code != exitCancelled {
		t.Fatalf("exit %d, want 130; stderr:\n%s", code, stderr.String())
	}
	agg, lines := readArtifacts(t, dir)
	sent := int(metric(t, agg, "request_count").Avg) + int(metric(t, agg, "error_request_count").Avg)
	checkEveryRequestOnce(t, lines, sent)
	checkExportsValid(t, dir)
	if _, err := os.Stat(filepath.Join(dir, "server_metrics_export.parquet")); err != nil {
		t.Error(err)
	}
}

func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s after %v", what, limit)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestInputFileErrors: input refused before the first request (a bad
// dataset line, a tokenizer file that is not one, a bad --extra-inputs
// value, with one profile run or several) is a usage error: one line,
// exit code 2, which the README reserves for what the user must change.
func TestInputFileErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte("{\"text\": \"hello\"}\n{not json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tok := filepath.Join(dir, "tokenizer.json")
	if err := os.WriteFile(tok, []byte(`{"model": {"type": "Nonsense"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	epoch := filepath.Join(dir, "epoch.jsonl")
	if err := os.WriteFile(epoch, []byte("{\"timestamp\": 1700000000000, \"input_length\": 10, \"output_length\": 5}\n{\"timestamp\": 1700000000500, \"input_length\": 10, \"output_length\": 5}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(dir, "huge.jsonl")
	if err := os.WriteFile(huge, []byte("{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 5}\n{\"timestamp\": 1e300, \"input_length\": 10, \"output_length\": 5}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--input-file", bad, "--custom-dataset-type", "single_turn"}, "bad.jsonl:2: not valid JSON"},
		{[]string{"--input-file", bad, "--custom-dataset-type", "single_turn", "--num-profile-runs", "2"}, "bad.jsonl:2: not valid JSON"},
		{[]string{"--tokenizer", tok}, "tokenizer"},
		{[]string{"--extra-inputs", `{"temperature": 0.5,`}, "extra"},
		{[]string{"--input-file", epoch, "--custom-dataset-type", "mooncake_trace"}, "add --fixed-schedule-auto-offset"},
		{[]string{"--input-file", huge, "--custom-dataset-type", "mooncake_trace"}, "timestamp 1e+300 ms"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(append([]string{"llmbench", "profile", "-m", "m", "--mock", "--request-count", "2", "--no-server-metrics", "--artifact-dir", t.TempDir()}, tc.args...), &stdout, &stderr)
		if lines := strings.Split(strings.TrimSpace(stderr.String()), "\n"); code != exitUsage || len(lines) != 1 || !strings.Contains(lines[0], tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line with %q", tc.args, code, stderr.String(), tc.want)
		}
	}
}

// TestPlaceholderModelRunsOffline: AIPerf's documented command lines name
// placeholder models (your-model); they run with the builtin tokenizer,
// no model hub, and one warning saying so.
func TestPlaceholderModelRunsOffline(t *testing.T) {
	cfg := mockserver.DefaultConfig()
	cfg.TTFT, cfg.ITL = time.Millisecond, time.Millisecond
	srv := httptest.NewServer(startMock(t, cfg).Handler())
	defer srv.Close()
	t.Setenv("HF_HUB_OFFLINE", "1")
	var stdout, stderr bytes.Buffer
	code := run([]string{"llmbench", "profile", "--model", "your-model", "--url", srv.URL, "--request-count", "3", "--osl", "4",
		"--no-server-metrics", "--ui-type", "none", "--artifact-dir", t.TempDir()}, &stdout, &stderr)
	if code != exitOK || strings.Count(stderr.String(), "looks like a placeholder name") != 1 {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
}

// TestPreviousRunKept: a second run into the same folder keeps the first
// run's files in previous_<time>/ and says so; other files stay where they
// are; --overwrite replaces instead.
func TestPreviousRunKept(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	once := func(extra ...string) (string, string) {
		var stdout, stderr bytes.Buffer
		args := append([]string{"llmbench", "profile", "-m", "m", "--mock", "--request-count", "2", "--no-server-metrics", "--ui-type", "none", "--artifact-dir", dir}, extra...)
		if code := run(args, &stdout, &stderr); code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
		var id struct {
			ID string `json:"benchmark_id"`
		}
		raw, _ := os.ReadFile(filepath.Join(dir, "profile_export_aiperf.json"))
		_ = json.Unmarshal(raw, &id)
		return id.ID, stderr.String()
	}
	first, _ := once()
	second, log := once()
	kept, _ := filepath.Glob(filepath.Join(dir, "previous_*", "profile_export_aiperf.json"))
	if len(kept) != 1 || !strings.Contains(log, "held a previous run's results") || first == second {
		t.Fatalf("kept %v, log %q", kept, log)
	}
	raw, _ := os.ReadFile(kept[0])
	if !bytes.Contains(raw, []byte(first)) {
		t.Fatal("previous_*/ does not hold the first run")
	}
	if b, err := os.ReadFile(filepath.Join(dir, "notes.txt")); err != nil || string(b) != "mine" {
		t.Fatal("a file that is not llmbench's moved")
	}
	if _, log := once("--overwrite"); strings.Contains(log, "held a previous run's results") {
		t.Fatalf("--overwrite kept: %q", log)
	}
	if kept, _ := filepath.Glob(filepath.Join(dir, "previous_*")); len(kept) != 1 {
		t.Fatalf("previous folders %v", kept)
	}
}
