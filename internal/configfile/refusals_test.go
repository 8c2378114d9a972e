package configfile

import (
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// TestRefusals: what llmbench cannot do, and what is wrong in a file, is
// one line that names the key.
func TestRefusals(t *testing.T) {
	const b = "benchmark:\n  model: m\n"
	for _, tc := range []struct{ name, src, want string }{
		// Unknown keys, with the nearest known one.
		{"envelope typo", b + "sweeps: {}\n", `sweeps: unknown key (did you mean "sweep"?)`},
		{"envelope unknown", b + "zzz: 1\n", `zzz: unknown key (known here: benchmark, multi_run, no_sweep_table, plot, random_seed, schema_version, sweep, variables)`},
		{"body typo", b + "  endpont: {}\n", `benchmark.endpont: unknown key (did you mean "endpoint"?)`},
		{"phase typo", b + "  phases: {concurency: 4}\n", `benchmark.phases.concurency: unknown key (did you mean "concurrency"?)`},
		{"dataset typo", b + "  dataset: {prompts: {isll: 5}}\n", `benchmark.dataset.prompts.isll: unknown key (did you mean "isl"?)`},
		{"dist key", b + "  dataset: {prompts: {isl: {mean: 5, sd: 1}}}\n", `benchmark.dataset.prompts.isl.sd: unknown key`},
		{"sweep path typo", b + "sweep: {parameters: {phases.profiling.concurency: [1, 2]}}\n", `sweep.parameters.phases.profiling.concurency: "concurency" names no field llmbench sweeps (did you mean "concurrency"?)`},
		{"sweep root typo", b + "sweep: {parameters: {phase.profiling.rate: [1, 2]}}\n", `"phase" names no field llmbench sweeps (did you mean "phases"?)`},
		{"sweep bare typo", b + "sweep: {parameters: {concurrancy: [1, 2]}}\n", `(did you mean "concurrency"?)`},
		{"sweep phase name", b + "  phases: [{name: steady, kind: profiling}]\nsweep: {parameters: {phases.stedy.rate: [1, 2]}}\n", `no phase "stedy" here (did you mean "steady"?)`},
		{"sweep phase name case", b + "  phases: [{name: myPhase, kind: profiling, type: poisson, rate: 1}]\nsweep: {parameters: {phases.my_phase.rate: [1, 2]}}\n", `no phase "my_phase" here`},
		{"sweep dataset name", b + "  dataset: {name: main}\nsweep: {parameters: {datasets.default.prompts.isl: [1, 2]}}\n", `no dataset "default" here (known: main)`},
		{"sweep dataset field", b + "sweep: {parameters: {datasets.default.prompts.ilsl: [1, 2]}}\n", `"prompts.ilsl" names no field llmbench sweeps (did you mean "prompts.isl"?)`},

		// What llmbench cannot do.
		{"scenarios", b + "sweep: {type: scenarios, runs: []}\n", `sweep.type: not supported by llmbench (scenarios sweeps: it sweeps grid or zip)`},
		{"sobol", b + "sweep: {type: sobol}\n", `sweep.type: not supported by llmbench (sobol sweeps`},
		{"latin hypercube", b + "sweep: {type: latin_hypercube}\n", `(latin_hypercube sweeps`},
		{"adaptive search", b + "sweep: {type: adaptive_search}\n", `(adaptive_search sweeps`},
		{"sweep type", b + "sweep: {type: random, parameters: {rate: [1]}}\n", `sweep.type: "random": use grid or zip`},
		{"sweep smoothness", b + "sweep: {parameters: {smoothness: [1, 2]}}\n", `sweep.parameters.smoothness: not supported by llmbench (llmbench sweeps a phase's`},
		{"sweep phase field", b + "sweep: {parameters: {phases.profiling.grace_period: [1, 2]}}\n", `not supported by llmbench (llmbench sweeps`},
		{"sweep dataset known", b + "sweep: {parameters: {datasets.default.sampling: [1, 2]}}\n", `not supported by llmbench (llmbench sweeps`},
		{"sweep warmup", b + "  phases: [{name: warmup, requests: 5}, {name: profiling}]\nsweep: {parameters: {phases.warmup.requests: [1, 2]}}\n", `not supported by llmbench (sweeping the warm-up phase`},
		{"sweep warmup index", b + "  phases: [{name: warmup, requests: 5}, {name: profiling}]\nsweep: {parameters: {phases.0.requests: [1, 2]}}\n", `sweeping the warm-up phase`},
		{"sweep twice", b + "sweep: {parameters: {concurrency: [1, 2], phases.profiling.concurrency: [3, 4]}}\n", `sweeps the same as concurrency (--concurrency): give one`},
		{"sweep rate on concurrency", b + "  phases: {type: concurrency}\nsweep: {parameters: {rate: [1, 2]}}\n", `sweeps the rate, but the profiling phase is of type concurrency`},
		{"sweep empty", b + "sweep: {parameters: {rate: []}}\n", `sweep.parameters.rate: the list of values is empty`},
		{"sweep not int", b + "sweep: {parameters: {concurrency: [1, 2.5]}}\n", `sweep.parameters.concurrency[1]: "2.5" is not a whole number`},
		{"sweep no parameters", b + "sweep: {type: grid}\n", `sweep: give parameters`},
		{"two datasets", b + "  datasets: [{name: a}, {name: b}]\n", `benchmark.datasets: not supported by llmbench (2 datasets: it runs one)`},
		{"dataset twice", b + "  dataset: {entries: 1}\n  datasets: [{name: a}]\n", `dataset and datasets both give the dataset`},
		{"two profiling", b + "  phases: [{name: a, kind: profiling}, {name: b, kind: profiling}]\n", `benchmark.phases: not supported by llmbench (2 profiling phases (a, b): it runs one)`},
		{"two warmups", b + "  phases: [{name: w1, kind: warmup, requests: 1}, {name: w2, kind: warmup, requests: 1}, {name: profiling}]\n", `(2 warm-up phases`},
		{"warmup after", b + "  phases: [{name: profiling}, {name: warmup, requests: 1}]\n", `benchmark.phases[1]: not supported by llmbench (a warm-up after the profiling phase`},
		{"no profiling", b + "  phases: [{name: warmup, requests: 1}]\n", `benchmark.phases: no profiling phase`},
		{"user centric", b + "  phases: {type: user_centric, rate: 1, users: 2}\n", `benchmark.phases.type: not supported by llmbench (no user-centric rate mode`},
		{"phase type", b + "  phases: {type: burst}\n", `benchmark.phases.type: "burst": use concurrency, poisson, constant, gamma or fixed_schedule`},
		{"warmup fixed", b + "  phases: [{name: warmup, type: fixed_schedule, requests: 1}, {name: profiling}]\n", `benchmark.phases[0].type: not supported by llmbench (a warm-up by a fixed schedule)`},
		{"phase kind", b + "  phases: [{name: steady}]\n", `the phase "steady" needs kind: warmup or profiling`},
		{"phase kind value", b + "  phases: [{name: steady, kind: cooldown}]\n", `benchmark.phases[0].kind: "cooldown": use warmup or profiling`},
		{"reserved name", b + "  phases: [{name: warmup, kind: profiling}]\n", `the phase named warmup is of kind warmup`},
		{"phase name", b + "  phases: [{name: 9x, kind: profiling}]\n", `benchmark.phases[0].name: "9x": a phase's name is letters`},
		{"phase name twice", b + "  phases: [{name: A, kind: warmup, requests: 1}, {name: a, kind: profiling}]\n", `"a" names two phases`},
		{"phase no name", b + "  phases: [{type: concurrency}]\n", `benchmark.phases[0]: give the phase a name`},
		{"warmup no stop", b + "  phases: [{name: warmup}, {name: profiling}]\n", `benchmark.phases[0]: a warm-up phase needs requests, sessions or duration`},
		{"warmup requests and sessions", b + "  phases: [{name: warmup, requests: 2, sessions: 3}, {name: profiling}]\n", `benchmark.phases[0].sessions: gives --warmup-request-count 3, but benchmark.phases[0].requests gives it 2`},
		{"closed warmup before open", b + "  phases: [{name: warmup, type: concurrency, concurrency: 8, requests: 5}, {name: profiling, type: gamma, rate: 30}]\n",
			`benchmark.phases[0].type: not supported by llmbench (a concurrency warm-up before a gamma profiling phase: the warm-up takes its rate`},
		{"warmup smoothness", b + "  phases: [{name: warmup, type: gamma, rate: 2, smoothness: 2, requests: 5}, {name: profiling, type: poisson, rate: 3}]\n",
			`benchmark.phases[0].smoothness: not supported by llmbench (a gamma warm-up takes the profiling phase's smoothness, and that phase is poisson)`},
		{"warmup rate on concurrency", b + "  phases: [{name: warmup, type: concurrency, rate: 2, requests: 5}, {name: profiling}]\n", `benchmark.phases[0].rate: belongs to a rate phase`},
		{"excluded profiling", b + "  phases: {exclude_from_results: true}\n", `benchmark.phases.exclude_from_results: not supported by llmbench (a profiling phase's results are its metrics)`},
		{"seamless", b + "  phases: [{name: warmup, requests: 1}, {name: profiling, seamless: true}]\n", `benchmark.phases[1].seamless: not supported by llmbench`},
		{"ramp strategy", b + "  phases: {concurrency_ramp: {duration: 5, strategy: exponential}}\n", `benchmark.phases.concurrency_ramp.strategy: not supported by llmbench ("exponential": it ramps linearly)`},
		{"public dataset name", b + "  dataset: {type: public, entries: 5}\n", `benchmark.dataset: a public dataset needs dataset: its name`},
		{"public filters", b + "  dataset: {type: public, dataset: sharegpt, filters: {a: b}}\n", `benchmark.dataset.filters: not supported by llmbench`},
		{"prompts on public", b + "  dataset: {dataset: sharegpt, prompts: {isl: 5}}\n", `benchmark.dataset.prompts.isl: belongs to a synthetic dataset, and this one is public`},
		{"synthesis on synthetic", b + "  dataset: {synthesis: {max_isl: 5}}\n", `benchmark.dataset.synthesis.max_isl: belongs to a file dataset, and this one is synthetic`},
		{"dataset type", b + "  dataset: {type: composed}\n", `benchmark.dataset.type: "composed": use synthetic, file or public`},
		{"records pools", b + "  dataset: {type: file, format: random_pool, records: {a: [{text: x}]}}\n", `benchmark.dataset.records: not supported by llmbench (records as pools`},
		{"path and records", b + "  dataset: {path: a.jsonl, records: [{text: x}]}\n", `path and records both give the records`},
		{"records item", b + "  dataset: {records: [x]}\n", `benchmark.dataset.records[0]: want a record's fields`},
		{"records raw", b + "  artifacts: {raw: true}\n", `benchmark.artifacts.raw: not supported by llmbench (no raw request/response export)`},
		{"records csv", b + "  artifacts: {records: [csv]}\n", `benchmark.artifacts.records[0]: not supported by llmbench ("csv": it writes jsonl)`},
		{"summary off", b + "  artifacts: {summary: false}\n", `benchmark.artifacts.summary: not supported by llmbench (the summary JSON is always written)`},
		{"gpu mode", b + "  gpu_telemetry: {mode: sometimes}\n", `benchmark.gpu_telemetry.mode: "sometimes": use summary or realtime_dashboard`},
		{"plot", b + "plot: {}\n", `plot: not supported by llmbench (run 'llmbench plot DIR' after the run)`},

		// Keys that belong to another kind of dataset or phase.
		{"rate on concurrency", b + "  phases: {type: concurrency, rate: 3}\n", `benchmark.phases.rate: belongs to a rate phase (type poisson, constant or gamma), and this one is concurrency`},
		{"smoothness on poisson", b + "  phases: {type: poisson, rate: 1, smoothness: 2}\n", `benchmark.phases.smoothness: belongs to a gamma phase, and this one is poisson`},
		{"offset on poisson", b + "  phases: {type: poisson, rate: 1, end_offset: 2}\n", `belongs to a fixed_schedule phase`},
		{"rate phase without rate", b + "  phases: {type: constant}\n", `benchmark.phases: a constant phase needs rate:`},
		{"path on synthetic", b + "  dataset: {type: synthetic, path: a.jsonl}\n", `benchmark.dataset.path: belongs to a file dataset, and this one is synthetic`},
		{"prompts on file", b + "  dataset: {path: a.jsonl, prompts: {isl: 5}}\n", `benchmark.dataset.prompts.isl: belongs to a synthetic dataset, and this one is file`},

		// The file itself.
		{"empty", "", `the file is empty`},
		{"not a mapping", "- 1\n", `the file must be a mapping of keys`},
		{"no benchmark", "random_seed: 1\n", `benchmark: missing`},
		{"benchmark list", "benchmark: [1]\n", `benchmark: want a mapping of keys, got a list`},
		{"yaml syntax", "benchmark: {model: [\n", `not YAML: `},
		{"schema", "schemaVersion: \"1.0\"\n" + b, `schemaVersion: "1.0": llmbench reads AIPerf's schema "2.0"`},
		{"given twice", b + "multi_run: {num_runs: 2, numRuns: 3}\n", `multi_run.numRuns: the same key as num_runs, given twice`},
		{"duplicate key", b + "  model: n\n", `line 3: the key "model" is given twice`},
		{"model and models", b + "  models: [n]\n", `model and models both name the models`},
		{"url and urls", b + "  endpoint: {url: a, urls: [b]}\n", `url and urls both give the server`},
		{"conflict", b + "  dataset: {entries: 500}\n  phases: {sessions: 100}\n", `benchmark.phases.sessions: gives --num-dataset-entries 100, but benchmark.dataset.entries gives it 500: keep one`},
		{"seed conflict", "random_seed: 1\n" + b + "  dataset: {random_seed: 2}\n", `random_seed: gives --random-seed 1, but benchmark.dataset.random_seed gives it 2`},
		{"not a number", b + "  phases: {concurrency: eight}\n", `benchmark.phases.concurrency: "eight" is not a whole number`},
		{"not a duration", b + "  phases: {duration: 5 weeks}\n", `benchmark.phases.duration: "5 weeks" is not a duration`},
		{"not a bool", b + "  endpoint: {streaming: maybe}\n", `benchmark.endpoint.streaming: "maybe" is not true or false`},
		{"not a scalar", b + "  endpoint: {type: [chat]}\n", `benchmark.endpoint.type: want a single value, got a list`},
		{"headers list", b + "  endpoint: {headers: [a]}\n", `benchmark.endpoint.headers: want a mapping of header names to values`},
		{"cancellation rate", b + "  phases: {cancellation: {delay: 1}}\n", `benchmark.phases.cancellation: give the rate`},
		{"alias bomb", "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n" +
			"d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n",
			`more than a million values`},
		{"tag", b + "  endpoint: {type: !custom chat}\n", `the tag !custom is not one llmbench reads`},

		// Environment and templates.
		{"env unset", b + "  endpoint:\n    api_key: ${OPENAI_API_KEY}\n", `benchmark.endpoint.api_key: the environment variable OPENAI_API_KEY is not set: set it, or give a default as ${OPENAI_API_KEY:value}`},
		{"undefined", "variables: {base_concurrency: 2}\n" + b + "  phases: {concurrency: \"{{ base_concurrancy * 2 }}\"}\n", `benchmark.phases.concurrency: "{{ base_concurrancy * 2 }}": base_concurrancy is not defined (define it under variables:)`},
		{"circle", "variables: {a: \"{{ b }}\", b: \"{{ a }}\"}\n" + b, `variables: a, b refer to each other in a circle`},
		{"variable undefined", "variables: {a: \"{{ zz }}\"}\n" + b, `variables.a: "{{ zz }}": zz is not defined`},
		{"statements", b + "  phases: {concurrency: \"{% if 1 %}2{% endif %}{{ 1 }}\"}\n", `only {{ expressions }} are rendered`},
		{"template syntax", b + "  phases: {concurrency: \"{{ 1 + }}\"}\n", `benchmark.phases.concurrency: "{{ 1 + }}": `},
		{"variables list", "variables: [1]\n" + b, `variables: want a mapping of names to values`},
	} {
		_, err := parseString(t, tc.src, nil)
		if err == nil {
			t.Errorf("%s: no error, want %q", tc.name, tc.want)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, err, tc.want)
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %q is more than one line", tc.name, err)
		}
	}
}

