package artifacts

import (
	"context"
	"fmt"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// ServerParquetFile is the server metrics' Parquet export.
const ServerParquetFile = "server_metrics_export.parquet"

// parquetFixed are the Parquet export's columns that are not labels.
var parquetFixed = map[string]bool{
	"endpoint_url": true, "metric_name": true, "metric_type": true, "unit": true, "description": true,
	"timestamp_ns": true, "value": true, "sum": true, "count": true, "bucket_le": true, "bucket_count": true,
}

// readParquetSeries reads the time series of server_metrics_export.parquet
// (AIPerf's schema, as llmbench and pyarrow write it): a gauge's or
// counter's row gives its value, a histogram's +Inf bucket row its count
// and sum (its other bucket rows repeat them).
func readParquetSeries(path string) ([]ServerSeries, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	pf, err := file.NewParquetReader(f)
	if err != nil {
		return nil, err
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 64 << 10}, memory.DefaultAllocator)
	if err != nil {
		return nil, err
	}
	rr, err := fr.GetRecordReader(context.Background(), nil, nil)
	if err != nil {
		return nil, err
	}
	defer rr.Release()
	var set seriesSet
	for rr.Next() {
		if err := addParquetBatch(&set, rr.RecordBatch()); err != nil {
			return nil, err
		}
	}
	if err := rr.Err(); err != nil {
		return nil, err
	}
	return set.sorted(), nil
}

func addParquetBatch(set *seriesSet, rec arrow.RecordBatch) error {
	col := map[string]arrow.Array{}
	var labelCols []string
	for i, fld := range rec.Schema().Fields() {
		col[fld.Name] = rec.Column(i)
		if !parquetFixed[fld.Name] {
			labelCols = append(labelCols, fld.Name)
		}
	}
	for _, need := range []string{"endpoint_url", "metric_name", "metric_type", "timestamp_ns"} {
		if col[need] == nil {
			return fmt.Errorf("no column %s: not a server-metrics Parquet export", need)
		}
	}
	ts, ok := col["timestamp_ns"].(*array.Int64)
	if !ok {
		return fmt.Errorf("column timestamp_ns is %s, not int64", col["timestamp_ns"].DataType())
	}
	for i := 0; i < int(rec.NumRows()); i++ {
		typ := strAt(col["metric_type"], i)
		var v, sum float64
		if typ == "histogram" {
			if strAt(col["bucket_le"], i) != "+Inf" {
				continue
			}
			v, sum = f64At(col["count"], i), f64At(col["sum"], i)
		} else {
			v = f64At(col["value"], i)
		}
		labels := map[string]string{}
		for _, name := range labelCols {
			if s := strAt(col[name], i); s != "" {
				labels[name] = s
			}
		}
		set.add(strAt(col["endpoint_url"], i), strAt(col["metric_name"], i), typ, labels, ts.Value(i), v, sum)
	}
	return nil
}

// strAt is a string cell, plain or dictionary-encoded; "" for null or a
// missing column.
func strAt(a arrow.Array, i int) string {
	if a == nil || a.IsNull(i) {
		return ""
	}
	switch a := a.(type) {
	case *array.String:
		return a.Value(i)
	case *array.LargeString:
		return a.Value(i)
	case *array.Dictionary:
		return strAt(a.Dictionary(), a.GetValueIndex(i))
	}
	return a.ValueStr(i)
}

// f64At is a float64 cell; 0 for null or a missing column.
func f64At(a arrow.Array, i int) float64 {
	if a == nil || a.IsNull(i) {
		return 0
	}
	if f, ok := a.(*array.Float64); ok {
		return f.Value(i)
	}
	return 0
}
