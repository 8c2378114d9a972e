package configfile

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/internal/config"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.args from the translation")

// env is a fixed environment for the tests.
func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
}

// fakeInline records inline records instead of writing them.
type fakeInline struct{ got []byte }

func (f *fakeInline) write(b []byte) (string, error) { f.got = b; return "/tmp/inline.jsonl", nil }

func parseString(t *testing.T, src string, vars map[string]string) (*File, error) {
	t.Helper()
	return parse([]byte(src), env(vars), (&fakeInline{}).write)
}

func parseFile(t *testing.T, name string, vars map[string]string) *File {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	f, err := parse(data, env(vars), (&fakeInline{}).write)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return f
}

// TestTutorialExamples reads the examples of AIPerf's YAML tutorial
// (docs/tutorials/yaml-config.md) into the flags worked out by hand from
// the tutorial's own explanations (benchmark.yaml is, it says, the same
// run as its command line).
func TestTutorialExamples(t *testing.T) {
	for _, tc := range []struct {
		file string
		env  map[string]string
		want []string
	}{
		{"tutorial_benchmark.yaml", nil, []string{
			"--model", "meta-llama/Llama-3.1-8B-Instruct", "--url", "http://localhost:8000/v1/chat/completions",
			"--endpoint-type", "chat", "--streaming", "--num-dataset-entries", "500",
			"--synthetic-input-tokens-mean", "512", "--output-tokens-mean", "128",
			"--concurrency", "8,16,32,64", "--request-count", "500", "--warmup-request-count", "50", "--warmup-concurrency", "8",
			"--artifact-dir", "./artifacts/my-test"}},
		{"tutorial_minimal.yaml", nil, []string{
			"--model", "Qwen/Qwen3-0.6B", "--url", "http://localhost:8000", "--num-dataset-entries", "100",
			"--synthetic-input-tokens-mean", "512", "--output-tokens-mean", "128", "--concurrency", "8", "--request-count", "100"}},
		// 16*10=160, 512//10=51, 16*4=64, 120//4=30, 16*5=80, 16//2=8; the
		// warm-up takes the profiling phase's gamma rate, capped at 8.
		{"tutorial_variables.yaml", nil, []string{
			"--model", "m", "--num-dataset-entries", "160", "--synthetic-input-tokens-mean", "512", "--synthetic-input-tokens-stddev", "51",
			"--arrival-pattern", "gamma", "--concurrency", "64", "--request-rate", "30", "--benchmark-duration", "120",
			"--request-rate-ramp-duration", "30", "--warmup-request-count", "80", "--warmup-concurrency", "8"}},
		{"tutorial_env.yaml", map[string]string{"OPENAI_API_KEY": "sk-test"}, []string{
			"--model", "meta-llama/Llama-3.1-8B-Instruct", "--url", "http://localhost:8000/v1/chat/completions",
			"--api-key", "sk-test", "--request-timeout-seconds", "600"}},
		{"tutorial_env.yaml", map[string]string{"OPENAI_API_KEY": "k", "MODEL_NAME": "meta-llama/Llama-3.1-70B-Instruct",
			"INFERENCE_URL": "http://prod.example.com:8000/v1/chat/completions", "TIMEOUT": "1e3"}, []string{
			"--model", "meta-llama/Llama-3.1-70B-Instruct", "--url", "http://prod.example.com:8000/v1/chat/completions",
			"--api-key", "k", "--request-timeout-seconds", "1000"}},
		{"tutorial_grid.yaml", nil, []string{
			"--model", "meta-llama/Llama-3.1-8B-Instruct", "--url", "http://localhost:8000/v1/chat/completions",
			"--num-dataset-entries", "500", "--synthetic-input-tokens-mean", "128,512,2048", "--output-tokens-mean", "128",
			"--arrival-pattern", "poisson", "--request-rate", "10,30,50", "--benchmark-duration", "120"}},
	} {
		f := parseFile(t, tc.file, tc.env)
		if !slices.Equal(f.Args, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.file, f.Args, tc.want)
		}
	}
}

// TestTutorialSweeps checks the sweeps the tutorial's files hold.
func TestTutorialSweeps(t *testing.T) {
	f := parseFile(t, "tutorial_grid.yaml", nil)
	want := &Sweep{Type: "grid", Params: []SweptParam{
		{Key: "datasets.default.prompts.isl", Flag: "synthetic-input-tokens-mean", Values: []string{"128", "512", "2048"}},
		{Key: "rate", Flag: "request-rate", Values: []string{"10", "30", "50"}},
	}}
	if f.Sweep == nil || f.Sweep.Type != want.Type || !slices.EqualFunc(f.Sweep.Params, want.Params, func(a, b SweptParam) bool {
		return a.Key == b.Key && a.Flag == b.Flag && slices.Equal(a.Values, b.Values)
	}) {
		t.Errorf("sweep %+v, want %+v", f.Sweep, want)
	}
}

