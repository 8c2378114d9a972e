package tokenizer

import "math/bits"

// A long word's windows are merged by backtracking (the linear encoder of
// GitHub's rust-gems "bpe" crate) rather than by the heap, several times
// faster, with exactly the heap's tokens. Its ground, for BPE as the
// reference runs it (merge the adjacent pair of lowest rank, leftmost on
// ties), with "E(s)" the tokens merging the symbols s alone gives:
//
//   - A token t "spells" the symbols s if E(s) = [t]. The tokens of E(s),
//     each over its own symbols, spell them (no merge crossed its edges,
//     so alone its symbols merge as they did in s), and so does every
//     pair of neighbours: E(ab) = [a, b], a pair that is "valid".
//   - Conversely, tokens each spelling its symbols, every neighbouring
//     pair valid, are E of all their symbols: run the merges of the
//     whole; until one crosses a token's edge, the merges inside a token,
//     or inside a pair, go as they would alone; so the first to cross the
//     edge between a and b would cross it in E(ab) as well.
//
// So E(s) is the one valid chain of spelling tokens over s, and a search
// for it may keep, at each place, the longest token that spells what
// begins there and makes a valid pair with the token before it, try
// shorter ones if it does not, and back up a token when none fits. Every
// valid chain up to a place is E of what precedes it, so a place found to
// lead nowhere leads nowhere whatever the search tried before it (dead),
// and each place is searched once.
//
// Whether a pair is valid is read from the two tokens' merge trees, a
// token's tree being that of the merges spelling it (each node spells its
// symbols too). Merging a and b side by side, until a merge crosses
// between them, runs a's merges and b's in order of rank (a's first on a
// tie, being to the left), provided each token's merges come in rising
// rank (a "regular" token: every node ranks at least as high as its
// children). The pair across the edge is then a's right spine node of the
// moment and b's left one; it lasts until the later of the two is made
// from its parts' merge, and it would merge first if it ranks below that
// merge (a's, to its left, wins a tie; b's, to its right, loses it). The
// pairs across the edge, from the top (a, b) down to the two symbols
// either side, are walked by undoing whichever of the two was made later
// (the higher rank); a is valid beside b if none of them would merge.
//
// Only regular tokens are searched for (see buildBacktrack); a word whose
// tokens include an irregular one has no valid chain of searched tokens,
// which the search reports, and its window is merged by the heap.
//
// Speed is in where the tables sit in memory: a window's symbols are first
// matched against the vocabulary at every place (a trie in a double array,
// its first two levels a dense table), which gives the longest searched
// token there and every token there. A pair across an edge can merge only
// into the token of its text, read from that match; the merges' table,
// which misses the CPU's caches, is read only for a token that more than
// one pair of the merges list makes.

// backtrack is a vocabulary's tables for merging by backtracking. Its
// tokens are numbered in the order of their symbols (the trie's keys),
// not by id, so that tokens a word of few characters uses sit together in
// memory; idOf maps them back.
type backtrack struct {
	toks []btToken // n() == 0 for a token never searched for
	idOf []int32
	// code numbers the initial symbols (by id, -1: none): a trie label.
	code []int32
	da   []daSlot
	// first2, byte-level only, is the trie below its first two levels,
	// by the two labels.
	first2 []daFirst2
	// rankIsID: a pair's rank is its text's token's id plus one, found
	// in the trie; otherwise it is in pairs (rank plus one).
	rankIsID bool
	pairs    pairRanks
}

// btToken is a token as the search sees it: its symbols, its last merge's
// rank plus one (0 for an initial symbol) and whether pairs must be asked
// about merges into it, packed; the pair that merge joins; the longest
// searched token its symbols begin with (-1: none). A token not searched
// for has 0 symbols, and under tiktoken's order its id plus one as rank.
type btToken struct {
	rankN                uint32
	shorter, left, right int32
}

const (
	// btMaxSymbols is the most symbols a searched token has.
	btMaxSymbols = 255
	// btAskPairs marks a token that more of the merges list's pairs merge
	// into than its own last merge's.
	btAskPairs  = 1 << 8
	btRankShift = 9
	// btMaxRank bounds the ranks rankN has room for.
	btMaxRank = 1 << (32 - btRankShift)
)

func (t *btToken) n() int32     { return int32(t.rankN & btMaxSymbols) }
func (t *btToken) rank() uint32 { return t.rankN >> btRankShift }

// daSlot is a slot of the double-array trie: a node's children by label c
// are at base+c, whose check is the node's slot; tok is the token whose
// symbols lead to it (-1: none), with daSearched set if it is searched.
type daSlot struct{ base, check, tok int32 }

