// Package duckdbtest runs SQL with DuckDB for tests: the independent reader
// that checks llmbench's Parquet exports. DuckDB comes from its npm package
// (pinned in testdata/package-lock.json), installed by nodetest.
package duckdbtest

import (
	"encoding/json"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/llmbench/llmbench/internal/nodetest"
)

// dir is the reader's folder, found beside this source file so that tests
// of any package can use it.
func dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "testdata")
}

// Query runs sql and returns the rows, failing the test on any error.
func Query(t testing.TB, sql string) []map[string]any {
	t.Helper()
	out := nodetest.Run(t, dir(), nil, "query.mjs", sql)
	var rows []map[string]any
	if err := json.Unmarshal(out, &rows); err != nil {
		t.Fatalf("duckdb output %q: %v", out, err)
	}
	return rows
}
