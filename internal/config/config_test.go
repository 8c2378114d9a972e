package config

import (
	"encoding/base64"
	"encoding/json"
	"flag"
	"io"
	"strings"
	"testing"
	"time"
)

func parse(t *testing.T, args ...string) (Profile, error) {
	t.Helper()
	return parseEnv(t, nil, args...)
}

func TestAIPerfFlagNamesAndDefaults(t *testing.T) {
	p, err := parse(t, "-m", "org/model-x", "--url", "localhost:8000/", "--endpoint-type", "completions", "--streaming",
		"--concurrency", "8", "--num-requests", "200", "--isl", "128", "--osl", "64", "--osl-stddev", "4",
		"--random-seed", "7", "--warmup-request-count", "3", "--request-timeout-seconds", "2.5", "-H", "X-A: 1", "--extra-inputs", "ignore_eos:true")
	if err != nil {
		t.Fatal(err)
	}
	e, l, in := p.Endpoint, p.Loadgen, p.Input
	if e.ModelNames[0] != "org/model-x" || strings.Join(e.URLs, " ") != "http://localhost:8000" || e.Type != "completions" || !e.Streaming || e.Mock {
		t.Errorf("endpoint %+v", e)
	}
	if e.RequestTimeout != 2500*time.Millisecond || len(e.Headers) != 1 || len(e.ExtraInputs) != 1 {
		t.Errorf("timeout %v headers %v extra %v", e.RequestTimeout, e.Headers, e.ExtraInputs)
	}
	if l.Concurrency != 8 || l.RequestCount != 200 || l.WarmupRequestCount != 3 || l.RequestRateMode != RatePoisson {
		t.Errorf("loadgen %+v", l)
	}
	if in.Prompt.InputTokens.Mean != 128 || in.Prompt.OutputTokens.Mean != 64 || in.Prompt.OutputTokens.Stddev != 4 || *in.RandomSeed != 7 {
		t.Errorf("input %+v", in)
	}
	if p.Output.ArtifactDir != "artifacts/org_model-x-openai-completions-concurrency8" {
		t.Errorf("artifact dir %q", p.Output.ArtifactDir)
	}
}

func TestDefaults(t *testing.T) {
	p, err := parse(t, "--model", "m")
	if err != nil {
		t.Fatal(err)
	}
	// AIPerf: localhost:8000, concurrency 1 and 10 requests when nothing
	// is said; ISL 550; a 6-hour request timeout.
	if p.Endpoint.Mock || strings.Join(p.Endpoint.URLs, " ") != "http://localhost:8000" || p.Endpoint.URLStrategy != "round_robin" || p.Loadgen.Concurrency != 1 || p.Loadgen.RequestCount != 10 ||
		p.Input.Prompt.InputTokens.Mean != 550 || p.Endpoint.Type != "chat" || p.Endpoint.RequestTimeout != 6*time.Hour {
		t.Errorf("defaults %+v", p)
	}
	// The newest AIPerf's request count: max(10, 2 x concurrency).
	for conc, want := range map[string]int{"3": 10, "5": 10, "6": 12, "64": 128} {
		p, err = parse(t, "--model", "m", "--concurrency", conc)
		if err != nil {
			t.Fatal(err)
		}
		if p.Loadgen.RequestCount != want {
			t.Errorf("--concurrency %s: request count %d, want %d", conc, p.Loadgen.RequestCount, want)
		}
	}
	// Multi-run defaults as AIPerf's; the --no- forms turn them off.
	if mr := p.MultiRun; mr.NumRuns != 1 || mr.ConfidenceLevel != 0.95 || !mr.DisableWarmupAfterFirst || !mr.ConsistentSeed {
		t.Errorf("multi-run defaults %+v", mr)
	}
	p, err = parse(t, "--model", "m", "--num-profile-runs", "3", "--no-set-consistent-seed", "--no-profile-run-disable-warmup-after-first", "--profile-run-cooldown-seconds", "1.5")
	if err != nil {
		t.Fatal(err)
	}
	if mr := p.MultiRun; mr.NumRuns != 3 || mr.ConsistentSeed || mr.DisableWarmupAfterFirst || mr.Cooldown != 1500*time.Millisecond {
		t.Errorf("multi-run %+v", mr)
	}
	p, err = parse(t, "--model", "m", "--mock")
	if err != nil {
		t.Fatal(err)
	}
	if !p.Endpoint.Mock || len(p.Endpoint.URLs) != 0 {
		t.Errorf("--mock: %+v", p.Endpoint)
	}
	p, err = parse(t, "--model", "m", "--request-rate", "2.5", "--benchmark-duration", "30")
	if err != nil {
		t.Fatal(err)
	}
	if p.Loadgen.Concurrency != 0 || p.Loadgen.RequestCount != 0 || p.Loadgen.BenchmarkDuration != 30*time.Second ||
		p.Output.ArtifactDir != "artifacts/m-openai-chat-request_rate2.5" {
		t.Errorf("rate/duration %+v %q", p.Loadgen, p.Output.ArtifactDir)
	}
}

func TestValidationErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{}, "--model is required"},
		{[]string{"-m", "x", "--mock", "--url", "host:1"}, "--mock benchmarks the built-in simulated server; leave out --url"},
		{[]string{"-m", "x", "--num-profile-runs", "11"}, "--num-profile-runs 11: use 1 to 10"},
		{[]string{"-m", "x", "--confidence-level", "95"}, "--confidence-level 95: use a level between 0 and 1"},
		{[]string{"-m", "x", "--profile-run-cooldown-seconds", "-1"}, "cannot be negative"},
		{[]string{"-m", "x", "--endpoint-type", "rankings"}, `unknown endpoint type "rankings"`},
		{[]string{"-m", "x", "--url", "ftp://h"}, "scheme"},
		{[]string{"-m", "x", "--concurrency", "-1"}, "--concurrency -1: it must be at least 1"},
		{[]string{"-m", "x", "--concurrency", "0"}, "--concurrency 0: it must be at least 1"},
		{[]string{"-m", "x", "--request-rate", "0"}, "--request-rate 0: it must be above 0"},
		{[]string{"-m", "x", "--request-rate=-2"}, "--request-rate -2: it must be above 0"},
		{[]string{"-m", "x", "--num-requests", "0"}, "--request-count 0: it must be at least 1"},
		{[]string{"-m", "x", "--warmup-request-count", "-1"}, "cannot be negative"},
		{[]string{"-m", "x", "--warmup-concurrency", "2"}, "add --warmup-request-count or --warmup-duration"},
		{[]string{"-m", "x", "--warmup-request-count", "5", "--warmup-concurrency", "0"}, "--warmup-concurrency 0: it must be at least 1"},
		{[]string{"-m", "x", "--warmup-duration", "5", "--warmup-request-rate", "0"}, "--warmup-request-rate 0: it must be above 0"},
		{[]string{"-m", "x", "--warmup-request-count", "5", "--warmup-arrival-pattern", "burst"}, "--warmup-arrival-pattern \"burst\": use constant, poisson or gamma"},
		{[]string{"-m", "x", "--warmup-request-count", "5", "--warmup-arrival-pattern", "constant"}, "add --warmup-request-rate (or --request-rate)"},
		{[]string{"-m", "x", "--warmup-request-count", "5", "--warmup-concurrency-ramp-duration", "-1"}, "cannot be negative"},
		{[]string{"-m", "x", "--prefill-concurrency", "2"}, "add --streaming"},
		{[]string{"-m", "x", "--workers-max", "0"}, "--workers-max 0: it must be at least 1"},
		{[]string{"-m", "x", "--streaming", "--prefill-concurrency", "0"}, "--prefill-concurrency 0: it must be at least 1"},
		{[]string{"-m", "x", "--streaming", "--concurrency", "4", "--prefill-concurrency", "5"}, "--prefill-concurrency 5 is above --concurrency 4"},
		{[]string{"-m", "x", "--streaming", "--prefill-concurrency-ramp-duration", "3"}, "ramps --prefill-concurrency; give one"},
		{[]string{"-m", "x", "--streaming", "--prefill-concurrency", "2", "--prefill-concurrency-ramp-duration", "-3"}, "cannot be negative"},
		{[]string{"-m", "x", "--streaming", "--warmup-prefill-concurrency", "2"}, "add --warmup-request-count or --warmup-duration"},
		{[]string{"-m", "x", "--url", "http://u:hunter2@[::1"}, "not a valid URL"},
		{[]string{"-m", "x", "--url", "a:1", "--url", "http://a:1/"}, "--url http://a:1 is given twice"},
		{[]string{"-m", "x", "--http-client", "curl"}, "--http-client \"curl\": use lean or net/http"},
		{[]string{"-m", "x", "--url", "a:1", "--url", "b:1", "--url-strategy", "least_loaded"}, "--url-strategy \"least_loaded\": use round_robin"},
		{[]string{"-m", "x", "--request-rate-mode", "burst"}, "constant, poisson or gamma"},
		{[]string{"-m", "x", "--header", "NoColon"}, "Name:Value"},
		{[]string{"-m", "x", "--tokenizer-revision", ""}, "cannot be empty"},
		{[]string{"-m", "x", "--isl", "0"}, "at least 1"},
		{[]string{"-m", "x", "--input-file", "f.jsonl", "--custom-dataset-type", "sharegpt"}, "use bailian_trace, burst_gpt_trace, dag_jsonl, inputs_json, mooncake_trace, multi_turn, random_pool, raw_payload, sagemaker_data_capture, single_turn"},
		{[]string{"-m", "x", "--dataset-sampling-strategy", "zigzag"}, "sequential, random or shuffle"},
		{[]string{"-m", "x", "--fixed-schedule"}, "give --input-file"},
		{[]string{"-m", "x", "--input-file", "f", "--fixed-schedule", "--no-fixed-schedule"}, "contradict"},
		{[]string{"-m", "x", "--input-file", "f", "--fixed-schedule-auto-offset", "--fixed-schedule-start-offset", "5"}, "cannot be used together"},
		{[]string{"-m", "x", "--input-file", "f", "--fixed-schedule-start-offset", "50", "--fixed-schedule-end-offset", "10"}, "is before"},
		{[]string{"-m", "x", "--conversation-turn-mean", "0"}, "at least 1"},
		{[]string{"-m", "x", "--num-prefix-prompts", "3"}, "needs --prompt-prefix-length"},
		{[]string{"-m", "x", "--input-file", "f", "--shared-system-prompt-length", "100"}, "brings its own"},
		{[]string{"-m", "x", "--request-rate", "2", "--arrival-smoothness", "2"}, "--arrival-pattern gamma"},
		{[]string{"-m", "x", "--request-rate", "2", "--arrival-pattern", "gamma", "--arrival-smoothness", "-1"}, "must be positive"},
		{[]string{"-m", "x", "--request-rate-ramp-duration", "5"}, "give one"},
		{[]string{"-m", "x", "--request-cancellation-rate", "150"}, "0 to 100"},
		{[]string{"-m", "x", "--request-cancellation-delay", "0.5"}, "give a rate above 0"},
		{[]string{"-m", "x", "--model-selection-strategy", "weighted"}, "round_robin or random"},
		{[]string{"-m", "x", "--wait-for-model-mode", "ping"}, "models, inference or both"},
		{[]string{"-m", "x", "--isl-block-size", "0"}, "at least 1 token"},
	}
	for _, tc := range tests {
		_, err := parse(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want it to mention %q", tc.args, err, tc.want)
		}
	}
	if _, err := parse(t, "--concurrency", "x"); err == nil {
		t.Error("a non-number concurrency must fail to parse")
	}
}

