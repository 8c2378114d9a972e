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

// ensureInstalled installs the reader's npm packages once per machine.
// go test runs packages as parallel processes, and two of them installing
// into one folder at once leave a half-written native module that crashes
// node, so the install runs under an exclusive file lock and is marked
// done only once it has finished.
func ensureInstalled(dir string) error {
	unlock, err := lockFile(filepath.Join(dir, ".install.lock"))
	if err != nil {
		return err
	}
	defer unlock()
	marker := filepath.Join(dir, "node_modules", ".llmbench-installed")
	if _, err := os.Stat(marker); err == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// npm ci fails on the package's platform-optional binaries; install
	// honours the lock file all the same.
	cmd := exec.CommandContext(ctx, "npm", "install", "--no-audit", "--no-fund")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return errors.New(err.Error() + ": " + string(out))
	}
	return os.WriteFile(marker, nil, 0o644)
}

// Query runs sql and returns the rows, failing the test on any error.
func Query(t testing.TB, sql string) []map[string]any {
	t.Helper()
	d := dir()
	install.once.Do(func() { install.err = ensureInstalled(d) })
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
