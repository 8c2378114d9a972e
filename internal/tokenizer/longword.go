package tokenizer

import (
	"hash/maphash"
	"math/bits"
	"slices"
	"sync"
)

// A word of more than longWindow bytes (a response of 50 MB without a
// space is one) is merged a window of symbols at a time, so that counting
// it takes time and memory in proportion to its length: merging it whole
// needs several arrays of its length and a heap that misses the CPU caches
// on every step (issue 30: 40 s and 3.9 GB for 50 MB).
//
// Windowing stays exact, token for token, because of two properties of
// BPE as the reference runs it (repeatedly merge the adjacent pair of
// lowest rank, leftmost on ties):
//
//   - The tokens of a word from token i to token j are what merging their
//     text alone gives: no merge crossed their edges, so alone the same
//     merges win in the same order.
//   - If e0…ek is the encoding of a text x and ek…en that of a text y,
//     ek being the same token at the same place (x ends with it, y starts
//     with it), then e0…en is the encoding of x joined to y: were a merge
//     across one of the joins to win there, it would win in x alone or in
//     y alone as well, whose encodings keep those boundaries.
//
// So the windows overlap: the next one starts at a token of the current
// one some way before its end, and where the two share a token (same
// place, same id) the current one's tokens before it are final. A
// window's tokens near its end may differ from the word's (there, what
// follows is missing); those are never kept, since the shared token is
// looked for from the overlap's start, and the overlap grows until one is
// found. If none is ever found (no real vocabulary does that), the word
// is merged whole, as before.
//
// A window is merged by a heap (mergeLinked), about 100 ns a byte of
// random letters, until the model has done btBuildAfter merges of long
// words; it then builds its tables for merging by backtracking (see
// backtrack), the same tokens 3 to 5 times faster, and from then on long
// words are merged in batches of windows at fixed places, on up to
// GOMAXPROCS goroutines at once (see appendBatches): 50 MB of random
// letters, one word, counts in 1.4 to 1.8 s on 2 cores where the heap
// alone took 4 to 7.
const (
	longWindow  = 4096 // symbols per window
	longOverlap = 256  // symbols the next window starts before the end
)

// window holds the tokens of the word's symbols [lo, hi).
type window struct {
	lo, hi int
	ids    []int32
	pos    []int32 // each token's first symbol, from lo
}

func (w *window) start(k int) int { return w.lo + int(w.pos[k]) }

func (w *window) end(k int) int {
	if k+1 < len(w.ids) {
		return w.start(k + 1)
	}
	return w.hi
}

// longWord is one long word's merging state, kept in the scratch for the
// next long word (of the same model: each model pools its own scratch, so
// the caches of pairs and characters stay true).
type longWord struct {
	z symbolizer
	// syms are the word's initial symbols from symbol base on (all that a
	// window may still need), starts their first bytes from byte
	// baseByte (rankIsID only); done is set once the last one is in.
	syms, starts   []int32
	base, baseByte int
	done           bool
	cur, nxt       window
	// memo is the last window merged: a word that repeats itself (one
	// letter, one character) gives windows of the same symbols, and
	// the same tokens.
	memoSyms []int32
	memoText string // rankIsID: its text
	memo     window
	lm       linkedMerge
	bt       *backtrack // if set, windows are merged by backtracking
	merges   int        // the heap's, not yet counted towards m's tables
	bs       backtrackScratch
	// batch and workers are appendBatches': its windows, and each
	// goroutine's working memory.
	batch   []window
	workers []longWorker
	// tally, when set, counts the word's tokens instead of appending
	// them; tallied is how many this word added to it.
	tally   *int
	tallied int
	runes   runeCache
}

