package tokenizer

import (
	"fmt"
	"hash/maphash"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// bpe is a byte-pair-encoding model as Hugging Face's tokenizers runs it:
// a word starts as one symbol per character (per byte in a byte-level
// vocabulary), then the adjacent pair of lowest merge rank is merged,
// leftmost first on ties, until no pair has a merge.
type bpe struct {
	vocab map[string]int32 // token → id; raw bytes when byteLevel
	// merges maps the pair a<<32|b to rank<<32|merged id.
	merges map[uint64]uint64
	// rankIsID merges as tiktoken does instead: a pair's rank is the id
	// of its concatenation, looked up in vocab (merges is unused).
	rankIsID  bool
	byteLevel bool
	byteIDs   [256]int32 // byteLevel: each byte's own token, -1 if none
	// suffix is end_of_word_suffix (CLIP's "</w>"; raw bytes when
	// byteLevel): a word's last character starts as the symbol spelled
	// with it. lastByteIDs, with a suffix, are the bytes' tokens with it.
	suffix      string
	lastByteIDs [256]int32
	// ignoreMerges emits a word found whole in the vocabulary as one token.
	ignoreMerges bool
	// byteFallback spells a character missing from the vocabulary as its
	// UTF-8 bytes' <0xXX> tokens.
	byteFallback bool
	fallbackIDs  [256]int32
	unk          int32 // -1: none, the character is dropped
	fuseUnk      bool
	// splitMark, when set, is the space mark ("▁") of a SentencePiece-style
	// vocabulary in which no merge joins a symbol to a following one that
	// starts with the mark unless the first ends with it too (see
	// splitAtMark): a word is then merged in pieces cut before each mark
	// that follows another character, each piece cached on its own.
	splitMark string

	cache  wordCache
	pool   sync.Pool // *bpeScratch
	filter mergeFilter
	back   backtrackOnce
}

const noMerge = ^uint64(0)

func pairKey(a, b int32) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

// merge returns rank<<32|merged id for the adjacent symbols a, spelled
// word[aStart:bStart], and b, spelled word[bStart:bEnd]; noMerge if none.
func (m *bpe) merge(word string, a, b int32, aStart, bEnd int32) uint64 {
	if m.rankIsID {
		if id, ok := m.vocab[word[aStart:bEnd]]; ok {
			return uint64(uint32(id))<<32 | uint64(uint32(id))
		}
		return noMerge
	}
	if v, ok := m.merges[pairKey(a, b)]; ok {
		return v
	}
	return noMerge
}

// bpeScratch is one encoding's working memory.
type bpeScratch struct {
	ids    []int32
	starts []int32 // each symbol's first byte in the word
	ranks  []uint64
	heap   mergeHeap
	prev   []int32
	next   []int32
	long   *longWord // appendLong's, kept for the next long word
}

// scratchKeepMax is the most symbols a pooled scratch keeps room for:
// one that held a huge word is left to the collector, not kept.
const scratchKeepMax = 1 << 16

// splitAtMark sets splitMark to mark when cutting a word before a mark
// that follows another character cannot change its tokens. The symbol
// left of such a cut always ends with that other character, and the one
// right of it always starts with the mark (merges only extend symbols),
// so if no merge joins such a pair, no merge ever crosses the cut: the
// pieces merge exactly as they would inside the whole word, lowest rank
// first within each. That holds when the mark is a token of its own (a
// mark spelled in byte fallbacks would start no symbol with it), the
// vocabulary is not byte-level (marks are a SentencePiece convention) and
// ignore_merges is off (it looks a whole word up in the vocabulary).
// SentencePiece-style files have no pre-tokenizer, so without this a whole
// prompt is one word: merged in a heap, never cached.
func (m *bpe) splitAtMark(mark string) {
	if mark == "" || m.byteLevel || m.rankIsID || m.ignoreMerges || m.suffix != "" {
		return // (a suffix marks a word's end, which a cut would move)
	}
	if _, ok := m.vocab[mark]; !ok {
		return
	}
	maxID := int32(0)
	for _, id := range m.vocab {
		maxID = max(maxID, id)
	}
	text := make([]string, maxID+1)
	for s, id := range m.vocab {
		text[id] = s
	}
	for key := range m.merges {
		a, b := text[uint32(key>>32)], text[uint32(key)]
		if strings.HasPrefix(b, mark) && !strings.HasSuffix(a, mark) {
			return
		}
	}
	m.splitMark = mark
}

// appendWord appends the tokens of one pre-tokenized word to dst.
func (m *bpe) appendWord(dst []int32, word string) []int32 { return m.appendWordTally(dst, word, nil) }

// appendWordTally is appendWord; with tally set, the tokens of a word too
// long to merge whole are counted in *tally instead of appended (Count's
// way: a 50 MB word can have 50 million tokens).
func (m *bpe) appendWordTally(dst []int32, word string, tally *int) []int32 {
	if m.splitMark == "" {
		return m.appendPiece(dst, word, tally)
	}
	mark := m.splitMark
	start := 0
	for i := 0; ; {
		k := strings.Index(word[i:], mark)
		if k < 0 {
			break
		}
		cut := i + k
		if cut > start && !strings.HasSuffix(word[:cut], mark) {
			dst = m.appendPiece(dst, word[start:cut], tally)
			start = cut
		}
		i = cut + len(mark)
	}
	return m.appendPiece(dst, word[start:], tally)
}

// appendPiece appends the tokens of a word, or of a piece of one that
// merges on its own.
func (m *bpe) appendPiece(dst []int32, word string, tally *int) []int32 {
	if len(word) <= 1 {
		// One byte of a byte-level vocabulary is one symbol, which no
		// merge touches: its own token (a digit of Qwen's, which splits
		// numbers into digits, is a word).
		if word == "" {
			return dst
		}
		if id := m.byteIDs[word[0]]; m.byteLevel && m.suffix == "" && id >= 0 {
			return append(dst, id)
		}
	}
	if ids, ok := m.cache.get(word); ok {
		return append(dst, ids...)
	}
	if m.ignoreMerges {
		if id, ok := m.vocab[word]; ok {
			m.cache.put(word, []int32{id})
			return append(dst, id)
		}
	}
	sc, _ := m.pool.Get().(*bpeScratch)
	if sc == nil {
		sc = &bpeScratch{}
	}
	if len(word) > longWindow {
		// Too long to merge whole in bounded memory (and never cached).
		dst = m.appendLong(dst, word, sc, longWindow, longOverlap, tally, m.back.built.Load(), true)
	} else {
		sc.ids, sc.starts = m.symbols(sc.ids[:0], sc.starts[:0], word)
		var ids []int32
		if len(sc.ids) <= scanMergeMax {
			ids = m.mergeScan(sc, word)
		} else {
			ids = m.mergeHeap(sc, word)
		}
		m.cache.put(word, ids)
		dst = append(dst, ids...)
	}
	if cap(sc.ids) <= scratchKeepMax && cap(sc.heap) <= 2*scratchKeepMax {
		m.pool.Put(sc)
	}
	return dst
}

// symbols appends word's initial symbols: characters (bytes in a
// byte-level vocabulary), byte fallbacks, unknowns.
func (m *bpe) symbols(dst, starts []int32, word string) ([]int32, []int32) {
	z := symbolizer{m: m, word: word, withStarts: m.byteLevel}
	dst, starts, _ = z.fill(dst, starts, 0, maxInt)
	return dst, starts
}

const maxInt = int(^uint(0) >> 1)

// symbolizer makes a word's initial symbols in order, a stretch at a time,
// so that a long word's are made as its windows need them, never all at
// once.
type symbolizer struct {
	m          *bpe
	word       string
	withStarts bool // record each symbol's first byte (byte-level only)
	i          int  // the next byte to read
	pendingUnk bool
	runes      *runeCache // if set, remembers characters' ids
}

// runeCache remembers the vocabulary's ids of the characters a long word
// met last (-1: not in it): a look-up in the vocabulary's map per
// character costs more than all else in making a long word's symbols.
type runeCache [256]struct{ r, id int32 } // r is the rune plus 1, 0 empty

// vocabID is m.vocab[ch], ch being the character r.
func (z *symbolizer) vocabID(r rune, ch string) (int32, bool) {
	// An invalid byte decodes to RuneError, which it does not spell.
	if z.runes == nil || r == utf8.RuneError && len(ch) == 1 {
		id, ok := z.m.vocab[ch]
		return id, ok
	}
	e := &z.runes[r&255]
	if e.r != r+1 {
		id, ok := z.m.vocab[ch]
		if !ok {
			id = -1
		}
		e.r, e.id = r+1, id
	}
	return e.id, e.id >= 0
}

// fill appends symbols to dst (and their first bytes, less base, to
// starts) until dst holds limit symbols (a few more for a character
// spelled in byte fallbacks) or the word is done, which it reports.
func (z *symbolizer) fill(dst, starts []int32, base, limit int) ([]int32, []int32, bool) {
	m, word := z.m, z.word
	if m.byteLevel {
		end := len(word)
		if m.suffix != "" {
			end-- // the last byte is read below, with the suffix
		}
		dst, starts = z.fillBytes(dst, starts, base, limit, end, &m.byteIDs)
		if end < len(word) && z.i == end {
			dst, starts = z.fillBytes(dst, starts, base, limit, len(word), &m.lastByteIDs)
		}
		return dst, starts, z.i == len(word)
	}
	// Symbols from characters carry no byte offsets (rankIsID needs
	// them only for byte-level vocabularies); starts stays as it is.
	for z.i < len(word) && len(dst) < limit {
		r, size := utf8.DecodeRuneInString(word[z.i:])
		ch := word[z.i : z.i+size]
		z.i += size
		var id int32
		var ok bool
		if z.i == len(word) && m.suffix != "" {
			// The reference spells the last character with the suffix,
			// byte fallbacks included.
			ch += m.suffix
			id, ok = m.vocab[ch]
		} else {
			id, ok = z.vocabID(r, ch)
		}
		if ok {
			if z.pendingUnk {
				dst, z.pendingUnk = append(dst, m.unk), false
			}
			dst = append(dst, id)
			continue
		}
		if m.byteFallback && m.hasFallback(ch) {
			// As the reference: a pending unknown stays pending across
			// byte fallbacks.
			for j := 0; j < len(ch); j++ {
				dst = append(dst, m.fallbackIDs[ch[j]])
			}
			continue
		}
		if m.unk < 0 {
			continue
		}
		if z.pendingUnk && !m.fuseUnk {
			dst = append(dst, m.unk)
		}
		z.pendingUnk = true
	}
	if z.i < len(word) {
		return dst, starts, false
	}
	if z.pendingUnk {
		dst, z.pendingUnk = append(dst, m.unk), false
	}
	return dst, starts, true
}

// fillBytes is fill for a byte-level vocabulary, up to byte end, each
// byte's symbol from ids.
func (z *symbolizer) fillBytes(dst, starts []int32, base, limit, end int, ids *[256]int32) ([]int32, []int32) {
	word := z.word
	for ; z.i < end && len(dst) < limit; z.i++ {
		id := ids[word[z.i]]
		if id < 0 {
			if id = z.m.unk; id < 0 {
				continue
			}
		}
		dst = append(dst, id)
		if z.withStarts {
			starts = append(starts, int32(z.i-base))
		}
	}
	return dst, starts
}

func (m *bpe) hasFallback(ch string) bool {
	for j := 0; j < len(ch); j++ {
		if m.fallbackIDs[ch[j]] < 0 {
			return false
		}
	}
	return true
}

// scanMergeMax is the longest word merged by scanning every pair each
// step (quadratic, but cheaper than a heap for the short words of prose).
const scanMergeMax = 48

func (m *bpe) mergeScan(sc *bpeScratch, word string) []int32 {
	ids, starts := sc.ids, sc.starts
	if !m.rankIsID {
		starts = nil
	}
	// end is symbol k's end in the word.
	end := func(k int) int32 {
		if k+1 < len(ids) {
			return starts[k+1]
		}
		return int32(len(word))
	}
	pair := func(k int) uint64 {
		if starts == nil {
			return m.merge(word, ids[k], ids[k+1], 0, 0)
		}
		return m.merge(word, ids[k], ids[k+1], starts[k], end(k+1))
	}
	ranks := sc.ranks[:0]
	for i := 0; i+1 < len(ids); i++ {
		ranks = append(ranks, pair(i))
	}
	for len(ids) > 1 {
		best := 0
		for i := 1; i < len(ranks); i++ {
			if ranks[i]>>32 < ranks[best]>>32 {
				best = i
			}
		}
		if ranks[best] == noMerge {
			break
		}
		ids[best] = int32(uint32(ranks[best]))
		ids = append(ids[:best+1], ids[best+2:]...)
		if starts != nil {
			starts = append(starts[:best+1], starts[best+2:]...)
		}
		ranks = append(ranks[:best], ranks[best+1:]...)
		if best > 0 {
			ranks[best-1] = pair(best - 1)
		}
		if best < len(ranks) {
			ranks[best] = pair(best)
		}
	}
	sc.ranks = ranks
	return ids
}

// mergeHeap merges a long word in O(n log n): the symbols form a linked
// list and candidate merges wait in a heap ordered by rank then position;
// a candidate whose symbols changed since it was pushed is skipped.
func (m *bpe) mergeHeap(sc *bpeScratch, word string) []int32 {
	ids, starts := sc.ids, sc.starts
	n := len(ids)
	prev, next := sc.prev[:0], sc.next[:0]
	for i := range n {
		prev = append(prev, int32(i-1))
		next = append(next, int32(i+1))
	}
	next[n-1] = -1
	// pair is the merge of symbol k with the one after it, r.
	pair := func(k, r int32) uint64 {
		if !m.rankIsID {
			return m.merge(word, ids[k], ids[r], 0, 0)
		}
		end := int32(len(word))
		if nn := next[r]; nn >= 0 {
			end = starts[nn]
		}
		return m.merge(word, ids[k], ids[r], starts[k], end)
	}
	h := sc.heap[:0]
	for i := int32(0); i+1 < int32(n); i++ {
		if v := pair(i, i+1); v != noMerge {
			h.push(mergeCand{rank: uint32(v >> 32), pos: i, id: int32(uint32(v))})
		}
	}
	for len(h) > 0 {
		c := h.pop()
		r := next[c.pos]
		if ids[c.pos] < 0 || r < 0 {
			continue
		}
		if v := pair(c.pos, r); v == noMerge || int32(uint32(v)) != c.id || uint32(v>>32) != c.rank {
			continue // stale
		}
		ids[c.pos] = c.id
		ids[r] = -1
		next[c.pos] = next[r]
		if nn := next[r]; nn >= 0 {
			prev[nn] = c.pos
		}
		if p := prev[c.pos]; p >= 0 {
			if v := pair(p, c.pos); v != noMerge {
				h.push(mergeCand{rank: uint32(v >> 32), pos: p, id: int32(uint32(v))})
			}
		}
		if nn := next[c.pos]; nn >= 0 {
			if v := pair(c.pos, nn); v != noMerge {
				h.push(mergeCand{rank: uint32(v >> 32), pos: c.pos, id: int32(uint32(v))})
			}
		}
	}
	out := ids[:0]
	for i := 0; i >= 0; i = int(next[i]) {
		out = append(out, ids[i])
	}
	sc.heap, sc.prev, sc.next = h, prev, next
	return out
}

type mergeCand struct {
	rank uint32
	pos  int32
	id   int32
}

func (a mergeCand) less(b mergeCand) bool {
	return a.rank < b.rank || a.rank == b.rank && a.pos < b.pos
}

// mergeHeap is a binary min-heap of merge candidates.
type mergeHeap []mergeCand

func (h *mergeHeap) push(c mergeCand) {
	*h = append(*h, c)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if !s[i].less(s[p]) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *mergeHeap) pop() mergeCand {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	for i := 0; ; {
		l, r, small := 2*i+1, 2*i+2, i
		if l < len(s) && s[l].less(s[small]) {
			small = l
		}
		if r < len(s) && s[r].less(s[small]) {
			small = r
		}
		if small == i {
			break
		}
		s[i], s[small] = s[small], s[i]
		i = small
	}
	*h = s
	return top
}

// wordCache remembers the tokens of the words seen last, as the reference
// library does: text repeats its words, and a hit is far cheaper than
// merging again, or than a lookup in the vocabulary, which at hundreds of
// thousands of tokens does not stay in the CPU's caches between responses
// (a lookup there waits about 150 ns for memory). It is a table of
// wordCacheSize slots of a pointer each, a word going to a slot its hash
// names and replacing what was there, so the words in use (those of a
// long run's output) stay in a few hundred KB; two slots share a set, so
// two words of one hash do not evict each other. Entries never change
// once stored, so lookups take no lock. Only short words are kept.
type wordCache struct {
	init  sync.Once
	seed  maphash.Seed
	slots []atomic.Pointer[cachedWord]
}

// cachedWord is a word and its tokens (in one, for a word of one or two).
type cachedWord struct {
	word string
	ids  []int32
	one  [2]int32
}

const (
	wordCacheSize    = 1 << 16
	wordCacheMaxWord = 64
)

// set returns the two slots word may be in, and which of them it goes to
// when both are taken.
func (c *wordCache) set(word string) (*[2]atomic.Pointer[cachedWord], int) {
	c.init.Do(func() {
		c.seed = maphash.MakeSeed()
		c.slots = make([]atomic.Pointer[cachedWord], wordCacheSize)
	})
	h := maphash.String(c.seed, word)
	i := h & (wordCacheSize - 2)
	return (*[2]atomic.Pointer[cachedWord])(c.slots[i : i+2]), int(h >> 63)
}

func (c *wordCache) get(word string) ([]int32, bool) {
	if len(word) > wordCacheMaxWord {
		return nil, false
	}
	set, _ := c.set(word)
	for k := range set {
		if e := set[k].Load(); e != nil && e.word == word {
			return e.ids, true
		}
	}
	return nil, false
}

func (c *wordCache) put(word string, ids []int32) {
	if len(word) > wordCacheMaxWord {
		return
	}
	e := &cachedWord{word: strings.Clone(word)}
	if len(ids) <= len(e.one) {
		e.ids = e.one[:copy(e.one[:], ids)]
	} else {
		e.ids = append([]int32(nil), ids...)
	}
	set, victim := c.set(word)
	switch {
	case set[0].Load() == nil:
		victim = 0
	case set[1].Load() == nil:
		victim = 1
	}
	set[victim].Store(e)
}

// fallbackToken is the name of byte b's fallback token, as the reference
// spells it: <0x0A>.
func fallbackToken(b byte) string { return fmt.Sprintf("<0x%02X>", b) }
