package mockserver

import (
	"math/rand/v2"
	"unicode/utf8"

	"github.com/llmbench/llmbench/internal/tokenizer"
)

// Language is the text the server reads and writes: it counts a prompt's
// tokens and makes answers of an exact number of tokens, cut into one
// piece per token for streaming. The client's tokenizer should be the
// server's, as on a real server, so that both count the same.
type Language interface {
	Count(text string) int
	// Encode gives the prompt's token ids, which the prefix cache hashes.
	Encode(text string) []int
	Pieces(rng *rand.Rand, n int) []string
}

// words is the default Language: llmbench's word tokenizer, one word per
// token.
type words struct{ tok tokenizer.Words }

func (w words) Count(text string) int { return w.tok.Count(text) }

func (w words) Encode(text string) []int { return w.tok.Encode(text) }

func (w words) Pieces(rng *rand.Rand, n int) []string {
	pieces := make([]string, n)
	var buf [5]byte
	for i := range pieces {
		b := buf[:0]
		if i > 0 {
			b = append(b, ' ')
		}
		pieces[i] = string(w.tok.AppendWord(b, rng.IntN(tokenizer.VocabSize)))
	}
	return pieces
}

// appendJSONString appends s as the contents of a JSON string (without
// the quotes).
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = append(b, `\ufffd`...)
			} else {
				b = append(b, s[i:i+size]...)
			}
			i += size
			continue
		}
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c == '\t':
			b = append(b, '\\', 't')
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
		i++
	}
	return b
}
