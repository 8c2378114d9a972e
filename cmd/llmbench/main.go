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
	"syscall"

	"github.com/llmbench/llmbench/internal/benchmark"
	"github.com/llmbench/llmbench/internal/config"
	"github.com/llmbench/llmbench/internal/mockserver"
	"github.com/llmbench/llmbench/internal/ui"
)

const version = "0.1.0"

// Exit codes.
const (
	exitOK        = 0
	exitFailed    = 1
	exitUsage     = 2
	exitCancelled = 130
)

func main() {
	os.Exit(run(os.Args, os.Stdout, os.Stderr))
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
  llmbench mock-server [--port 8000] [flags]                      serve the simulated LLM server
  llmbench version

Without --url, profile benchmarks the built-in simulated server.
Run 'llmbench profile -h' or 'llmbench mock-server -h' for their flags.
`)
}

// signalContext is cancelled by the first Ctrl-C or SIGTERM; a second one
// kills the process the default way.
func signalContext() (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	return ctx, stop
}

func profile(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("llmbench profile", flag.ContinueOnError)
	fs.SetOutput(stderr)
	p := config.Default()
	config.BindFlags(fs, &p)
	mock := mockserver.DefaultConfig()
	mock.BindFlags(fs, "mock-")
	if err := fs.Parse(config.ExpandListArgs(args[2:], config.ListFlags)); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "llmbench profile: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if err := p.ApplyEnv(os.LookupEnv); err != nil {
		fmt.Fprintf(stderr, "llmbench profile: %v\n", err)
		return exitUsage
	}
	p.CLICommand = config.CommandLine(config.RedactArgs(append([]string{"llmbench"}, args[1:]...)))
	if err := p.Finish(); err != nil {
		fmt.Fprintf(stderr, "llmbench profile: %v\n", err)
		return exitUsage
	}

	ctx, stop := signalContext()
	defer stop()
	var progress io.Writer
	if p.Output.UIType != "none" {
		progress = stderr
	}
	res, err := benchmark.Run(ctx, benchmark.Options{
		Profile: p, Mock: mock, Version: version, Progress: progress, Terminal: isTerminal(stderr), Log: stderr,
	})
	if res != nil && p.Output.UIType != "none" {
		title := fmt.Sprintf("llmbench %s metrics (AIPerf-compatible) for %s", version, res.ServerURL)
		fmt.Fprint(stdout, ui.Table(res.Summary.Results, title))
		if sm := ui.ServerMetrics(res.ServerMetrics); sm != "" {
			fmt.Fprint(stdout, "\n"+sm)
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
	if err != nil {
		fmt.Fprintf(stderr, "llmbench profile: %v\n", err)
		return exitFailed
	}
	if res.Summary.WasCancelled {
		fmt.Fprintln(stderr, "llmbench profile: cancelled; results cover the requests made before it")
		return exitCancelled
	}
	return exitOK
}

func mockServer(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("llmbench mock-server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := mockserver.DefaultConfig()
	cfg.BindFlags(fs, "")
	host := fs.String("host", "127.0.0.1", "address to listen on")
	port := fs.Int("port", 8000, "port to listen on")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	srv, err := mockserver.New(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "llmbench mock-server: %v\n", err)
		return exitUsage
	}
	ctx, stop := signalContext()
	defer stop()
	url, stopServer, err := srv.Start(ctx, fmt.Sprintf("%s:%d", *host, *port))
	if err != nil {
		fmt.Fprintf(stderr, "llmbench mock-server: %v\n", err)
		return exitFailed
	}
	fmt.Fprintf(stderr, "llmbench mock-server: serving on %s (chat, completions, /v1/models, /health, /metrics); Ctrl-C to stop\n", url)
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