func TestRedaction(t *testing.T) {
	p, err := parse(t, "-m", "m", "--api-key", "sk-live-123", "-H", "Authorization: Bearer sk-live-123", "-H", "X-Trace: abc", "--header", "x-api-key:k2")
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"llmbench", "profile", "--api-key", "sk-live-123", "-H", "Authorization: Bearer sk-live-123", "--api-key=sk-live-123", "--header=X-Trace: abc"}
	p.CLICommand = CommandLine(RedactArgs(args))
	r := p.Redacted()
	all := r.CLICommand + " " + r.Endpoint.APIKey + " " + strings.Join(r.Endpoint.Headers, " ")
	for _, secret := range []string{"sk-live-123", "k2"} {
		if strings.Contains(all, secret) {
			t.Fatalf("secret %q leaked: %s", secret, all)
		}
	}
	if r.Endpoint.Headers[1] != "X-Trace: abc" || !strings.Contains(r.CLICommand, `"--header=X-Trace: abc"`) {
		t.Fatalf("harmless header changed: %v / %s", r.Endpoint.Headers, r.CLICommand)
	}
	if p.Endpoint.APIKey != "sk-live-123" {
		t.Fatal("Redacted must not change the original")
	}
}

// TestSeveralURLs: repeated and space-separated --url values (AIPerf's
// list) keep their order; the first replaces the default; each URL keeps
// its own credentials, written nowhere.
func TestSeveralURLs(t *testing.T) {
	for _, args := range [][]string{
		{"-m", "m", "--url", "h1:8000", "--url", "https://bob:pw7777@h2:8001/v1", "-u", "h3:8002", "--url-strategy", "round-robin"},
		{"-m", "m", "--url", "h1:8000", "https://bob:pw7777@h2:8001/v1", "h3:8002", "--url-strategy", "round_robin"},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		p := Default()
		BindFlags(fs, &p)
		if err := fs.Parse(ExpandListArgs(args, ListFlags)); err != nil {
			t.Fatal(err)
		}
		if err := p.Finish(); err != nil {
			t.Fatal(err)
		}
		want := "http://h1:8000 https://h2:8001/v1 http://h3:8002"
		if got := strings.Join(p.Endpoint.URLs, " "); got != want || p.Endpoint.URLStrategy != URLRoundRobin {
			t.Fatalf("%v: urls %q strategy %q, want %q", args, got, p.Endpoint.URLStrategy, want)
		}
		if u := p.Endpoint.Users; len(u) != 3 || u[0] != nil || u[2] != nil || u[1].Username() != "bob" {
			t.Fatalf("users %v", u)
		}
		b, _ := json.Marshal(p.Redacted())
		if strings.Contains(string(b), "pw7777") || strings.Contains(string(b), "bob") || !strings.Contains(string(b), `"urls":["http://h1:8000","https://h2:8001/v1","http://h3:8002"]`) {
			t.Fatalf("input_config: %s", b)
		}
		if r := NewRedactor(p); r.Redact("x pw7777 y") != "x <redacted> y" {
			t.Fatalf("the second URL's password is not redacted: %q", r.Redact("x pw7777 y"))
		}
	}
}

