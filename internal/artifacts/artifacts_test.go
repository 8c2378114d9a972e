package artifacts

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseRecord(t *testing.T) {
	tests := []struct {
		name       string
		line       string
		keep       []string
		want       Record
		wantValues map[string]float64
	}{
		{
			name: "a success: numbers kept, a list and a null not",
			line: `{"metadata":{"request_start_ns":1000,"request_end_ns":5000,"benchmark_phase":"profiling"},"metrics":{"request_latency":{"value":4.5,"unit":"ms"},"inter_chunk_latency":{"value":[1,2],"unit":"ms"},"x":{"value":null}},"error":null}`,
			want: Record{StartNs: 1000, EndNs: 5000, Phase: "profiling"}, wantValues: map[string]float64{"request_latency": 4.5},
		},
		{
			name: "an error with a type",
			line: `{"metadata":{"request_start_ns":1,"benchmark_phase":"warmup","was_cancelled":true},"metrics":{},"error":{"code":500,"type":"InternalServerError","message":"m"}}`,
			want: Record{StartNs: 1, Phase: "warmup", Failed: true, ErrorType: "InternalServerError", Cancelled: true}, wantValues: map[string]float64{},
		},
		{
			name: "an error with a code only",
			line: `{"metadata":{},"metrics":{},"error":{"code":429}}`,
			want: Record{Failed: true, ErrorType: "HTTP 429"}, wantValues: map[string]float64{},
		},
		{
			name: "keep names the metrics kept; 1e999 is no value",
			line: `{"metadata":{},"metrics":{"a":{"value":1},"b":{"value":2},"c":{"value":1e999}}}`,
			keep: []string{"b", "c"},
			want: Record{}, wantValues: map[string]float64{"b": 2},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseRecord([]byte(tt.line), tt.keep)
			if err != nil {
				t.Fatal(err)
			}
			if got.StartNs != tt.want.StartNs || got.EndNs != tt.want.EndNs || got.Phase != tt.want.Phase ||
				got.Failed != tt.want.Failed || got.ErrorType != tt.want.ErrorType || got.Cancelled != tt.want.Cancelled {
				t.Errorf("record = %+v, want %+v", got, tt.want)
			}
			if len(got.Values) != len(tt.wantValues) {
				t.Errorf("values = %v, want %v", got.Values, tt.wantValues)
			}
			for k, v := range tt.wantValues {
				if got.Values[k] != v {
					t.Errorf("value %s = %v, want %v", k, got.Values[k], v)
				}
			}
		})
	}
}

// The test folder is a real run of the built-in server (12 requests at
// concurrency 2, every 5th answered with HTTP 500, 1 GPU).
func TestLoadRun(t *testing.T) {
	r, err := LoadRun("testdata/run", DefaultNames)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Records) != 12 {
		t.Fatalf("%d records, want 12", len(r.Records))
	}
	failed := 0
	for _, rec := range r.Records {
		if rec.Failed {
			failed++
			if rec.ErrorType != "InternalServerError" {
				t.Errorf("error type %q", rec.ErrorType)
			}
		}
	}
	good, _ := r.Stat("request_count", "avg")
	bad, _ := r.Stat("error_request_count", "avg")
	if failed != int(bad) || len(r.Records)-failed != int(good) {
		t.Errorf("records: %d failed of %d; export: %v good, %v failed", failed, len(r.Records), good, bad)
	}
	if r.String("start_time") == "" || r.Metrics["time_to_first_token"].Unit != "ms" {
		t.Errorf("export not read: start_time %q, ttft %+v", r.String("start_time"), r.Metrics["time_to_first_token"])
	}
	if r.Server == nil || r.Server.SeriesSource != ServerScrapesFile || r.Server.Metrics["vllm:kv_cache_usage_perc"].Type != "gauge" {
		t.Fatalf("server metrics not read: %+v", r.Server)
	}
	if len(r.GPUs) == 0 || r.GPUs[0].Fields["nvidia_power_usage"] <= 0 {
		t.Errorf("GPU telemetry not read: %d samples", len(r.GPUs))
	}
}

