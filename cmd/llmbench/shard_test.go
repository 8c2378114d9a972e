package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmbench/llmbench/internal/dataset"
	"github.com/llmbench/llmbench/internal/hfhub"
	"github.com/llmbench/llmbench/internal/mockserver"
	"github.com/llmbench/llmbench/internal/stats"
	"github.com/llmbench/llmbench/internal/tokenizer"
)

// shardLine is what the sharding test reads of a profile_export.jsonl line.
type shardLine struct {
	Metadata struct {
		SessionNum     int    `json:"session_num"`
		ConversationID string `json:"conversation_id"`
		TurnIndex      int    `json:"turn_index"`
		Phase          string `json:"benchmark_phase"`
	} `json:"metadata"`
	Metrics map[string]struct {
		Value json.RawMessage `json:"value"`
	} `json:"metrics"`
}

func readShardLines(t *testing.T, path string) []shardLine {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []shardLine
	for _, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var sl shardLine
		if err := json.Unmarshal(l, &sl); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, sl)
	}
	return out
}

// requestKey is what makes a request the same request in two runs: which
// conversation and turn it sent, and the lengths it had.
func requestKey(t *testing.T, l shardLine) string {
	t.Helper()
	return fmt.Sprintf("%s/%d isl=%s osl=%s", l.Metadata.ConversationID, l.Metadata.TurnIndex,
		l.Metrics["input_sequence_length"].Value, l.Metrics["output_sequence_length"].Value)
}