// appendLong appends the tokens of word, merged win symbols at a time
// with windows overlapping by overlap symbols (see longWindow), in
// parallel batches by backtracking if bt is set (see appendBatches); with
// tally set, it adds their number to *tally instead. With auto set, the
// heap's merges are counted towards m's tables, which the word takes up
// as soon as they are built (see longTables).
func (m *bpe) appendLong(dst []int32, word string, sc *bpeScratch, win, overlap int, tally *int, bt *backtrack, auto bool) []int32 {
	lw := sc.long
	if lw == nil {
		lw = &longWord{}
		lw.lm.pairs.reset()
		sc.long = lw
	}
	lw.z = symbolizer{m: m, word: word, withStarts: m.rankIsID, runes: &lw.runes}
	lw.syms, lw.starts, lw.base, lw.baseByte, lw.done = lw.syms[:0], lw.starts[:0], 0, 0, false
	lw.memoSyms, lw.memoText = lw.memoSyms[:0], ""
	lw.tally, lw.tallied = tally, 0
	lw.bt, lw.merges = bt, 0
	defer func() {
		// The pooled scratch must not keep the word alive, nor the
		// room an overlap that had to grow took.
		lw.z.word, lw.memoText, lw.tally, lw.bt = "", "", nil, nil
		for i := range lw.workers {
			lw.workers[i].memoText = ""
		}
		if cap(lw.syms) > 16*longWindow+2*len(lw.batch)*longWindow {
			sc.long = nil
		}
	}()
	mark := len(dst)
	cur, nxt := &lw.cur, &lw.nxt
	ci := 0 // cur's tokens from ci on are not emitted yet
	if bt != nil {
		var done bool
		if dst, ci, done = m.appendBatches(lw, bt, dst, mark, win, overlap, -1); done {
			return dst
		}
		// Two windows shared no token: on from lw.cur, one at a time.
	} else {
		hi := lw.fillTo(win)
		if hi == 0 {
			return dst // every byte dropped
		}
		m.mergeWindow(lw, 0, hi, cur)
	}
	for !lw.done || cur.hi < lw.total() {
		if auto && lw.bt == nil {
			if lw.bt = m.longTables(lw.merges); lw.bt != nil {
				// On in batches from the window joined last.
				if cur != &lw.cur {
					lw.cur, lw.nxt = lw.nxt, lw.cur
					cur, nxt = &lw.cur, &lw.nxt
				}
				var done bool
				if dst, ci, done = m.appendBatches(lw, lw.bt, dst, mark, win, overlap, ci); done {
					return dst
				}
				continue
			}
			lw.merges = 0
		}
		w, ov := win, overlap
		for {
			// The next window starts at cur's last token that begins
			// at least ov symbols before cur's end (or at cur's first
			// token still pending).
			k := len(cur.ids) - 1
			for k > ci && cur.start(k) > cur.hi-ov {
				k--
			}
			if w == win {
				k = lw.memoStart(cur, ci, k, ov, w)
			}
			s := cur.start(k)
			for s+w <= cur.hi {
				w *= 2
			}
			hi := lw.fillTo(s + w)
			m.mergeWindow(lw, s, hi, nxt)
			if kc, kn, ok := sharedToken(cur, k, nxt); ok {
				dst = lw.emit(dst, mark, cur.ids[ci:kc])
				cur, nxt = nxt, cur
				ci = kn
				lw.drop(cur.start(ci))
				break
			}
			if k == ci && lw.done && hi == lw.total() {
				// Not a real vocabulary's behaviour: merge it whole.
				sc.ids, sc.starts = m.symbols(sc.ids[:0], sc.starts[:0], word)
				whole := m.mergeHeap(sc, word)
				if tally != nil {
					*tally += len(whole) - lw.tallied
					return dst
				}
				return append(dst[:mark], whole...)
			}
			if k == ci {
				w *= 2
			} else {
				ov *= 2
			}
		}
	}
	return lw.emit(dst, mark, cur.ids[ci:])
}

// emit appends toks, tokens of the word that dst holds from mark on, to
// dst. Out of room, dst grows at once to what the rest of the word will
// need at the rate of tokens per byte so far (and by a quarter at least):
// growing by a quarter at a time, as append does, allocates five times
// the tokens' size over the word and holds the old and new arrays at once
// at every step (a 50 MB word can have 50 million tokens).
func (lw *longWord) emit(dst []int32, mark int, toks []int32) []int32 {
	if lw.tally != nil {
		*lw.tally += len(toks)
		lw.tallied += len(toks)
		return dst
	}
	if len(toks) > cap(dst)-len(dst) && lw.z.i > 0 {
		perByte := float64(len(dst)-mark+len(toks)) / float64(lw.z.i)
		rest := int(perByte * float64(len(lw.z.word)-lw.z.i) * 1.1)
		dst = slices.Grow(dst, len(toks)+max(rest, cap(dst)/4))
	}
	return append(dst, toks...)
}

// total is the number of symbols made so far (the word's, once done).
func (lw *longWord) total() int { return lw.base + len(lw.syms) }

