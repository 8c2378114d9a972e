package config

import (
	"flag"
	"io"
	"strings"
	"testing"
	"time"
)

func parse(t *testing.T, args ...string) (Profile, error) {
	t.Helper()
	fs := flag.NewFlagSet("profile", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	p := Default()
	BindFlags(fs, &p)
	if err := fs.Parse(args); err != nil {
		return p, err
	}
	return p, p.Finish()
}

func TestAIPerfFlagNamesAndDefaults(t *testing.T) {
	p, err := parse(t, "-m", "org/model-x", "--url", "localhost:8000/", "--endpoint-type", "completions", "--streaming",
		"--concurrency", "8", "--num-requests", "200", "--isl", "128", "--osl", "64", "--osl-stddev", "4",
		"--random-seed", "7", "--warmup-request-count", "3", "--request-timeout-seconds", "2.5", "-H", "X-A: 1", "--extra-inputs", "ignore_eos:true")
	if err != nil {
		t.Fatal(err)
	}
	e, l, in := p.Endpoint, p.Loadgen, p.Input
	if e.ModelNames[0] != "org/model-x" || e.URL != "http://localhost:8000" || e.Type != "completions" || !e.Streaming || e.Mock {
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
	// AIPerf: concurrency 1 and 10 requests when nothing is said; ISL 550.
	if !p.Endpoint.Mock || p.Loadgen.Concurrency != 1 || p.Loadgen.RequestCount != 10 || p.Input.Prompt.InputTokens.Mean != 550 || p.Endpoint.Type != "chat" {
		t.Errorf("defaults %+v", p)
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
		{[]string{"-m", "x", "--endpoint-type", "rankings"}, "not supported"},
		{[]string{"-m", "x", "--url", "ftp://h"}, "scheme"},
		{[]string{"-m", "x", "--concurrency", "-1"}, "negative"},
		{[]string{"-m", "x", "--request-rate-mode", "burst"}, "constant or poisson"},
		{[]string{"-m", "x", "--header", "NoColon"}, "Name:Value"},
		{[]string{"-m", "x", "--tokenizer", "gpt2"}, "builtin"},
		{[]string{"-m", "x", "--isl", "0"}, "at least 1"},
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
