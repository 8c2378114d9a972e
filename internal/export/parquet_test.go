package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/internal/duckdbtest"
	"github.com/llmbench/llmbench/internal/scrape"
	"github.com/llmbench/llmbench/internal/servermetrics"
	"github.com/llmbench/llmbench/internal/stats"
)

// duckdb runs sql with DuckDB, the independent Parquet reader.
func duckdb(t *testing.T, sql string) []map[string]any {
	t.Helper()
	return duckdbtest.Query(t, sql)
}

const sec = int64(1e9)

// parquetStore: scrapes at t=0 (baseline, before the window), 1 s and 2 s.
func parquetStore(endpoint string, labels []scrape.Label) *servermetrics.Store {
	st := servermetrics.NewStore()
	inf := math.Inf(1)
	for i, v := range []float64{10, 15, 22} {
		st.Add(&scrape.Snapshot{Endpoint: endpoint, FirstByteNs: int64(i) * sec, Families: []scrape.Family{
			{Name: "g_running", Type: scrape.Gauge, Help: "Running requests.", Series: []scrape.Series{{Labels: labels, Value: v / 10}}},
			{Name: "c_tokens", Type: scrape.Counter, Help: "Tokens.", Series: []scrape.Series{{Labels: labels, Value: v}}},
			{Name: "h_seconds", Type: scrape.Histogram, Help: "Latency in seconds.", Series: []scrape.Series{{Labels: labels, Sum: v, Count: v,
				Buckets: []scrape.Bucket{{UpperBound: 0.5, Count: v - 5}, {UpperBound: inf, Count: v}}}}},
		}})
	}
	return st
}

