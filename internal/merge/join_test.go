package merge

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/llmbench/llmbench/internal/benchmark"
	"github.com/llmbench/llmbench/internal/export"
)

// TestRawExchangesJoined: with --export-level raw each shard's
// profile_export_raw.jsonl is joined shard by shard, like its records, and
// the copy of the scraping shard's other files does not put that shard's
// raw file alone in its place.
func TestRawExchangesJoined(t *testing.T) {
	names := export.ProfileFiles("")
	out := t.TempDir()
	var shards []*shard
	for i, lines := range []string{"{\"a\":1}\n{\"a\":2}\n", "{\"b\":1}\n"} {
		dir := t.TempDir()
		for name, text := range map[string]string{names.Raw: lines, names.Records: lines + lines, "server_metrics_export.json": "{}"} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		sh := &shard{dir: dir, files: names, info: &export.ShardInfo{ScrapedServerMetrics: i == 0}}
		shards = append(shards, sh)
	}
	res := &benchmark.Result{}
	for _, pick := range []func(export.Files) string{
		func(f export.Files) string { return f.Records },
		func(f export.Files) string { return f.Raw },
	} {
		if err := joinRecords(shards, pick, pick(names), out, res); err != nil {
			t.Fatal(err)
		}
	}
	if err := copyScraped(shards, names, out, res, nil); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		names.Raw:                    "{\"a\":1}\n{\"a\":2}\n{\"b\":1}\n",
		names.Records:                "{\"a\":1}\n{\"a\":2}\n{\"a\":1}\n{\"a\":2}\n{\"b\":1}\n{\"b\":1}\n",
		"server_metrics_export.json": "{}",
	} {
		got, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
	want := []string{names.Records, names.Raw, "server_metrics_export.json"}
	if !slices.Equal(res.Files, want) {
		t.Errorf("files %q, want %q", res.Files, want)
	}
}