// TestShardsMergeLikeOneProcess is issue 27's done-means: three shard
// processes (here, three runs side by side) and a merge against one
// server, beside one process of the same seed and total load, for
// concurrency, a Poisson rate, a trace on its fixed schedule and
// multi-turn sessions cut by a request budget. The shards send the same
// multiset of requests (the same conversations and turns, the same ISL and
// OSL; prompts byte for byte, inputs.json being one); the merged ISL and
// OSL statistics equal the one process's; and every merged percentile is
// the percentile of the union of the shards' own JSONL records, exactly.
func TestShardsMergeLikeOneProcess(t *testing.T) {
	quickRuns(t)
	tok, err := tokenizer.Load(context.Background(), tokenizer.BuiltinName, hfhub.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := mockserver.DefaultConfig()
	cfg.TTFT, cfg.ITL, cfg.Language = 5*time.Millisecond, time.Millisecond, dataset.NewCorpus(tok)
	_, base := serveMock(t, cfg)

	trace := filepath.Join(t.TempDir(), "trace.jsonl")
	var tb strings.Builder
	for i := range 24 {
		fmt.Fprintf(&tb, `{"timestamp": %d, "input_length": %d, "output_length": %d, "hash_ids": [%d, %d]}`+"\n", i*25, 200+i*7, 8+i%5, i%4, 10+i)
	}
	if err := os.WriteFile(trace, []byte(tb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"concurrency", []string{"--concurrency", "7", "--request-count", "45", "--warmup-request-count", "4"}},
		{"poisson", []string{"--request-rate", "150", "--request-count", "45"}},
		{"trace", []string{"--input-file", trace, "--custom-dataset-type", "mooncake_trace", "--fixed-schedule", "--isl-block-size", "100"}},
		{"multi-turn", []string{"--concurrency", "6", "--request-count", "40", "--num-dataset-entries", "9",
			"--conversation-turn-mean", "3", "--conversation-turn-stddev", "1", "--conversation-turn-delay-mean", "5"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			common := append([]string{"llmbench", "profile", "-m", "mock-model", "--url", base, "--endpoint-type", "chat", "--streaming",
				"--random-seed", "11", "--ui", "none", "--output-tokens-mean", "12", "--slice-duration", "0.2"}, c.args...)
			var stdout, stderr bytes.Buffer
			if code := run(append(slices.Clone(common), "--artifact-dir", filepath.Join(dir, "one")), &stdout, &stderr); code != exitOK {
				t.Fatalf("one process: exit %d\n%s", code, stderr.String())
			}
			startAt := time.Now().Add(700 * time.Millisecond).Format(time.RFC3339Nano)
			var wg sync.WaitGroup
			codes, logs := make([]int, 3), make([]bytes.Buffer, 3)
			for i := range 3 {
				wg.Go(func() {
					var out bytes.Buffer
					codes[i] = run(append(slices.Clone(common), "--artifact-dir", filepath.Join(dir, "sharded"),
						"--shard-count", "3", "--shard-index", fmt.Sprint(i), "--start-at", startAt), &out, &logs[i])
				})
			}
			wg.Wait()
			for i, code := range codes {
				if code != exitOK {
					t.Fatalf("shard %d: exit %d\n%s", i, code, logs[i].String())
				}
			}
			stdout.Reset()
			stderr.Reset()
			merged := filepath.Join(dir, "merged")
			if code := run([]string{"llmbench", "merge", filepath.Join(dir, "sharded"), "--output", merged}, &stdout, &stderr); code != exitOK {
				t.Fatalf("merge: exit %d\n%s%s", code, stdout.String(), stderr.String())
			}
			if !strings.Contains(stdout.String(), "Merged 3 shards") {
				t.Errorf("merge said:\n%s", stdout.String())
			}
			checkMerged(t, filepath.Join(dir, "one"), filepath.Join(dir, "sharded"), merged)
		})
	}
}

func checkMerged(t *testing.T, one, sharded, merged string) {
	t.Helper()
	profiling := func(ls []shardLine) []shardLine {
		return slices.DeleteFunc(ls, func(l shardLine) bool { return l.Metadata.Phase != "profiling" })
	}
	oneLines := profiling(readShardLines(t, filepath.Join(one, "profile_export.jsonl")))
	var union []shardLine
	seen := map[int]bool{}
	for i := range 3 {
		ls := readShardLines(t, filepath.Join(sharded, fmt.Sprintf("shard_%04d", i), "profile_export.jsonl"))
		for _, l := range ls {
			if seen[l.Metadata.SessionNum] {
				t.Fatalf("session_num %d on two shards", l.Metadata.SessionNum)
			}
			seen[l.Metadata.SessionNum] = true
		}
		union = append(union, profiling(ls)...)
	}
	keys := func(ls []shardLine) []string {
		out := make([]string, len(ls))
		for i, l := range ls {
			out[i] = requestKey(t, l)
		}
		slices.Sort(out)
		return out
	}
	if a, b := keys(oneLines), keys(union); !slices.Equal(a, b) {
		t.Fatalf("the shards sent other requests than one process:\none:    %v\nshards: %v", a, b)
	}
	// Each shard bounded the server's clock against its own from the
	// Date headers; the server runs on this machine's clock, so the
	// offset is 0 and must lie inside every bound.
	for i := range 3 {
		var exp struct {
			RunInfo struct {
				Shard struct {
					Index  int `json:"index"`
					Offset *struct {
						Low     int64 `json:"low_ns"`
						High    int64 `json:"high_ns"`
						Samples int   `json:"samples"`
					} `json:"server_clock_offset"`
				} `json:"shard"`
			} `json:"run_info"`
		}
		readJSONFile(t, filepath.Join(sharded, fmt.Sprintf("shard_%04d", i), "profile_export_aiperf.json"), &exp)
		sh := exp.RunInfo.Shard
		if o := sh.Offset; sh.Index != i || o == nil || o.Samples == 0 || o.Low > 0 || o.High < 0 || o.High-o.Low > 1e9 {
			t.Errorf("shard %d: run_info.shard %+v, offset %+v: want a bound of the server's clock holding 0, under 1 s wide", i, sh, sh.Offset)
		}
	}
	var mergedInfo struct {
		RunInfo struct {
			Shards []struct {
				Index int `json:"index"`
			} `json:"shards"`
		} `json:"run_info"`
	}
	readJSONFile(t, filepath.Join(merged, "profile_export_aiperf.json"), &mergedInfo)
	if n := len(mergedInfo.RunInfo.Shards); n != 3 {
		t.Errorf("merged run_info lists %d shards", n)
	}
	mergedLines := profiling(readShardLines(t, filepath.Join(merged, "profile_export.jsonl")))
	if a, b := keys(mergedLines), keys(union); !slices.Equal(a, b) {
		t.Fatalf("merged profile_export.jsonl is not the shards' lines")
	}
	for _, name := range []string{"inputs.json"} {
		a, _ := os.ReadFile(filepath.Join(one, name))
		b, _ := os.ReadFile(filepath.Join(merged, name))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s differs between one process and the merge (%d and %d bytes)", name, len(a), len(b))
		}
	}

	var oneExp, mergedExp map[string]json.RawMessage
	readJSONFile(t, filepath.Join(one, "profile_export_aiperf.json"), &oneExp)
	readJSONFile(t, filepath.Join(merged, "profile_export_aiperf.json"), &mergedExp)
	stat := func(exp map[string]json.RawMessage, tag string) map[string]float64 {
		var m map[string]any
		_ = json.Unmarshal(exp[tag], &m)
		out := map[string]float64{}
		for k, v := range m {
			if f, ok := v.(float64); ok {
				out[k] = f
			}
		}
		return out
	}
	if got := stat(mergedExp, "request_count")["avg"]; int(got) != len(union) {
		t.Errorf("merged request_count %v, the shards' records %d", got, len(union))
	}
	for _, tag := range []string{"input_sequence_length", "output_sequence_length"} {
		a, b := stat(oneExp, tag), stat(mergedExp, tag)
		if len(a) == 0 || fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("%s: one process %v, merged %v", tag, a, b)
		}
	}
	for _, tag := range []string{"request_latency", "time_to_first_token", "inter_token_latency", "input_sequence_length", "output_sequence_length"} {
		var vals []float64
		for _, l := range union {
			var v float64
			if raw, ok := l.Metrics[tag]; ok && json.Unmarshal(raw.Value, &v) == nil {
				vals = append(vals, v)
			}
		}
		slices.Sort(vals)
		got := stat(mergedExp, tag)
		for _, p := range []float64{1, 5, 10, 25, 50, 75, 90, 95, 99} {
			want := stats.PercentileSorted(vals, p)
			if g := got[fmt.Sprintf("p%g", p)]; math.Abs(g-want) > 1e-12*math.Max(1, math.Abs(want)) {
				t.Errorf("merged %s p%g = %v; the union of the shards' records gives %v", tag, p, g, want)
			}
		}
		if got["min"] != vals[0] || got["max"] != vals[len(vals)-1] {
			t.Errorf("merged %s min/max %v/%v; the union's %v/%v", tag, got["min"], got["max"], vals[0], vals[len(vals)-1])
		}
	}
}