// TestEveryRefusedKey gives each key of the table llmbench refuses a value
// other than AIPerf's default, and expects the refusal naming it; AIPerf's
// default is accepted as asking for nothing.
func TestEveryRefusedKey(t *testing.T) {
	for _, r := range table().rows {
		if r.refuse == "" && !r.unsupported {
			continue
		}
		var v any = "x"
		switch r.def {
		case "true":
			v = false
		case "false":
			v = true
		case "[]":
			v = []any{"x"}
		case "2500", "300":
			v = 7
		}
		src, where := docWith(t, r.path, v)
		_, err := parseString(t, src, nil)
		if err == nil || !strings.Contains(err.Error(), where+": not supported by llmbench") {
			t.Errorf("%s = %v: got %v, want %q", r.path, v, err, where+": not supported by llmbench")
		}
		if r.def == "" {
			continue
		}
		var d any = r.def
		if r.def == "[]" {
			d = []any{}
		}
		src, _ = docWith(t, r.path, d)
		if _, err := parseString(t, src, nil); err != nil {
			t.Errorf("%s = %v (AIPerf's default): %v", r.path, d, err)
		}
	}
}

// docWith is a valid file with the key at path (the table's form) set to
// v, and where that key is in it.
func docWith(t *testing.T, path string, v any) (string, string) {
	t.Helper()
	doc := map[string]any{}
	body := map[string]any{"model": "m"}
	doc["benchmark"] = body
	set := func(m map[string]any, segs []string) {
		for _, s := range segs[:len(segs)-1] {
			next, ok := m[s].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[s] = next
			}
			m = next
		}
		m[segs[len(segs)-1]] = v
	}
	where := path
	switch {
	case strings.HasPrefix(path, "benchmark.phases.profiling."):
		phase := map[string]any{}
		set(phase, strings.Split(strings.TrimPrefix(path, "benchmark.phases.profiling."), "."))
		body["phases"] = phase
		where = "benchmark.phases." + strings.TrimPrefix(path, "benchmark.phases.profiling.")
	case strings.HasPrefix(path, "benchmark.phases.warmup."):
		warm := map[string]any{"name": "warmup", "requests": 1}
		set(warm, strings.Split(strings.TrimPrefix(path, "benchmark.phases.warmup."), "."))
		body["phases"] = []any{warm, map[string]any{"name": "profiling"}}
		where = "benchmark.phases[0]." + strings.TrimPrefix(path, "benchmark.phases.warmup.")
	case strings.HasPrefix(path, "sweep."):
		sw := map[string]any{"parameters": map[string]any{"concurrency": []any{1, 2}}}
		set(sw, strings.Split(strings.TrimPrefix(path, "sweep."), "."))
		doc["sweep"] = sw
	default:
		set(doc, strings.Split(path, "."))
	}
	out, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return string(out), where
}
