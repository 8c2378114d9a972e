package tokenizer

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// punctSplit is the Punctuation pre-tokenizer: each punctuation
// character (Rust's ASCII punctuation, or Unicode's P* categories in the
// reference's tables: BertPreTokenizer's test) is a match, split by the
// behavior (Isolated unless the file says; Falcon's is Contiguous).
// bytes is set after a ByteLevel step: the text is then raw bytes that
// the reference sees as their byte-level characters (see inByteDomain).
type punctSplit struct {
	behavior behavior
	bytes    bool
}

func (p punctSplit) split(dst []string, s string, _ bool, sc *pieceScratch) []string {
	sc.matches = sc.matches[:0]
	if p.bytes {
		for i := 0; i < len(s); i++ {
			if byteClass[s[i]]&bytePunct != 0 {
				sc.matches = append(sc.matches, [2]int{i, i + 1})
			}
		}
	} else {
		for i, r := range s {
			if isBertPunct(r) {
				sc.matches = append(sc.matches, [2]int{i, i + utf8.RuneLen(r)})
			}
		}
	}
	return splitBy(dst, s, sc.matches, p.behavior, false, sc)
}

// byteClass classifies each byte as the reference does the byte-level
// character standing for it: ¹²³¼½¾ are numbers (Rust's is_numeric), ¡«·»¿
// and others punctuation.
var byteClass = func() (t [256]uint8) {
	for b, r := range byteLevelRunes {
		if unicode.IsNumber(r) {
			t[b] |= byteNumber
		}
		if isBertPunct(r) {
			t[b] |= bytePunct
		}
	}
	return t
}()

const (
	byteNumber = 1 << iota
	bytePunct
)

// mappedPattern runs a Split's pattern after a ByteLevel step: on the
// byte-level characters of the raw bytes it is given, the matches mapped
// back to byte offsets (each byte is one character).
type mappedPattern struct{ inner pattern }

func (p mappedPattern) matches(dst [][2]int, s string) [][2]int {
	buf := make([]byte, 0, 2*len(s))
	for i := 0; i < len(s); i++ {
		buf = utf8.AppendRune(buf, byteLevelRunes[s[i]])
	}
	base := len(dst)
	dst = p.inner.matches(dst, string(buf))
	// The matches only move forward: walk s alongside them.
	ri, mi := 0, 0
	at := func(m int) int {
		for mi < m {
			mi += utf8.RuneLen(byteLevelRunes[s[ri]])
			ri++
		}
		return ri
	}
	for k := base; k < len(dst); k++ {
		dst[k] = [2]int{at(dst[k][0]), at(dst[k][1])}
	}
	return dst
}

// inByteDomain returns p as it runs after a ByteLevel pre-tokenizer (in
// the middle of a Sequence, as Falcon's): the reference hands it the
// byte-level characters of each piece, llmbench the raw bytes, so each
// character class is taken of the character a byte stands for. A step
// whose outcome on those characters is not worked out is refused.
func inByteDomain(p preTokenizer) (preTokenizer, error) {
	switch p := p.(type) {
	case nil:
		return nil, nil
	case digits:
		p.bytes = true
		return p, nil
	case punctSplit:
		p.bytes = true
		return p, nil
	case splitter:
		p.pat = mappedPattern{p.pat}
		return p, nil
	case preTokenizerSeq:
		out := make(preTokenizerSeq, len(p))
		for i, x := range p {
			y, err := inByteDomain(x)
			if err != nil {
				return nil, err
			}
			out[i] = y
		}
		return out, nil
	}
	return nil, fmt.Errorf("pre_tokenizer: %s after a ByteLevel pre-tokenizer is not supported", preTokenizerName(p))
}

// preTokenizerName is the reference's name of p's type.
func preTokenizerName(p preTokenizer) string {
	switch p.(type) {
	case byteLevel:
		return "ByteLevel"
	case metaspace:
		return "Metaspace"
	case whitespaceSplit:
		return "WhitespaceSplit"
	case bertPreTokenizer:
		return "BertPreTokenizer"
	}
	return fmt.Sprintf("%T", p)
}