func writeParquet(t *testing.T, st *servermetrics.Store, path, endpoint string) {
	t.Helper()
	sm := ServerMetrics{Version: "0.1.0", BenchmarkID: "bench-1", Successful: []string{endpoint}, ModelNames: []string{"m"}, Concurrency: 4,
		Window: servermetrics.Window{StartNs: sec / 2, EndNs: 2 * sec}, InputConfig: map[string]any{"model": "m"}}
	data, err := ServerMetricsParquet(st, sm)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestParquetReadByDuckDB(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.parquet")
	// "value" is a reserved column name: that label must be left out.
	writeParquet(t, parquetStore("http://a/metrics", []scrape.Label{{Name: "model_name", Value: "m"}, {Name: "value", Value: "x"}, {Name: "engine", Value: "0"}}), a, "http://a/metrics")

	cols := duckdb(t, "SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet('"+a+"'))")
	var names []string
	for _, c := range cols {
		names = append(names, c["column_name"].(string))
	}
	want := "endpoint_url metric_name metric_type unit description timestamp_ns engine model_name value sum count bucket_le bucket_count"
	if strings.Join(names, " ") != want {
		t.Fatalf("columns %v\nwant %s", names, want)
	}
	if cols[5]["column_type"] != "BIGINT" || cols[8]["column_type"] != "DOUBLE" {
		t.Fatalf("types %v", cols)
	}

	// Counter: the t=0 reference row (delta 0), then deltas from it (10):
	// 5 then 12. Gauge raw, inside the window only.
	rows := duckdb(t, "SELECT metric_name, metric_type, unit, timestamp_ns, value FROM read_parquet('"+a+"') WHERE metric_type <> 'histogram' ORDER BY metric_name, timestamp_ns")
	got := []string{}
	for _, r := range rows {
		unit, _ := r["unit"].(string)
		got = append(got, r["metric_name"].(string)+"|"+unit+"|"+r["timestamp_ns"].(string)+"|"+jsonNum(r["value"]))
	}
	wantRows := []string{"c_tokens|tokens|0|0", "c_tokens|tokens|1000000000|5", "c_tokens|tokens|2000000000|12", "g_running||1000000000|1.5", "g_running||2000000000|2.2"}
	if strings.Join(got, " ") != strings.Join(wantRows, " ") {
		t.Fatalf("rows %v\nwant %v", got, wantRows)
	}
	// Histogram: one row per bucket per scrape, cumulative deltas.
	rows = duckdb(t, "SELECT timestamp_ns, bucket_le, bucket_count, count, sum, value FROM read_parquet('"+a+"') WHERE metric_name='h_seconds' ORDER BY timestamp_ns, bucket_count")
	got = got[:0]
	for _, r := range rows {
		got = append(got, r["timestamp_ns"].(string)+"|"+r["bucket_le"].(string)+"|"+jsonNum(r["bucket_count"])+"|"+jsonNum(r["count"])+"|"+jsonNum(r["sum"])+"|"+jsonNum(r["value"]))
	}
	wantRows = []string{"0|0.5|0|0|0|null", "0|+Inf|0|0|0|null", "1000000000|0.5|5|5|5|null", "1000000000|+Inf|5|5|5|null", "2000000000|0.5|12|12|12|null", "2000000000|+Inf|12|12|12|null"}
	if strings.Join(got, " ") != strings.Join(wantRows, " ") {
		t.Fatalf("histogram rows %v\nwant %v", got, wantRows)
	}

	// The gauge rows are exactly the samples its statistics use: DuckDB's
	// AVG equals the JSON stats.avg ((1.5 + 2.2) / 2), and every row but a
	// counter's or histogram's reference lies inside the time filter.
	w := servermetrics.Window{StartNs: sec / 2, EndNs: 2 * sec}
	var jsonAvg float64
	for _, m := range parquetStore("http://a/metrics", nil).Aggregate(w, stats.BucketLinear{}) {
		if m.Name == "g_running" {
			jsonAvg = m.Series[0].Gauge.Avg
		}
	}
	avg := duckdb(t, "SELECT AVG(value) AS a FROM read_parquet('"+a+"') WHERE metric_name = 'g_running'")
	if got := jsonNum(avg[0]["a"]); got != strconv.FormatFloat(jsonAvg, 'f', -1, 64) || jsonAvg != 1.85 {
		t.Fatalf("DuckDB AVG(value) %s, JSON stats.avg %v, want both 1.85", got, jsonAvg)
	}
	outside := duckdb(t, "SELECT metric_name, count(*) AS n FROM read_parquet('"+a+"') WHERE timestamp_ns < 500000000 OR timestamp_ns > 2000000000 GROUP BY metric_name ORDER BY metric_name")
	if len(outside) != 2 || outside[0]["metric_name"] != "c_tokens" || jsonNum(outside[0]["n"]) != "1" || outside[1]["metric_name"] != "h_seconds" || jsonNum(outside[1]["n"]) != "2" {
		t.Fatalf("rows outside the filter %v, want only the counter's and the histogram's reference", outside)
	}

	meta := duckdb(t, "SELECT decode(key) AS k, decode(value) AS v FROM parquet_kv_metadata('"+a+"')")
	kv := map[string]string{}
	for _, r := range meta {
		kv[r["k"].(string)] = r["v"].(string)
	}
	for k, v := range map[string]string{"aiperf.schema_version": "1.0", "aiperf.benchmark_id": "bench-1", "aiperf.version": "0.1.0",
		"aiperf.label_columns": `["engine","model_name"]`, "aiperf.metric_count": "3", "aiperf.endpoint_count": "1",
		"aiperf.metric_type_counts": `{"counter":1,"gauge":1,"histogram":1,"unknown":0}`, "aiperf.time_filter_start_ns": "500000000",
		"aiperf.time_filter_end_ns": "2000000000", "aiperf.profiling_duration_ns": "1500000000", "aiperf.profiling_duration_seconds": "1.5", "aiperf.model_names": `["m"]`, "aiperf.concurrency": "4",
		"aiperf.exporter": "ServerMetricsParquetExporter"} {
		if kv[k] != v {
			t.Errorf("metadata %s = %q, want %q", k, kv[k], v)
		}
	}
	for _, k := range []string{"aiperf.exporter", "aiperf.export_timestamp_utc", "aiperf.input_config", "aiperf.hostname", "aiperf.schema_note", "aiperf.python_version", "aiperf.pyarrow_version", "aiperf.endpoint_urls"} {
		if kv[k] == "" {
			t.Errorf("metadata %s missing", k)
		}
	}
	comp := duckdb(t, "SELECT DISTINCT compression FROM parquet_metadata('"+a+"')")
	if len(comp) != 1 || comp[0]["compression"] != "SNAPPY" {
		t.Fatalf("compression %v", comp)
	}

	// Two runs whose label columns differ, read together by name.
	b := filepath.Join(dir, "b.parquet")
	writeParquet(t, parquetStore("http://b/metrics", []scrape.Label{{Name: "tp_rank", Value: "0"}}), b, "http://b/metrics")
	rows = duckdb(t, "SELECT endpoint_url, count(*) AS n, count(model_name) AS with_model, count(tp_rank) AS with_rank FROM read_parquet(['"+a+"', '"+b+"'], union_by_name=true) GROUP BY endpoint_url ORDER BY endpoint_url")
	if len(rows) != 2 || jsonNum(rows[0]["n"]) != "11" || jsonNum(rows[0]["with_model"]) != "11" || jsonNum(rows[0]["with_rank"]) != "0" ||
		jsonNum(rows[1]["with_model"]) != "0" || jsonNum(rows[1]["with_rank"]) != "11" {
		t.Fatalf("union_by_name rows %v", rows)
	}
}

func jsonNum(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return x
	case float64:
		b, _ := json.Marshal(x)
		return string(b)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// TestParquetBatches: written in batches of 3 rows, the file holds the
// same rows as in one batch, in several row groups.
func TestParquetBatches(t *testing.T) {
	dir := t.TempDir()
	st := parquetStore("http://a/metrics", []scrape.Label{{Name: "model_name", Value: "m"}})
	sm := ServerMetrics{Version: "0.1.0", Successful: []string{"http://a/metrics"}, Window: servermetrics.Window{StartNs: sec / 2, EndNs: 2 * sec}}
	paths := map[int]string{}
	for _, batch := range []int{3, parquetBatchRows} {
		var buf bytes.Buffer
		if err := writeServerMetricsParquet(&buf, st, sm, batch); err != nil {
			t.Fatal(err)
		}
		paths[batch] = filepath.Join(dir, fmt.Sprintf("b%d.parquet", batch))
		os.WriteFile(paths[batch], buf.Bytes(), 0o644)
	}
	diff := duckdb(t, "SELECT count(*) AS n FROM ((SELECT * FROM '"+paths[3]+"' EXCEPT ALL SELECT * FROM '"+paths[parquetBatchRows]+"') UNION ALL (SELECT * FROM '"+paths[parquetBatchRows]+"' EXCEPT ALL SELECT * FROM '"+paths[3]+"'))")
	groups := duckdb(t, "SELECT count(DISTINCT row_group_id) AS g, sum(row_group_num_rows) / count(*) * count(DISTINCT row_group_id) AS rows FROM parquet_metadata('"+paths[3]+"')")
	total := duckdb(t, "SELECT count(*) AS n FROM '"+paths[3]+"'")
	if jsonNum(diff[0]["n"]) != "0" || jsonNum(total[0]["n"]) != "11" || jsonNum(groups[0]["g"]) != "4" {
		t.Fatalf("batched file: %v differing rows, %v rows, %v row groups (want 0, 11, 4)", diff, total, groups)
	}
}
