package tokenizer

import (
	"sync"
	"unicode"
	"unicode/utf8"
)

// The pre-tokenizer regexes of the common model families, matched by hand:
// the same matches as the backtracking engine (a differential test and a
// fuzzer hold them to it), at many times the speed.
const (
	// cl100kPattern is Llama 3's (and GPT-4's cl100k_base).
	cl100kPattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// qwenPattern is Qwen 2 and 3's: single digits.
	qwenPattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// o200kPattern is tiktoken's o200k_base (GPT-4o).
	o200kPattern = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// tekkenPattern is Mistral's Tekken (Mistral NeMo, Pixtral, later
	// Mistral models, NVIDIA Nemotron): o200k's without contractions,
	// with single digits.
	tekkenPattern = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// DeepSeek V3's three Split patterns, in its order: numbers, runs of
	// CJK ideographs and kana, then words, punctuation and white space.
	// The last has CR and LF written as themselves in its classes.
	deepseekNumbers = `\p{N}{1,3}`
	deepseekCJK     = "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+"
	deepseekWords   = "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+"
)

// fastPattern returns the hand-written matcher for a well-known
// pre-tokenizer regex, or nil.
func fastPattern(expr string) pattern {
	switch expr {
	case gpt2Pattern:
		return scanner{flavor: gpt2Flavor}
	case cl100kPattern:
		return scanner{flavor: cl100kFlavor, maxDigits: 3}
	case qwenPattern:
		return scanner{flavor: cl100kFlavor, maxDigits: 1}
	case o200kPattern:
		return scanner{flavor: o200kFlavor, maxDigits: 3}
	case tekkenPattern:
		return scanner{flavor: o200kFlavor, maxDigits: 1, noContractions: true}
	case deepseekNumbers:
		return numberRuns{maxDigits: 3}
	case deepseekCJK:
		return cjkRuns{}
	case deepseekWords:
		return deepseekScanner{}
	}
	return nil
}

type flavor int

const (
	gpt2Flavor flavor = iota
	cl100kFlavor
	o200kFlavor
)

// Character classes, as bits.
const (
	cLetter   = 1 << iota // \p{L}
	cNumber               // \p{N}
	cSpace                // \s
	cNewline              // \r or \n
	cUpper                // o200k's [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
	cLower                // o200k's [\p{Ll}\p{Lm}\p{Lo}\p{M}]
	cMark                 // \p{M}
	cPunctSym             // [\p{P}\p{S}]
)

var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for r := range rune(utf8.RuneSelf) {
		t[r] = classOfRune(r)
	}
	return t
}()

func classOfRune(r rune) uint8 {
	var c uint8
	if unicode.IsLetter(r) {
		c |= cLetter
	}
	if unicode.IsNumber(r) {
		c |= cNumber
	}
	if unicode.IsSpace(r) {
		c |= cSpace
	}
	if r == '\r' || r == '\n' {
		c |= cNewline
	}
	mark := unicode.Is(unicode.M, r)
	if mark || unicode.In(r, unicode.Lu, unicode.Lt, unicode.Lm, unicode.Lo) {
		c |= cUpper
	}
	if mark || unicode.In(r, unicode.Ll, unicode.Lm, unicode.Lo) {
		c |= cLower
	}
	if mark {
		c |= cMark
	}
	if unicode.In(r, unicode.P, unicode.S) {
		c |= cPunctSym
	}
	return c
}