// fillTo makes symbols up to symbol hi and returns hi, or the word's
// symbol count if it has fewer. It makes one more, whose first byte is
// where symbol hi-1 ends.
func (lw *longWord) fillTo(hi int) int {
	if !lw.done && lw.total() <= hi {
		lw.syms, lw.starts, lw.done = lw.z.fill(lw.syms, lw.starts, lw.baseByte, hi+1-lw.base)
	}
	return min(hi, lw.total())
}

// drop forgets the symbols before symbol lo once they are the larger part
// of what is kept, so that what is kept stays about two windows long.
func (lw *longWord) drop(lo int) {
	d := lo - lw.base
	if d < len(lw.syms)/2 {
		return
	}
	lw.syms = lw.syms[:copy(lw.syms, lw.syms[d:])]
	if lw.z.withStarts {
		shift := lw.starts[d]
		n := copy(lw.starts, lw.starts[d:])
		lw.starts = lw.starts[:n]
		for i := range lw.starts {
			lw.starts[i] -= shift
		}
		lw.baseByte += int(shift)
	}
	lw.base = lo
}

// memoStart returns a token of cur, k or one up to ov symbols before it,
// where a window of w symbols would be the memo's: in text that repeats
// with a period of up to ov symbols, one of them begins the same as the
// last window merged, and the window need not be merged again.
func (lw *longWord) memoStart(cur *window, ci, k, ov, w int) int {
	if len(lw.memoSyms) != w {
		return k
	}
	probe := min(w, 16) // symbols compared before the whole window is
	for j := k; j >= ci && cur.start(j) >= cur.hi-2*ov; j-- {
		s := cur.start(j)
		if s+w <= cur.hi || lw.fillTo(s+w) != s+w {
			continue
		}
		syms := lw.syms[s-lw.base : s+w-lw.base]
		if slices.Equal(syms[:probe], lw.memoSyms[:probe]) && slices.Equal(syms, lw.memoSyms) {
			return j
		}
	}
	return k
}

// byteAt is where symbol k begins in the word (its length for the end).
func (lw *longWord) byteAt(k int) int {
	if k == lw.total() && lw.done {
		return len(lw.z.word)
	}
	return lw.baseByte + int(lw.starts[k-lw.base])
}

// mergeWindow merges the symbols [lo, hi) alone into out.
func (m *bpe) mergeWindow(lw *longWord, lo, hi int, out *window) {
	syms := lw.syms[lo-lw.base : hi-lw.base]
	text := ""
	if m.rankIsID {
		text = lw.z.word[lw.byteAt(lo):lw.byteAt(hi)]
	}
	out.lo, out.hi = lo, hi
	if lw.memo.hi-lw.memo.lo == hi-lo && slices.Equal(lw.memoSyms, syms) && lw.memoText == text {
		out.ids = append(out.ids[:0], lw.memo.ids...)
		out.pos = append(out.pos[:0], lw.memo.pos...)
		return
	}
	ok := false
	if lw.bt != nil {
		out.ids, out.pos, ok = lw.bt.encode(&lw.bs, syms, out.ids[:0], out.pos[:0])
	}
	if !ok {
		var starts []int32
		if m.rankIsID {
			starts = lw.starts[lo-lw.base : hi-lw.base]
		}
		out.ids, out.pos = m.mergeLinked(&lw.lm, syms, starts, text, out.ids[:0], out.pos[:0])
		lw.merges += len(syms) - len(out.ids)
	}
	lw.memoSyms = append(lw.memoSyms[:0], syms...)
	lw.memoText = text
	lw.memo.lo, lw.memo.hi = lo, hi
	lw.memo.ids = append(lw.memo.ids[:0], out.ids...)
	lw.memo.pos = append(lw.memo.pos[:0], out.pos...)
}

// linkedMerge is mergeLinked's working memory.
type linkedMerge struct {
	ids, next, prev []int32
	val             []int32 // the id a symbol's merge with its next makes
	at              []int32 // where a symbol's candidate is in heap, or -1
	heap            []uint64
	pairs           pairCache
}

