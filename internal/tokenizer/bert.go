package tokenizer

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// The BERT family's normalizer and pre-tokenizer. Which characters are
// controls, punctuation or marks, and how they lowercase, follow the
// reference library's own Unicode tables (older than Go's): bert_tables.go
// is generated from the reference itself by bert_tables_test.go, so a
// character Unicode assigned since counts as the reference counts it.

// runeRange is an inclusive range of code points.
type runeRange struct{ lo, hi rune }

// inRanges reports whether r is in t, sorted and non-overlapping.
func inRanges(t []runeRange, r rune) bool {
	i := sort.Search(len(t), func(i int) bool { return t[i].hi >= r })
	return i < len(t) && t[i].lo <= r
}

// caseRange maps lo, lo+stride, … hi to themselves plus delta.
type caseRange struct {
	lo, hi, stride, delta rune
}

// lowerRune is the reference's lowercase of r (Rust's char::to_lowercase),
// one rune; lowerSpecial has the few that become two.
func lowerRune(r rune) rune {
	if r < utf8.RuneSelf {
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		return r
	}
	t := lowerRanges
	i := sort.Search(len(t), func(i int) bool { return t[i].hi >= r })
	if i < len(t) && t[i].lo <= r && (r-t[i].lo)%t[i].stride == 0 {
		return r + t[i].delta
	}
	return r
}

// appendLower appends the reference's lowercase of r.
func appendLower(b []byte, r rune) []byte {
	if r >= utf8.RuneSelf {
		for _, sp := range lowerSpecial {
			if sp.r == r {
				return append(b, sp.lower...)
			}
		}
	}
	return utf8.AppendRune(b, lowerRune(r))
}

// isChineseChar is BERT's "Chinese character": the CJK Unified Ideographs
// blocks and their extensions and compatibility blocks (not kana or hangul).
func isChineseChar(r rune) bool {
	switch {
	case r < 0x3400:
		return false
	case r <= 0x4DBF, 0x4E00 <= r && r <= 0x9FFF, 0xF900 <= r && r <= 0xFAFF:
		return true
	case r < 0x20000:
		return false
	}
	return r <= 0x2A6DF || 0x2A700 <= r && r <= 0x2B81F || 0x2B920 <= r && r <= 0x2CEAF || 0x2F800 <= r && r <= 0x2FA1F
}

// isBertControl is what clean_text deletes: NUL, U+FFFD and the format,
// control and private-use characters but tab, newline and carriage return.
func isBertControl(r rune) bool {
	if r < utf8.RuneSelf {
		return r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0x7F
	}
	return inRanges(bertControl, r)
}

// isBertPunct is BertPreTokenizer's punctuation: the ASCII symbols
// (!"#$%&'()*+,-./:;<=>?@[\]^_`{|}~) and Unicode's P* categories.
func isBertPunct(r rune) bool {
	if r < utf8.RuneSelf {
		return asciiPunct[r]
	}
	return inRanges(bertPunct, r)
}

// asciiPunct are the ASCII symbols, 33–47, 58–64, 91–96 and 123–126.
var asciiPunct = [utf8.RuneSelf]bool{
	'!': true, '"': true, '#': true, '$': true, '%': true, '&': true, '\'': true, '(': true, ')': true, '*': true, '+': true, ',': true, '-': true, '.': true, '/': true,
	':': true, ';': true, '<': true, '=': true, '>': true, '?': true, '@': true,
	'[': true, '\\': true, ']': true, '^': true, '_': true, '`': true,
	'{': true, '|': true, '}': true, '~': true,
}

// nfd is the reference's NFD. Go's tables know characters the reference's
// do not; those (nfdOpaque) stay as they are and, having no combining
// class there, are never reordered: the text is normalized in the stretches
// between them.
func nfd(s string) string {
	i := 0
	for i < len(s) && s[i] < utf8.RuneSelf {
		i++
	}
	if i == len(s) {
		return s
	}
	for _, r := range s[i:] {
		if r >= 0x300 && inRanges(nfdOpaque, r) {
			return string(appendNFD(make([]byte, 0, len(s)+8), []byte(s)))
		}
	}
	return norm.NFD.String(s)
}

func hasNFDOpaque(b []byte) bool {
	for _, r := range string(b) {
		if r >= 0x300 && inRanges(nfdOpaque, r) {
			return true
		}
	}
	return false
}

// appendNFD appends nfd(b) to dst: norm's NFD, but each opaque character
// copied as it is and the stretches between normalized each alone (not by
// one Append, which would normalize across the joins).
func appendNFD(dst, b []byte) []byte {
	if !hasNFDOpaque(b) {
		return norm.NFD.Append(dst, b...)
	}
	last := 0
	for j, r := range string(b) {
		if r < 0x300 || !inRanges(nfdOpaque, r) {
			continue
		}
		dst = append(dst, norm.NFD.Bytes(b[last:j])...)
		size := utf8.RuneLen(r)
		dst = append(dst, b[j:j+size]...)
		last = j + size
	}
	return append(dst, norm.NFD.Bytes(b[last:])...)
}

