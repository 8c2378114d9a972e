package tokenizer

import (
	"unicode"
	"unicode/utf8"
)

// Extended grapheme clusters (UAX #29), for the Precompiled normalizer,
// which works cluster by cluster as the reference's unicode-segmentation
// does. Only clusters shorter than 6 bytes are looked up whole, so what
// matters is where clusters of 1- and 2-byte characters with marks end;
// GB9c (Indic conjuncts, whose characters are 3 bytes each) is left out.

type gcbClass uint8

const (
	gcbOther gcbClass = iota
	gcbCR
	gcbLF
	gcbControl
	gcbExtend
	gcbZWJ
	gcbRI
	gcbPrepend
	gcbSpacingMark
	gcbL
	gcbV
	gcbT
	gcbLV
	gcbLVT
	gcbExtPict
)

func graphemeClass(r rune) gcbClass {
	switch {
	case r == '\r':
		return gcbCR
	case r == '\n':
		return gcbLF
	case r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || r == 0xad:
		return gcbControl
	case r == 0xa9 || r == 0xae:
		return gcbExtPict
	case r < 0x300:
		return gcbOther
	case r == 0x200d:
		return gcbZWJ
	case r == 0x200c || r >= 0x1f3fb && r <= 0x1f3ff:
		return gcbExtend
	case r >= 0x1100 && r <= 0x115f || r >= 0xa960 && r <= 0xa97c:
		return gcbL
	case r >= 0x1160 && r <= 0x11a7 || r >= 0xd7b0 && r <= 0xd7c6:
		return gcbV
	case r >= 0x11a8 && r <= 0x11ff || r >= 0xd7cb && r <= 0xd7fb:
		return gcbT
	case r >= 0xac00 && r <= 0xd7a3:
		if (r-0xac00)%28 == 0 {
			return gcbLV
		}
		return gcbLVT
	case r >= 0x1f1e6 && r <= 0x1f1ff:
		return gcbRI
	case inGraphemeRanges(r, prependRanges):
		return gcbPrepend
	case unicode.In(r, unicode.Mn, unicode.Me, unicode.Other_Grapheme_Extend):
		return gcbExtend
	case r == 0xe33 || r == 0xeb3:
		return gcbSpacingMark
	case unicode.Is(unicode.Mc, r):
		if inGraphemeRanges(r, notSpacingMark) {
			return gcbOther
		}
		return gcbSpacingMark
	case unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Cs):
		return gcbControl
	case r >= 0xe0000 && r <= 0xe0fff || r == 0x2065 || r >= 0xfff0 && r <= 0xfff8:
		return gcbControl // unassigned default-ignorable
	case inGraphemeRanges(r, extPictRanges):
		return gcbExtPict
	}
	return gcbOther
}

func inGraphemeRanges(r rune, ranges [][2]rune) bool {
	for _, rg := range ranges {
		if r < rg[0] {
			return false
		}
		if r <= rg[1] {
			return true
		}
	}
	return false
}

var prependRanges = [][2]rune{
	{0x600, 0x605}, {0x6dd, 0x6dd}, {0x70f, 0x70f}, {0x890, 0x891}, {0x8e2, 0x8e2}, {0xd4e, 0xd4e},
	{0x110bd, 0x110bd}, {0x110cd, 0x110cd}, {0x111c2, 0x111c3}, {0x113d1, 0x113d1}, {0x1193f, 0x1193f},
	{0x11941, 0x11941}, {0x11a3a, 0x11a3a}, {0x11a84, 0x11a89}, {0x11d46, 0x11d46}, {0x11f02, 0x11f02},
}

// notSpacingMark are the Mc characters UAX #29 leaves out of SpacingMark.
var notSpacingMark = [][2]rune{
	{0x102b, 0x102c}, {0x1038, 0x1038}, {0x1062, 0x1064}, {0x1067, 0x106d}, {0x1083, 0x1083},
	{0x1087, 0x108c}, {0x108f, 0x108f}, {0x109a, 0x109c}, {0x1a61, 0x1a61}, {0x1a63, 0x1a64},
	{0xaa7b, 0xaa7b}, {0xaa7d, 0xaa7d}, {0x11720, 0x11721},
}

