package config

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// flagHelp is what --help says of one flag.
type flagHelp struct {
	names []string // the canonical name, then its aliases
	usage string
	group string
	value flag.Value
	def   string // the value Default() gave it
}

// mockGroup is the group of the flags registered apart from BindFlags:
// the built-in simulated server's --mock-* flags.
const mockGroup = "Simulated Server (with --mock)"

// common are the flags -h/--help shows; --help-all shows every one.
var common = map[string]bool{
	"model": true, "url": true, "endpoint-type": true, "streaming": true, "api-key": true, "mock": true,
	"tokenizer": true, "extra-inputs": true, "header": true, "input-file": true, "custom-dataset-type": true, "public-dataset": true,
	"random-seed": true, "goodput": true,
	"synthetic-input-tokens-mean": true, "synthetic-input-tokens-stddev": true,
	"output-tokens-mean": true, "output-tokens-stddev": true,
	"benchmark-duration": true, "concurrency": true, "request-rate": true, "request-count": true,
	"warmup-request-count": true, "artifact-dir": true, "server-metrics": true, "gpu-telemetry": true,
	"ui-type": true, "num-profile-runs": true,
}

// trueDefaults are the defaults that Finish() decides, or that depend on
// other flags: the value the flag holds before Finish would mislead.
var trueDefaults = map[string]string{
	"concurrency":                    "1; none with --request-rate",
	"request-count":                  "max(10, 2 × --concurrency); none with --benchmark-duration",
	"arrival-smoothness":             "1 with --arrival-pattern gamma",
	"artifact-dir":                   "artifacts/<model>-openai-<type>-concurrency<N>",
	"tokenizer":                      "the model name; builtin with --mock or a placeholder model name (mock-model, test-model, fake-model)",
	"fixed-schedule":                 "on when every conversation of --input-file has a timestamp",
	"prompt-input-tokens-block-size": "512; 16 with --custom-dataset-type bailian_trace",
	"search-style":                   "confident",
	"records-memory-budget":          "a quarter of the machine's memory (or of its cgroup's limit), at most 512MiB",
	"reset-kv-cache-timeout-seconds": "the request timeout",
	"search-max-iterations":          "20 (confident, monotonic), 30 (smooth_isotonic)",
	"concurrency-min":                "1",
	"concurrency-max":                "1000; 200 for decode-itl-curve",
	"concurrency-steps":              "8; 6 for decode-itl-curve",
	"isl-min":                        "256",
	"isl-max":                        "32768",
	"isl-steps":                      "8",
	"osl-min":                        "64",
	"osl-max":                        "1024",
	"osl-steps":                      "4",
}

// metavars name the value a flag takes; the rest are named by their type.
var metavars = map[string]string{
	"model": "MODEL", "url": "URL", "endpoint": "PATH", "api-key": "KEY",
	"endpoint-type": "TYPE", "model-selection-strategy": "{round_robin,random}",
	"url-strategy": "{round_robin}", "wait-for-model-mode": "{models,inference,both}",
	"http-client": "{lean,net/http}", "server-timings": "{auto,off}",
	"tokenizer": "NAME", "tokenizer-revision": "REVISION",
	"extra-inputs": "NAME:VALUE ...", "header": "NAME:VALUE", "input-file": "PATH",
	"custom-dataset-type": "TYPE", "public-dataset": "NAME", "public-dataset-path": "FILE", "dataset-sampling-strategy": "{sequential,random,shuffle}",
	"goodput": "'TAG:VALUE ...'", "arrival-pattern": "{constant,poisson,gamma}",
	"artifact-dir": "DIR", "profile-export-prefix": "PREFIX", "fail-on-verdict": "{suspect,invalid}", "export-level": "{summary,records,raw}", "records-memory-budget": "SIZE",
	"server-metrics": "URL ...", "server-metrics-formats": "FORMAT ...",
	"histogram-estimator": "{interval-fit,aiperf,linear}", "counter-resets": "{increase,clamp}",
	"gpu-telemetry": "[ITEM ...]",
	"sweep-type":    "{grid,zip}", "parameter-sweep-mode": "{repeated,independent}", "search-recipe": "RECIPE",
	"search-sla": "TAG:STAT:OP:THRESHOLD", "search-style": "{confident,smooth_isotonic,monotonic,grid}",
	"isl-osl-pairs": "ISL/OSL,...", "degradation-metric-tag": "TAG", "degradation-stat": "STAT", "gpu-counter-window": "{exact,aiperf}", "ui-type": "{simple,none}",
	"fixed-schedule-start-offset": "MS", "fixed-schedule-end-offset": "MS",
	"conversation-turn-delay-mean": "MS", "conversation-turn-delay-stddev": "MS",
}