// bertNormalizer is BertNormalizer: clean_text deletes controls and turns
// white space into spaces, handle_chinese_chars puts spaces around Chinese
// characters, strip_accents decomposes (NFD) and drops the non-spacing
// marks, lowercase lowercases, in that order.
type bertNormalizer struct {
	cleanText, chineseChars, stripAccents, lowercase bool
}

func (n bertNormalizer) normalize(s string) string {
	if out, ok := n.normalizeASCII(s); ok {
		return out
	}
	return n.normalizeRunes(s)
}

// normalizeRunes is normalize for any text, in one pass but for
// strip_accents, which decomposes the result and drops its marks in a
// second (lowercasing there, after them).
func (n bertNormalizer) normalizeRunes(s string) string {
	b := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case n.cleanText && (c == '\t' || c == '\n' || c == '\r'):
				c = ' '
			case n.cleanText && (c < 0x20 || c == 0x7F):
				i++
				continue
			case n.lowercase && 'A' <= c && c <= 'Z':
				c += 'a' - 'A'
			}
			b = append(b, c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case n.cleanText && (r == utf8.RuneError || isBertControl(r)):
		case n.cleanText && unicode.IsSpace(r):
			b = append(b, ' ')
		case n.chineseChars && isChineseChar(r):
			b = append(b, ' ')
			b = utf8.AppendRune(b, r)
			b = append(b, ' ')
		case n.lowercase && !n.stripAccents:
			b = appendLower(b, r)
		default:
			b = utf8.AppendRune(b, r)
		}
	}
	if !n.stripAccents {
		return string(b)
	}
	d := appendNFD(make([]byte, 0, len(b)+len(b)/4+8), b)
	b = b[:0]
	for i := 0; i < len(d); {
		if c := d[i]; c < utf8.RuneSelf {
			if n.lowercase && 'A' <= c && c <= 'Z' {
				c += 'a' - 'A' // decomposed from a capital (İ, Å)
			}
			b = append(b, c)
			i++
			continue
		}
		r, size := utf8.DecodeRune(d[i:])
		i += size
		switch {
		case inRanges(bertNonspacing, r):
		case n.lowercase:
			b = appendLower(b, r)
		default:
			b = utf8.AppendRune(b, r)
		}
	}
	return string(b)
}

// normalizeASCII is normalize for text that is all ASCII (where NFD, marks
// and Chinese characters have nothing to do), or false.
func (n bertNormalizer) normalizeASCII(s string) (string, bool) {
	change := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= utf8.RuneSelf:
			return "", false
		case n.cleanText && (c < 0x20 || c == 0x7F),
			n.lowercase && 'A' <= c && c <= 'Z':
			change = true
		}
	}
	if !change {
		return s, true
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case n.cleanText && (c == '\t' || c == '\n' || c == '\r'):
			c = ' '
		case n.cleanText && (c < 0x20 || c == 0x7F):
			continue
		case n.lowercase && 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	return string(b), true
}

// lowercaseNorm is the Lowercase normalizer: each character on its own, as
// BertNormalizer's lowercase.
type lowercaseNorm struct{}

func (lowercaseNorm) normalize(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || 'A' <= c && c <= 'Z' {
			b := make([]byte, i, len(s)+8)
			copy(b, s[:i])
			for _, r := range s[i:] {
				b = appendLower(b, r)
			}
			return string(b)
		}
	}
	return s
}

// stripAccentsNorm is the StripAccents normalizer: it drops the combining
// marks (Mn, Mc, Me) without decomposing first, so a Sequence puts NFD
// before it.
type stripAccentsNorm struct{}

func (stripAccentsNorm) normalize(s string) string {
	for i, r := range s {
		if r < 0x300 || !inRanges(combiningMarks, r) {
			continue
		}
		var b strings.Builder
		b.Grow(len(s))
		b.WriteString(s[:i])
		for _, r := range s[i:] {
			if r < 0x300 || !inRanges(combiningMarks, r) {
				b.WriteRune(r)
			}
		}
		return b.String()
	}
	return s
}

// bertPreTokenizer is BertPreTokenizer: white space separates words and is
// dropped; every punctuation character is a word of its own.
type bertPreTokenizer struct{}

func (bertPreTokenizer) split(dst []string, s string, _ bool, _ *pieceScratch) []string {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case asciiSpace[c]:
				if start < i {
					dst = append(dst, s[start:i])
				}
				start = i + 1
			case asciiPunct[c]:
				if start < i {
					dst = append(dst, s[start:i])
				}
				dst = append(dst, s[i:i+1])
				start = i + 1
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case unicode.IsSpace(r):
			if start < i {
				dst = append(dst, s[start:i])
			}
			start = i + size
		case isBertPunct(r):
			if start < i {
				dst = append(dst, s[start:i])
			}
			dst = append(dst, s[i:i+size])
			start = i + size
		}
		i += size
	}
	if start < len(s) {
		dst = append(dst, s[start:])
	}
	return dst
}

var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}