// bmpClass is classOfRune for every rune below U+10000, built from the
// Unicode tables on first use: classOfRune takes hundreds of nanoseconds
// (a dozen table searches), which a long run of CJK text pays per
// character.
var bmpClass = sync.OnceValue(func() *[1 << 16]uint8 {
	t := new([1 << 16]uint8)
	set := func(bit uint8, tables ...*unicode.RangeTable) {
		for _, rt := range tables {
			for _, r := range rt.R16 {
				for c := int(r.Lo); c <= int(r.Hi); c += int(r.Stride) {
					t[c] |= bit
				}
			}
		}
	}
	set(cLetter, unicode.L)
	set(cNumber, unicode.N)
	set(cSpace, unicode.White_Space)
	t['\r'] |= cNewline
	t['\n'] |= cNewline
	set(cUpper, unicode.M, unicode.Lu, unicode.Lt, unicode.Lm, unicode.Lo)
	set(cLower, unicode.M, unicode.Ll, unicode.Lm, unicode.Lo)
	set(cMark, unicode.M)
	set(cPunctSym, unicode.P, unicode.S)
	return t
})

// classOf is classOfRune, by table below U+10000.
func classOf(r rune) uint8 {
	if r < 1<<16 {
		return bmpClass()[r]
	}
	return classOfRune(r)
}

// other is [^\s\p{L}\p{N}].
func other(c uint8) bool { return c&(cSpace|cLetter|cNumber) == 0 }

// scanner matches one of the known patterns.
type scanner struct {
	flavor    flavor
	maxDigits int
	// noContractions: o200k's word alternatives without their
	// contraction suffixes (Tekken's).
	noContractions bool
}

// at decodes the character at s[i]: its width and class; width 0 at the end.
func at(s string, i int) (int, uint8) {
	if i >= len(s) {
		return 0, 0
	}
	if b := s[i]; b < utf8.RuneSelf {
		return 1, asciiClass[b]
	}
	r, w := utf8.DecodeRuneInString(s[i:])
	return w, classOf(r)
}

// run returns the end of the run of characters from i whose class has
// any of the bits in want.
func run(s string, i int, want uint8) int {
	for i < len(s) {
		w, c := at(s, i)
		if c&want == 0 {
			break
		}
		i += w
	}
	return i
}

func (sc scanner) matches(dst [][2]int, s string) [][2]int { return stepMatches(sc, dst, s) }

// next: every position of these patterns starts a match.
func (sc scanner) next(s string, i int) (int, int, bool) {
	if i >= len(s) {
		return 0, 0, false
	}
	return i, sc.matchAt(s, i), true
}

// matchAt returns the end of the match starting at i; every position of
// these patterns matches at least one character.
func (sc scanner) matchAt(s string, i int) int {
	w0, c0 := at(s, i)
	switch sc.flavor {
	case gpt2Flavor:
		if s[i] == '\'' {
			if n := contraction(s, i, false); n > 0 {
				return i + n
			}
		}
		j := i
		if s[i] == ' ' {
			j++
		}
		if w, c := at(s, j); w > 0 {
			switch {
			case c&cLetter != 0:
				return run(s, j, cLetter)
			case c&cNumber != 0:
				return run(s, j, cNumber)
			case other(c):
				return otherRun(s, j)
			}
		}
	case cl100kFlavor:
		if s[i] == '\'' {
			if n := contraction(s, i, true); n > 0 {
				return i + n
			}
		}
		if c0&cLetter != 0 {
			return run(s, i+w0, cLetter)
		}
		if c0&(cNewline|cNumber) == 0 {
			if w1, c1 := at(s, i+w0); w1 > 0 && c1&cLetter != 0 {
				return run(s, i+w0+w1, cLetter)
			}
		}
		if c0&cNumber != 0 {
			return sc.digits(s, i)
		}
		if end, ok := punctuation(s, i, false); ok {
			return end
		}
	case o200kFlavor:
		if end, ok := o200kWord(s, i, w0, c0, !sc.noContractions); ok {
			return end
		}
		if c0&cNumber != 0 {
			return sc.digits(s, i)
		}
		if end, ok := punctuation(s, i, true); ok {
			return end
		}
	}
	return whitespace(s, i, sc.flavor != gpt2Flavor)
}

