package tokenizer

import (
	"math/bits"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// backtrackOnce builds a model's backtracking tables once the heap has
// done btBuildAfter merges of its long words' windows, not when the
// tokenizer loads: most runs never meet a long word, and the tables take
// 0.04 to 0.25 s to build and 2.5 to 12 MB (the heap does that many merges
// in about 0.05 s). Long words that merge little (one letter repeated is
// merged once, then found in the memo; Llama 2 merges no digits) never
// build them: there the heap costs little.
type backtrackOnce struct {
	once   sync.Once
	built  atomic.Pointer[backtrack]
	merges atomic.Int64
}

const btBuildAfter = 1 << 18

// longTables counts merges the heap did towards building m's backtracking
// tables, and returns them once built; nil before, or if m is refused.
func (m *bpe) longTables(merges int) *backtrack {
	if bt := m.back.built.Load(); bt != nil {
		return bt
	}
	if m.back.merges.Add(int64(merges)) < btBuildAfter {
		return nil
	}
	return m.backtracker()
}

// backtracker returns m's backtracking tables, built now if not yet; nil
// if m is refused.
func (m *bpe) backtracker() *backtrack {
	m.back.once.Do(func() { m.back.built.Store(m.buildBacktrack()) })
	return m.back.built.Load()
}

// btBuild is buildBacktrack's working state. Tokens are numbered by
// their entries (the trie's keys, sorted).
type btBuild struct {
	m       *bpe
	bt      *backtrack
	initial []bool    // by id: an initial symbol
	entries []btEntry // the trie's keys, sorted
	width   int       // bytes a label takes in a key
	own     []int32   // by id: the entry of its own symbols, -1 if none
	node    []int32   // by entry: the trie slot its key leads to
}

// btEntry is a key of the trie: a token's own symbols' labels. A key is a
// string of labels, each a byte (byte-level: a key is the token's bytes)
// or three, big-endian, so that keys sort as their labels do.
type btEntry struct {
	key string
	id  int32
}

// label is key's label d.
func (b *btBuild) label(key string, d int) int32 {
	if b.width == 1 {
		return int32(key[d])
	}
	k := key[3*d:]
	return int32(k[0])<<16 | int32(k[1])<<8 | int32(k[2])
}

// symbols is the number of labels in key.
func (b *btBuild) symbols(key string) int { return len(key) / b.width }

// buildBacktrack makes the tables of merging by backtracking, nil for a
// vocabulary it does not serve: with end_of_word_suffix (the last symbol
// of a word differs), byte-level with a byte lacking a token (dropped or
// unknown bytes), tiktoken's merge order over characters, merges of a
// byte fallback or the unknown token (whose text is not their symbol),
// two tokens of the same symbols (characters it drops), or ranks or ids
// that would not fit the tables' packed slots.
//
// Tokens are decided shortest first, so that a token's parts are decided
// before it: a token is searched for if it is regular and spells its
// symbols (see backtrack). That holds when one of its splits into two
// searched tokens, whose symbols joined are its own, merges into it at a
// rank no lower than theirs, and is valid but for the pair itself: then
// merging its symbols makes the two parts side by side, in rising rank,
// and last merges them. Under tiktoken's order every split of a token's
// text merges into it; from the merges list, only its listed pairs do.
func (m *bpe) buildBacktrack() *backtrack {
	if m.suffix != "" || m.rankIsID && !m.byteLevel {
		return nil
	}
	if m.byteLevel && slices.Contains(m.byteIDs[:], -1) {
		return nil
	}
	maxID := int32(0)
	for _, id := range m.vocab {
		maxID = max(maxID, id)
	}
	maxRank := uint64(maxID) + 1
	if !m.rankIsID {
		for _, v := range m.merges {
			maxRank = max(maxRank, v>>32+1)
		}
	}
	if maxRank >= btMaxRank || maxID >= daSearched {
		return nil
	}
	n := int(maxID) + 1
	bt := &backtrack{code: make([]int32, n), rankIsID: m.rankIsID}
	b := &btBuild{m: m, bt: bt, initial: make([]bool, n)}
	if !b.labelInitials() {
		return nil
	}
	if !b.makeKeys() {
		return nil
	}
	if !b.buildTrie() {
		return nil
	}
	if !m.rankIsID {
		idBits := uint(bits.Len(uint(len(b.entries))))
		if 2*idBits+uint(bits.Len64(maxRank)) > 64 {
			return nil
		}
		bt.pairs = newPairRanks(idBits, uint(bits.Len64(maxRank)), len(m.merges))
		for key, v := range m.merges {
			if l, r := b.own[key>>32], b.own[uint32(key)]; l >= 0 && r >= 0 {
				bt.pairs.add(l, r, uint32(v>>32)+1)
			}
		}
	}
	if !b.decide() {
		return nil
	}
	if m.byteLevel {
		b.fillFirst2()
	}
	return bt
}

// labelInitials gives the initial symbols their labels (a byte's is the
// byte) and makes them searched tokens of one symbol, with no merge;
// false for a vocabulary it refuses.
func (b *btBuild) labelInitials() bool {
	m, bt := b.m, b.bt
	for i := range bt.code {
		bt.code[i] = -1
	}
	next := int32(0)
	label := func(id int32) {
		if id >= 0 && bt.code[id] < 0 {
			bt.code[id] = next
			b.initial[id] = true
			next++
		}
	}
	if m.byteLevel {
		for _, id := range m.byteIDs {
			label(id)
		}
		return next == 256 // else two bytes share a token (a damaged file)
	}
	var chars []int32
	for s, id := range m.vocab {
		if _, size := utf8.DecodeRuneInString(s); size > 0 && size == len(s) {
			chars = append(chars, id)
		}
	}
	slices.Sort(chars)
	for _, id := range chars {
		label(id)
	}
	// A byte fallback's or the unknown token's text is not its symbol: a
	// merge of one would be a pair whose text is not its merged token's.
	odd := make(map[int32]bool)
	for _, id := range append(m.fallbackIDs[:], m.unk) {
		label(id)
		odd[id] = id >= 0 && bt.code[id] >= 0
	}
	for key := range m.merges {
		if odd[int32(key>>32)] || odd[int32(uint32(key))] {
			return false
		}
	}
	return true
}

// makeKeys makes the trie's keys: each token's own (an initial symbol's
// label; another's, its text's symbols'). A token with two texts (a
// damaged file) has no key but as an initial symbol; nor has, under a
// merges list, one that no merge makes, which no word's symbols ever
// become.
//
// It refuses (false) a vocabulary whose merges make a token the trie
// cannot see them make: a byte fallback or the unknown token whose text
// the merges spell (its text's key has no rule of its own), or a token
// with two texts (it has no key).
func (b *btBuild) makeKeys() bool {
	m, bt := b.m, b.bt
	n := len(bt.code)
	text := make([]string, n)
	twice := make([]bool, n)
	for s, id := range m.vocab {
		twice[id] = twice[id] || text[id] != "" || s == ""
		text[id] = s
	}
	made := make([]bool, n)
	for _, v := range m.merges {
		made[uint32(v)] = true
	}
	b.width = 3
	if m.byteLevel {
		b.width = 1
	}
	var syms []int32
	var buf []byte
	// key is the key of the labels of s's symbols.
	key := func(s string) string {
		if m.byteLevel {
			return s
		}
		syms, _ = m.symbols(syms[:0], nil, s)
		buf = buf[:0]
		for _, sym := range syms {
			buf = b.appendLabel(buf, bt.code[sym])
		}
		return string(buf)
	}
	b.entries = make([]btEntry, 0, len(m.vocab))
	for id, s := range text {
		if twice[id] && (m.rankIsID || made[id]) {
			return false
		}
		var own string
		switch {
		case b.initial[id]:
			own = string(b.appendLabel(buf[:0], bt.code[id]))
			if !m.byteLevel && s != "" && made[id] {
				if k := key(s); k != own && k != "" {
					return false
				}
			}
		case s != "" && !twice[id] && (m.rankIsID || made[id]):
			own = key(s)
		}
		if own != "" {
			b.entries = append(b.entries, btEntry{key: own, id: int32(id)})
		}
	}
	return true
}

// appendLabel appends label c to a key.
func (b *btBuild) appendLabel(key []byte, c int32) []byte {
	if b.width == 1 {
		return append(key, byte(c))
	}
	return append(key, byte(c>>16), byte(c>>8), byte(c))
}

// decide finds the searched tokens, fewest symbols first; false if one
// would be made by two splits (which cannot be: the tables would be wrong).
// Under tiktoken's order the first split found is taken.
func (b *btBuild) decide() bool {
	m, bt := b.m, b.bt
	var byLen [][]int32
	for e, en := range b.entries {
		if k := b.symbols(en.key); !b.initial[en.id] && k <= btMaxSymbols {
			for len(byLen) <= k {
				byLen = append(byLen, nil)
			}
			byLen[k] = append(byLen[k], int32(e))
		}
	}
	var rules btRules
	if !m.rankIsID {
		rules = b.rules()
	}
	// Tokens of one length read only shorter ones' tables and write only
	// their own: they are decided at once, a share on each goroutine.
	workers := max(1, runtime.GOMAXPROCS(0))
	var failed atomic.Bool
	decideShare := func(es []int32) {
		var prefix []int32
		for _, c := range es {
			ok := true
			if m.rankIsID {
				prefix, ok = b.decideByText(c, prefix)
			} else {
				for i := rules.start[c]; i < rules.start[c+1] && ok; i++ {
					l, r, rank := rules.a[i], rules.b[i], rules.rank[i]
					ok = !b.split(c, l, r, rank) || b.accept(c, l, r, rank)
				}
			}
			if !ok {
				failed.Store(true)
			}
		}
	}
	for _, es := range byLen {
		var wg sync.WaitGroup
		share := (len(es) + workers - 1) / workers
		for lo := share; lo < len(es); lo += share {
			wg.Add(1)
			go func() {
				defer wg.Done()
				decideShare(es[lo:min(lo+share, len(es))])
			}()
		}
		decideShare(es[:min(share, len(es))])
		wg.Wait()
		if failed.Load() {
			return false
		}
	}
	// A pair merges into the token of its text (see backtrack.rankAt):
	// under tiktoken's order at its id, whether searched or not; from
	// the merges list, if it is the token's own last merge, or else one
	// of its others, asked of pairs.
	for e := range bt.toks {
		t := &bt.toks[e]
		switch {
		case m.rankIsID:
			if t.n() == 0 {
				t.rankN = uint32(bt.idOf[e]+1) << btRankShift
			}
		default:
			own := int32(0)
			if t.n() > 0 && t.rank() > 0 {
				own = 1
			}
			if rules.start[e+1]-rules.start[e] > own {
				t.rankN |= btAskPairs
			}
		}
	}
	return true
}

// decideByText decides c under tiktoken's order, where every split of its
// text into two tokens merges into it, at its id: at most one makes it
// regular (which the first found is taken to be; see decide).
func (b *btBuild) decideByText(c int32, prefix []int32) ([]int32, bool) {
	bt := b.bt
	key, rank := b.entries[c].key, uint32(bt.idOf[c])+1
	// Its prefixes' tokens, longest first: the parts of a token's last
	// merge tend to be long.
	prefix = prefix[:0]
	node := int32(0)
	for d := 0; d+1 < b.symbols(key); d++ {
		node = bt.child(node, b.label(key, d))
		if tok := bt.da[node].tok; tok >= 0 && tok&daSearched != 0 {
			prefix = append(prefix, tok&^daSearched)
		}
	}
	for k := len(prefix) - 1; k >= 0; k-- {
		l := prefix[k]
		r := b.find(key[bt.toks[l].n()*int32(b.width):])
		if r >= 0 && b.split(c, l, r, rank) {
			return prefix, b.accept(c, l, r, rank)
		}
	}
	return prefix, true
}

// find is the token whose key is key, or -1.
func (b *btBuild) find(key string) int32 {
	node := int32(0)
	for d := range b.symbols(key) {
		if node = b.bt.child(node, b.label(key, d)); node < 0 {
			return -1
		}
	}
	if tok := b.bt.da[node].tok; tok >= 0 {
		return tok &^ daSearched
	}
	return -1
}

// split reports whether the searched tokens l and r, merging at rank, make
// c regular: their symbols are c's, rank is no lower than theirs, and no
// pair across their edge merges before them.
func (b *btBuild) split(c, l, r int32, rank uint32) bool {
	tl, tr := &b.bt.toks[l], &b.bt.toks[r]
	key := b.entries[c].key
	nl, nr := tl.n(), tr.n()
	if nl == 0 || nr == 0 || int(nl+nr) != b.symbols(key) || rank < tl.rank() || rank < tr.rank() {
		return false
	}
	if cut := int(nl) * b.width; b.entries[l].key != key[:cut] || b.entries[r].key != key[cut:] {
		return false
	}
	return b.validBelow(l, r)
}

// validBelow is backtrack.validAt but for the pair itself, without a
// window: whether no pair across the edge of l and r merges before them.
func (b *btBuild) validBelow(l, r int32) bool {
	bt := b.bt
	for {
		tl, tr := &bt.toks[l], &bt.toks[r]
		var limit uint32
		switch rl, rr := tl.rank(), tr.rank(); {
		case rl > rr:
			limit, l = rl, tl.right
		case rr > 0:
			limit, r = rr+1, tr.left
		default:
			return true
		}
		if b.rank(l, r) < limit {
			return false
		}
	}
}

// rank is the rank (plus one) of the merge of the searched tokens l and r,
// or noRank.
func (b *btBuild) rank(l, r int32) uint32 {
	bt := b.bt
	if !bt.rankIsID {
		return bt.pairs.rank(l, r)
	}
	node, key := b.node[l], b.entries[r].key
	for d := range b.symbols(key) {
		if node = bt.child(node, b.label(key, d)); node < 0 {
			return noRank
		}
	}
	if tok := bt.da[node].tok; tok >= 0 {
		return uint32(bt.idOf[tok&^daSearched]) + 1
	}
	return noRank
}

// accept records c as made by merging l and r at rank; false if it was
// made by another split already.
func (b *btBuild) accept(c, l, r int32, rank uint32) bool {
	bt := b.bt
	slot := &bt.da[b.node[c]]
	if bt.toks[c].n() > 0 || slot.tok&daSearched != 0 {
		return false
	}
	// The longest searched token c's symbols begin with.
	shorter, node := int32(-1), int32(0)
	key := b.entries[c].key
	for d := range b.symbols(key) - 1 {
		node = bt.child(node, b.label(key, d))
		if tok := bt.da[node].tok; tok >= 0 && tok&daSearched != 0 {
			shorter = tok &^ daSearched
		}
	}
	bt.toks[c] = btToken{rankN: rank<<btRankShift | uint32(b.symbols(key)), shorter: shorter, left: l, right: r}
	slot.tok = c | daSearched
	return true
}

// btRules are the merges list's pairs by the token they merge into, all
// numbered by entry.
type btRules struct {
	start []int32 // entry e's rules are [start[e], start[e+1])
	a, b  []int32
	rank  []uint32
}

func (b *btBuild) rules() btRules {
	m := b.m
	r := btRules{start: make([]int32, len(b.entries)+2)}
	// each calls f with a merge's entries and rank, for merges of tokens
	// with entries.
	each := func(f func(l, rt, c int32, rank uint32)) {
		for key, v := range m.merges {
			l, rt, c := b.own[key>>32], b.own[uint32(key)], b.own[uint32(v)]
			if l >= 0 && rt >= 0 && c >= 0 {
				f(l, rt, c, uint32(v>>32)+1)
			}
		}
	}
	each(func(_, _, c int32, _ uint32) { r.start[c+2]++ })
	for i := 2; i < len(r.start); i++ {
		r.start[i] += r.start[i-1]
	}
	k := r.start[len(r.start)-1]
	r.a, r.b, r.rank = make([]int32, k), make([]int32, k), make([]uint32, k)
	each(func(l, rt, c int32, rank uint32) {
		i := r.start[c+1]
		r.start[c+1]++
		r.a[i], r.b[i], r.rank[i] = l, rt, rank
	})
	return r
}
