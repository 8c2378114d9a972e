package tokenizer

import (
	"sync"
	"testing"
)

// sharedHFs are the tokenizer files the tests load, each loaded once per
// test binary: loading a large vocabulary is most of what several tests
// cost under the race detector (Qwen3's 151k merges parsed ten times
// over), and an HF is safe for concurrent use and not changed by use
// (TestConcurrentUse), so the tests can share one.
var sharedHFs sync.Map // path + "\x00" + name → *HF

// sharedHF is LoadHF(path, name), loaded once per test binary.
func sharedHF(t testing.TB, path, name string) *HF {
	t.Helper()
	key := path + "\x00" + name
	if tok, ok := sharedHFs.Load(key); ok {
		return tok.(*HF)
	}
	tok, err := LoadHF(path, name)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := sharedHFs.LoadOrStore(key, tok)
	return got.(*HF)
}
