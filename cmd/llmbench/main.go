// Command llmbench benchmarks OpenAI-compatible LLM inference servers.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/llmbench/llmbench/internal/benchmark"
	"github.com/llmbench/llmbench/internal/capacity"
	"github.com/llmbench/llmbench/internal/config"
	"github.com/llmbench/llmbench/internal/dataset"
	"github.com/llmbench/llmbench/internal/export"
	"github.com/llmbench/llmbench/internal/hfhub"
	"github.com/llmbench/llmbench/internal/mockserver"
	"github.com/llmbench/llmbench/internal/tokenizer"
	"github.com/llmbench/llmbench/internal/ui"
	"github.com/llmbench/llmbench/internal/verdict"
)

const version = "0.1.0"

// Exit codes.
const (
	exitOK        = 0
	exitFailed    = 1
	exitUsage     = 2
	exitVerdict   = 3 // --fail-on-verdict: the run verdict was that bad
	exitCancelled = 130
)

func main() {
	// LLMBENCH_CPUPROFILE=file writes a CPU profile of the whole process,
	// LLMBENCH_MEMPROFILE=file a heap profile at its end, for finding where
	// the client's time and memory go (docs/development.md, Performance).
	stopProfile := func() {}
	if path := os.Getenv("LLMBENCH_CPUPROFILE"); path != "" {
		var err error
		if stopProfile, err = startCPUProfile(path); err != nil {
			fmt.Fprintln(os.Stderr, "llmbench:", err)
			os.Exit(exitFailed)
		}
	}
	code := run(os.Args, os.Stdout, os.Stderr)
	stopProfile()
	if path := os.Getenv("LLMBENCH_MEMPROFILE"); path != "" {
		if err := writeHeapProfile(path); err != nil {
			fmt.Fprintln(os.Stderr, "llmbench:", err)
		}
	}
	os.Exit(code)
}

func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("heap profile: %w", err)
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		return fmt.Errorf("heap profile: %w", err)
	}
	return nil
}

func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("CPU profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("CPU profile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) < 2 {
		usage(stderr)
		return exitUsage
	}
	switch args[1] {
	case "profile":
		return profile(args, stdout, stderr)
	case "mock-server":
		return mockServer(args[2:], stderr)
	case "compare":
		return compareCommand(args[2:], stdout, stderr)
	case "plot":
		return plotCommand(args[2:], stdout, stderr)
	case "merge":
		return mergeCommand(args[2:], stdout, stderr)
	case "config":
		return configCommand(args[2:], stdout, stderr)
	case "analyze-trace":
		return analyzeTraceCommand(args[2:], stdout, stderr)
	case "synthesize":
		return synthesizeCommand(args[2:], stdout, stderr)
	case "version", "--version", "-V":
		fmt.Fprintln(stdout, "llmbench", version)
		return exitOK
	case "help", "-h", "--help":
		usage(stdout)
		return exitOK
	}
	fmt.Fprintf(stderr, "llmbench: unknown command %q\n\n", args[1])
	usage(stderr)
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprint(w, `llmbench benchmarks OpenAI-compatible LLM inference servers.

Usage:
  llmbench profile --model M [--url http://host:port] [flags]   run a benchmark
  llmbench profile --model M --mock [flags]                       benchmark the built-in simulated server
  llmbench profile --config FILE [flags]                          run an AIPerf YAML config (-f FILE); flags override it
  llmbench config validate|expand --config-file FILE              check a YAML config, or list its sweep's variations
  llmbench compare BASE NEW [--fail-on GATE ...]                  did NEW get better or worse than BASE, or is it noise?
  llmbench plot DIR... [--png]                                    draw report.html (and PNGs) from artifact folders
  llmbench merge DIR... --output DIR                              merge the shards of a run (profile --shard-count)
  llmbench mock-server [--port 8000] [flags]                      serve the simulated LLM server
  llmbench analyze-trace --input-file TRACE.jsonl                 ISL/OSL and prefix-cache hit rate of a Mooncake trace
  llmbench synthesize agentic-code [--num-sessions 1000]          write a synthetic agentic-coding Mooncake trace
  llmbench version

--url defaults to http://localhost:8000, as in AIPerf.
Run 'llmbench profile --help' (common flags), 'llmbench profile --help-all'
or 'llmbench mock-server --help' for their flags.
`)
}

