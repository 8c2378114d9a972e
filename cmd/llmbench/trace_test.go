package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/internal/dataset"
	"github.com/llmbench/llmbench/internal/hfhub"
	"github.com/llmbench/llmbench/internal/tokenizer"
	"github.com/llmbench/llmbench/internal/tracesynth"
)

// analyze-trace on the six-row tree of internal/tracesynth (hit rate 25 %,
// worked by hand there) prints it and writes the same report JSON.
func TestAnalyzeTraceCommand(t *testing.T) {
	tree := filepath.Join("..", "..", "internal", "tracesynth", "testdata", "tree.jsonl")
	out := filepath.Join(t.TempDir(), "sub", "report.json")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"llmbench", "analyze-trace", "--input-file", tree, "--block-size", "4", "--output-file", out}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, want := range []string{"Cache hit rate:      25.00%", "Prefix reuse ratio:  50.00%", "Input Length  8.17     2.61  4.00  6.50    8.50  9.75  12.00"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
		}
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(filepath.Join("..", "..", "internal", "tracesynth", "testdata", "tree_analysis.json"))
	if !bytes.Equal(got, want) {
		t.Errorf("report.json differs from tracesynth's golden:\n%s", got)
	}

	// A text row has no input_length: counted as 0, as AIPerf does, and said.
	stdout.Reset()
	stderr.Reset()
	example := filepath.Join("..", "..", "examples", "mooncake_trace.jsonl")
	if code := run([]string{"llmbench", "analyze-trace", "--input-file", example}, &stdout, &stderr); code != exitOK ||
		!strings.Contains(stderr.String(), "1 of 6 rows have no input_length or output_length") {
		t.Errorf("exit %d, stderr %q; want the text row named in a warning", code, stderr.String())
	}
	stdout.Reset()
	stderr.Reset()
	if run([]string{"llmbench", "analyze-trace", "--input-file", tree, "--block-size", "4"}, &stdout, &stderr); stderr.Len() != 0 {
		t.Errorf("a trace with every length warned: %q", stderr.String())
	}

	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	os.WriteFile(bad, []byte("{\"input_length\": 3}\n{\"input_length\": \"x\"}\n"), 0o644)
	for _, args := range [][]string{{}, {"--input-file", bad}, {"--input-file", tree, "--block-size", "0"}, {"--input-file", tree, "extra"}} {
		stdout.Reset()
		stderr.Reset()
		code := run(append([]string{"llmbench", "analyze-trace"}, args...), &stdout, &stderr)
		if lines := strings.Split(strings.TrimSpace(stderr.String()), "\n"); code != exitUsage || len(lines) != 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line", args, code, stderr.String())
		}
	}
}

// smallAgentic is a config that makes short sessions: 512-token L1, a
// small L2, 300 new tokens a turn, outputs ~50, a 4000-token context.
const smallAgentic = `{"new_tokens_per_turn": {"mean": 400, "median": 300, "max": 800, "bias": 1},
 "generation_length": {"mean": 60, "median": 50, "max": 120},
 "inter_turn_delay": {"agentic_fraction": 0.7, "agentic_delay": {"mean": 3, "median": 2, "max": 10}, "human_delay": {"mean": 20, "median": 10, "max": 50}, "max": null},
 "reset": {"base_probability": 0.1, "context_scaling": 1.5},
 "max_prompt_tokens": 4000, "block_size": 64,
 "cache": {"layer1_tokens": 512, "layer1_5_tokens": 128, "layer2": {"mean": 300, "median": 200, "max": 900}, "layer1_5_groups": {"num_groups": 3, "zipf_alpha": 0.6}}}`