// TestSweepPaths: a phase by name (as written), by index or as
// "profiling", field names either way; a dataset by name or index.
func TestSweepPaths(t *testing.T) {
	f, err := parseString(t, `benchmark:
  model: m
  dataset: {name: myData}
  phases: [{name: warmUp, kind: warmup, requests: 1}, {name: myPhase, kind: profiling, type: poisson, rate: 1}]
sweep:
  type: zip
  parameters:
    phases.myPhase.rate: [1, 2]
    phases.1.requests: [3, 4]
    phases.profiling.duration: [5s, 1m]
    datasets.myData.prompts.osl.stddev: [0, 1.5]
    datasets.0.turns.mean: [1, 2]
    datasets.myData.entries: [7, 8]
`, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A swept flag sits where its key's row is, or with the sweep when a
	// structured key (a {mean, stddev}) would give it.
	want := []string{"--model", "m", "--num-dataset-entries", "7,8", "--arrival-pattern", "poisson", "--request-rate", "1,2",
		"--request-count", "3,4", "--benchmark-duration", "5,60", "--warmup-request-count", "1",
		"--output-tokens-stddev", "0,1.5", "--conversation-turn-mean", "1,2", "--sweep-type", "zip"}
	if !slices.Equal(f.Args, want) {
		t.Errorf("got  %q\nwant %q", f.Args, want)
	}
}

// TestCamelCase: AIPerf takes every key in snake_case or camelCase.
func TestCamelCase(t *testing.T) {
	snakeDoc := `schema_version: "2.0"
random_seed: 3
benchmark:
  model: m
  endpoint: {api_key: k, use_server_token_count: true, wait_for_model_timeout: 5}
  dataset: {prefix_prompts: {pool_size: 2, shared_system_length: 10}, turn_delay_ratio: 2}
  phases: {type: gamma, rate: 2, concurrency_ramp: 3, grace_period: 4, duration: 9}
multi_run: {num_runs: 3, cooldown_seconds: 15.0}
no_sweep_table: true
`
	camelDoc := `schemaVersion: "2.0"
randomSeed: 3
benchmark:
  model: m
  endpoint: {apiKey: k, useServerTokenCount: true, waitForModelTimeout: 5}
  dataset: {prefixPrompts: {poolSize: 2, sharedSystemLength: 10}, turnDelayRatio: 2}
  phases: {type: gamma, rate: 2, concurrencyRamp: 3, gracePeriod: 4, duration: 9}
multiRun: {numRuns: 3, cooldownSeconds: 15.0}
noSweepTable: true
`
	a, err := parseString(t, snakeDoc, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := parseString(t, camelDoc, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"--model", "m", "--api-key", "k", "--wait-for-model-timeout", "5", "--use-server-token-count",
		"--prompt-prefix-pool-size", "2", "--shared-system-prompt-length", "10", "--conversation-turn-delay-ratio", "2",
		"--arrival-pattern", "gamma", "--request-rate", "2", "--benchmark-duration", "9", "--benchmark-grace-period", "4",
		"--concurrency-ramp-duration", "3", "--random-seed", "3", "--num-profile-runs", "3", "--profile-run-cooldown-seconds", "15",
		"--no-sweep-table"}
	if !slices.Equal(a.Args, want) || !slices.Equal(b.Args, want) {
		t.Errorf("snake_case %q\ncamelCase %q\nwant      %q", a.Args, b.Args, want)
	}
}

// TestGolden compares every other file in testdata with its expected
// flags in testdata/golden (go test -update rewrites them).
func TestGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.yaml")
	for _, path := range files {
		name := filepath.Base(path)
		if strings.HasPrefix(name, "tutorial_") {
			continue // checked by hand above
		}
		f := parseFile(t, name, map[string]string{"API_KEY": "sk-golden"})
		var b strings.Builder
		for _, g := range groupFlags(f.Args) {
			b.WriteString(strings.Join(g.tokens, " ") + "\n")
		}
		golden := filepath.Join("testdata", "golden", strings.TrimSuffix(name, ".yaml")+".args")
		if *update {
			if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (go test -update writes it)", err)
		}
		if b.String() != string(want) {
			t.Errorf("%s:\n got:\n%s\nwant:\n%s", name, b.String(), want)
		}
	}
}

// TestInlineRecords: inline records become a JSONL file, one record per
// line, keys in order, types kept.
func TestInlineRecords(t *testing.T) {
	data, _ := os.ReadFile("testdata/inline_records.yaml")
	var fi fakeInline
	f, err := parse(data, env(nil), fi.write)
	if err != nil {
		t.Fatal(err)
	}
	want := "{\"text\":\"What is machine learning?\"}\n{\"text\":\"Explain GANs.\",\"output_length\":200}\n"
	if string(fi.got) != want {
		t.Errorf("JSONL %q, want %q", fi.got, want)
	}
	if i := slices.Index(f.Args, "--input-file"); i < 0 || f.Args[i+1] != "/tmp/inline.jsonl" {
		t.Errorf("args %q: no --input-file /tmp/inline.jsonl", f.Args)
	}

	// Load writes the file, named by its content, and finds it again.
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	var paths []string
	for range 2 {
		lf, err := Load("testdata/inline_records.yaml", env(nil))
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, lf.Args[slices.Index(lf.Args, "--input-file")+1])
	}
	if paths[0] != paths[1] || filepath.Dir(paths[0]) != dir {
		t.Fatalf("inline files %q, want one file in %s", paths, dir)
	}
	got, err := os.ReadFile(paths[0])
	if err != nil || string(got) != want {
		t.Errorf("%s holds %q (%v), want %q", paths[0], got, err, want)
	}
}