func TestURLCredentialsMovedOut(t *testing.T) {
	p, err := parse(t, "-m", "m", "--url", "https://alice:s3cr%40t@llm.example:8443/v1/", "--server-metrics", "bob:pw9999@gpu0:9400", "--server-metrics", "gpu:9401")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Endpoint.URLs) != 1 || p.Endpoint.URLs[0] != "https://llm.example:8443/v1" || p.Endpoint.Users[0].Username() != "alice" {
		t.Fatalf("urls %q users %v", p.Endpoint.URLs, p.Endpoint.Users)
	}
	if pw, _ := p.Endpoint.Users[0].Password(); pw != "s3cr@t" {
		t.Fatalf("password %q, want the decoded s3cr@t", pw)
	}
	want := []string{"http://gpu0:9400/metrics", "http://gpu:9401/metrics"}
	if strings.Join(p.ServerMetrics.URLs, " ") != strings.Join(want, " ") || len(p.ServerMetrics.Users) != 1 || p.ServerMetrics.Users[want[0]].Username() != "bob" {
		t.Fatalf("server metrics %v users %v", p.ServerMetrics.URLs, p.ServerMetrics.Users)
	}
	b, _ := json.Marshal(p.Redacted())
	for _, secret := range []string{"s3cr", "pw9999", "alice", "bob"} {
		if strings.Contains(string(b), secret) {
			t.Fatalf("input_config holds %q: %s", secret, b)
		}
	}
}

func TestJoinURL(t *testing.T) {
	for _, tc := range []struct{ base, path, want string }{
		{"http://h:8000", "/v1/chat/completions", "http://h:8000/v1/chat/completions"},
		{"http://h:8000/v1", "/v1/chat/completions", "http://h:8000/v1/chat/completions"},
		{"http://h:8000/v1/", "/v1/completions", "http://h:8000/v1/completions"},
		{"http://h:8000/proxy/v1", "/v1/completions", "http://h:8000/proxy/v1/completions"},
		{"http://h:8000/v1/chat/completions", "/v1/chat/completions", "http://h:8000/v1/chat/completions"},
		{"http://h:8000/api", "/v1/chat/completions", "http://h:8000/api/v1/chat/completions"},
		{"http://h:8000/v1", "/custom/generate", "http://h:8000/v1/custom/generate"},
	} {
		if got := JoinURL(tc.base, tc.path); got != tc.want {
			t.Errorf("JoinURL(%q, %q) = %q, want %q", tc.base, tc.path, got, tc.want)
		}
	}
}

