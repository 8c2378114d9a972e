package benchmark

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/llmbench/llmbench/internal/config"
	"github.com/llmbench/llmbench/internal/mockserver"
)

// TestSharedRunsKeepTheServerAndSamples runs twice through one Shared, as
// a sweep's cells do: the built-in server is started once (both runs see
// the same URL, and its counters carry over), and each run's Samples are
// exactly its profiling records' values in profile_export.jsonl, with
// request_error_rate 0 or 100 per request.
func TestSharedRunsKeepTheServerAndSamples(t *testing.T) {
	shared := NewShared()
	defer shared.Close()
	mock := mockserver.DefaultConfig()
	mock.TTFT, mock.ITL, mock.OutputMean = 2*time.Millisecond, time.Millisecond, 8
	var urls []string
	for i, conc := range []int{2, 4} {
		p := config.Default()
		p.Endpoint.ModelNames = []string{"m"}
		p.Endpoint.Mock, p.Endpoint.Streaming = true, true
		p.Loadgen.Concurrency, p.Loadgen.RequestCount, p.Loadgen.WarmupRequestCount = conc, 12, 2
		p.Output.ArtifactDir = filepath.Join(t.TempDir(), "run")
		p.ServerMetrics.Disabled = true
		if err := p.Finish(); err != nil {
			t.Fatal(err)
		}
		res, err := Run(context.Background(), Options{Profile: p, Mock: mock, Version: "test", Shared: shared,
			Samples: []string{"time_to_first_token", "request_latency", "request_error_rate", "no_such_metric"}})
		if err != nil {
			t.Fatal(err)
		}
		urls = append(urls, res.ServerURLs...)
		want := map[string][]float64{}
		f, err := os.Open(filepath.Join(p.Output.ArtifactDir, "profile_export.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var l struct {
				Metadata struct {
					Phase string `json:"benchmark_phase"`
				} `json:"metadata"`
				Metrics map[string]struct {
					Value json.RawMessage `json:"value"` // inter_chunk_latency's is a list
				} `json:"metrics"`
			}
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				t.Fatal(err)
			}
			if l.Metadata.Phase != "profiling" {
				continue
			}
			for _, tag := range []string{"time_to_first_token", "request_latency"} {
				var v float64
				if err := json.Unmarshal(l.Metrics[tag].Value, &v); err != nil {
					t.Fatal(err)
				}
				want[tag] = append(want[tag], v)
			}
			want["request_error_rate"] = append(want["request_error_rate"], 0)
		}
		f.Close()
		for tag, xs := range want {
			got := slices.Clone(res.Samples[tag])
			slices.Sort(got)
			slices.Sort(xs)
			if len(got) != 12 || !slices.EqualFunc(got, xs, func(a, b float64) bool { return a-b < 1e-6 && b-a < 1e-6 }) {
				t.Errorf("run %d %s: samples %v, records %v", i, tag, got, xs)
			}
		}
		if _, ok := res.Samples["no_such_metric"]; ok {
			t.Errorf("run %d keeps samples of an unknown metric", i)
		}
	}
	if len(urls) != 2 || urls[0] != urls[1] {
		t.Errorf("server URLs %v: the built-in server was restarted between runs", urls)
	}
}