// TestValues checks how values are read: types, durations, coercion of
// rendered templates, and JSON for extra inputs.
func TestValues(t *testing.T) {
	f, err := parseString(t, `variables:
  n: 4
  twice: "{{ n * 2 }}"
  label: "{{ 'x' ~ twice }}"
benchmark:
  model: "{{ label }}"
  endpoint:
    extra: {a: "{{ twice }}", b: "8", c: 8.0, d: true, e: null, f: 0x10, g: "${NOPE:}"}
  phases: {type: constant, rate: "{{ n / 8 }}", duration: 2h, grace_period: "90 sec", requests: 1_000}
`, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"--model", "x8",
		"--extra-inputs", "a:8", "--extra-inputs", `b:"8"`, "--extra-inputs", "c:8.0", "--extra-inputs", "d:true",
		"--extra-inputs", "e:null", "--extra-inputs", "f:16", "--extra-inputs", `g:""`,
		"--arrival-pattern", "constant", "--request-rate", "0.5", "--request-count", "1000",
		"--benchmark-duration", "7200", "--benchmark-grace-period", "90"}
	if !slices.Equal(f.Args, want) {
		t.Errorf("got  %q\nwant %q", f.Args, want)
	}
}

// TestEnvSubstitution: ${VAR} and ${VAR:default} in values, not keys;
// the environment comes before the templates.
func TestEnvSubstitution(t *testing.T) {
	src := `variables: {mult: 3}
benchmark:
  model: ${M}
  dataset: {entries: "{{ mult * '${BASE:10}' | int }}"}
  endpoint: {headers: {"${H}": "${V:v}"}}
`
	f, err := parseString(t, src, map[string]string{"M": "model-x", "BASE": "7"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"--model", "model-x", "--header", "${H}:v", "--num-dataset-entries", "21"}
	if !slices.Equal(f.Args, want) {
		t.Errorf("got  %q\nwant %q", f.Args, want)
	}
}

// TestTableFlagsExist: every flag the table gives is a profile flag
// under its canonical name, and every swept flag is one llmbench sweeps.
func TestTableFlagsExist(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	p := config.Default()
	flags := config.BindFlags(fs, &p)
	var names []string
	for _, r := range table().rows {
		if r.flag != "" {
			names = append(names, r.flag)
		}
	}
	names = append(names, "model", "url", "header", "extra-inputs", "model-selection-strategy", "reset-kv-cache",
		"reset-kv-cache-path", "reset-kv-cache-timeout-seconds", "input-file", "goodput", "export-level", "no-server-metrics",
		"server-metrics", "server-metrics-formats", "no-gpu-telemetry", "gpu-telemetry", "arrival-pattern", "fixed-schedule",
		"fixed-schedule-auto-offset", "request-cancellation-rate", "request-cancellation-delay", "concurrency-ramp-duration",
		"request-rate-ramp-duration", "sweep-type", "warmup-arrival-pattern", "synthetic-input-tokens-stddev", "output-tokens-stddev", "audio-depths",
		"audio-sample-rates", "conversation-turn-stddev", "image-width-mean", "rankings-passages-mean")
	names = append(names, SweepOnlyFlags...)
	for _, n := range names {
		if c := flags.Canonical(n); c != n {
			t.Errorf("--%s: canonical name %q, want the flag itself", n, c)
		}
	}
	for _, m := range []map[string]string{phaseSweeps, datasetSweeps} {
		for k, f := range m {
			if _, ok := config.SweepParamOf(f); !ok {
				t.Errorf("sweep %s: --%s takes no comma list", k, f)
			}
		}
	}
}

// TestMergeArgs: the command line wins over the file, under any of a
// flag's names, and a repeatable flag of the command line replaces the
// file's.
func TestMergeArgs(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	p := config.Default()
	canonical := config.BindFlags(fs, &p).Canonical
	file := []string{"--model", "a", "--header", "X:1", "--header", "Y:2", "--concurrency", "8,16", "--streaming",
		"--set-consistent-seed", "--request-rate=-1", "--extra-inputs", "t:0", "--isl", "100", "--url", "http://h:1"}
	for _, tc := range []struct {
		cli, want []string
	}{
		{nil, file},
		{[]string{"-H", "Z:3"}, []string{"--model", "a", "--concurrency", "8,16", "--streaming", "--set-consistent-seed",
			"--request-rate=-1", "--extra-inputs", "t:0", "--isl", "100", "--url", "http://h:1", "-H", "Z:3"}},
		// --mock benchmarks the built-in server in place of the file's --url.
		{[]string{"--mock"}, append(slices.Clone(file[:len(file)-2]), "--mock")},
		{[]string{"-m", "b", "--concurrency=4", "--no-set-consistent-seed", "--synthetic-input-tokens-mean", "5"},
			[]string{"--header", "X:1", "--header", "Y:2", "--streaming", "--request-rate=-1", "--extra-inputs", "t:0", "--url", "http://h:1",
				"-m", "b", "--concurrency=4", "--no-set-consistent-seed", "--synthetic-input-tokens-mean", "5"}},
		// A value that names no flag is not one; after "--" nothing is a flag.
		{[]string{"--api-key", "-x", "--", "--model"}, append(slices.Clone(file), "--api-key", "-x", "--", "--model")},
		{[]string{"--extra-inputs", "a:1", "b:2", "--request-rate", "3"}, []string{"--model", "a", "--header", "X:1", "--header", "Y:2",
			"--concurrency", "8,16", "--streaming", "--set-consistent-seed", "--isl", "100", "--url", "http://h:1", "--extra-inputs", "a:1", "b:2", "--request-rate", "3"}},
	} {
		if got := MergeArgs(file, tc.cli, canonical); !slices.Equal(got, tc.want) {
			t.Errorf("MergeArgs(file, %q):\n got %q\nwant %q", tc.cli, got, tc.want)
		}
	}
}

// TestMergeDropsOrphanSweepFlags: when the command line replaces every
// list the file sweeps, the file's sweep options go too (llmbench refuses
// them without a list); while a list is left they stay.
func TestMergeDropsOrphanSweepFlags(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	p := config.Default()
	canonical := config.BindFlags(fs, &p).Canonical
	f, err := parseString(t, `benchmark:
  model: m
  phases: {type: poisson, rate: 1, requests: 10}
sweep: {type: zip, parameters: {rate: [1, 2], requests: [10, 20]}, cooldown_seconds: 1}
`, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := f.Merge([]string{"--request-rate", "5", "--num-requests", "3"}, canonical)
	want := []string{"--model", "m", "--arrival-pattern", "poisson", "--request-rate", "5", "--num-requests", "3"}
	if !slices.Equal(got, want) {
		t.Errorf("both lists replaced:\n got %q\nwant %q", got, want)
	}
	got = f.Merge([]string{"--request-rate", "5"}, canonical)
	want = []string{"--model", "m", "--arrival-pattern", "poisson", "--request-count", "10,20", "--sweep-type", "zip",
		"--parameter-sweep-cooldown-seconds", "1", "--request-rate", "5"}
	if !slices.Equal(got, want) {
		t.Errorf("one list left:\n got %q\nwant %q", got, want)
	}
}

func TestLoadErrors(t *testing.T) {
	if _, err := Load(filepath.Join(t.TempDir(), "none.yaml"), env(nil)); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing file: %v", err)
	}
	if _, err := Load(t.TempDir(), env(nil)); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a directory: %v", err)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("benchmark: {model: m, phases: {concurency: 2}}\n"), 0o644)
	_, err := Load(bad, env(nil))
	if want := bad + `: benchmark.phases.concurency: unknown key (did you mean "concurrency"?)`; err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}