// mergeLinked merges syms alone (starts: their first bytes in text, for
// rankIsID, whose window starts at starts[0]) and appends the tokens and
// the index of each one's first symbol to ids and pos. Like mergeHeap it
// keeps the symbols in a linked list and the candidate merges in a heap
// by rank then position, but each symbol has at most one candidate, its
// pair with the next, updated in place as its neighbours change: no
// stale candidate is ever pushed, popped or looked up again, which halves
// the look-ups of merges and keeps the heap the window's size.
func (m *bpe) mergeLinked(lm *linkedMerge, syms, starts []int32, text string, ids, pos []int32) ([]int32, []int32) {
	n := len(syms)
	lm.ids = append(lm.ids[:0], syms...)
	lm.next, lm.prev = slices.Grow(lm.next[:0], n)[:n], slices.Grow(lm.prev[:0], n)[:n]
	lm.val, lm.at = slices.Grow(lm.val[:0], n)[:n], slices.Grow(lm.at[:0], n)[:n]
	sym, next, prev, val, at := lm.ids, lm.next, lm.prev, lm.val, lm.at
	for i := range n {
		next[i], prev[i], at[i] = int32(i+1), int32(i-1), -1
	}
	next[n-1] = -1
	var first int32
	if starts != nil {
		first = starts[0]
	}
	// merge is the merge of symbol k with its next, r.
	merge := func(k, r int32) uint64 {
		if starts == nil {
			return m.cachedMerge(&lm.pairs, "", sym[k], sym[r], 0, 0)
		}
		end := int32(len(text))
		if nn := next[r]; nn >= 0 {
			end = starts[nn] - first
		}
		return m.cachedMerge(&lm.pairs, text, sym[k], sym[r], starts[k]-first, end)
	}
	h := lm.heap[:0]
	for i := int32(0); i+1 < int32(n); i++ {
		if v := merge(i, i+1); v != noMerge {
			val[i] = int32(uint32(v))
			at[i] = int32(len(h))
			h = append(h, v&^(1<<32-1)|uint64(i))
		}
	}
	lm.heap = h
	lm.heapify()
	// update sets symbol k's candidate to its pair with its next.
	update := func(k int32) {
		v := noMerge
		if r := next[k]; r >= 0 {
			v = merge(k, r)
		}
		switch {
		case v == noMerge && at[k] >= 0:
			lm.remove(int(at[k]))
		case v != noMerge:
			val[k] = int32(uint32(v))
			lm.set(k, v&^(1<<32-1)|uint64(k))
		}
	}
	for len(lm.heap) > 0 {
		k := int32(uint32(lm.heap[0]))
		r := next[k]
		sym[k] = val[k]
		if at[r] >= 0 {
			lm.remove(int(at[r]))
		}
		nn := next[r]
		next[k] = nn
		if nn >= 0 {
			prev[nn] = k
		}
		update(k)
		if p := prev[k]; p >= 0 {
			update(p)
		}
	}
	for i := int32(0); i >= 0; i = next[i] {
		ids = append(ids, sym[i])
		pos = append(pos, i)
	}
	return ids, pos
}

// The heap is 4-ary (half the depth of a binary one, its children side by
// side) and its entries are rank<<32 | symbol, so that their order is the
// merge order: rank, then position. Entries move into a hole rather than
// by swaps, and at follows each.

// up puts key at hole i or above it.
func (lm *linkedMerge) up(i int, key uint64) {
	h, at := lm.heap, lm.at
	for i > 0 {
		p := (i - 1) / 4
		if h[p] <= key {
			break
		}
		h[i] = h[p]
		at[uint32(h[i])] = int32(i)
		i = p
	}
	h[i] = key
	at[uint32(key)] = int32(i)
}

// down puts key at hole i or below it.
func (lm *linkedMerge) down(i int, key uint64) {
	h, at := lm.heap, lm.at
	for {
		c := 4*i + 1
		if c >= len(h) {
			break
		}
		small := c
		for j := c + 1; j < min(c+4, len(h)); j++ {
			if h[j] < h[small] {
				small = j
			}
		}
		if key <= h[small] {
			break
		}
		h[i] = h[small]
		at[uint32(h[i])] = int32(i)
		i = small
	}
	h[i] = key
	at[uint32(key)] = int32(i)
}

func (lm *linkedMerge) heapify() {
	if len(lm.heap) < 2 {
		return
	}
	for i := (len(lm.heap) - 2) / 4; i >= 0; i-- {
		lm.down(i, lm.heap[i])
	}
}

// set gives symbol k the candidate key, in or into the heap.
func (lm *linkedMerge) set(k int32, key uint64) {
	i := int(lm.at[k])
	if i < 0 {
		lm.heap = append(lm.heap, key)
		lm.up(len(lm.heap)-1, key)
		return
	}
	if key < lm.heap[i] {
		lm.up(i, key)
	} else {
		lm.down(i, key)
	}
}

