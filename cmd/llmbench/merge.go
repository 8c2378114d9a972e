package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/llmbench/llmbench/internal/merge"
	"github.com/llmbench/llmbench/internal/ui"
)

const mergeUsage = `Usage: llmbench merge DIR... --output DIR [--allow-partial]

Merges the folders of a sharded run (profile --shard-count N) into one
run's folder. Each DIR is a shard's folder (shard_NNNN), or the run's
folder holding them. The shards must be one plan (the same command line,
seed and shard count), every shard present; the merged exports are
recomputed from every shard's records as one process computes them, the
per-request file joins theirs, and server metrics come from the shard
that scraped them.

Flags:
  --output DIR       where the merged run goes (required; not a shard's folder)
  --allow-partial    merge what is there when shards are missing or did not
                     finish, and say which
`

// mergeCommand is `llmbench merge DIR... --output DIR`.
func mergeCommand(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("llmbench merge", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	output := fs.String("output", "", "")
	partial := fs.Bool("allow-partial", false, "")
	dirs, err := parseInterleaved(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, mergeUsage)
		return exitOK
	}
	if err == nil && *output == "" {
		err = errors.New("--output DIR is required: where the merged run goes")
	}
	if err == nil && len(dirs) == 0 {
		err = errors.New("name the shards' folders, or the run's folder holding shard_NNNN")
	}
	if err != nil {
		fmt.Fprintf(stderr, "llmbench merge: %s\nRun 'llmbench merge --help' for its flags.\n", flagErrorText(err))
		return exitUsage
	}
	out, err := merge.Merge(merge.Options{Dirs: dirs, Output: *output, AllowPartial: *partial, Version: version, Log: stderr})
	if err != nil {
		fmt.Fprintf(stderr, "llmbench %v\n", err)
		if out == nil {
			return exitUsage // refused before anything was written
		}
		return exitFailed
	}
	fmt.Fprintf(stdout, "Merged %d shards", len(out.Shards))
	if out.OffsetBoundNs >= 0 {
		fmt.Fprintf(stdout, " (their clocks within %.3f ms of each other)", float64(out.OffsetBoundNs)/1e6)
	}
	fmt.Fprintln(stdout)
	for _, s := range out.Shards {
		fmt.Fprintf(stdout, "  shard %d on %s: %d records", s.Index, s.Host, s.Records)
		if s.StartAt != "" { // without --start-at there is nothing to be late for
			fmt.Fprintf(stdout, ", started %.3f ms after --start-at", float64(s.LateNs)/1e6)
		}
		fmt.Fprintln(stdout)
	}
	fmt.Fprintln(stdout)
	printResults(stdout, out.Result, ui.Width(stdout, os.Getenv))
	if out.Result.Summary.Results.RequestCount == 0 {
		return exitFailed
	}
	return exitOK
}