// extPictRanges is Extended_Pictographic above U+02FF (emoji-data.txt).
var extPictRanges = [][2]rune{
	{0x203c, 0x203c}, {0x2049, 0x2049}, {0x2122, 0x2122}, {0x2139, 0x2139}, {0x2194, 0x2199},
	{0x21a9, 0x21aa}, {0x231a, 0x231b}, {0x2328, 0x2328}, {0x2388, 0x2388}, {0x23cf, 0x23cf},
	{0x23e9, 0x23f3}, {0x23f8, 0x23fa}, {0x24c2, 0x24c2}, {0x25aa, 0x25ab}, {0x25b6, 0x25b6},
	{0x25c0, 0x25c0}, {0x25fb, 0x25fe}, {0x2600, 0x2605}, {0x2607, 0x2612}, {0x2614, 0x2685},
	{0x2690, 0x2705}, {0x2708, 0x2712}, {0x2714, 0x2714}, {0x2716, 0x2716}, {0x271d, 0x271d},
	{0x2721, 0x2721}, {0x2728, 0x2728}, {0x2733, 0x2734}, {0x2744, 0x2744}, {0x2747, 0x2747},
	{0x274c, 0x274c}, {0x274e, 0x274e}, {0x2753, 0x2755}, {0x2757, 0x2757}, {0x2763, 0x2767},
	{0x2795, 0x2797}, {0x27a1, 0x27a1}, {0x27b0, 0x27b0}, {0x27bf, 0x27bf}, {0x2934, 0x2935},
	{0x2b05, 0x2b07}, {0x2b1b, 0x2b1c}, {0x2b50, 0x2b50}, {0x2b55, 0x2b55}, {0x3030, 0x3030},
	{0x303d, 0x303d}, {0x3297, 0x3297}, {0x3299, 0x3299}, {0x1f000, 0x1f0ff}, {0x1f10d, 0x1f10f},
	{0x1f12f, 0x1f12f}, {0x1f16c, 0x1f171}, {0x1f17e, 0x1f17f}, {0x1f18e, 0x1f18e}, {0x1f191, 0x1f19a},
	{0x1f1ad, 0x1f1e5}, {0x1f201, 0x1f20f}, {0x1f21a, 0x1f21a}, {0x1f22f, 0x1f22f}, {0x1f232, 0x1f23a},
	{0x1f23c, 0x1f23f}, {0x1f249, 0x1f3fa}, {0x1f400, 0x1f53d}, {0x1f546, 0x1f64f}, {0x1f680, 0x1f6ff},
	{0x1f774, 0x1f77f}, {0x1f7d5, 0x1f7ff}, {0x1f80c, 0x1f80f}, {0x1f848, 0x1f84f}, {0x1f85a, 0x1f85f},
	{0x1f888, 0x1f88f}, {0x1f8ae, 0x1f8ff}, {0x1f90c, 0x1f93a}, {0x1f93c, 0x1f945}, {0x1f947, 0x1faff},
	{0x1fc00, 0x1fffd},
}

// nextGrapheme is the end of the cluster that starts at byte i of s.
func nextGrapheme(s string, i int) int {
	r, size := utf8.DecodeRuneInString(s[i:])
	prev := graphemeClass(r)
	// emoji: in ExtPict Extend* (1) and just after its ZWJ (2); ri: the
	// number of regional indicators in a row.
	emoji, ri := 0, 0
	if prev == gcbExtPict {
		emoji = 1
	}
	if prev == gcbRI {
		ri = 1
	}
	for j := i + size; j < len(s); {
		r, size := utf8.DecodeRuneInString(s[j:])
		cur := graphemeClass(r)
		if !joins(prev, cur, emoji, ri) {
			return j
		}
		switch {
		case cur == gcbExtPict:
			emoji = 1
		case emoji == 1 && cur == gcbExtend:
		case emoji == 1 && cur == gcbZWJ:
			emoji = 2
		default:
			emoji = 0
		}
		if cur == gcbRI {
			ri++
		} else {
			ri = 0
		}
		prev = cur
		j += size
	}
	return len(s)
}

// joins tells whether no break falls between classes prev and cur.
func joins(prev, cur gcbClass, emoji, ri int) bool {
	switch {
	case prev == gcbCR && cur == gcbLF:
		return true
	case prev == gcbCR || prev == gcbLF || prev == gcbControl:
		return false
	case cur == gcbCR || cur == gcbLF || cur == gcbControl:
		return false
	case prev == gcbL && (cur == gcbL || cur == gcbV || cur == gcbLV || cur == gcbLVT):
		return true
	case (prev == gcbLV || prev == gcbV) && (cur == gcbV || cur == gcbT):
		return true
	case (prev == gcbLVT || prev == gcbT) && cur == gcbT:
		return true
	case cur == gcbExtend || cur == gcbZWJ || cur == gcbSpacingMark || prev == gcbPrepend:
		return true
	case prev == gcbZWJ && cur == gcbExtPict && emoji == 2:
		return true
	case prev == gcbRI && cur == gcbRI:
		return ri%2 == 1
	}
	return false
}
