package dataset

import (
	_ "embed"
	"math/rand/v2"
	"strings"
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
	tok Tokenizer
	ids []int
}

// NewCorpus tokenizes the embedded text with tok.
func NewCorpus(tok Tokenizer) *Corpus {
	return &Corpus{tok: tok, ids: tok.Encode(sonnets + "\n" + mobyDick)}
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
	return c.fit(rng, n, func(text string) int { return c.tok.Count(text) })
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
	// Only the end of head can merge with the tail: count the tail as
	// what it adds to head's last few hundred bytes (cut at a space) while
	// searching, and the whole prompt once at the end. What it adds, not
	// the end's count plus the rest's: counted alone, the end may gain a
	// token the whole does not have (a SentencePiece normalizer prepends
	// "▁" to every text it counts), which made such prompts a token short.
	end := head
	if len(head) > 256 {
		cut := len(head) - 256
		if i := strings.IndexByte(head[cut:], ' '); i >= 0 {
			cut += i
		}
		end = head[cut:]
	}
	endCount := c.tok.Count(end)
	text, _ := c.fit(rng, total-headCount, func(text string) int {
		return c.tok.Count(end+text) - endCount
	})
	return text, c.tok.Count(head + text)
}

// fit searches windows of the corpus for one whose count (by count) is n.
func (c *Corpus) fit(rng *rand.Rand, n int, count func(string) int) (string, int) {
	if n <= 0 || len(c.ids) == 0 {
		return "", 0
	}
	best, bestCount := "", -1
	buf := make([]int, 0, n+8)
	for range 8 {
		start := rng.IntN(len(c.ids))
		k := n
		for range 6 {
			buf = c.window(buf[:0], start, k)
			text := wholeRunes(c.tok.Decode(buf))
			got := count(text)
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

// wholeRunes drops the pieces of characters that a window cut through (a
// byte-level token may hold part of one): a prompt is sent as JSON, where
// a broken character would become U+FFFD and count differently.
func wholeRunes(s string) string {
	for s != "" {
		r, size := utf8.DecodeRuneInString(s)
		if r != utf8.RuneError || size != 1 {
			break
		}
		s = s[1:]
	}
	for s != "" {
		r, size := utf8.DecodeLastRuneInString(s)
		if r != utf8.RuneError || size != 1 {
			break
		}
		s = s[:len(s)-1]
	}
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "")
	}
	return s
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
