package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/llmbench/llmbench/internal/pngchart"
	"github.com/llmbench/llmbench/internal/report"
)

const plotUsage = `Usage: llmbench plot DIR... [flags]

Draws report.html (one self-contained page: opens offline, no network) from
artifact folders written by llmbench or by AIPerf:
  one run's folder              its report
  a --num-profile-runs folder   each metric's runs with the confidence interval
  a sweep or search folder      throughput against latency with the Pareto
                                frontier, latency against load, the probes
  several folders, or a folder  the runs side by side (AIPerf's multi-run
  holding several runs          plots)

Flags:
  --output DIR   where report.html (and the PNGs) go [default: DIR/plots, of
                 the first DIR]
  --png          also write each chart as a PNG (1600x800), named as AIPerf
                 names its plots where it draws the same one
`

// plotCommand is `llmbench plot DIR...`.
func plotCommand(args []string, stdout, stderr io.Writer) int {
	const cmd = "llmbench plot"
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	output := fs.String("output", "", "")
	png := fs.Bool("png", false, "")
	dirs, err := parseInterleaved(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, plotUsage)
		return exitOK
	}
	if err != nil {
		return plotUsageError(stderr, flagErrorText(err))
	}
	if len(dirs) == 0 {
		return plotUsageError(stderr, "give one or more artifact folders")
	}
	page, err := report.Build(dirs, "llmbench "+version)
	if err != nil {
		return plotUsageError(stderr, err.Error())
	}
	out := *output
	if out == "" {
		out = filepath.Join(dirs[0], "plots")
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
		return exitFailed
	}
	path, err := report.Write(out, page)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", cmd, err)
		return exitFailed
	}
	fmt.Fprintf(stdout, "%s report: %s\n", page.Kind, path)
	if *png {
		for _, c := range page.Charts() {
			p, err := pngchart.WriteFile(out, c, 0, 0)
			if err != nil {
				fmt.Fprintf(stderr, "%s: chart %s: %v\n", cmd, c.ID, err)
				return exitFailed
			}
			fmt.Fprintf(stdout, "  %s\n", p)
		}
	}
	return exitOK
}

func plotUsageError(stderr io.Writer, msg string) int {
	fmt.Fprintf(stderr, "llmbench plot: %s. Run 'llmbench plot --help' for the flags.\n", strings.TrimSuffix(msg, "."))
	return exitUsage
}

// parseInterleaved parses flags that may come before, between or after
// the positional arguments, and returns those.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for rest := args; ; {
		if err := fs.Parse(rest); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return positional, nil
		}
		positional, rest = append(positional, fs.Arg(0)), fs.Args()[1:]
	}
}
