// Package nodetest runs Node.js programs for tests: the independent
// references (DuckDB, the Hugging Face tokenizers library, tiktoken) that
// llmbench's readers and tokenizers are checked against. Each reference
// lives in a folder with a package.json and a pinned package-lock.json; its
// packages are installed with npm on first use, so tests need Node.js and
// npm on the machine.
package nodetest

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// installs remembers, per folder, the outcome of this process's install.
type installs struct {
	mu   sync.Mutex
	done map[string]error
}

var installed = &installs{done: map[string]error{}}

// Install installs dir's npm packages once per machine. go test runs
// packages as parallel processes, and two of them installing into one
// folder at once leave a half-written native module that crashes node, so
// the install runs under an exclusive file lock and is marked done only
// once it has finished.
func Install(t testing.TB, dir string) {
	t.Helper()
	installed.mu.Lock()
	err, ok := installed.done[dir]
	if !ok {
		err = install(dir)
		installed.done[dir] = err
	}
	installed.mu.Unlock()
	if err != nil {
		t.Fatalf("install the test reference (npm install in %s): %v", dir, err)
	}
}

func install(dir string) error {
	unlock, err := lockFile(filepath.Join(dir, ".install.lock"))
	if err != nil {
		return err
	}
	defer unlock()
	marker := filepath.Join(dir, "node_modules", ".llmbench-installed")
	if _, err := os.Stat(marker); err == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	// npm ci fails on packages' platform-optional binaries; install
	// honours the lock file all the same.
	cmd := exec.CommandContext(ctx, "npm", "install", "--no-audit", "--no-fund")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return errors.New(err.Error() + ": " + string(out))
	}
	return os.WriteFile(marker, nil, 0o644)
}

// Run installs dir's packages, runs node with args in dir, feeding it
// stdin, and returns its standard output; any failure fails the test.
func Run(t testing.TB, dir string, stdin []byte, args ...string) []byte {
	t.Helper()
	Install(t, dir)
	cmd := exec.Command("node", args...)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %v: %v: %s", args, err, stderr.String())
	}
	return out
}
