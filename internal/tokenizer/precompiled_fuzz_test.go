package tokenizer

import (
	"encoding/base64"
	"encoding/binary"
	"testing"
	"unicode/utf8"
)

// FuzzPrecompiled feeds arbitrary charsmaps (a damaged trie, offsets past
// the blob, replacements cut mid-character) and texts to the Precompiled
// normalizer: it refuses the file or normalizes without a panic, and a
// UTF-8 text stays UTF-8.
func FuzzPrecompiled(f *testing.F) {
	trie := func(units []uint32, blob string) []byte {
		b := binary.LittleEndian.AppendUint32(nil, uint32(4*len(units)))
		for _, u := range units {
			b = binary.LittleEndian.AppendUint32(b, u)
		}
		return append(b, blob...)
	}
	f.Add(trie([]uint32{1 << 10, 0x141, 0}, "a\x00"), "Abc")
	f.Add(trie([]uint32{0xFFFFFFFF, 0xFFFFFFFF}, "\xff"), "ｈｅｌｌｏ\u0301")
	f.Add([]byte{4, 0, 0, 0}, "x")
	f.Fuzz(func(t *testing.T, raw []byte, text string) {
		p, err := parsePrecompiled(base64.StdEncoding.EncodeToString(raw))
		if err != nil {
			return
		}
		out := p.normalize(text)
		if utf8.ValidString(text) && !utf8.ValidString(out) {
			t.Fatalf("normalize(%q) = %q: not UTF-8", text, out)
		}
	})
}