// WriteHelp writes `profile --help`: the flags in AIPerf's groups, each as
// --name VALUE with its aliases after it and one default, the one a run
// gets. all lists every flag, the rare ones and the --mock-* ones too;
// otherwise only the common ones.
func (f *Flags) WriteHelp(w io.Writer, cmd string, all bool) {
	entries := append([]*flagHelp(nil), f.help...)
	known := map[string]bool{}
	for _, h := range entries {
		for _, n := range h.names {
			known[n] = true
		}
	}
	f.fs.VisitAll(func(fl *flag.Flag) {
		if !known[fl.Name] {
			entries = append(entries, &flagHelp{names: []string{fl.Name}, usage: fl.Usage, group: mockGroup, value: fl.Value, def: fl.DefValue})
		}
	})
	fmt.Fprintf(w, "Usage: %s --model MODEL [--url URL | --mock] [flags]\n\n", cmd)
	if all {
		fmt.Fprintf(w, "All %d flags, in AIPerf's groups.\n", len(entries))
	} else {
		fmt.Fprintf(w, "Common flags, in AIPerf's groups; '%s --help-all' lists all %d.\n", cmd, len(entries))
	}
	// --config is read before the flags are (cmd/llmbench/configcmd.go).
	fmt.Fprintln(w, "  --config FILE  (-f)\n      An AIPerf YAML config (schema 2.0), read as the flags it stands for;\n      flags given with it override it.")
	group := ""
	for _, h := range entries {
		if !all && !common[h.names[0]] {
			continue
		}
		if h.group != group {
			group = h.group
			fmt.Fprintf(w, "\n%s:\n", group)
		}
		writeFlag(w, h)
	}
	fmt.Fprint(w, "\nA flag takes its value as --name VALUE or --name=VALUE; -name works too.\n")
}

// writeFlag writes one flag: its names and value, then its usage and
// default wrapped at 80 columns.
func writeFlag(w io.Writer, h *flagHelp) {
	line := "  --" + h.names[0]
	if mv := metavar(h); mv != "" {
		line += " " + mv
	}
	if len(h.names) > 1 {
		aliases := make([]string, len(h.names)-1)
		for i, n := range h.names[1:] {
			aliases[i] = dashes(n)
		}
		also := "(" + strings.Join(aliases, ", ") + ")"
		if len([]rune(line))+2+len([]rune(also)) <= 80 {
			line += "  " + also
		} else {
			line += "\n      " + also
		}
	}
	fmt.Fprintln(w, line)
	text := h.usage
	if d := helpDefault(h); d != "" {
		text += " [default: " + d + "]"
	}
	for _, l := range wrap(text, 80-6) {
		fmt.Fprintln(w, "      "+l)
	}
}

// helpDefault is the default a run gets, "" when there is nothing to say
// (an empty list, zero, false).
func helpDefault(h *flagHelp) string {
	if d, ok := trueDefaults[h.names[0]]; ok {
		return d
	}
	switch h.def {
	case "", "0", "false", "[]":
		return ""
	}
	return h.def
}

func metavar(h *flagHelp) string {
	if mv, ok := metavars[h.names[0]]; ok {
		return mv
	}
	if b, ok := h.value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
		return ""
	}
	v := h.value
	if s, ok := v.(sweepable); ok {
		v = s.Value
	}
	switch v.(type) {
	case *secondsValue:
		return "SECONDS"
	case *intValue, *floatValue, *seedValue, *optionalFloat:
		return "N"
	}
	if strings.HasSuffix(h.names[0], "-ms") {
		return "MS"
	}
	switch name, _ := flag.UnquoteUsage(&flag.Flag{Value: h.value, Usage: h.usage}); name {
	case "int", "uint", "float", "duration":
		return "N"
	}
	return "VALUE"
}

// dashes writes a flag name as typed: -m, --model.
func dashes(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// wrap breaks text into lines of at most width runes, at spaces.
func wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		if line != "" && len([]rune(line))+1+len([]rune(word)) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// section files the flags registered next under an AIPerf group.
func (f *Flags) section(group string) { f.group = group }
