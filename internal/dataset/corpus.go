package dataset

import (
	_ "embed"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// The embedded public-domain text (corpus/README.md says where from).
var (
	//go:embed corpus/sonnets.txt
	sonnets string
	//go:embed corpus/moby_dick.txt
	mobyDick string
)

// Tokenizer is what synthetic text needs from the client tokenizer.
type Tokenizer interface {
	Count(text string) int
	Encode(text string) []int
	Decode(ids []int) string
}

// Corpus is the embedded text as tokens of one tokenizer. Synthetic prompts
// (and the mock server's answers) are windows of it, cut to an exact token
// count, as AIPerf cuts its prompts from Shakespeare. It is read-only
// after NewCorpus and safe for concurrent use.
type Corpus struct {
	tok  Tokenizer
	ids  []int
	text string // what ids encode
	// joins says counts compose at word boundaries (see Corpus.join),
	// and off, when not nil, where each id starts in text (and text's
	// length last): the ids decode to text piece by piece, so a window
	// is a slice of text, counted from its ids. Both are set by
	// composes, once, when first needed.
	once  sync.Once
	joins bool
	off   []int32
}

// NewCorpus tokenizes the embedded text with tok.
func NewCorpus(tok Tokenizer) *Corpus {
	text := sonnets + "\n" + mobyDick
	return &Corpus{tok: tok, ids: tok.Encode(text), text: text}
}

// Count counts text with the corpus' tokenizer.
func (c *Corpus) Count(text string) int { return c.tok.Count(text) }

// Encode encodes text with the corpus' tokenizer.
func (c *Corpus) Encode(text string) []int { return c.tok.Encode(text) }

// Tokens is the corpus' length in tokens.
func (c *Corpus) Tokens() int { return len(c.ids) }

// Text returns a window of the corpus from a random token that counts
// exactly n tokens under the tokenizer, and that count. A window's text can
// count a token more or less than the ids it was decoded from (a word cut
// in two, a merge across the cut), so the window is widened or narrowed
// until the count is exact; should no window of eight starts reach it, the
// closest text is returned with its true count, never a wrong one.
func (c *Corpus) Text(rng *rand.Rand, n int) (string, int) {
	return c.fit(rng, n, "", 0)
}

// TextAfter returns text to follow head such that head+text counts
// exactly total tokens, and the count head+text really has. It is how a
// prompt that starts with shared blocks (a prefix, a trace's hash blocks)
// still has its exact length: the blocks stay byte-identical and the tail
// absorbs whatever the tokenizer merges across the join. When head alone
// reaches total, text is empty.
func (c *Corpus) TextAfter(rng *rand.Rand, head string, total int) (string, int) {
	headCount := c.tok.Count(head)
	if total <= headCount {
		return "", headCount
	}
	end := joinEnd(head)
	text, added := c.textAfter(rng, end, headCount, total)
	if len(end) == len(head) || c.composes() && hasWordBoundary(end) {
		return text, headCount + added
	}
	return text, c.tok.Count(head + text)
}

// joinEnd is the end of head that a tail is counted after: its last few
// hundred bytes, cut at a space.
func joinEnd(head string) string {
	if len(head) <= 256 {
		return head
	}
	cut := len(head) - 256
	if i := strings.IndexByte(head[cut:], ' '); i >= 0 {
		cut += i
	}
	return head[cut:]
}

// textAfter is TextAfter for a head of headCount tokens that ends with
// end (joinEnd's): the tail, and the tokens it adds to end. That is
// what it adds to the head when end is the whole head, or when the
// tokenizer's counts compose (composes) and end has a word boundary
// inside (hasWordBoundary).
//
// Only the end of head can merge with the tail, so the tail is counted
// as what it adds to end. What it adds, not end's count plus the tail's:
// counted alone, the end may gain a token the whole does not have (a
// SentencePiece normalizer prepends "▁" to every text it counts), which
// made such prompts a token short.
func (c *Corpus) textAfter(rng *rand.Rand, end string, headCount, total int) (string, int) {
	if total <= headCount {
		return "", 0
	}
	if c.composes() {
		// What the tail adds to end is what it adds to end's last words
		// (Corpus.join).
		if _, last := wordBoundaries(end); last >= 0 {
			end = lastWords(end, last)
		}
	}
	return c.fit(rng, total-headCount, end, c.tok.Count(end))
}

// Counting across a join. A tokenizer encodes a text as its
// pre-tokenized words, and every pre-tokenizer in use cuts before a
// space between two ASCII letters (a word boundary): byte-level BPE's
// regular expressions (GPT-2, Llama 3, Qwen, DeepSeek, o200k) end a run
// of letters there and start the next word with the space, Metaspace
// and BERT's pre-tokenizer split at spaces, and the SentencePiece
// vocabularies merged without a pre-tokenizer hold no token with a
// letter before a "▁". The tokens up to a word boundary are then those
// of the text before it, and those after it the same whatever precedes
// it. So if a text p ends with a suffix e that has a word boundary
// inside, what s adds to p is what it adds to e:
//
//	Count(p+s) = Count(p) + Count(e+s) - Count(e)
//
// and if s has a word boundary at r,
//
//	Count(e+s) = Count(e+s[:r]) + Count(s) - Count(s[:r]).
//
// A prompt of hash blocks is thus counted from its blocks' counts and a
// few words at each join, and a window of the corpus from the corpus'
// ids and a few words at each end, instead of whole: a trace of 23,600
// rows of 8,500 tokens had 400 million tokens counted. The tokenizer must
// prove the rule from its components (tokenizer.HF.CutsAtSpaces), and
// composes also tries the rules on joins of the corpus' own text before
// they are used; any other tokenizer (WordPiece, Unigram, a regex not
// written by hand), or one that fails, has every prompt counted whole, as
// before.

// isASCIILetter says b is a letter A to Z, either case.
func isASCIILetter(b byte) bool { return 'a' <= b|0x20 && b|0x20 <= 'z' }

// wordBoundaryAt says s[i] is a space between two ASCII letters.
func wordBoundaryAt(s string, i int) bool {
	return i > 0 && i+1 < len(s) && s[i] == ' ' && isASCIILetter(s[i-1]) && isASCIILetter(s[i+1])
}

// hasWordBoundary says s has a word boundary inside.
func hasWordBoundary(s string) bool {
	first, _ := wordBoundaries(s)
	return first >= 0
}

// wordBoundaries are the first and last word boundaries of s, -1 for
// none.
func wordBoundaries(s string) (first, last int) {
	first, last = -1, -1
	for i := 0; i < len(s); {
		k := strings.IndexByte(s[i:], ' ')
		if k < 0 {
			return -1, -1
		}
		if i += k; wordBoundaryAt(s, i) {
			first = i
			break
		}
		i++
	}
	for j := len(s); ; {
		k := strings.LastIndexByte(s[:j], ' ')
		if k < 0 {
			return first, -1
		}
		if wordBoundaryAt(s, k) {
			return first, k
		}
		j = k
	}
}

// joinState is what counting past the end of a text p needs: Count(p),
// and a suffix end of p that is p itself or has a word boundary inside,
// with its count. The zero value is the empty text's.
type joinState struct {
	n        int
	end      string
	endCount int
}

// join is the state of p+s, from that of p; sCount is Count(s), or -1
// when not known. Under the rules above it counts only end and the
// words of s around its first and last word boundaries (all of s when
// its count is not known or it has none).
func (c *Corpus) join(p joinState, s string, sCount int) joinState {
	first, last := wordBoundaries(s)
	if first < 0 {
		// No word boundary in s: end grows by s.
		end := p.end + s
		endCount := c.tok.Count(end)
		return joinState{n: p.n - p.endCount + endCount, end: end, endCount: endCount}
	}
	n := c.joinCount(p, s, sCount, first)
	// A copy: the state outlives s (a block dropped once built).
	end := strings.Clone(lastWords(s, last))
	return joinState{n: n, end: end, endCount: c.tok.Count(end)}
}

// joinCount is Count(p+s) (join's n), first the first word boundary of
// s (-1 for none).
func (c *Corpus) joinCount(p joinState, s string, sCount, first int) int {
	base := p.n - p.endCount // Count(p) = base + Count(end); 0 when end is p
	if sCount >= 0 && first >= 0 {
		return base + c.tok.Count(p.end+s[:first]) + sCount - c.tok.Count(s[:first])
	}
	return base + c.tok.Count(p.end+s)
}

// lastWords is s from a few words before its word boundary at last: a
// suffix of s with a word boundary inside.
func lastWords(s string, last int) string {
	if last > 32 {
		if k := strings.LastIndexByte(s[:last-32], ' '); k >= 0 {
			return s[k:]
		}
	}
	return s
}

// composes says the tokenizer's counts add up at word boundaries as
// join assumes: tried on joins of corpus windows of 1 to 700 tokens
// (cut anywhere in a word), chained three at a time and compared with
// the whole's count, and on a tail counted as TextAfter does. It is false
// for a corpus too small to try. It sets c.off too.
func (c *Corpus) composes() bool {
	c.once.Do(c.tryJoins)
	return c.joins
}

func (c *Corpus) tryJoins() {
	// The rule must be proved from the tokenizer's components (the
	// tokenizer says so); the trials below then guard this code's use of it.
	if p, ok := c.tok.(interface{ CutsAtSpaces() bool }); !ok || !p.CutsAtSpaces() {
		return
	}
	if len(c.ids) < 2048 {
		return
	}
	rng := rand.New(rand.NewPCG(0x6a6f696e, 1)) // "join"
	piece := func() (string, int) {
		k := 1 + rng.IntN(700)
		text := wholeRunes(c.tok.Decode(c.window(nil, rng.IntN(len(c.ids)), k)))
		return text, c.tok.Count(text)
	}
	for range 24 {
		var st joinState
		whole := ""
		for k := range 3 {
			s, n := piece()
			if k == 1 && rng.IntN(2) == 0 {
				n = -1
			}
			st = c.join(st, s, n)
			whole += s
			if st.n != c.tok.Count(whole) {
				return
			}
		}
		s, _ := piece()
		if end := joinEnd(whole); hasWordBoundary(end) && st.n+c.tok.Count(end+s)-c.tok.Count(end) != c.tok.Count(whole+s) {
			return
		}
	}
	c.joins = true
	// Windows as slices of the text, counted from their ids: the texts
	// and counts of the windows decoded and counted whole.
	if c.off = c.offsets(); c.off == nil {
		return
	}
	for range 48 {
		start, k := rng.IntN(len(c.ids)), 1+rng.IntN(700)
		if start+k > len(c.ids) {
			continue
		}
		prefix, _ := piece()
		prefix = joinEnd(prefix)
		if rng.IntN(2) == 0 {
			prefix = ""
		}
		text, at := c.slice(start, k)
		if text != wholeRunes(c.tok.Decode(c.ids[start:start+k])) || c.countAfter(prefix, text, at) != c.tok.Count(prefix+text) {
			c.off = nil
			return
		}
	}
}

// offsets are where each corpus id starts in the corpus text, and the
// text's length last, when the ids decode one by one to pieces that
// follow each other in it; else nil.
func (c *Corpus) offsets() []int32 {
	if len(c.text) >= math.MaxInt32 {
		return nil
	}
	pieces := map[int]string{}
	off := make([]int32, len(c.ids)+1)
	pos := 0
	for i, id := range c.ids {
		p, ok := pieces[id]
		if !ok {
			p = c.tok.Decode([]int{id})
			pieces[id] = p
		}
		if p == "" || !strings.HasPrefix(c.text[pos:], p) {
			return nil
		}
		off[i] = int32(pos)
		pos += len(p)
	}
	if pos != len(c.text) {
		return nil
	}
	off[len(c.ids)] = int32(pos)
	return off
}

// fit searches windows of the corpus for one whose text counts n tokens
// after prefix, that is Count(prefix+text)-prefixCount.
func (c *Corpus) fit(rng *rand.Rand, n int, prefix string, prefixCount int) (string, int) {
	if n <= 0 || len(c.ids) == 0 {
		return "", 0
	}
	sliced := c.composes() && c.off != nil
	best, bestCount := "", -1
	var buf []int
	for range 8 {
		start := rng.IntN(len(c.ids))
		k := n
		for range 6 {
			text, at := "", -1
			if sliced && start+k <= len(c.ids) {
				text, at = c.slice(start, k)
			} else {
				buf = c.window(buf[:0], start, k)
				text = wholeRunes(c.tok.Decode(buf))
			}
			got := c.countAfter(prefix, text, at) - prefixCount
			if got == n {
				return text, n
			}
			if bestCount < 0 || abs(got-n) < abs(bestCount-n) {
				best, bestCount = text, got
			}
			k = max(1, k+n-got)
		}
	}
	return best, bestCount
}

// slice is the text of the k ids from start, wholeRunes's, as a slice
// of the corpus text (c.off is set, and the window does not wrap), and
// where it starts there (-1 if it is not a slice).
func (c *Corpus) slice(start, k int) (string, int) {
	lo, hi := int(c.off[start]), int(c.off[start+k])
	i, j := runeSpan(c.text[lo:hi])
	text := c.text[lo+i : lo+j]
	if !utf8.ValidString(text) {
		return strings.ToValidUTF8(text, ""), -1
	}
	return text, lo + i
}

// countAfter is Count(prefix+text), where text is the corpus text from
// byte at on (-1: not known). Such a text is counted as its words up to
// its first word boundary and from its last, plus the corpus' tokens
// between: the corpus' ids break at every word boundary (Corpus.join).
func (c *Corpus) countAfter(prefix, text string, at int) int {
	if at < 0 {
		return c.tok.Count(prefix + text)
	}
	first, last := wordBoundaries(text)
	if first < 0 || first == last {
		return c.tok.Count(prefix + text)
	}
	i, okI := c.tokenAt(at + first)
	j, okJ := c.tokenAt(at + last)
	if !okI || !okJ {
		return c.tok.Count(prefix + text)
	}
	return c.tok.Count(prefix+text[:first]+text[last:]) + j - i
}

// tokenAt is the index of the corpus id that starts at byte pos of the
// corpus text, if one does.
func (c *Corpus) tokenAt(pos int) (int, bool) {
	i, ok := slices.BinarySearch(c.off, int32(pos))
	return i, ok
}

// wholeRunes drops the pieces of characters that a window cut through (a
// byte-level token may hold part of one): a prompt is sent as JSON, where
// a broken character would become U+FFFD and count differently.
func wholeRunes(s string) string {
	i, j := runeSpan(s)
	s = s[i:j]
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "")
	}
	return s
}

