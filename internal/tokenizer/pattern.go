package tokenizer

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
)

// pattern finds the non-overlapping matches of a Split pre-tokenizer's or
// a Replace normalizer's pattern, left to right, as byte ranges.
type pattern interface {
	matches(dst [][2]int, s string) [][2]int
}

// stepper is a pattern that finds its matches one at a time: next returns
// the first match starting at byte i or after it. The hand-written
// patterns are; a pre-tokenizer using one streams its words (wordStream).
type stepper interface {
	pattern
	next(s string, i int) (start, end int, ok bool)
}

// stepMatches lists a stepper's matches.
func stepMatches(p stepper, dst [][2]int, s string) [][2]int {
	for i := 0; ; {
		start, end, ok := p.next(s, i)
		if !ok {
			return dst
		}
		dst = append(dst, [2]int{start, end})
		i = end
	}
}

// literal is a String pattern.
type literal string

func (p literal) matches(dst [][2]int, s string) [][2]int {
	if p == "" {
		return dst
	}
	for off := 0; ; {
		i := strings.Index(s[off:], string(p))
		if i < 0 {
			return dst
		}
		start := off + i
		off = start + len(p)
		dst = append(dst, [2]int{start, off})
	}
}

// regex is a Regex pattern, run by regexp2: a backtracking engine with
// the look-arounds, Unicode classes and inline flags the reference's
// Oniguruma patterns use (Go's regexp has no look-ahead).
type regex struct {
	re *regexp2.Regexp
}

func compileRegex(expr string) (pattern, error) {
	if fast := fastPattern(expr); fast != nil {
		return fast, nil
	}
	re, err := regexp2.Compile(expr, regexp2.None)
	if err != nil {
		return nil, fmt.Errorf("regex %q: %w", expr, err)
	}
	return regex{re}, nil
}

func (p regex) matches(dst [][2]int, s string) [][2]int {
	if s == "" {
		return dst
	}
	runes := []rune(s)
	// Rune indices become byte offsets by walking s alongside the
	// matches, which only move forward: a table of every rune's offset
	// would cost 8 bytes a character on a long text.
	ri, bi := 0, 0
	byteAt := func(r int) int {
		for ; ri < r; ri++ {
			// An invalid byte decodes to one RuneError of width 1.
			_, w := utf8.DecodeRuneInString(s[bi:])
			bi += w
		}
		return bi
	}
	m, err := p.re.FindRunesMatch(runes)
	for err == nil && m != nil {
		start := byteAt(m.Index)
		dst = append(dst, [2]int{start, byteAt(m.Index + m.Length)})
		m, err = p.re.FindNextMatch(m)
	}
	return dst
}