func synthesizeInto(t *testing.T, args ...string) string {
	t.Helper()
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := run(append([]string{"llmbench", "synthesize", "agentic-code", "--output", out}, args...), &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	m, _ := filepath.Glob(filepath.Join(out, "*", "dataset.jsonl"))
	if len(m) != 1 {
		t.Fatalf("run directory: %v", m)
	}
	return m[0]
}

// synthesize writes a trace llmbench's own mooncake reader takes, the
// same bytes for the same seed, within --max-isl and --max-osl.
func TestSynthesizeAgenticCode(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "small.json")
	os.WriteFile(cfg, []byte(smallAgentic), 0o644)
	a := synthesizeInto(t, "--config", cfg, "--num-sessions", "30", "--seed", "7", "--max-osl", "100")
	b := synthesizeInto(t, "--config", cfg, "--num-sessions", "30", "--seed", "7", "--max-osl", "100")
	da, _ := os.ReadFile(a)
	db, _ := os.ReadFile(b)
	if !bytes.Equal(da, db) || !strings.HasPrefix(filepath.Base(filepath.Dir(a)), "small_30s_seed7_") {
		t.Fatalf("same seed, different datasets (or dir %s)", filepath.Dir(a))
	}
	c := synthesizeInto(t, "--config", cfg, "--num-sessions", "30", "--seed", "8", "--max-osl", "100")
	if dc, _ := os.ReadFile(c); bytes.Equal(da, dc) {
		t.Error("seeds 7 and 8 wrote the same dataset")
	}

	rows, err := tracesynth.ReadRows(bytes.NewReader(da), a)
	if err != nil {
		t.Fatal(err)
	}
	// Each session's context: its turns' new tokens plus the outputs
	// before, below max_prompt_tokens; outputs at most --max-osl; every
	// session opens on the shared L1 blocks 0-7.
	ctx := map[string]int{}
	lastOut := map[string]int{}
	for i, r := range rows {
		if *r.OutputLength > 100 || *r.OutputLength < 1 {
			t.Fatalf("row %d: output_length %d", i, *r.OutputLength)
		}
		if len(r.HashIDs) != (*r.InputLength+63)/64 {
			t.Fatalf("row %d: %d hash ids for %d tokens", i, len(r.HashIDs), *r.InputLength)
		}
		if _, ok := ctx[r.Session]; !ok && (r.Timestamp == nil || r.HashIDs[0] != 0 || r.HashIDs[7] != 7) {
			t.Fatalf("row %d opens a session without a timestamp and L1 blocks: %v", i, r.HashIDs[:8])
		}
		ctx[r.Session] += *r.InputLength + lastOut[r.Session]
		lastOut[r.Session] = *r.OutputLength
		if ctx[r.Session] >= 4000 {
			t.Fatalf("row %d: context %d reaches max_prompt_tokens", i, ctx[r.Session])
		}
	}
	if len(ctx) != 30 || len(rows) <= 30 {
		t.Fatalf("%d sessions in %d rows, want 30 multi-turn sessions", len(ctx), len(rows))
	}

	tok, err := tokenizer.Load(context.Background(), tokenizer.BuiltinName, hfhub.Options{})
	if err != nil {
		t.Fatal(err)
	}
	convs, err := dataset.ReadFile(a, dataset.FileOptions{Type: "mooncake_trace", Corpus: dataset.NewCorpus(tok), BlockSize: 64, Seed: 1, Defer: true})
	if err != nil {
		t.Fatalf("llmbench's mooncake reader refuses the synthesized trace: %v", err)
	}
	turns := 0
	for _, cv := range convs {
		turns += len(cv.Turns)
	}
	if len(convs) != 30 || turns != len(rows) || convs[0].Turns[0].InputTokens != *rows[0].InputLength {
		t.Errorf("read back %d conversations, %d turns; want 30 and %d", len(convs), turns, len(rows))
	}

	var stdout, stderr bytes.Buffer
	for _, args := range [][]string{{}, {"--target", "mooncake"}, {"agentic-code", "--num-sessions", "0"}, {"agentic-code", "--max-isl", "1"}, {"agentic-code", "--config", filepath.Join(t.TempDir(), "none.json")}} {
		stderr.Reset()
		code := run(append([]string{"llmbench", "synthesize", "--output", t.TempDir()}, args...), &stdout, &stderr)
		if lines := strings.Split(strings.TrimSpace(stderr.String()), "\n"); code != exitUsage || len(lines) != 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line", args, code, stderr.String())
		}
	}
}

// A trace replayed with --synthesis-speedup-ratio 2 against the simulated
// server: every row sent, each credit issued at half its timestamp.
func TestProfileSynthesisSpeedup(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "trace.jsonl")
	var b strings.Builder
	ts := []float64{0, 150, 300, 400, 700, 1000}
	for i, at := range ts {
		// Rows 0-2 share block 1, rows 3-5 block 7 (a synthesized-looking tree).
		root := 1
		if i >= 3 {
			root = 7
		}
		fmt.Fprintf(&b, "{\"timestamp\": %g, \"input_length\": 100, \"output_length\": 4, \"hash_ids\": [%d, %d]}\n", at, root, 100+i)
	}
	os.WriteFile(trace, []byte(b.String()), 0o644)
	art := filepath.Join(dir, "art")
	var stdout, stderr bytes.Buffer
	code := run([]string{"llmbench", "profile", "-m", "m", "--mock", "--mock-ttft-ms", "5", "--mock-itl-ms", "1", "--no-server-metrics",
		"--input-file", trace, "--custom-dataset-type", "mooncake_trace", "--prompt-input-tokens-block-size", "64",
		"--synthesis-speedup-ratio", "2", "--artifact-dir", art, "--ui-type", "none"}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	_, lines := readArtifacts(t, art)
	if len(lines) != len(ts) {
		t.Fatalf("%d records, want %d", len(lines), len(ts))
	}
	var credits []float64
	for _, l := range lines {
		if l.Metadata.CreditNs == nil {
			t.Fatal("a record without credit_issued_ns")
		}
		credits = append(credits, float64(*l.Metadata.CreditNs))
	}
	sort.Float64s(credits)
	for i, c := range credits {
		got, want := (c-credits[0])/1e6, ts[i]/2
		if math.Abs(got-want) > 50 {
			t.Errorf("credit %d at %.1f ms after the first, want %.0f ± 50", i, got, want)
		}
	}

	// Without a trace, a synthesis option is refused in one line.
	stderr.Reset()
	code = run([]string{"llmbench", "profile", "-m", "m", "--mock", "--synthesis-speedup-ratio", "2", "--artifact-dir", t.TempDir()}, &stdout, &stderr)
	if lines := strings.Split(strings.TrimSpace(stderr.String()), "\n"); code != exitUsage || len(lines) != 1 || !strings.Contains(lines[0], "--synthesis-speedup-ratio transforms a trace file") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}