// TestMergeRefuses: a foreign shard, a missing one and a shard given
// twice are refused in one line; --allow-partial merges what is there and
// says what is missing.
func TestMergeRefuses(t *testing.T) {
	quickRuns(t)
	dir := t.TempDir()
	shard := func(root string, i int, seed string) {
		var out, errb bytes.Buffer
		args := []string{"llmbench", "profile", "--mock", "-m", "mock-model", "--endpoint-type", "chat", "--streaming", "--concurrency", "2",
			"--request-count", "6", "--output-tokens-mean", "4", "--random-seed", seed, "--ui", "none", "--no-server-metrics", "--no-gpu-telemetry",
			"--artifact-dir", filepath.Join(dir, root), "--shard-count", "2", "--shard-index", fmt.Sprint(i)}
		if code := run(args, &out, &errb); code != exitOK {
			t.Fatalf("shard: exit %d\n%s", code, errb.String())
		}
	}
	shard("a", 0, "1")
	shard("b", 1, "2") // another seed: another plan
	merge := func(args ...string) (int, string) {
		var out, errb bytes.Buffer
		code := run(append([]string{"llmbench", "merge"}, args...), &out, &errb)
		return code, errb.String()
	}
	a0, b1 := filepath.Join(dir, "a", "shard_0000"), filepath.Join(dir, "b", "shard_0001")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{a0, b1, "--output", filepath.Join(dir, "m1")}, "shards of different runs"},
		{[]string{a0, "--output", filepath.Join(dir, "m2")}, "shard 1 of 2 missing; --allow-partial"},
		{[]string{a0, a0, "--output", filepath.Join(dir, "m3")}, "are both shard 0"},
		{[]string{filepath.Join(dir, "nothing"), "--output", filepath.Join(dir, "m4")}, "not a shard's folder"},
		{[]string{a0}, "--output DIR is required"},
	} {
		code, msg := merge(c.args...)
		if code != exitUsage || !strings.Contains(msg, c.want) || strings.Count(strings.TrimSpace(msg), "\n") > 1 {
			t.Errorf("merge %v: exit %d, %q; want exit 2 and %q", c.args, code, msg, c.want)
		}
	}
	// A shard that failed or was killed wrote records but no export.
	shard("a", 1, "1")
	a1 := filepath.Join(dir, "a", "shard_0001")
	exp1 := filepath.Join(a1, "profile_export_aiperf.json")
	if err := os.Rename(exp1, exp1+".away"); err != nil {
		t.Fatal(err)
	}
	if code, msg := merge(a0, a1, "--output", filepath.Join(dir, "m5")); code != exitUsage || !strings.Contains(msg, "shard 1 did not finish") {
		t.Errorf("an unfinished shard: exit %d, %q", code, msg)
	}
	if err := os.RemoveAll(a1); err != nil {
		t.Fatal(err)
	}
	code, msg := merge(a0, "--output", filepath.Join(dir, "partial"), "--allow-partial")
	if code != exitOK || !strings.Contains(msg, "partial merge: shard 1 of 2 missing") {
		t.Fatalf("--allow-partial: exit %d, %q", code, msg)
	}
	var exp struct {
		RequestCount struct{ Avg float64 } `json:"request_count"`
		Cancelled    bool                  `json:"was_cancelled"`
	}
	readJSONFile(t, filepath.Join(dir, "partial", "profile_export_aiperf.json"), &exp)
	if exp.RequestCount.Avg != 3 || !exp.Cancelled {
		t.Errorf("partial merge of shard 0 of 2 (3 of 6 requests): %+v", exp)
	}
	// A second merge into the same folder keeps the first's files; a
	// merge into the run's own folder leaves its shards where they are.
	if code, msg := merge(a0, "--output", filepath.Join(dir, "partial"), "--allow-partial"); code != exitOK || !strings.Contains(msg, "previous merge's results") {
		t.Errorf("second merge: exit %d, %q", code, msg)
	}
	if prev, _ := filepath.Glob(filepath.Join(dir, "partial", "previous_*", "profile_export_aiperf.json")); len(prev) != 1 {
		t.Errorf("the first merge's export was not kept: %v", prev)
	}
	for range 2 {
		if code, msg := merge(filepath.Join(dir, "a"), "--output", filepath.Join(dir, "a"), "--allow-partial"); code != exitOK {
			t.Fatalf("merge into the run's folder: exit %d, %q", code, msg)
		}
	}
	if _, err := os.Stat(filepath.Join(a0, "shard_records.gob")); err != nil {
		t.Errorf("merging into the run's folder moved its shard: %v", err)
	}
}