// The Parquet export (written by Apache Arrow's writer, values as deltas
// from the reference scrape) and the JSONL scrapes (raw values) must give
// the same series: gauges equal, counters' differences equal.
func TestParquetSeriesMatchScrapes(t *testing.T) {
	types := map[string]string{}
	srv, err := loadServer("testdata/run")
	if err != nil {
		t.Fatal(err)
	}
	for name, m := range srv.Metrics {
		types[name] = m.Type
	}
	fromJSONL := srv.Series
	fromParquet, err := readParquetSeries(filepath.Join("testdata/run", ServerParquetFile))
	if err != nil {
		t.Fatal(err)
	}
	byKey := func(ss []ServerSeries) map[string]ServerSeries {
		out := map[string]ServerSeries{}
		for _, s := range ss {
			out[s.Endpoint+" "+s.Metric+" "+s.LabelString()] = s
		}
		return out
	}
	pq := byKey(fromParquet)
	checked := map[string]int{}
	for key, js := range byKey(fromJSONL) {
		ps, ok := pq[key]
		if !ok {
			if js.Type == "gauge" || js.Type == "counter" {
				t.Errorf("%s: in the scrapes, not in the Parquet file", key)
			}
			continue
		}
		if ps.Type != js.Type {
			t.Errorf("%s: type %s in Parquet, %s in the JSON export", key, ps.Type, js.Type)
		}
		// Parquet holds the profiling window's scrapes; match them by time.
		at := map[int64]int{}
		for k, ts := range js.T {
			at[ts] = k
		}
		for k := 1; k < len(ps.T); k++ {
			a, okA := at[ps.T[k-1]]
			b, okB := at[ps.T[k]]
			if !okA || !okB {
				t.Fatalf("%s: Parquet time %d not among the scrapes", key, ps.T[k])
			}
			switch js.Type {
			case "gauge":
				if ps.V[k] != js.V[b] {
					t.Errorf("%s at %d: gauge %v in Parquet, %v scraped", key, ps.T[k], ps.V[k], js.V[b])
				}
			default:
				dp, dj := ps.V[k]-ps.V[k-1], js.V[b]-js.V[a]
				if math.Abs(dp-dj) > 1e-9*max(1, math.Abs(dj)) {
					t.Errorf("%s at %d: increase %v in Parquet, %v scraped", key, ps.T[k], dp, dj)
				}
			}
		}
		checked[js.Type]++
	}
	for _, typ := range []string{"gauge", "counter", "histogram"} {
		if checked[typ] == 0 {
			t.Errorf("no %s series compared", typ)
		}
	}
}

func TestLoadRunErrors(t *testing.T) {
	empty := t.TempDir()
	if _, err := LoadRun(empty, DefaultNames); !errors.Is(err, ErrNotARun) {
		t.Errorf("empty folder: %v, want ErrNotARun", err)
	}
	bad := t.TempDir()
	if err := os.WriteFile(filepath.Join(bad, RecordsFile), []byte("{\"metadata\":{}}\nnot json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadRun(bad, DefaultNames); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("bad line: %v, want an error naming line 2", err)
	}
}

func FuzzParseRecord(f *testing.F) {
	b, err := os.ReadFile("testdata/run/" + RecordsFile)
	if err != nil {
		f.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n")[:3] {
		f.Add([]byte(line))
	}
	f.Add([]byte(`{"metadata":{"request_start_ns":"x"},"metrics":{"a":{"value":"1"}},"error":7}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		r, err := parseRecord(line, nil)
		if err != nil {
			return
		}
		for k, v := range r.Values {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Errorf("value %s = %v", k, v)
			}
		}
		if r.Failed && r.ErrorType == "" {
			t.Error("a failed record without an error type")
		}
	})
}