const daSearched = 1 << 30

// daFirst2 is the trie after two labels: the node (-1 if the two labels
// lead nowhere) and its base (so that a walk reads the double array from
// the third label on only), and the tokens of the first label and of both
// (as daSlot's tok).
type daFirst2 struct{ node, base, tok1, tok2 int32 }

// child is node's child by label c, or -1.
func (bt *backtrack) child(node, c int32) int32 {
	t := bt.da[node].base + c
	if uint(t) < uint(len(bt.da)) && bt.da[t].check == node {
		return t
	}
	return -1
}

// backtrackScratch is encode's working memory.
type backtrackScratch struct {
	codes   []int32 // the window's labels
	longest []int32 // by place: the longest searched token there
	// walks are the tokens (as daSlot's tok) of the symbols from each
	// place on, one per symbol matched: place i's from walk[i] to
	// walk[i+1].
	walk, walks []int32
	dead        []uint64 // a bit per place that leads nowhere
}

// encode appends E(syms) to ids and each token's first symbol to pos, or
// reports false (ids and pos as they came) if syms hold a symbol no token
// starts with or if no chain of searched tokens spells them (an irregular
// token; see above).
func (bt *backtrack) encode(sc *backtrackScratch, syms []int32, ids, pos []int32) ([]int32, []int32, bool) {
	codes := sc.grow(len(syms))
	for i, s := range syms {
		if uint(s) >= uint(len(bt.code)) || bt.code[s] < 0 {
			return ids, pos, false
		}
		codes[i] = bt.code[s]
	}
	return bt.search(sc, ids, pos)
}

// encodeBytes is encode for a byte-level vocabulary's symbols, given as
// their bytes (a byte is its own label).
func (bt *backtrack) encodeBytes(sc *backtrackScratch, text string, ids, pos []int32) ([]int32, []int32, bool) {
	codes := sc.grow(len(text))
	for i := range codes {
		codes[i] = int32(text[i])
	}
	return bt.search(sc, ids, pos)
}

// grow sizes sc for a window of n symbols and returns its labels.
func (sc *backtrackScratch) grow(n int) []int32 {
	if cap(sc.codes) < n {
		sc.codes = make([]int32, n, 2*n)
		sc.longest = make([]int32, n, 2*n)
		sc.walk = make([]int32, n+1, 2*n+1)
	}
	sc.codes, sc.longest, sc.walk = sc.codes[:n], sc.longest[:n], sc.walk[:n+1]
	return sc.codes
}

// search is encode once the window's labels are in sc.codes.
func (bt *backtrack) search(sc *backtrackScratch, ids, pos []int32) ([]int32, []int32, bool) {
	bt.match(sc)
	n := len(sc.codes)
	words := n/64 + 1
	if cap(sc.dead) < words {
		sc.dead = make([]uint64, words)
	}
	dead := sc.dead[:words]
	clear(dead)
	first := len(ids)
	p := 0
	next := sc.longest[0]
	for p < n {
		t := next
		for {
			end := p + int(bt.toks[t].n())
			if dead[end/64]&(1<<(end%64)) == 0 && (len(ids) == first || bt.validAt(sc, p, ids[len(ids)-1], t)) {
				ids, pos = append(ids, t), append(pos, int32(p))
				p = end
				if p < n {
					next = sc.longest[p]
				}
				break
			}
			if t = bt.toks[t].shorter; t >= 0 {
				continue
			}
			// Nothing fits here: back up a token and try shorter ones
			// in its place.
			if len(ids) == first {
				return ids, pos, false // as they came
			}
			dead[p/64] |= 1 << (p % 64)
			last := len(ids) - 1
			next, p = ids[last], int(pos[last])
			ids, pos = ids[:last], pos[:last]
			break
		}
	}
	for i := first; i < len(ids); i++ {
		ids[i] = bt.idOf[ids[i]]
	}
	if cap(sc.walks) > btKeepWalks {
		sc.walks = nil // a window of long tokens' only: not kept
	}
	return ids, pos, true
}

