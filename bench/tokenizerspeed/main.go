// Command tokenizerspeed measures llmbench's token counting in MB/s on one
// core: a text cut into chunks of about -chunk bytes at line ends (the size
// of prompts and answers), each counted alone, for at least -seconds after
// a warm-up pass. bench/tokenizer_speed.sh runs it beside the reference
// library.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/llmbench/llmbench/internal/hfhub"
	"github.com/llmbench/llmbench/internal/tokenizer"
)

func main() {
	spec := flag.String("tokenizer", "builtin", "tokenizer: builtin or a tokenizer.json")
	textFile := flag.String("text", "", "text file")
	chunk := flag.Int("chunk", 4096, "bytes per chunk")
	seconds := flag.Float64("seconds", 2, "least measuring time")
	flag.Parse()
	runtime.GOMAXPROCS(1)
	if err := run(*spec, *textFile, *chunk, *seconds); err != nil {
		fmt.Fprintln(os.Stderr, "tokenizerspeed:", err)
		os.Exit(1)
	}
}

func run(spec, textFile string, chunk int, seconds float64) error {
	data, err := os.ReadFile(textFile)
	if err != nil {
		return err
	}
	tok, err := tokenizer.Load(context.Background(), spec, hfhub.Options{})
	if err != nil {
		return err
	}
	chunks := cut(string(data), chunk)
	tokens := 0
	for _, c := range chunks { // warm-up
		tokens += tok.Count(c)
	}
	var bytes int64
	start := time.Now()
	for time.Since(start).Seconds() < seconds {
		for _, c := range chunks {
			tok.Count(c)
			bytes += int64(len(c))
		}
	}
	elapsed := time.Since(start).Seconds()
	fmt.Printf("%.2f MB/s (%d tokens in %d bytes)\n", float64(bytes)/elapsed/1e6, tokens, len(data))
	return nil
}

// cut splits text into chunks of about size bytes, at line ends.
func cut(text string, size int) []string {
	var chunks []string
	for len(text) > 0 {
		end := min(size, len(text))
		for end < len(text) && text[end-1] != '\n' {
			end++
		}
		chunks = append(chunks, text[:end])
		text = text[end:]
	}
	return chunks
}
