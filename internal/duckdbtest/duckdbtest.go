// Package duckdbtest runs SQL with DuckDB for tests: the independent reader
// that checks llmbench's Parquet exports. DuckDB comes from its npm package
// (pinned in testdata/package-lock.json), installed with npm on first use,
// so tests need Node.js and npm on the machine.
package duckdbtest

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"
)

var install struct {
	once sync.Once
	err  error
}

// dir is the reader's folder, found beside this source file so that tests
// of any package can use it.
func dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "testdata")
}

// Query runs sql and returns the rows, failing the test on any error.
func Query(t testing.TB, sql string) []map[string]any {
	t.Helper()
	d := dir()
	install.once.Do(func() {
		if _, err := os.Stat(filepath.Join(d, "node_modules", "@duckdb", "node-api")); err == nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		// npm ci fails on the package's platform-optional binaries; install
		// honours the lock file all the same.
		cmd := exec.CommandContext(ctx, "npm", "install", "--no-audit", "--no-fund")
		cmd.Dir = d
		if out, err := cmd.CombinedOutput(); err != nil {
			install.err = errors.New(err.Error() + ": " + string(out))
		}
	})
	if install.err != nil {
		t.Fatalf("install the Parquet reader (npm install in %s): %v", d, install.err)
	}
	cmd := exec.Command("node", "query.mjs", sql)
	cmd.Dir = d
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("duckdb %q: %v: %s", sql, err, ee.Stderr)
		}
		t.Fatalf("duckdb %q: %v", sql, err)
	}
	var rows []map[string]any
	if err := json.Unmarshal(out, &rows); err != nil {
		t.Fatalf("duckdb output %q: %v", out, err)
	}
	return rows
}