// interrupts turns Ctrl-C and SIGTERM into two contexts: stop ends at the
// first (stop sending, cancel what is in flight, finish cleanly), abort at
// the second (stop waiting, write what there is now). After that, signals
// are handled the default way again, so a third one kills the process.
func interrupts() (stop, abort context.Context, release func()) {
	stop, cancelStop := context.WithCancel(context.Background())
	abort, cancelAbort := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		defer signal.Stop(ch)
		for _, cancel := range []context.CancelFunc{cancelStop, cancelAbort} {
			select {
			case <-ch:
				cancel()
			case <-done:
				return
			}
		}
	}()
	return stop, abort, func() {
		close(done)
		cancelStop()
		cancelAbort()
	}
}

// usageError prints one line saying what is wrong with the command line and
// where the flags are listed, and returns the usage exit code.
func usageError(stderr io.Writer, cmd string, err error) int {
	fmt.Fprintf(stderr, "%s: %s. Run '%s --help' for the flags.\n", cmd, flagErrorText(err), cmd)
	return exitUsage
}

// flagErrorText rewrites package flag's messages in the --name form the
// flags are documented with.
func flagErrorText(err error) string {
	msg := strings.TrimSuffix(err.Error(), ".")
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		return "unknown flag " + dashed(name) + " (check its spelling)"
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: "); ok {
		return dashed(name) + " needs a value"
	}
	// invalid value "x" for flag -concurrency: "x" is not a whole number
	if rest, ok := strings.CutPrefix(msg, "invalid value "); ok {
		if _, after, ok := strings.Cut(rest, " for flag "); ok {
			if name, why, ok := strings.Cut(after, ": "); ok {
				return dashed(name) + ": " + why
			}
		}
	}
	if rest, ok := strings.CutPrefix(msg, "invalid boolean value "); ok {
		if _, after, ok := strings.Cut(rest, " for "); ok {
			if name, _, ok := strings.Cut(after, ": "); ok {
				return dashed(name) + " takes true or false"
			}
		}
	}
	return msg
}

// dashed writes a flag name as documented: -m, --model.
func dashed(name string) string {
	name = strings.TrimLeft(name, "-")
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

func profile(args []string, stdout, stderr io.Writer) int {
	const cmd = "llmbench profile"
	if helpAll(args[2:]) || wantsHelp(args[2:]) {
		fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
		p := config.Default()
		flags := config.BindFlags(fs, &p)
		mock := mockserver.DefaultConfig()
		mock.BindFlags(fs, "mock-")
		flags.WriteHelp(stdout, cmd, helpAll(args[2:]))
		return exitOK
	}
	p, mock, err := parseProfile(args, nil)
	if err == nil {
		err = p.CheckCommandLine()
	}
	if err == nil && (p.Swept() || p.Search.Recipe != "") {
		err = capacity.Check(p)
	}
	if err != nil {
		return usageError(stderr, cmd, err)
	}
	if err := p.CheckMachine(config.ReadMachine()); err != nil {
		return usageError(stderr, cmd, err)
	}
	if p.WasSet("workers-max") {
		fmt.Fprintf(stderr, "INFO  --workers-max %d changes nothing here: llmbench sends every request from one process, with no worker processes to cap.\n", p.WorkersMax)
	}
	// The tables fit the terminal; a file or a pipe gets them whole.
	width := ui.Width(stdout, os.Getenv)
	// Whatever reaches the console passes through the redactor.
	red := config.NewRedactor(p)
	stdout, stderr = red.Writer(stdout), red.Writer(stderr)

	ctx, abort, release := interrupts()
	defer release()
	var progress io.Writer
	if p.Output.UIType != "none" {
		progress = stderr
	}
	if !p.Output.Overwrite {
		moved, err := export.KeepPrevious(p.Output.ArtifactDir, p.Output.ExportPrefix, time.Now())
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
			return exitFailed
		}
		if moved != "" {
			fmt.Fprintf(stderr, "INFO  %s held a previous run's results: they are kept in %s (--overwrite replaces them instead).\n", p.Output.ArtifactDir, moved)
		}
	}
	runOpts := benchmark.Options{
		Profile: p, Mock: mock, Version: version, Progress: progress, Terminal: isTerminal(stderr), Log: stderr,
		Abort: abort, Redactor: red,
	}
	if p.Swept() || p.Search.Recipe != "" {
		return profileCapacity(ctx, args, runOpts, stdout, stderr, width)
	}
	if p.MultiRun.NumRuns > 1 {
		return profileRuns(ctx, runOpts, stdout, stderr)
	}
	res, err := benchmark.Run(ctx, runOpts)
	if res != nil && p.Output.UIType != "none" {
		printResults(stdout, res, width)
	}
	code := exitCode(stderr, res, err)
	if code == exitOK && res.Summary.Verdict != nil {
		code = verdictExit(stderr, p.Output.FailOnVerdict, "the run", *res.Summary.Verdict)
	}
	return code
}

