// Command tokenizermemory measures what counting one pathological response
// costs: a text of -mb megabytes that pre-tokenizes to one enormous word
// (or to millions of short ones), counted once with -tokenizer. It prints
// the count, the wall and CPU time of the Count call, the bytes it
// allocated, and the peak resident memory during the call (VmHWM, reset
// just before it) beside the resident memory before it, so the cost of
// loading the tokenizer and building the input is left out.
//
//	go run ./bench/tokenizermemory -tokenizer builtin -shape a -mb 50
//
// bench/tokenizer_pathological.sh runs it over the shapes, sizes and
// tokenizers of issue 30 and reports medians.
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/llmbench/llmbench/internal/hfhub"
	"github.com/llmbench/llmbench/internal/tokenizer"
)

func main() {
	spec := flag.String("tokenizer", tokenizer.BuiltinName, "builtin, or a tokenizer.json path")
	shape := flag.String("shape", "a", "a (one letter repeated), letters (random a-z), cjk (one CJK character repeated), digits (random 0-9), prose (English with spaces), repeat:TEXT (TEXT over and over)")
	mb := flag.Float64("mb", 50, "size of the text in MB (10^6 bytes)")
	flag.Parse()
	if err := run(*spec, *shape, int(*mb*1e6)); err != nil {
		fmt.Fprintln(os.Stderr, "tokenizermemory:", err)
		os.Exit(1)
	}
}

func run(spec, shape string, size int) error {
	tok, err := tokenizer.Load(context.Background(), spec, hfhub.Options{})
	if err != nil {
		return err
	}
	text, err := Text(shape, size)
	if err != nil {
		return err
	}
	runtime.GC()
	debug.FreeOSMemory()
	// Writing 5 to clear_refs resets VmHWM to the current RSS (Linux 4.0+).
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		return fmt.Errorf("reset peak RSS: %w", err)
	}
	before := status("VmRSS")
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	cpu0 := cpuTime()
	start := time.Now()
	n := tok.Count(text)
	wall := time.Since(start)
	cpu := cpuTime() - cpu0
	runtime.ReadMemStats(&ms1)
	peak := status("VmHWM")
	fmt.Printf("%s %s %.0fMB: %d tokens, wall %.2fs, cpu %.2fs, alloc %.0fMB, peak RSS %.0fMB (%.0fMB before)\n",
		spec, shape, float64(size)/1e6, n, wall.Seconds(), cpu.Seconds(),
		float64(ms1.TotalAlloc-ms0.TotalAlloc)/1e6, peak/1e3, before/1e3)
	return nil
}

// Text is size bytes of shape, the same for a given shape and size.
func Text(shape string, size int) (string, error) {
	rng := rand.New(rand.NewPCG(30, uint64(size)))
	var b strings.Builder
	b.Grow(size)
	switch shape {
	case "a":
		return strings.Repeat("a", size), nil
	case "cjk":
		return strings.Repeat("漢", size/len("漢")), nil
	case "letters":
		for range size {
			b.WriteByte(byte('a' + rng.IntN(26)))
		}
	case "digits":
		for range size {
			b.WriteByte(byte('0' + rng.IntN(10)))
		}
	case "prose":
		words := strings.Fields("the whale was seen by the captain at dawn and all hands ran to the boats while Ishmael wrote it down, slowly.")
		for b.Len() < size {
			b.WriteString(words[rng.IntN(len(words))])
			b.WriteByte(' ')
		}
		return b.String()[:size], nil
	default:
		if unit, ok := strings.CutPrefix(shape, "repeat:"); ok && unit != "" {
			return strings.Repeat(unit, size/len(unit)), nil
		}
		return "", fmt.Errorf("unknown shape %q", shape)
	}
	return b.String(), nil
}

// status reads a size in kB from /proc/self/status.
func status(field string) float64 {
	data, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			var kb float64
			fmt.Sscanf(strings.TrimSpace(rest), "%f", &kb)
			return kb
		}
	}
	return 0
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
