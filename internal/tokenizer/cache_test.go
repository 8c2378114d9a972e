package tokenizer

import (
	"slices"
	"strconv"
	"sync"
	"testing"
)

// TestWordCache: a word just stored is found with its own tokens; after
// far more words than slots (so every slot was overwritten many times),
// a lookup finds a word's own tokens or nothing, never another word's,
// with goroutines storing and reading at once; words longer than the
// limit are never kept.
func TestWordCache(t *testing.T) {
	var c wordCache
	idsOf := func(i int) []int32 {
		ids := make([]int32, 1+i%4) // one to four tokens
		for k := range ids {
			ids[k] = int32(i*7 + k)
		}
		return ids
	}
	word := func(i int) string { return " w" + strconv.Itoa(i) }
	c.put(word(1), idsOf(1))
	if got, ok := c.get(word(1)); !ok || !slices.Equal(got, idsOf(1)) {
		t.Fatalf("just stored: %v %v, want %v", got, ok, idsOf(1))
	}
	const words = 4 * wordCacheSize
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := g; i < words; i += 4 {
				c.put(word(i), idsOf(i))
				for _, j := range []int{i, i / 2, i / 3} {
					if got, ok := c.get(word(j)); ok && !slices.Equal(got, idsOf(j)) {
						t.Errorf("%q: %v, want %v or a miss", word(j), got, idsOf(j))
						return
					}
				}
			}
		})
	}
	wg.Wait()
	hits := 0
	for i := range words {
		if got, ok := c.get(word(i)); ok {
			hits++
			if !slices.Equal(got, idsOf(i)) {
				t.Fatalf("%q: %v, want %v", word(i), got, idsOf(i))
			}
		}
	}
	// Each slot holds one word at the end: at most wordCacheSize hits,
	// and most slots were written (a random hash leaves about 2 % of
	// 65,536 slots empty after 262,144 stores).
	if hits > wordCacheSize || hits < wordCacheSize*9/10 {
		t.Fatalf("%d words found after %d stores, want at most %d and about that many", hits, words, wordCacheSize)
	}
	long := string(make([]byte, wordCacheMaxWord+1))
	c.put(long, []int32{1})
	if _, ok := c.get(long); ok {
		t.Fatal("a word over the length limit was kept")
	}
}