// parseProfile reads the profile command line (args[2:]) into a finished
// profile and the built-in server's configuration. overrides are flag
// values set after the command line's, as the command line would set them:
// a sweep's cell or a search's probe is its command line with them.
func parseProfile(args []string, overrides [][2]string) (config.Profile, mockserver.Config, error) {
	fs := flag.NewFlagSet("llmbench profile", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors get one line of our own, not a usage dump
	fs.Usage = func() {}
	p := config.Default()
	flags := config.BindFlags(fs, &p)
	mock := mockserver.DefaultConfig()
	mock.BindFlags(fs, "mock-")
	flagArgs, _, err := withConfigFile(args[2:], os.LookupEnv) // --config FILE: configcmd.go
	if err != nil {
		return p, mock, err
	}
	if err := fs.Parse(config.ExpandListArgs(flagArgs, config.ListFlags)); err != nil {
		return p, mock, err
	}
	if fs.NArg() > 0 {
		return p, mock, fmt.Errorf("unexpected argument %q (every value belongs to a flag)", fs.Arg(0))
	}
	for _, o := range overrides {
		if err := flags.Set(o[0], o[1]); err != nil {
			return p, mock, fmt.Errorf("--%s %s: %w", o[0], o[1], err)
		}
	}
	if err := p.ApplyEnv(os.LookupEnv); err != nil {
		return p, mock, err
	}
	if name := firstMockFlag(fs); name != "" && !p.Endpoint.Mock {
		return p, mock, fmt.Errorf("--%s configures the built-in simulated server: add --mock to benchmark it", name)
	}
	p.CLICommand = config.CommandLine(config.RedactArgs(append([]string{"llmbench"}, args[1:]...)))
	return p, mock, p.Finish()
}

// wantsHelp reports whether the command line asks for -h or --help
// (before any "--").
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "--help", "-help":
			return true
		}
	}
	return false
}

// verdictExit is exitVerdict, with one line saying why, when the verdict
// is as bad as --fail-on-verdict (failOn) or worse; exitOK otherwise.
func verdictExit(stderr io.Writer, failOn, what string, v verdict.Verdict) int {
	if failOn == "" {
		return exitOK
	}
	limit, err := verdict.ParseLevel(failOn)
	if err != nil || v.Level < limit {
		return exitOK
	}
	codes := make([]string, len(v.Reasons))
	for i, r := range v.Reasons {
		codes[i] = r.Code
	}
	fmt.Fprintf(stderr, "llmbench profile: %s's verdict is %s (%s), and --fail-on-verdict is %s: exit code %d\n", what, v.Level, strings.Join(codes, ", "), failOn, exitVerdict)
	return exitVerdict
}

// helpAll reports whether the command line asks for --help-all (before
// any "--", after which nothing is a flag).
func helpAll(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "--help-all", "-help-all":
			return true
		}
	}
	return false
}

// firstMockFlag names a --mock-* flag given on the command line, if any.
func firstMockFlag(fs *flag.FlagSet) string {
	name := ""
	fs.Visit(func(f *flag.Flag) {
		if name == "" && strings.HasPrefix(f.Name, "mock-") {
			name = f.Name
		}
	})
	return name
}

// printResults writes the console tables, width columns wide at most (0: no
// limit).
func printResults(stdout io.Writer, res *benchmark.Result, width int) {
	title := fmt.Sprintf("llmbench %s metrics (AIPerf-compatible) for %s", version, strings.Join(res.ServerURLs, ", "))
	fmt.Fprint(stdout, ui.Table(res.Summary.Results, title, width))
	if tb := ui.TimeBreakdown(res.Summary.Results.TTFTBreakdown, width); tb != "" {
		fmt.Fprint(stdout, "\n"+tb)
	}
	if sm := ui.ServerMetrics(res.ServerMetrics); sm != "" {
		fmt.Fprint(stdout, "\n"+sm)
	}
	if res.ShowGPUTables {
		if gt := ui.GPUTelemetry(res.GPUTelemetry, width); gt != "" {
			fmt.Fprint(stdout, "\n"+gt)
		}
	}
	if pe := ui.PowerEfficiency(res.Summary.Results, width); pe != "" {
		fmt.Fprint(stdout, "\n"+pe)
	}
	if v := res.Summary.Verdict; v != nil {
		fmt.Fprint(stdout, "\n"+ui.Verdict(*v))
	}
	if n := res.Summary.Results.OSLMismatches; n > 0 {
		fmt.Fprintf(stdout, "\nWARNING  %d requests got an output length off the requested --osl (beyond min(5%%, 50 tokens)): "+
			"the server stopped early or ran long. To make it honour max_tokens, try --extra-inputs ignore_eos:true "+
			"or min_tokens:<osl>; for a tokenizer mismatch, --use-server-token-count.\n", n)
	}
	fmt.Fprintf(stdout, "\nArtifacts in %s:\n", res.ArtifactDir)
	for _, f := range res.Files {
		fmt.Fprintf(stdout, "  %s\n", filepath.Join(res.ArtifactDir, f))
	}
}

