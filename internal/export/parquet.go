package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/llmbench/llmbench/internal/scrape"
	"github.com/llmbench/llmbench/internal/servermetrics"
)

// parquetReserved are the fixed and value column names; a Prometheus label
// with one of these names is left out rather than clash.
var parquetReserved = map[string]bool{
	"endpoint_url": true, "metric_name": true, "metric_type": true, "unit": true, "description": true,
	"timestamp_ns": true, "value": true, "sum": true, "count": true, "bucket_le": true, "bucket_count": true,
}

// ParquetSchemaVersion is the version of the Parquet layout.
const ParquetSchemaVersion = "1.0"

// parquetBatchRows bounds the rows held in memory while writing: each batch
// is written as a row group and released, so a long run's export needs a
// fixed amount of memory whatever its length.
const parquetBatchRows = 64 << 10

// ServerMetricsParquet renders server_metrics_export.parquet into memory;
// WriteServerMetricsParquet streams it to a writer.
func ServerMetricsParquet(store *servermetrics.Store, sm ServerMetrics) ([]byte, error) {
	var buf bytes.Buffer
	if err := WriteServerMetricsParquet(&buf, store, sm); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WriteServerMetricsParquet writes server_metrics_export.parquet to out:
// the normalised schema (fixed columns, then label columns sorted, then
// value columns), one row per gauge/counter sample and one per histogram
// bucket per sample, values as cumulative deltas from the reference,
// Snappy-compressed, with the aiperf.* file metadata; rows are written in
// bounded batches.
func WriteServerMetricsParquet(out io.Writer, store *servermetrics.Store, sm ServerMetrics) error {
	return writeServerMetricsParquet(out, store, sm, parquetBatchRows)
}

func writeServerMetricsParquet(out io.Writer, store *servermetrics.Store, sm ServerMetrics, batchRows int) error {
	w := sm.Window
	labelSet := map[string]bool{}
	metricTypes := map[string]string{}
	lastRowNs := w.EndNs
	store.Points(w, func(f servermetrics.Family, s *servermetrics.Series, pts []servermetrics.Point) {
		if n := len(pts); n > 0 && pts[n-1].T > lastRowNs {
			lastRowNs = pts[n-1].T
		}
		metricTypes[f.Name] = string(f.Type)
		for _, l := range s.Labels {
			if !parquetReserved[l.Name] {
				labelSet[l.Name] = true
			}
		}
	})
	labels := make([]string, 0, len(labelSet))
	for l := range labelSet {
		labels = append(labels, l)
	}
	sort.Strings(labels)

	str := func(name string, nullable bool) arrow.Field {
		return arrow.Field{Name: name, Type: arrow.BinaryTypes.String, Nullable: nullable}
	}
	fields := []arrow.Field{str("endpoint_url", false), str("metric_name", false), str("metric_type", false),
		str("unit", true), str("description", true), {Name: "timestamp_ns", Type: arrow.PrimitiveTypes.Int64}}
	for _, l := range labels {
		fields = append(fields, str(l, true))
	}
	f64 := func(name string) arrow.Field {
		return arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Float64, Nullable: true}
	}
	fields = append(fields, f64("value"), f64("sum"), f64("count"), str("bucket_le", true), f64("bucket_count"))

	meta := parquetMetadata(sm, labels, metricTypes, lastRowNs)
	schema := arrow.NewSchema(fields, &meta)
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy), parquet.WithCreatedBy("llmbench"))
	fw, err := pqarrow.NewFileWriter(schema, out, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		return fmt.Errorf("create parquet writer: %w", err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	rows, writeErr := 0, error(nil)
	flush := func() {
		if rows == 0 || writeErr != nil {
			return
		}
		rec := b.NewRecordBatch() // resets the builder
		defer rec.Release()
		if err := fw.Write(rec); err != nil {
			writeErr = fmt.Errorf("write parquet rows: %w", err)
		}
		rows = 0
	}
	col := func(i int) *array.StringBuilder { return b.Field(i).(*array.StringBuilder) }
	nLabels := len(labels)
	labelIdx := make(map[string]int, nLabels)
	for i, l := range labels {
		labelIdx[l] = 6 + i
	}
	vi := 6 + nLabels
	value, sum, count := b.Field(vi).(*array.Float64Builder), b.Field(vi+1).(*array.Float64Builder), b.Field(vi+2).(*array.Float64Builder)
	le, leCount := col(vi+3), b.Field(vi+4).(*array.Float64Builder)
	ts := b.Field(5).(*array.Int64Builder)

	store.Points(w, func(f servermetrics.Family, s *servermetrics.Series, pts []servermetrics.Point) {
		unit := servermetrics.InferUnit(f.Name, f.Help)
		vals := make([]string, nLabels)
		has := make([]bool, nLabels)
		for _, l := range s.Labels {
			if i, ok := labelIdx[l.Name]; ok {
				vals[i-6], has[i-6] = l.Value, true
			}
		}
		row := func(t int64) {
			if rows++; rows > batchRows {
				rows--
				flush()
				rows = 1
			}
			col(0).Append(s.Endpoint)
			col(1).Append(f.Name)
			col(2).Append(string(f.Type))
			appendOptString(col(3), unit)
			appendOptString(col(4), f.Help)
			ts.Append(t)
			for i := range nLabels {
				if has[i] {
					col(6 + i).Append(vals[i])
				} else {
					col(6 + i).AppendNull()
				}
			}
		}
		for _, p := range pts {
			if f.Type != scrape.Histogram {
				row(p.T)
				value.Append(p.Value)
				sum.AppendNull()
				count.AppendNull()
				le.AppendNull()
				leCount.AppendNull()
				continue
			}
			for j := range s.Bounds {
				row(p.T)
				value.AppendNull()
				sum.Append(p.Sum)
				count.Append(p.Count)
				le.Append(s.BoundText[j])
				leCount.Append(p.Buckets[j])
			}
		}
	})
	flush()
	if rows > 0 || writeErr != nil {
		return writeErr
	}
	if err := fw.Close(); err != nil {
		return fmt.Errorf("close parquet writer: %w", err)
	}
	return nil
}

func appendOptString(b *array.StringBuilder, s string) {
	if s == "" {
		b.AppendNull()
		return
	}
	b.Append(s)
}

func parquetMetadata(sm ServerMetrics, labels []string, metricTypes map[string]string, lastRowNs int64) arrow.Metadata {
	j := func(v any) string {
		b, _ := json.Marshal(v)
		return string(b)
	}
	counts := map[string]int{"gauge": 0, "counter": 0, "histogram": 0, "unknown": 0}
	for _, t := range metricTypes {
		counts[t]++
	}
	host, _ := os.Hostname()
	kv := map[string]string{
		"aiperf.schema_version":       ParquetSchemaVersion,
		"aiperf.version":              sm.Version,
		"aiperf.benchmark_id":         sm.BenchmarkID,
		"aiperf.exporter":             "ServerMetricsParquetExporter", // AIPerf's class name, which readers check
		"aiperf.export_timestamp_utc": time.Now().UTC().Format(time.RFC3339Nano),
		"aiperf.time_filter_start_ns": strconv.FormatInt(sm.Window.StartNs, 10),
		// The profiling end, as profiling_duration_ns and the JSON's
		// end_time say. Counter and histogram rows run on to the final
		// scrape (their totals include it): llmbench.final_scrape_ns.
		"aiperf.time_filter_end_ns":         strconv.FormatInt(sm.Window.EndNs, 10),
		"llmbench.final_scrape_ns":          strconv.FormatInt(lastRowNs, 10),
		"aiperf.profiling_duration_ns":      strconv.FormatInt(sm.Window.EndNs-sm.Window.StartNs, 10),
		"aiperf.profiling_duration_seconds": strconv.FormatFloat(sm.Window.DurationSeconds(), 'f', -1, 64),
		"aiperf.endpoint_urls":              j(nonNil(sm.Successful)),
		"aiperf.endpoint_count":             strconv.Itoa(len(sm.Successful)),
		"aiperf.label_columns":              j(labels),
		"aiperf.label_count":                strconv.Itoa(len(labels)),
		"aiperf.metric_count":               strconv.Itoa(len(metricTypes)),
		"aiperf.metric_type_counts":         j(counts),
		"aiperf.model_names":                j(nonNil(sm.ModelNames)),
		"aiperf.concurrency":                strconv.Itoa(sm.Concurrency),
		"aiperf.input_config":               j(sm.InputConfig),
		"aiperf.hostname":                   host,
		// llmbench is Go, not Python: these carry the Go toolchain and the
		// Arrow library instead, so readers keyed on them still find a value.
		"aiperf.python_version":  "none (llmbench " + runtime.Version() + ")",
		"aiperf.pyarrow_version": "none (apache/arrow-go v18)",
		"aiperf.schema_note":     "Label columns vary between runs: query several files with read_parquet([...], union_by_name=true).",
	}
	if sm.RequestRate > 0 {
		kv["aiperf.request_rate"] = strconv.FormatFloat(sm.RequestRate, 'f', -1, 64)
	}
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	vals := make([]string, len(keys))
	for i, k := range keys {
		vals[i] = kv[k]
	}
	return arrow.NewMetadata(keys, vals)
}