func TestSecretHeaders(t *testing.T) {
	for name, secret := range map[string]bool{
		"Authorization": true, "proxy-authorization": true, "Cookie": true, "X-Api-Key": true, "api-key": true,
		"X-Auth-Token": true, "X-Client-Secret": true, "OpenAI-Organization": false, "X-Trace": false, "Content-Type": false,
		"x-goog-api-key": true, "X-Session-Id": true,
	} {
		if got := secretHeader(name); got != secret {
			t.Errorf("secretHeader(%q) = %v, want %v", name, got, secret)
		}
	}
}

func TestRedactArgsEverySpelling(t *testing.T) {
	args := []string{"llmbench", "profile", "-m", "org/model@rev",
		"--api-key", "k1-secret", "-api-key=k2-secret", "--api-key=k3-secret",
		"-H", "Authorization: Bearer t1-secret", "--H", "X-Api-Key: t2-secret", "--header", "Cookie: c1-secret",
		"-H=X-Token: t3-secret", "--header=Proxy-Authorization: Basic t4-secret", "--H=x-client-secret:t5-secret",
		"--url", "http://user:p1-secret@host:8000", "--url=https://u:p2-secret@h/v1",
		"--server-metrics", "a:p3-secret@gpu1:9400", "http://b:p4-secret@gpu2:9400/metrics",
		"-H", "X-Trace: keep-me"}
	line := CommandLine(RedactArgs(args))
	for _, secret := range []string{"k1-secret", "k2-secret", "k3-secret", "t1-secret", "t2-secret", "c1-secret", "t3-secret", "t4-secret", "t5-secret", "p1-secret", "p2-secret", "p3-secret", "p4-secret"} {
		if strings.Contains(line, secret) {
			t.Errorf("%s leaked: %s", secret, line)
		}
	}
	for _, keep := range []string{"org/model@rev", `"X-Trace: keep-me"`, "http://user:xxxxx@host:8000", "--url=https://u:xxxxx@h/v1", "a:xxxxx@gpu1:9400"} {
		if !strings.Contains(line, keep) {
			t.Errorf("%q missing from %s", keep, line)
		}
	}
}

func TestRedactor(t *testing.T) {
	p, err := parse(t, "-m", "m", "--api-key", "sk-abcdef", "-H", "X-Api-Key: Bearer tok-12345", "-H", "X-Trace: visible",
		"--url", "http://alice:pa%2Fss-word@h:1", "--server-metrics", "http://bob:mpw-777@g:2/metrics")
	if err != nil {
		t.Fatal(err)
	}
	r := NewRedactor(p)
	in := "key sk-abcdef, token tok-12345, pw pa/ss-word (pa%2Fss-word), basic " +
		base64.StdEncoding.EncodeToString([]byte("alice:pa/ss-word")) + ", mpw-777, X-Trace: visible"
	got := r.Redact(in)
	for _, secret := range []string{"sk-abcdef", "tok-12345", "pa/ss-word", "pa%2Fss-word", "mpw-777", "YWxpY2"} {
		if strings.Contains(got, secret) {
			t.Errorf("%q left in %q", secret, got)
		}
	}
	if !strings.Contains(got, "X-Trace: visible") || strings.Count(got, "<redacted>") != 6 {
		t.Errorf("redacted %q", got)
	}
	if got := string(r.RedactBytes([]byte(in))); got != r.Redact(in) {
		t.Errorf("RedactBytes %q, Redact %q", got, r.Redact(in))
	}
	clean := []byte("nothing secret here")
	if got := r.RedactBytes(clean); &got[0] != &clean[0] {
		t.Error("RedactBytes copied a text without secrets")
	}
	var b strings.Builder
	w := r.Writer(&b)
	io.WriteString(w, "error: 401 for key sk-abcdef\n")
	if b.String() != "error: 401 for key <redacted>\n" {
		t.Errorf("writer wrote %q", b.String())
	}
}

