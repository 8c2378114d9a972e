package tokenizer

// byteLevelRunes is GPT-2's bytes_to_unicode table: the printable rune
// that stands for each byte in a byte-level vocabulary ("Ġ" for ' ').
var byteLevelRunes = func() (t [256]rune) {
	n := 0
	for b := range 256 {
		printable := '!' <= b && b <= '~' || '¡' <= b && b <= '¬' || '®' <= b && b <= 'ÿ'
		if printable {
			t[b] = rune(b)
		} else {
			t[b] = rune(256 + n)
			n++
		}
	}
	return t
}()

// byteLevelBytes inverts byteLevelRunes.
var byteLevelBytes = func() map[rune]byte {
	m := make(map[rune]byte, 256)
	for b, r := range byteLevelRunes {
		m[r] = byte(b)
	}
	return m
}()

// fromByteLevel turns a vocabulary string in the byte-level alphabet back
// into the raw bytes it stands for; ok is false when s has a rune outside
// the alphabet (an added token written as itself, say).
func fromByteLevel(s string) (raw string, ok bool) {
	buf := make([]byte, 0, len(s))
	for _, r := range s {
		b, in := byteLevelBytes[r]
		if !in {
			return "", false
		}
		buf = append(buf, b)
	}
	return string(buf), true
}