// remove takes the heap's entry i out.
func (lm *linkedMerge) remove(i int) {
	h := lm.heap
	gone, last := h[i], h[len(h)-1]
	lm.at[uint32(gone)] = -1
	lm.heap = h[:len(h)-1]
	if i == len(lm.heap) {
		return
	}
	if last < gone {
		lm.up(i, last)
	} else {
		lm.down(i, last)
	}
}

// sharedToken finds the first token that cur (from its token k on) and
// nxt both have: the same id over the same symbols.
func sharedToken(cur *window, k int, nxt *window) (int, int, bool) {
	for l := 0; k < len(cur.ids) && l < len(nxt.ids); {
		a, b := cur.start(k), nxt.start(l)
		switch {
		case a < b:
			k++
		case a > b:
			l++
		default:
			if cur.ids[k] == nxt.ids[l] && cur.end(k) == nxt.end(l) {
				return k, l, true
			}
			k++
			l++
		}
	}
	return 0, 0, false
}

// pairCache remembers the merges of the pairs a long word met last: its
// windows meet the same few thousand pairs over and over, and a hit costs
// far less than a look-up in a map of a few hundred thousand entries,
// which misses the CPU caches.
type pairCache [1 << pairCacheBits]struct{ key, val uint64 }

const pairCacheBits = 14

// noPair is an empty slot's key: no pair of symbols has it.
const noPair = ^uint64(0)

func (c *pairCache) reset() {
	for i := range c {
		c[i].key = noPair
	}
}

// cachedMerge is merge, through the pair cache and the merge filter.
func (m *bpe) cachedMerge(pc *pairCache, word string, a, b, aStart, bEnd int32) uint64 {
	// Under rankIsID a pair's merge depends on its text, which its two
	// ids spell, unless one is the unknown token.
	if m.rankIsID && m.unk >= 0 && (a == m.unk || b == m.unk) {
		return m.merge(word, a, b, aStart, bEnd)
	}
	key := pairKey(a, b)
	e := &pc[mix(key)>>(64-pairCacheBits)]
	if e.key == key {
		return e.val
	}
	v := noMerge
	if m.filter.mayMerge(m, word[aStart:bEnd], key) {
		v = m.merge(word, a, b, aStart, bEnd)
	}
	e.key, e.val = key, v
	return v
}

func mix(x uint64) uint64 {
	x *= 0x9e3779b97f4a7c15
	return x ^ x>>29
}

// mergeFilter is a Bloom filter of the pairs that merge (the merges' keys;
// under rankIsID, the vocabulary's texts), built on a long word's first
// look-up. Most pairs a long word's windows look up do not merge, and the
// filter, a few hundred KB, answers most of them from the CPU's caches,
// where the merges' map, tens of MB, has to be read from memory.
type mergeFilter struct {
	once  sync.Once
	seed  maphash.Seed
	words []uint64
}

// mayMerge reports whether the pair key, spelled text, may merge: false
// is certain, true needs the look-up.
func (f *mergeFilter) mayMerge(m *bpe, text string, key uint64) bool {
	f.once.Do(func() { f.build(m) })
	h := f.hash(m, text, key)
	bits := filterBits(h)
	return f.words[h>>(64-f.shift())]&bits == bits
}

func (f *mergeFilter) build(m *bpe) {
	f.seed = maphash.MakeSeed()
	n := len(m.merges)
	if m.rankIsID {
		n = len(m.vocab)
	}
	// About 16 bits a key: a false positive rate near 1 %.
	size := 1
	for size*4 < n {
		size *= 2
	}
	f.words = make([]uint64, size)
	add := func(h uint64) { f.words[h>>(64-f.shift())] |= filterBits(h) }
	if m.rankIsID {
		for text := range m.vocab {
			add(f.hash(m, text, 0))
		}
		return
	}
	for key := range m.merges {
		add(f.hash(m, "", key))
	}
}

func (f *mergeFilter) hash(m *bpe, text string, key uint64) uint64 {
	if m.rankIsID {
		return maphash.String(f.seed, text)
	}
	return mix(key ^ 0x5bd1e9955bd1e995)
}

// shift is log2 of the filter's size in words.
func (f *mergeFilter) shift() uint { return uint(bits.TrailingZeros(uint(len(f.words)))) }

// filterBits are the four bits a hash sets in its word.
func filterBits(h uint64) uint64 {
	return 1<<(h&63) | 1<<(h>>6&63) | 1<<(h>>12&63) | 1<<(h>>18&63)
}