func TestCheckMachine(t *testing.T) {
	m := Machine{OpenFiles: 1024, OpenFilesMax: 4096, AvailableMemory: 16 << 30}
	tests := []struct {
		args []string
		want string // "" for no error
	}{
		{[]string{"-m", "x", "--mock", "--concurrency", "480"}, ""}, // 2*480+64 = 1024 on the mock
		{[]string{"-m", "x", "--mock", "--concurrency", "481"}, "needs about 1026 open files but this process may open 1024 (ulimit -n): raise it with 'ulimit -n 1026'"},
		{[]string{"-m", "x", "--url", "h:1", "--concurrency", "960"}, ""}, // 960+64, no server side
		{[]string{"-m", "x", "--url", "h:1", "--concurrency", "5000"}, "above the hard limit of 4096"},
		{[]string{"-m", "x", "--request-rate", "1000"}, ""}, // no cap: nothing to check
		// 100 prompts of 3.8M tokens: 100*3.8e6*23 = 8.74 GB > 8 GiB (8.59 GB).
		{[]string{"-m", "x", "--isl", "3800000"}, "would need about 8.74 GB of memory, more than half of the 17.2 GB available"},
		{[]string{"-m", "x", "--isl", "3000000"}, ""},
		{[]string{"-m", "x", "--isl", "1e300"}, "lower --synthetic-input-tokens-mean"},
	}
	for _, tc := range tests {
		p, err := parse(t, tc.args...)
		if err != nil {
			t.Fatal(err)
		}
		err = p.CheckMachine(m)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
	if got := ReadMachine(); got.OpenFiles == 0 || got.AvailableMemory == 0 {
		t.Errorf("ReadMachine() = %+v on Linux", got)
	}
}

// TestApplyEnv: AIPerf's environment settings, read as seconds, percent
// and tokens; a bad value names the variable.
func TestApplyEnv(t *testing.T) {
	env := map[string]string{
		"AIPERF_SERVER_METRICS_COLLECTION_INTERVAL":       "0.5",
		"AIPERF_METRICS_OSL_MISMATCH_PCT_THRESHOLD":       "10",
		"AIPERF_METRICS_OSL_MISMATCH_MAX_TOKEN_THRESHOLD": " 20 ",
	}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	p := Default()
	if p.OSLMismatchPct != 5 || p.OSLMismatchMaxTokens != 50 {
		t.Fatalf("defaults %v %v, want AIPerf's 5 and 50", p.OSLMismatchPct, p.OSLMismatchMaxTokens)
	}
	if err := p.ApplyEnv(lookup); err != nil {
		t.Fatal(err)
	}
	if p.ServerMetrics.Interval != 500*time.Millisecond || p.OSLMismatchPct != 10 || p.OSLMismatchMaxTokens != 20 {
		t.Fatalf("got %v %v %v", p.ServerMetrics.Interval, p.OSLMismatchPct, p.OSLMismatchMaxTokens)
	}
	env["AIPERF_METRICS_OSL_MISMATCH_PCT_THRESHOLD"] = "-1"
	if err := p.ApplyEnv(lookup); err == nil || !strings.Contains(err.Error(), "AIPERF_METRICS_OSL_MISMATCH_PCT_THRESHOLD") {
		t.Fatalf("error %v", err)
	}
}

// TestTokenizerDefault: AIPerf's default --tokenizer is the model name;
// placeholder names and the built-in server count with builtin.
func TestTokenizerDefault(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-m", "Qwen/Qwen3-0.6B"}, "Qwen/Qwen3-0.6B"},
		{[]string{"-m", "mock-model"}, "builtin"},
		{[]string{"-m", "Test-Model"}, "builtin"},
		{[]string{"-m", "meta-llama/Llama-3.1-8B", "--mock"}, "builtin"},
		{[]string{"-m", "x", "--tokenizer", "./tok.json"}, "./tok.json"},
		{[]string{"-m", "x", "--mock", "--tokenizer", "llmbench:words"}, "llmbench:words"},
	}
	for _, tc := range tests {
		p, err := parse(t, tc.args...)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if p.Tokenizer.Name != tc.want || p.Tokenizer.Revision != "main" {
			t.Errorf("%v: tokenizer %q revision %q, want %q main", tc.args, p.Tokenizer.Name, p.Tokenizer.Revision, tc.want)
		}
	}
}