// digits matches \p{N}{1,maxDigits}.
func (sc scanner) digits(s string, i int) int {
	for n := 0; n < sc.maxDigits; n++ {
		w, c := at(s, i)
		if c&cNumber == 0 {
			break
		}
		i += w
	}
	return i
}

func otherRun(s string, i int) int {
	for i < len(s) {
		w, c := at(s, i)
		if !other(c) {
			break
		}
		i += w
	}
	return i
}

// punctuation matches ` ?[^\s\p{L}\p{N}]+[\r\n]*` (with slash: [\r\n/]*).
func punctuation(s string, i int, slash bool) (int, bool) {
	j := i
	if s[i] == ' ' {
		j++
	}
	if _, c := at(s, j); j >= len(s) || !other(c) {
		return 0, false
	}
	j = otherRun(s, j)
	for j < len(s) && (s[j] == '\r' || s[j] == '\n' || slash && s[j] == '/') {
		j++
	}
	return j, true
}

// whitespace matches `\s*[\r\n]+|\s+(?!\S)|\s+` (without the first
// alternative for GPT-2) at a white-space character.
func whitespace(s string, i int, newlines bool) int {
	end, lastNewline, lastStart := i, -1, i
	for end < len(s) {
		w, c := at(s, end)
		if c&cSpace == 0 {
			break
		}
		if c&cNewline != 0 {
			lastNewline = end
		}
		lastStart = end
		end += w
	}
	if end == i {
		// Unreachable for valid patterns: every class is covered above.
		w, _ := at(s, i)
		return i + max(w, 1)
	}
	if newlines && lastNewline >= 0 {
		return lastNewline + 1
	}
	if end == len(s) || lastStart == i {
		return end
	}
	return lastStart
}

// contraction matches 's|'t|'re|'ve|'m|'ll|'d at s[i] == '\”, returning
// its length or 0.
func contraction(s string, i int, fold bool) int {
	lower := func(j int) byte {
		if j >= len(s) {
			return 0
		}
		b := s[j]
		if fold && 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		return b
	}
	switch lower(i + 1) {
	case 's', 't', 'm', 'd':
		return 2
	case 'r', 'v':
		if lower(i+2) == 'e' {
			return 3
		}
	case 'l':
		if lower(i+2) == 'l' {
			return 3
		}
	}
	return 0
}

// o200kWord matches o200k's two word alternatives:
// P?U*L+C? | P?U+L*C?, with P = [^\r\n\p{L}\p{N}], U and L the upper and
// lower classes, C a contraction; the order of trials is the backtracking
// engine's.
func o200kWord(s string, i, w0 int, c0 uint8, contractions bool) (int, bool) {
	finish := func(end int) int {
		if contractions {
			return withContraction(s, end)
		}
		return end
	}
	prefix := c0&(cNewline|cLetter|cNumber) == 0
	if prefix {
		if end, ok := upperThenLower(s, i+w0); ok {
			return finish(end), true
		}
	}
	if end, ok := upperThenLower(s, i); ok {
		return finish(end), true
	}
	if prefix {
		if end, ok := uppersThenLowers(s, i+w0); ok {
			return finish(end), true
		}
	}
	if end, ok := uppersThenLowers(s, i); ok {
		return finish(end), true
	}
	return 0, false
}

// upperThenLower matches U*L+ greedily with backtracking: the longest
// run of U after which an L character starts, then the run of L.
func upperThenLower(s string, j int) (int, bool) {
	a := run(s, j, cUpper)
	if _, c := at(s, a); a < len(s) && c&cLower != 0 {
		return run(s, a, cLower), true
	}
	// Give back U characters until one is also an L character.
	for k := a; k > j; {
		_, w := utf8.DecodeLastRuneInString(s[j:k])
		k -= w
		if _, c := at(s, k); c&cLower != 0 {
			return k + w, true
		}
	}
	return 0, false
}

