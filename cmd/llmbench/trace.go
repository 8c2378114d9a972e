package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/llmbench/llmbench/internal/agenticgen"
	"github.com/llmbench/llmbench/internal/tracesynth"
)

const analyzeTraceUsage = `Usage: llmbench analyze-trace --input-file TRACE.jsonl [--block-size 512] [--output-file report.json]

The ISL and OSL distributions of a Mooncake trace and the prefix-cache hit
rate its hash_ids imply (an infinite cache, requests in file order), as
AIPerf's analyze-trace computes them.

  --input-file PATH    the trace (JSONL: input_length, output_length, hash_ids)
  --block-size N       tokens per hash block [default: 512]
  --output-file PATH   also write the report as JSON (AIPerf's AnalysisStats)
`

// analyzeTraceCommand runs `llmbench analyze-trace`.
func analyzeTraceCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("llmbench analyze-trace", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	input := fs.String("input-file", "", "")
	block := fs.Int("block-size", 512, "")
	output := fs.String("output-file", "", "")
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, analyzeTraceUsage)
		return exitOK
	}
	switch {
	case err != nil:
	case fs.NArg() > 0:
		err = fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case *input == "":
		err = errors.New("--input-file TRACE.jsonl is required")
	case *block < 1:
		err = fmt.Errorf("--block-size %d: it must be at least 1 token", *block)
	}
	if err != nil {
		fmt.Fprintf(stderr, "llmbench analyze-trace: %s. Run 'llmbench analyze-trace --help' for its flags.\n", flagErrorText(err))
		return exitUsage
	}
	f, err := os.Open(*input)
	if err != nil {
		fmt.Fprintf(stderr, "llmbench analyze-trace: --input-file: %v\n", err)
		return exitUsage
	}
	rows, err := tracesynth.ReadRows(f, *input)
	f.Close()
	if err == nil && len(rows) == 0 {
		err = fmt.Errorf("%s has no rows", *input)
	}
	if err != nil {
		fmt.Fprintf(stderr, "llmbench analyze-trace: %v\n", err)
		return exitUsage
	}
	a := tracesynth.Analyze(rows, *block)
	writeAnalysis(stdout, a, *block)
	if n := rowsWithoutLengths(rows); n > 0 {
		// AIPerf counts a missing length as 0; say so rather than let a
		// minimum of 0 pass for a measured one.
		fmt.Fprintf(stderr, "WARNING  %d of %d rows have no input_length or output_length (text rows): the length statistics count them as 0, as AIPerf does.\n", n, len(rows))
	}
	if *output != "" {
		data, err := json.MarshalIndent(a, "", "  ")
		if err == nil {
			if dir := filepath.Dir(*output); dir != "." {
				err = os.MkdirAll(dir, 0o755)
			}
		}
		if err == nil {
			err = os.WriteFile(*output, append(data, '\n'), 0o644)
		}
		if err != nil {
			fmt.Fprintf(stderr, "llmbench analyze-trace: --output-file: %v\n", err)
			return exitFailed
		}
		fmt.Fprintf(stdout, "Analysis report saved to %s\n", *output)
	}
	return exitOK
}

func writeAnalysis(w io.Writer, a tracesynth.Analysis, block int) {
	fmt.Fprintf(w, "Trace Analysis Report (blocks of %d tokens)\n", block)
	fmt.Fprintf(w, "  Total requests:      %d\n", a.TotalRequests)
	fmt.Fprintf(w, "  Unique prefixes:     %d\n", a.UniquePrefixes)
	fmt.Fprintf(w, "  Prefix groups:       %d\n", a.NumPrefixGroups)
	fmt.Fprintf(w, "  Prefix reuse ratio:  %.2f%%\n", 100*a.PrefixReuseRatio)
	fmt.Fprintf(w, "  Cache hit rate:      %.2f%% (infinite cache)\n\n", 100*a.CacheHitRate)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "Metric\tMean\tStd Dev\tMin\tP25\tMedian\tP75\tMax\t")
	for _, m := range []struct {
		name string
		s    *tracesynth.MetricStats
	}{
		{"Input Length", a.ISLStats}, {"Context Length", a.ContextLengthStats},
		{"Unique Prompt Length", a.UniquePromptLengthStats}, {"Output Length", a.OSLStats},
		{"Theoretical Hit Rate", a.HitRateStats},
	} {
		if m.s == nil {
			fmt.Fprintf(tw, "%s\tno data\t\t\t\t\t\t\t\n", m.name)
			continue
		}
		s := m.s
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t\n", m.name, s.Mean, s.StdDev, s.Min, s.P25, s.Median, s.P75, s.Max)
	}
	tw.Flush()
}

