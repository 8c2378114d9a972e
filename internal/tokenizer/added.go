package tokenizer

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// addedToken is one of tokenizer.json's "added_tokens": matched in the text
// before anything else and never split.
type addedToken struct {
	id                         int32
	content                    string
	singleWord, lstrip, rstrip bool
}

// addedTrie finds added tokens in text, leftmost first and longest at a
// position, as the reference's Aho-Corasick (LeftmostLongest) does.
type addedTrie struct {
	nodes  []trieNode
	tokens []addedToken
	first  [256]bool // bytes that can start a token
}

type trieNode struct {
	next  map[byte]int32
	token int32 // index into tokens, -1 if no token ends here
}

func newAddedTrie(tokens []addedToken) *addedTrie {
	t := &addedTrie{nodes: []trieNode{{token: -1}}, tokens: tokens}
	for i, tok := range tokens {
		if tok.content == "" {
			continue
		}
		n := int32(0)
		for j := 0; j < len(tok.content); j++ {
			c := tok.content[j]
			nx, ok := t.nodes[n].next[c]
			if !ok {
				if t.nodes[n].next == nil {
					t.nodes[n].next = map[byte]int32{}
				}
				nx = int32(len(t.nodes))
				t.nodes[n].next[c] = nx
				t.nodes = append(t.nodes, trieNode{token: -1})
			}
			n = nx
		}
		if t.nodes[n].token < 0 {
			t.nodes[n].token = int32(i)
		}
		t.first[tok.content[0]] = true
	}
	return t
}

// longestAt returns the index of the longest token starting at s[i:] and
// its length, or -1.
func (t *addedTrie) longestAt(s string, i int) (int32, int) {
	best, bestLen := int32(-1), 0
	n := int32(0)
	for j := i; j < len(s); j++ {
		nx, ok := t.nodes[n].next[s[j]]
		if !ok {
			break
		}
		n = nx
		if tok := t.nodes[n].token; tok >= 0 {
			best, bestLen = tok, j+1-i
		}
	}
	return best, bestLen
}

// segment is a stretch of input: an added token's id, or text (id -1).
type segment struct {
	text  string
	id    int32
	start int // byte offset in the text the segments were cut from
}

// split cuts s into text and added-token segments as the reference's
// AddedVocabulary::find_matches does, with single_word, lstrip and rstrip.
func (t *addedTrie) split(dst []segment, s string) []segment {
	if t == nil || len(t.tokens) == 0 {
		return append(dst, segment{text: s, id: -1})
	}
	startOffset := 0
	for i := 0; i < len(s); {
		if !t.first[s[i]] {
			i++
			continue
		}
		k, n := t.longestAt(s, i)
		if k < 0 {
			i++
			continue
		}
		tok := t.tokens[k]
		start, stop := i, i+n
		i = stop // the next match is searched from the raw match's end
		if tok.singleWord && (start > 0 && endsWithWord(s[:start]) || stop < len(s) && startsWithWord(s[stop:])) {
			continue
		}
		if tok.lstrip {
			start = max(len(strings.TrimRightFunc(s[:start], unicode.IsSpace)), startOffset)
		}
		if tok.rstrip {
			stop = len(s) - len(strings.TrimLeftFunc(s[stop:], unicode.IsSpace))
		}
		if startOffset < start {
			dst = append(dst, segment{text: s[startOffset:start], id: -1, start: startOffset})
		}
		dst = append(dst, segment{id: tok.id, start: start})
		startOffset = stop
	}
	if startOffset < len(s) {
		dst = append(dst, segment{text: s[startOffset:], id: -1, start: startOffset})
	}
	return dst
}

func isWordChar(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) || r == '_' }

func endsWithWord(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return isWordChar(r)
}

func startsWithWord(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return isWordChar(r)
}