// runeSpan is s[i:j] without the broken characters at its ends.
func runeSpan(s string) (i, j int) {
	j = len(s)
	for i < j {
		r, size := utf8.DecodeRuneInString(s[i:j])
		if r != utf8.RuneError || size != 1 {
			break
		}
		i++
	}
	for i < j {
		r, size := utf8.DecodeLastRuneInString(s[i:j])
		if r != utf8.RuneError || size != 1 {
			break
		}
		j--
	}
	return i, j
}

// window appends k ids from start, wrapping around the corpus' end.
func (c *Corpus) window(dst []int, start, k int) []int {
	for k > 0 {
		take := min(k, len(c.ids)-start)
		dst = append(dst, c.ids[start:start+take]...)
		k -= take
		start = 0
	}
	return dst
}

// Pieces returns text of exactly n tokens (when the corpus allows, as
// Text) cut into n non-empty pieces at character boundaries: the chunks
// of a simulated stream, one per token.
func (c *Corpus) Pieces(rng *rand.Rand, n int) []string {
	text, _ := c.Text(rng, n)
	runes := utf8.RuneCountInString(text)
	if n <= 0 || runes == 0 {
		return nil
	}
	pieces := make([]string, 0, n)
	parts := min(n, runes)
	start, r := 0, 0
	for i := range text {
		if r > 0 && r*parts/runes != (r-1)*parts/runes {
			pieces = append(pieces, text[start:i])
			start = i
		}
		r++
	}
	return append(pieces, text[start:])
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
