package tokenizer

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// precompiled is the Precompiled normalizer: SentencePiece's
// precompiled_charsmap, a darts-clone double-array trie over UTF-8 keys
// whose values are offsets into a blob of NUL-terminated replacements. It
// runs as the reference (tokenizers' precompiled.rs over the spm_precompiled
// crate) does: per extended grapheme cluster, a cluster shorter than 6 bytes
// is looked up whole and replaced by the value of the SHORTEST key that
// prefixes it (the rest of the cluster is dropped); otherwise, or when no
// key prefixes it, each character is looked up the same way.
type precompiled struct {
	units      []uint32
	normalized string
	// ascii[b] tells whether a one-byte key b has a replacement, so runs
	// of ASCII text cost a table lookup per byte.
	ascii [128]bool
}

func parsePrecompiled(charsmap string) (*precompiled, error) {
	blob, err := base64.StdEncoding.DecodeString(charsmap)
	if err != nil {
		return nil, fmt.Errorf("normalizer Precompiled: precompiled_charsmap is not base64: %w", err)
	}
	if len(blob) < 4 {
		return nil, errors.New("normalizer Precompiled: precompiled_charsmap is too short")
	}
	n := int(binary.LittleEndian.Uint32(blob) / 4)
	if n == 0 || 4+4*n > len(blob) {
		return nil, fmt.Errorf("normalizer Precompiled: precompiled_charsmap declares a trie of %d units in %d bytes", n, len(blob))
	}
	p := &precompiled{units: make([]uint32, n)}
	for i := range p.units {
		p.units[i] = binary.LittleEndian.Uint32(blob[4+4*i:])
	}
	p.normalized = string(blob[4+4*n:])
	if !utf8.ValidString(p.normalized) {
		return nil, errors.New("normalizer Precompiled: the replacements of precompiled_charsmap are not UTF-8")
	}
	for b := range p.ascii {
		_, p.ascii[b] = p.transform(string(rune(b)))
	}
	return p, nil
}

func dartsOffset(u uint32) uint32 { return (u >> 10) << ((u & (1 << 9)) >> 6) }

// transform is the replacement of key's shortest prefix in the trie. A
// damaged trie (an index out of range, where the reference would panic)
// finds nothing.
func (p *precompiled) transform(key string) (string, bool) {
	units := p.units
	pos := dartsOffset(units[0])
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c == 0 {
			break
		}
		pos ^= uint32(c)
		if int(pos) >= len(units) {
			return "", false
		}
		u := units[pos]
		if u&(1<<31|0xFF) != uint32(c) {
			return "", false
		}
		pos ^= dartsOffset(u)
		if (u>>8)&1 == 1 {
			if int(pos) >= len(units) {
				return "", false
			}
			return p.at(int(units[pos] & (1<<31 - 1)))
		}
	}
	return "", false
}

// at is the NUL-terminated replacement starting at byte i.
func (p *precompiled) at(i int) (string, bool) {
	if i > len(p.normalized) || i < len(p.normalized) && !utf8.RuneStart(p.normalized[i]) {
		return "", false
	}
	end := strings.IndexByte(p.normalized[i:], 0)
	if end < 0 {
		return p.normalized[i:], true
	}
	return p.normalized[i : i+end], true
}

func (p *precompiled) normalize(s string) string {
	var b strings.Builder
	copied := 0 // s[:copied] is in b (when b is in use)
	for i := 0; i < len(s); {
		// ASCII fast path: a byte followed by ASCII (or the end) is a
		// cluster of its own, but CR LF.
		if c := s[i]; c < utf8.RuneSelf && (i+1 == len(s) || s[i+1] < utf8.RuneSelf) && !(c == '\r' && i+1 < len(s) && s[i+1] == '\n') {
			if p.ascii[c] {
				out, _ := p.transform(s[i : i+1])
				copied = p.emit(&b, s, copied, i, i+1, out)
			}
			i++
			continue
		}
		end := nextGrapheme(s, i)
		g := s[i:end]
		if len(g) < 6 {
			if out, ok := p.transform(g); ok {
				copied = p.emit(&b, s, copied, i, end, out)
				i = end
				continue
			}
		}
		for j := i; j < end; {
			_, size := utf8.DecodeRuneInString(s[j:end])
			if out, ok := p.transform(s[j : j+size]); ok {
				copied = p.emit(&b, s, copied, j, j+size, out)
			}
			j += size
		}
		i = end
	}
	if b.Cap() == 0 && copied == 0 {
		return s
	}
	b.WriteString(s[copied:])
	return b.String()
}

// emit writes s[copied:start] and out, which replaces s[start:end].
func (p *precompiled) emit(b *strings.Builder, s string, copied, start, end int, out string) int {
	if b.Cap() == 0 {
		b.Grow(len(s) + len(out) + 8)
	}
	b.WriteString(s[copied:start])
	b.WriteString(out)
	return end
}
