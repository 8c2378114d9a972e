// Package nodetest runs Node.js programs for tests: the independent
// references (DuckDB, the Hugging Face tokenizers library, tiktoken) that
// llmbench's readers and tokenizers are checked against. Each reference
// lives in a source folder with a package.json, a pinned package-lock.json
// and its .mjs programs; its packages are installed with npm on first use
// into a cache folder outside the source tree (reused by every clone and
// every later run), where the programs run, so tests need Node.js and npm
// on the machine but leave nothing in the work tree.
package nodetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// installs remembers, per source folder, the outcome of this process's
// install.
type installs struct {
	mu   sync.Mutex
	done map[string]installResult
}

type installResult struct {
	dir string
	err error
}

var installed = &installs{done: map[string]installResult{}}

// CacheEnv names the variable that moves the install cache; by default it
// is llmbench/node in the user's cache folder (~/.cache on Linux).
const CacheEnv = "LLMBENCH_NODE_CACHE"

// Dir is where src's packages are (or will be) installed: a folder of the
// cache named after src and the hash of its package-lock.json, so a new
// pin gets a fresh install and clones share one.
func Dir(src string) (string, error) {
	abs, err := filepath.Abs(src)
	if err != nil {
		return "", err
	}
	lock, err := os.ReadFile(filepath.Join(abs, "package-lock.json"))
	if err != nil {
		return "", fmt.Errorf("the reference's pinned packages: %w", err)
	}
	root := os.Getenv(CacheEnv)
	if root == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			base = os.TempDir()
		}
		root = filepath.Join(base, "llmbench", "node")
	}
	sum := sha256.Sum256(lock)
	name := filepath.Base(filepath.Dir(abs)) + "-" + filepath.Base(abs) + "-" + hex.EncodeToString(sum[:6])
	return filepath.Join(root, name), nil
}

// Installed is src's install folder when its packages are already
// installed (for benchmarks that use them only when present).
func Installed(src string) (string, bool) {
	dir, err := Dir(src)
	if err != nil {
		return "", false
	}
	_, err = os.Stat(filepath.Join(dir, "node_modules", ".llmbench-installed"))
	return dir, err == nil
}

// Install installs src's npm packages once per machine and returns the
// folder they are in, which also holds src's programs. go test runs
// packages as parallel processes, and two of them installing into one
// folder at once leave a half-written native module that crashes node, so
// the install runs under an exclusive file lock and is marked done only
// once it has finished.
func Install(t testing.TB, src string) string {
	t.Helper()
	installed.mu.Lock()
	r, ok := installed.done[src]
	if !ok {
		r.dir, r.err = install(src)
		installed.done[src] = r
	}
	installed.mu.Unlock()
	if r.err != nil {
		t.Fatalf("install the test reference (npm install for %s): %v", src, r.err)
	}
	return r.dir
}

func install(src string) (string, error) {
	dir, err := Dir(src)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	unlock, err := lockFile(filepath.Join(dir, ".install.lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	// The package files and programs, fresh each time: a program edited in
	// the source runs as edited.
	files, err := filepath.Glob(filepath.Join(src, "*.mjs"))
	if err != nil {
		return "", err
	}
	for _, f := range append(files, filepath.Join(src, "package.json"), filepath.Join(src, "package-lock.json")) {
		data, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), data, 0o644); err != nil {
			return "", err
		}
	}
	marker := filepath.Join(dir, "node_modules", ".llmbench-installed")
	if _, err := os.Stat(marker); err == nil {
		return dir, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	// npm ci fails on packages' platform-optional binaries; install
	// honours the lock file all the same.
	cmd := exec.CommandContext(ctx, "npm", "install", "--no-audit", "--no-fund")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", errors.New(err.Error() + ": " + string(out))
	}
	return dir, os.WriteFile(marker, nil, 0o644)
}

// Run installs src's packages, runs node with args in their folder,
// feeding it stdin, and returns its standard output; any failure fails the
// test.
func Run(t testing.TB, src string, stdin []byte, args ...string) []byte {
	t.Helper()
	dir := Install(t, src)
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
