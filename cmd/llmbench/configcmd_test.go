package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeConfig(t *testing.T, src string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "bench.yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestProfileConfigFile runs a YAML config against the simulated server
// with one of its values overridden on the command line, and reads back
// from the exports that the file's values and the override both held.
func TestProfileConfigFile(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, `schemaVersion: "2.0"
benchmark:
  model: mock-model
  endpoint:
    streaming: true
    extra: {ignore_eos: true}
    headers: {X-From: file}
  dataset: {type: synthetic, entries: 5, prompts: {isl: 100, osl: 10}}
  phases: {type: concurrency, concurrency: 2, requests: 12}
  artifacts: {dir: `+dir+`}
`)
	var stdout, stderr bytes.Buffer
	code := run([]string{"llmbench", "profile", "--config", cfg, "--mock", "--request-count", "20", "-H", "X-From:cli",
		"--ui-type", "none", "--no-server-metrics", "--mock-ttft-ms", "1", "--mock-itl-ms", "1"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	agg, lines := readArtifacts(t, dir)
	if len(lines) != 20 {
		t.Errorf("%d records, want the command line's --request-count 20 (the file says 12)", len(lines))
	}
	var in struct {
		Endpoint struct {
			Streaming   bool     `json:"streaming"`
			ExtraInputs []string `json:"extra_inputs"`
			Headers     []string `json:"headers"`
		} `json:"endpoint"`
		Input struct {
			Entries int `json:"num_dataset_entries"`
			Prompt  struct {
				InputTokens  struct{ Mean float64 } `json:"input_tokens"`
				OutputTokens struct{ Mean float64 } `json:"output_tokens"`
			} `json:"prompt"`
		} `json:"input"`
		Loadgen struct {
			Concurrency  int `json:"concurrency"`
			RequestCount int `json:"request_count"`
		} `json:"loadgen"`
		CLICommand string `json:"cli_command"`
	}
	if err := json.Unmarshal(agg["input_config"], &in); err != nil {
		t.Fatal(err)
	}
	if !in.Endpoint.Streaming || strings.Join(in.Endpoint.ExtraInputs, " ") != "ignore_eos:true" || in.Input.Entries != 5 ||
		in.Input.Prompt.InputTokens.Mean != 100 || in.Input.Prompt.OutputTokens.Mean != 10 || in.Loadgen.Concurrency != 2 || in.Loadgen.RequestCount != 20 {
		t.Errorf("input_config %s: want the file's streaming, ignore_eos, 5 entries, ISL 100, OSL 10, concurrency 2 and the command line's 20 requests", agg["input_config"])
	}
	if h := in.Endpoint.Headers; strings.Join(h, " ") != "X-From:cli" {
		t.Errorf("headers %q: the command line's -H replaces the file's", h)
	}
	if want := "llmbench profile --config " + cfg + " --mock --request-count 20"; !strings.HasPrefix(in.CLICommand, want) {
		t.Errorf("cli_command %q, want what was typed, %q…", in.CLICommand, want)
	}
}

// TestProfileConfigFileRefused: a file llmbench cannot run is one line
// and exit code 2, before anything runs.
func TestProfileConfigFileRefused(t *testing.T) {
	cfg := writeConfig(t, "benchmark:\n  model: m\nsweep: {type: sobol}\n")
	var stdout, stderr bytes.Buffer
	code := run([]string{"llmbench", "profile", "-f", cfg, "--mock"}, &stdout, &stderr)
	want := "llmbench profile: " + cfg + ": sweep.type: not supported by llmbench (sobol sweeps: it sweeps grid or zip). Run 'llmbench profile --help' for the flags.\n"
	if code != exitUsage || stderr.String() != want {
		t.Errorf("exit %d, stderr %q; want %d, %q", code, stderr.String(), exitUsage, want)
	}
	for _, args := range [][]string{{"--config"}, {"--config", cfg, "--config=" + cfg}} {
		stderr.Reset()
		if code := run(append([]string{"llmbench", "profile", "-m", "m"}, args...), &stdout, &stderr); code != exitUsage || strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("%q: exit %d, %q", args, code, stderr.String())
		}
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		code      int
		stdout    string
		stderr    string // a substring; "" for none
	}{
		{"valid", "benchmark:\n  model: m\n  phases: {concurrency: 4, requests: 8}\n", 0, "FILE: valid\n", ""},
		{"unknown key", "benchmark:\n  model: m\n  phases: {concurency: 4}\n", 2, "",
			`FILE: benchmark.phases.concurency: unknown key (did you mean "concurrency"?)`},
		// llmbench's own validation (Finish) sees the file's flags.
		{"llmbench refuses", "benchmark:\n  model: m\n  phases: {concurrency: 0}\n", 2, "",
			"FILE: --concurrency 0: it must be at least 1 (the requests kept in flight); with --request-rate, leave it out for no cap (benchmark.phases.concurrency in the file)"},
		{"no model", "benchmark:\n  endpoint: {type: chat}\n", 2, "", "FILE: --model is required"},
		// A sweep of one value is one run; its sweep options then mean
		// nothing and are left out (llmbench refuses them without a list).
		{"one-value sweep", "benchmark:\n  model: m\nsweep: {parameters: {concurrency: [4]}, iteration_order: independent}\n", 0, "FILE: valid\n", ""},
		// A sweep the flags refuse: zip lists of unequal lengths.
		{"zip lengths", "benchmark:\n  model: m\n  phases: {type: poisson, rate: 1}\nsweep: {type: zip, parameters: {concurrency: [4, 8], rate: [1, 2, 3]}}\n", 2, "",
			"FILE: --sweep-type zip pairs the lists value by value, but --concurrency has 2 values and --request-rate 3"},
		// A warm-up shape llmbench's own checks refuse: a rate warm-up with
		// no rate, before a concurrency phase that has none either.
		{"warm-up shape", "benchmark:\n  model: m\n  phases: [{name: warmup, type: poisson, requests: 3}, {name: profiling, concurrency: 8}]\n", 2, "",
			"FILE: --warmup-arrival-pattern and --warmup-request-rate-ramp-duration shape a warm-up sent at a rate: add --warmup-request-rate"},
	} {
		cfg := writeConfig(t, tc.src)
		for _, args := range [][]string{{"--config-file", cfg}, {cfg}} {
			var stdout, stderr bytes.Buffer
			code := run(append([]string{"llmbench", "config", "validate"}, args...), &stdout, &stderr)
			out := strings.ReplaceAll(stdout.String(), cfg, "FILE")
			errText := strings.ReplaceAll(stderr.String(), cfg, "FILE")
			if code != tc.code || out != tc.stdout || tc.stderr != "" && !strings.Contains(errText, tc.stderr) || tc.stderr == "" && errText != "" {
				t.Errorf("%s %q: exit %d, stdout %q, stderr %q; want %d, %q, %q", tc.name, args, code, out, errText, tc.code, tc.stdout, tc.stderr)
			}
			if code != 0 && strings.Count(errText, "\n") != 1 {
				t.Errorf("%s: stderr %q is not one line", tc.name, errText)
			}
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"llmbench", "config", "validate"}, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "give one YAML file") {
		t.Errorf("no file: exit %d, %q", code, stderr.String())
	}
}

func TestConfigExpand(t *testing.T) {
	cfg := writeConfig(t, `random_seed: 10
benchmark:
  model: m
  endpoint:
    api_key: secret-key
  phases: {type: poisson, rate: 1, requests: 8}
sweep:
  parameters:
    rate: [2, 4.5]
    datasets.default.prompts.isl: [128, 256]
`)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"llmbench", "config", "expand", cfg}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	// Paths sorted, the last one turning fastest (AIPerf's grid order).
	want := "FILE: grid sweep, 4 variations\n" +
		"  0  datasets.main.prompts.isl.mean=128, phases.profiling.rate=2.0  (mean_128__rate_2.0)\n" +
		"  1  datasets.main.prompts.isl.mean=128, phases.profiling.rate=4.5  (mean_128__rate_4.5)\n" +
		"  2  datasets.main.prompts.isl.mean=256, phases.profiling.rate=2.0  (mean_256__rate_2.0)\n" +
		"  3  datasets.main.prompts.isl.mean=256, phases.profiling.rate=4.5  (mean_256__rate_4.5)\n"
	if got := strings.ReplaceAll(stdout.String(), cfg, "FILE"); got != want {
		t.Errorf("text:\n%s\nwant:\n%s", got, want)
	}

	stdout.Reset()
	if code := run([]string{"llmbench", "config", "expand", "--config-file", cfg, "-i", "2", "-f", "json"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var out struct {
		Sweep      string
		Variations []variation
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	// Cell 2 runs with seed 10 + 2, its values in place of the lists, and
	// the API key redacted.
	wantCmd := "llmbench profile --model m --api-key <redacted> --arrival-pattern poisson --request-count 8 " +
		"--synthetic-input-tokens-mean 256 --request-rate 2 --random-seed 12"
	if len(out.Variations) != 1 || out.Sweep != "grid" {
		t.Fatalf("json %s", stdout.String())
	}
	v := out.Variations[0]
	if v.Index != 2 || v.Seed == nil || *v.Seed != 12 || v.Command != wantCmd || v.Values["phases.profiling.rate"] != 2.0 || v.Values["datasets.main.prompts.isl.mean"] != 256.0 {
		t.Errorf("variation %+v\nwant index 2, seed 12, rate 2, isl 256, command %q", v, wantCmd)
	}

	stderr.Reset()
	if code := run([]string{"llmbench", "config", "expand", cfg, "--index", "4"}, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "has 4 variations (0 to 3)") {
		t.Errorf("--index 4: exit %d, %q", code, stderr.String())
	}

	// Without a sweep, the one run.
	one := writeConfig(t, "benchmark: {model: m, phases: {concurrency: 3}}\n")
	stdout.Reset()
	if code := run([]string{"llmbench", "config", "expand", one, "--full", "--format", "yaml"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	wantYAML := "file: FILE\nsweep: none\nvariations:\n    - index: 0\n      label: \"\"\n      command: llmbench profile --model m --concurrency 3\n"
	if got := strings.ReplaceAll(stdout.String(), one, "FILE"); got != wantYAML {
		t.Errorf("yaml:\n%s\nwant:\n%s", got, wantYAML)
	}
}

// TestConfigValidateTestdata: every file configfile's tests read is one
// llmbench's own flag checks accept.
func TestConfigValidateTestdata(t *testing.T) {
	t.Setenv("API_KEY", "k")
	t.Setenv("OPENAI_API_KEY", "k")
	files, _ := filepath.Glob("../../internal/configfile/testdata/*.yaml")
	if len(files) < 10 {
		t.Fatalf("%d files", len(files))
	}
	for _, f := range files {
		var stdout, stderr bytes.Buffer
		if code := run([]string{"llmbench", "config", "validate", f}, &stdout, &stderr); code != 0 || stdout.String() != f+": valid\n" {
			t.Errorf("exit %d, %q %q", code, stdout.String(), stderr.String())
		}
	}
}
