// Command tracereplay measures what preparing a trace replay costs: time
// and peak memory to read a Mooncake-shaped trace and build the prompts
// of the part replayed, the way a run does it (prompts built after the
// schedule's offsets drop rows) against building every row's prompt
// first (as before). The trace is generated with the shape of the public
// Mooncake conversation trace: 12,031 rows over an hour, prompts of about
// 12,000 tokens in 512-token hash blocks, most of them shared prefixes.
// Each mode runs in a process of its own, so its peak RSS is its own.
//
//	go run ./bench/tracereplay -window-ms 120000
//	go run ./bench/tracereplay -rows 23600 -window-ms 1e12   # the whole of a longer trace
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/llmbench/llmbench/internal/dataset"
	"github.com/llmbench/llmbench/internal/tokenizer"
)

func main() {
	mode := flag.String("mode", "", "child: eager or window (the parent runs both)")
	trace := flag.String("trace", "", "child: the trace file")
	rows := flag.Int("rows", 12031, "rows of the generated trace")
	window := flag.Float64("window-ms", 120000, "the part replayed: rows with a timestamp up to this (ms)")
	cpuProfile := flag.String("cpuprofile", "", "write the window mode's CPU profile to this file")
	flag.Parse()
	if *mode != "" {
		if *cpuProfile != "" && *mode == "window" {
			f, err := os.Create(*cpuProfile)
			if err == nil {
				err = pprof.StartCPUProfile(f)
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, "tracereplay:", err)
				os.Exit(1)
			}
			defer pprof.StopCPUProfile()
		}
		if err := child(*mode, *trace, *window); err != nil {
			fmt.Fprintln(os.Stderr, "tracereplay:", err)
			os.Exit(1)
		}
		return
	}
	dir, err := os.MkdirTemp("", "tracereplay")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "trace.jsonl")
	if err := generate(path, *rows); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, m := range []string{"window", "eager"} {
		cmd := exec.Command(os.Args[0], "-mode", m, "-trace", path, "-window-ms", fmt.Sprint(*window), "-cpuprofile", *cpuProfile)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, m, err)
			os.Exit(1)
		}
	}
}

// generate writes a Mooncake-shaped trace: each row's prompt continues
// one of 300 shared prefixes (conversations) with blocks of its own.
func generate(path string, rows int) error {
	rng := rand.New(rand.NewPCG(1, 2))
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	next := int64(0)
	prefixes := make([][]int64, 300)
	for i := range prefixes {
		n := 4 + rng.IntN(20)
		for range n {
			prefixes[i] = append(prefixes[i], next)
			next++
		}
	}
	for i := range rows {
		ts := int64(i) * 3_600_000 / int64(rows)
		ids := append([]int64(nil), prefixes[rng.IntN(len(prefixes))]...)
		for range 1 + rng.IntN(6) {
			ids = append(ids, next)
			next++
		}
		length := (len(ids)-1)*512 + 1 + rng.IntN(511)
		parts := make([]string, len(ids))
		for k, id := range ids {
			parts[k] = fmt.Sprint(id)
		}
		fmt.Fprintf(w, `{"timestamp": %d, "input_length": %d, "output_length": %d, "hash_ids": [%s]}`+"\n", ts, length, 50+rng.IntN(500), strings.Join(parts, ", "))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

func child(mode, trace string, windowMs float64) error {
	tok, err := tokenizer.O200k()
	if err != nil {
		return err
	}
	corpus := dataset.NewCorpus(tok)
	start := time.Now()
	convs, err := dataset.ReadFile(trace, dataset.FileOptions{Type: "mooncake_trace", Corpus: corpus, BlockSize: 512, Seed: 1, Defer: mode == "window"})
	if err != nil {
		return err
	}
	kept := convs[:0]
	for _, c := range convs {
		if c.Turns[0].TimestampMs <= windowMs {
			kept = append(kept, c)
		}
	}
	if err := dataset.BuildPrompts(kept); err != nil {
		return err
	}
	tokens := 0
	for _, c := range kept {
		for _, t := range c.Turns {
			tokens += t.InputTokens
		}
	}
	fmt.Printf("%-7s %5d of %5d rows kept (%d prompt tokens): %6.2f s, peak RSS %4.0f MB\n",
		mode, len(kept), len(convs), tokens, time.Since(start).Seconds(), peakRSS()/1e6)
	return nil
}

// peakRSS is VmHWM, the process' peak resident set, in bytes.
func peakRSS() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb float64
			fmt.Sscanf(strings.TrimSpace(rest), "%g", &kb)
			return kb * 1024
		}
	}
	return 0
}