// match fills sc's longest and walks for the window's labels.
func (bt *backtrack) match(sc *backtrackScratch) {
	codes, longest, walk := sc.codes, sc.longest, sc.walk
	n := len(codes)
	da, walks := bt.da, sc.walks[:0]
	for i := range codes {
		walk[i] = int32(len(walks))
		node, base, j, long := int32(0), da[0].base, i, int32(-1)
		if bt.first2 != nil && i+1 < n {
			f := &bt.first2[codes[i]<<8|codes[i+1]]
			walks = append(walks, f.tok1)
			long = f.tok1 &^ daSearched
			if f.node < 0 {
				longest[i] = long
				continue
			}
			walks = append(walks, f.tok2)
			if f.tok2 >= 0 && f.tok2&daSearched != 0 {
				long = f.tok2 &^ daSearched
			}
			node, base, j = f.node, f.base, i+2
		}
		for ; j < n; j++ {
			t := base + codes[j]
			if uint(t) >= uint(len(da)) || da[t].check != node {
				break
			}
			node, base = t, da[t].base
			tok := da[t].tok
			walks = append(walks, tok)
			if tok >= 0 && tok&daSearched != 0 {
				long = tok &^ daSearched
			}
		}
		longest[i] = long
	}
	walk[n] = int32(len(walks))
	sc.walks = walks
}

// btKeepWalks bounds the walks a pooled scratch keeps room for: a window
// of symbols of which the longest tokens are made has a long walk at each
// place.
const btKeepWalks = 1 << 17

// validAt reports whether a, ending at place p of the window, and b,
// beginning there, make a valid pair (see above): whether, from the pair
// (a, b) down, no pair across their edge merges before the later of its
// two was made. A pair merges only into the token of its text, if the
// walk from its place has one.
func (bt *backtrack) validAt(sc *backtrackScratch, p int, a, b int32) bool {
	walk, walks := sc.walk, sc.walks
	ta, tb := &bt.toks[a], &bt.toks[b]
	na, nb := ta.n(), tb.n()
	limit := noRank // the pair merges if it ranks below limit
	for {
		s := p - int(na)
		if at := walk[s] + na + nb - 1; at < walk[s+1] {
			if e := walks[at] &^ daSearched; e >= 0 {
				r := bt.toks[e].rank() // tiktoken's order
				if !bt.rankIsID {
					r = bt.mergeRank(e, a, b)
				}
				if r < limit {
					return false
				}
			}
		}
		switch ra, rb := ta.rank(), tb.rank(); {
		case ra > rb:
			// a was made last: its right part met b until then, and
			// a's merge, left of the pair, wins a tie.
			limit, a = ra, ta.right
			ta = &bt.toks[a]
			na = ta.n()
		case rb > 0:
			// b was made last (or as a, whose merge is to the left):
			// a met b's left part until then, and wins a tie.
			limit, b = rb+1, tb.left
			tb = &bt.toks[b]
			nb = tb.n()
		default:
			return true // two initial symbols
		}
	}
}

// mergeRank is the rank (plus one) of the merge of x and y into e, the
// token of their text, under a merges list, or noRank if they do not
// merge.
func (bt *backtrack) mergeRank(e, x, y int32) uint32 {
	t := &bt.toks[e]
	if t.left == x && t.right == y && t.n() > 0 {
		return t.rank()
	}
	if t.rankN&btAskPairs != 0 {
		return bt.pairs.rank(x, y)
	}
	return noRank
}

// noRank is the rank of a pair that does not merge.
const noRank = ^uint32(0)

// pairRanks maps a pair of tokens to the rank (plus one) of their merge,
// in an open addressing table of one word a slot: a plus one, b and the
// rank, packed (0: empty).
type pairRanks struct {
	slots    []uint64
	shift    uint
	idBits   uint
	rankBits uint
}

func newPairRanks(idBits, rankBits uint, n int) pairRanks {
	p := pairRanks{idBits: idBits, rankBits: rankBits}
	size := 1 << 10
	for size < n+n/3 {
		size *= 2
	}
	p.slots = make([]uint64, size)
	p.shift = uint(64 - bits.TrailingZeros(uint(size)))
	return p
}

func (p *pairRanks) key(a, b int32) uint64 { return uint64(a+1)<<p.idBits | uint64(b) }

// rank is the pair's merge rank plus one, or noRank.
func (p *pairRanks) rank(a, b int32) uint32 {
	key := p.key(a, b)
	mask := uint64(len(p.slots) - 1)
	for i := mix(key) >> p.shift; ; i = (i + 1) & mask {
		s := p.slots[i]
		if s == 0 {
			return noRank
		}
		if s>>p.rankBits == key {
			return uint32(s & (1<<p.rankBits - 1))
		}
	}
}

// add sets the pair's rank, which it has not; the table has room for it.
func (p *pairRanks) add(a, b int32, rank uint32) {
	key := p.key(a, b)
	mask := uint64(len(p.slots) - 1)
	i := mix(key) >> p.shift
	for p.slots[i] != 0 {
		i = (i + 1) & mask
	}
	p.slots[i] = key<<p.rankBits | uint64(rank)
}