// TestWorkloadFlags: AIPerf's names and aliases for datasets, sessions,
// load shapes and cancellation land in the profile.
func TestWorkloadFlags(t *testing.T) {
	p, err := parse(t, "-m", "x", "--input-file", "trace.jsonl", "--custom-dataset-type", "mooncake_trace", "--fixed-schedule-start-offset", "100",
		"--fixed-schedule-end-offset", "900.5", "--dataset-sampling-strategy", "shuffle", "--isl-block-size", "64",
		"--session-turns-mean", "3", "--session-turns-stddev", "1", "--session-turn-delay-mean", "200", "--session-delay-ratio", "0.5",
		"--request-rate", "4", "--request-rate-mode", "gamma", "--vllm-burstiness", "0.5", "--request-rate-ramp-duration", "2.5",
		"--concurrency", "8", "--concurrency-ramp-duration", "3", "--warmup-duration", "1.5",
		"--request-cancellation-rate", "12.5", "--request-cancellation-delay", "0.25",
		"--model-selection-strategy", "round-robin", "--wait-for-model-timeout", "30", "--wait-for-model-mode", "both", "--wait-for-model-interval", "0.5")
	if err != nil {
		t.Fatal(err)
	}
	in, l, e := p.Input, p.Loadgen, p.Endpoint
	if in.File != "trace.jsonl" || in.CustomDatasetType != "mooncake_trace" || *in.FixedScheduleStart != 100 || *in.FixedScheduleEnd != 900.5 ||
		in.SamplingStrategy != "shuffle" || in.Prompt.BlockSize != 64 {
		t.Errorf("input %+v", in)
	}
	if c := in.Conversation; c.TurnMean != 3 || c.TurnStddev != 1 || c.DelayMean != 200 || c.DelayRatio != 0.5 {
		t.Errorf("conversation %+v", c)
	}
	if l.RequestRateMode != RateGamma || l.ArrivalSmoothness != 0.5 || l.RateRamp != 2500*time.Millisecond || l.ConcurrencyRamp != 3*time.Second ||
		l.WarmupDuration != 1500*time.Millisecond || l.CancellationRate != 12.5 || l.CancellationDelay != 250*time.Millisecond || l.RequestCountGiven {
		t.Errorf("loadgen %+v", l)
	}
	if e.ModelSelection != ModelRoundRobin || e.WaitForModel != 30*time.Second || e.WaitMode != WaitBoth || e.WaitInterval != 500*time.Millisecond {
		t.Errorf("endpoint %+v", e)
	}
	q, err := parse(t, "-m", "x", "--request-count", "7")
	if err != nil || !q.Loadgen.RequestCountGiven {
		t.Errorf("--request-count given: %v %v", q.Loadgen.RequestCountGiven, err)
	}
}

// TestNumPrompts: AIPerf's newest alias of --num-dataset-entries.
func TestNumPrompts(t *testing.T) {
	p, err := parse(t, "-m", "m", "--num-prompts", "7")
	if err != nil || p.Input.NumDatasetEntries != 7 {
		t.Fatalf("--num-prompts 7: %d, %v", p.Input.NumDatasetEntries, err)
	}
}

// TestWarmupShapeFlags reads AIPerf's warm-up load flags into the
// warm-up's shape, recorded in input_config under AIPerf's names, and
// --num-warmup-sessions as the warm-up count.
func TestWarmupShapeFlags(t *testing.T) {
	p, err := parse(t, "-m", "x", "--concurrency", "16", "--num-warmup-sessions", "20", "--warmup-concurrency", "4",
		"--warmup-request-rate", "8", "--warmup-arrival-pattern", "constant", "--warmup-request-rate-ramp-duration", "2.5")
	if err != nil {
		t.Fatal(err)
	}
	w := p.Loadgen.WarmupShape
	if p.Loadgen.WarmupRequestCount != 20 || w.Concurrency != 4 || w.RequestRate != 8 || w.ArrivalPattern != "constant" || w.RateRamp != 2500*time.Millisecond {
		t.Fatalf("loadgen %+v", p.Loadgen)
	}
	b, err := json.Marshal(p.Loadgen)
	if err != nil {
		t.Fatal(err)
	}
	want := `"warmup_concurrency":4,"warmup_request_rate":8,"warmup_arrival_pattern":"constant","warmup_request_rate_ramp_duration":2.5`
	if !strings.Contains(string(b), want) {
		t.Errorf("loadgen JSON %s\nlacks %s", b, want)
	}
	p, err = parse(t, "-m", "x", "--warmup-request-count", "3")
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(p.Loadgen); strings.Contains(string(b), "warmup_concurrency") {
		t.Errorf("a warm-up without its own shape writes one: %s", b)
	}
}