const synthesizeUsage = `Usage: llmbench synthesize [--target] agentic-code [flags]

Generate a synthetic multi-turn agentic-coding workload (AIPerf's
synthesize agentic-code) into a new run directory under --output:
dataset.jsonl (a Mooncake trace: replay it with 'llmbench profile
--input-file DIR/dataset.jsonl'), manifest.json and quality.json.

  --target NAME        agentic-code (AIPerf's one target)
  --num-sessions N     sessions to generate [default: 1000]
  --output DIR         parent of the run directory [default: .]
  --config PATH        a config JSON over the defaults, or an earlier run's manifest.json
  --seed N             random seed: the same seed writes the same files [default: 42]
  --max-isl N          context limit in tokens (max_prompt_tokens) [default: 167000]
  --max-osl N          longest output (generation_length.max) [default: 1500]
`

// synthesizeCommand runs `llmbench synthesize`.
func synthesizeCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("llmbench synthesize", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	target := fs.String("target", "", "")
	sessions := fs.Int("num-sessions", 1000, "")
	output := fs.String("output", ".", "")
	configPath := fs.String("config", "", "")
	seed := fs.Uint64("seed", 42, "")
	maxISL := fs.Int("max-isl", 0, "")
	maxOSL := fs.Int("max-osl", 0, "")
	pos, err := parseInterleaved(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, synthesizeUsage)
		return exitOK
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if err == nil && len(pos) > 0 {
		switch {
		case len(pos) > 1 || *target != "":
			err = fmt.Errorf("unexpected argument %q", pos[len(pos)-1])
		default:
			*target = pos[0]
		}
	}
	switch {
	case err != nil:
	case *target == "":
		err = errors.New("--target is required: agentic-code")
	case *target != "agentic-code":
		err = fmt.Errorf("--target %s: llmbench synthesizes agentic-code only (AIPerf's one target)", *target)
	case *sessions < 1:
		err = fmt.Errorf("--num-sessions %d: it must be at least 1", *sessions)
	case set["max-isl"] && *maxISL < 2:
		err = fmt.Errorf("--max-isl %d: it must be at least 2 tokens", *maxISL)
	case set["max-osl"] && *maxOSL < 1:
		err = fmt.Errorf("--max-osl %d: it must be at least 1 token", *maxOSL)
	}
	if err != nil {
		fmt.Fprintf(stderr, "llmbench synthesize: %s. Run 'llmbench synthesize --help' for its flags.\n", flagErrorText(err))
		return exitUsage
	}
	cfg, name := agenticgen.Default(), "default"
	if *configPath != "" {
		if cfg, err = agenticgen.LoadConfig(*configPath); err != nil {
			fmt.Fprintf(stderr, "llmbench synthesize: %v\n", err)
			return exitUsage
		}
		name = strings.TrimSuffix(filepath.Base(*configPath), filepath.Ext(*configPath))
	}
	if set["max-isl"] {
		cfg.MaxPromptTokens = *maxISL
	}
	if set["max-osl"] {
		m := float64(*maxOSL)
		cfg.GenerationLength.Max = &m
	}
	gen, err := agenticgen.New(cfg, *seed)
	if err != nil {
		fmt.Fprintf(stderr, "llmbench synthesize: %v\n", err)
		return exitUsage
	}
	all := make([]agenticgen.Session, *sessions)
	turns := 0
	for i := range all {
		all[i] = gen.Session()
		turns += len(all[i].Turns)
	}
	dir := filepath.Join(*output, fmt.Sprintf("%s_%ds_seed%d_%s", name, *sessions, *seed, time.Now().UTC().Format("20060102-150405")))
	path, err := agenticgen.Write(dir, all, cfg, *seed, name)
	if err != nil {
		fmt.Fprintf(stderr, "llmbench %v\n", err)
		return exitFailed
	}
	fmt.Fprintf(stdout, "Run directory: %s\n  JSONL:     %s (%d sessions, %d turns)\n  Manifest:  %s\n  Quality:   %s\n",
		dir, path, len(all), turns, filepath.Join(dir, "manifest.json"), filepath.Join(dir, "quality.json"))
	fmt.Fprintf(stdout, "Replay it: llmbench profile -m MODEL --input-file %s --custom-dataset-type mooncake_trace --prompt-input-tokens-block-size %d\n", path, cfg.BlockSize)
	return exitOK
}

// rowsWithoutLengths counts the rows that give no input_length or no
// output_length.
func rowsWithoutLengths(rows []tracesynth.Row) int {
	n := 0
	for _, r := range rows {
		if r.InputLength == nil || r.OutputLength == nil {
			n++
		}
	}
	return n
}