// exitCode maps a run's outcome to the documented exit codes: 130 when
// interrupted, 2 when its input was refused before the first request, 1
// when artifacts could not be written or no request succeeded, 0
// otherwise.
func exitCode(stderr io.Writer, res *benchmark.Result, err error) int {
	cancelled := res != nil && res.Summary.WasCancelled
	if err != nil {
		fmt.Fprintf(stderr, "llmbench profile: %v\n", err)
		if input := (*benchmark.InputError)(nil); errors.As(err, &input) {
			return exitUsage
		}
		if !cancelled {
			return exitFailed
		}
	}
	if cancelled {
		fmt.Fprintln(stderr, "llmbench profile: interrupted; the artifacts cover the requests made before it")
		return exitCancelled
	}
	rs := res.Summary.Results
	if rs.RequestCount == 0 {
		most := ""
		if len(rs.Errors) > 0 {
			e := rs.Errors[0].Error
			most = fmt.Sprintf(" (most often %s: %s)", e.Type, e.Message)
		}
		fmt.Fprintf(stderr, "llmbench profile: every request failed: %d errors%s; see error_summary in %s\n",
			rs.ErrorCount, most, filepath.Join(res.ArtifactDir, res.ProfileJSON))
		return exitFailed
	}
	return exitOK
}

func mockServer(args []string, stderr io.Writer) int {
	const cmd = "llmbench mock-server"
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	cfg := mockserver.DefaultConfig()
	cfg.BindFlags(fs, "")
	host := fs.String("host", "127.0.0.1", "address to listen on")
	port := fs.Int("port", 8000, "port to listen on")
	gpuPort := fs.Int("gpu-port", 9400, "with --gpus: port of the simulated DCGM exporter's /metrics (9400 is dcgm-exporter's, which llmbench and AIPerf probe by default)")
	tokName := fs.String("tokenizer", tokenizer.BuiltinName, "tokenizer the server counts and writes with (as llmbench profile's --tokenizer); match the client's")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stderr, "Usage: %s [--port 8000] [flags]\n\nFlags:\n", cmd)
			fs.SetOutput(stderr)
			fs.PrintDefaults()
			return exitOK
		}
		return usageError(stderr, cmd, err)
	}
	tok, err := tokenizer.Load(context.Background(), *tokName, hfhub.Options{})
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
		return exitFailed
	}
	cfg.Language = dataset.NewCorpus(tok)
	srv, err := mockserver.New(cfg)
	if err != nil {
		return usageError(stderr, cmd, err)
	}
	ctx, _, release := interrupts()
	defer release()
	url, stopServer, err := srv.Start(ctx, fmt.Sprintf("%s:%d", *host, *port))
	if err != nil {
		fmt.Fprintf(stderr, "llmbench mock-server: %v\n", err)
		return exitFailed
	}
	fmt.Fprintf(stderr, "llmbench mock-server: serving on %s (every endpoint type's path, /v1/models, /health, /metrics); Ctrl-C to stop\n", url)
	if cfg.GPUs > 0 {
		gpuURL, stopGPUs, err := srv.StartGPUs(ctx, fmt.Sprintf("%s:%d", *host, *gpuPort))
		if err != nil {
			stopServer()
			fmt.Fprintf(stderr, "llmbench mock-server: %v\n", err)
			return exitFailed
		}
		defer stopGPUs()
		fmt.Fprintf(stderr, "llmbench mock-server: %d simulated GPUs as a DCGM exporter at %s\n", cfg.GPUs, gpuURL)
	}
	<-ctx.Done()
	stopServer()
	return exitOK
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