// uppersThenLowers matches U+L*.
func uppersThenLowers(s string, j int) (int, bool) {
	a := run(s, j, cUpper)
	if a == j {
		return 0, false
	}
	return run(s, a, cLower), true
}

func withContraction(s string, end int) int {
	if end < len(s) && s[end] == '\'' {
		return end + contraction(s, end, true)
	}
	return end
}

// numberRuns matches \p{N}{1,maxDigits}: digits in groups, the text
// between them unmatched.
type numberRuns struct{ maxDigits int }

func (p numberRuns) matches(dst [][2]int, s string) [][2]int { return stepMatches(p, dst, s) }

func (p numberRuns) next(s string, i int) (int, int, bool) {
	for i < len(s) {
		w, c := at(s, i)
		if c&cNumber == 0 {
			i += w
			continue
		}
		end := i
		for n := 0; n < p.maxDigits; n++ {
			w, c := at(s, end)
			if c&cNumber == 0 {
				break
			}
			end += w
		}
		return i, end, true
	}
	return 0, 0, false
}

// cjkRuns matches DeepSeek's [\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+.
type cjkRuns struct{}

func isDeepseekCJK(r rune) bool {
	return 0x4e00 <= r && r <= 0x9fa5 || 0x3040 <= r && r <= 0x30ff
}

func (p cjkRuns) matches(dst [][2]int, s string) [][2]int { return stepMatches(p, dst, s) }

func (cjkRuns) next(s string, i int) (int, int, bool) {
	start := -1
	for i < len(s) {
		r, w := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, w = utf8.DecodeRuneInString(s[i:])
		}
		switch in := isDeepseekCJK(r); {
		case in && start < 0:
			start = i
		case !in && start >= 0:
			return start, i, true
		}
		i += w
	}
	return start, len(s), start >= 0
}

// deepseekScanner matches deepseekWords, whose alternatives are tried in
// order at each character:
//
//	P[A-Za-z]+            P an ASCII punctuation character
//	[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+
//	 ?[\p{P}\p{S}]+[\r\n]*
//	\s*[\r\n]+|\s+(?!\S)|\s+
//
// A character where none matches (a digit before no letter, a control
// character) is left unmatched.
type deepseekScanner struct{}

func (p deepseekScanner) matches(dst [][2]int, s string) [][2]int { return stepMatches(p, dst, s) }

func (deepseekScanner) next(s string, i int) (int, int, bool) {
	for i < len(s) {
		w0, c0 := at(s, i)
		if end := deepseekMatchAt(s, i, w0, c0); end >= 0 {
			return i, end, true
		}
		i += w0
	}
	return 0, 0, false
}

func isASCIILetter(b byte) bool { return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' }

// deepseekMatchAt returns the end of the match at i, or -1 for none.
func deepseekMatchAt(s string, i, w0 int, c0 uint8) int {
	if b := s[i]; b < utf8.RuneSelf && c0&cPunctSym != 0 && i+1 < len(s) && isASCIILetter(s[i+1]) {
		// Every ASCII character of \p{P} or \p{S} is in the list.
		j := i + 1
		for j < len(s) && isASCIILetter(s[j]) {
			j++
		}
		return j
	}
	const letterOrMark = cLetter | cMark
	if c0&letterOrMark != 0 {
		return run(s, i, letterOrMark)
	}
	if c0&(cNewline|cPunctSym) == 0 {
		if w1, c1 := at(s, i+w0); w1 > 0 && c1&letterOrMark != 0 {
			return run(s, i+w0, letterOrMark)
		}
	}
	j := i
	if s[i] == ' ' {
		j++
	}
	if w, c := at(s, j); w > 0 && c&cPunctSym != 0 {
		j = run(s, j, cPunctSym)
		for j < len(s) && (s[j] == '\r' || s[j] == '\n') {
			j++
		}
		return j
	}
	if c0&cSpace != 0 {
		return whitespace(s, i, true)
	}
	return -1
}
