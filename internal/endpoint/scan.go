package endpoint

import (
	"unicode/utf16"
	"unicode/utf8"

	"github.com/llmbench/llmbench/internal/record"
)

// scan reads data in one pass when it has the shape servers send: the keys
// the Decoder reads, spelled as they are, each once; their values of the
// expected type; strings that are valid UTF-8 and escape no lone surrogate
// (encoding/json writes U+FFFD for either). Every
// other value is checked as JSON and skipped. Anything else (a repeated,
// escaped or differently cased key, a number where an int is wanted,
// invalid JSON) is false and left to encoding/json, so a chunk read here
// is exactly what encoding/json reads (FuzzDecoderMatchesEncodingJSON).
func (d *Decoder) scan(data []byte, streaming bool) (Chunk, bool) {
	s := scanner{data: data}
	var c Chunk
	d.text, d.reasoning = d.text[:0], d.reasoning[:0]
	ok := s.peek() == '{' && s.fields(topKeys, func(i int) bool {
		switch i {
		case 0:
			return d.scanChoices(&s, streaming, &c)
		case 1:
			return s.scanUsage(&c)
		case 2: // an error object is left to encoding/json
			return s.null()
		case 3: // {"object": "error", …} is vLLM's error object
			v, ok := s.plainStr()
			return ok && string(v) != "error"
		case 4:
			return s.checkStr()
		default:
			_, ok := s.intOrNull()
			return ok
		}
	})
	if !ok || !s.end() {
		return Chunk{}, false
	}
	if len(d.text) > 0 {
		c.Text = d.text
	}
	if len(d.reasoning) > 0 {
		c.Reasoning = d.reasoning
	}
	return c, true
}

func (d *Decoder) scanChoices(s *scanner, streaming bool, c *Chunk) bool {
	if s.peek() == 'n' {
		return s.null()
	}
	return s.array(func() bool {
		c.Choices++
		var finish []byte
		ok := s.fields(choiceKeys, func(i int) bool {
			var ok bool
			switch i {
			case 0: // a completion's text; a chat choice's is only checked
				if d.kind == Completions {
					d.text, _, ok = s.str(d.text)
				} else {
					ok = s.checkStr()
				}
			case 1:
				finish, ok = s.plainStr()
			default: // delta (streaming) or message: the other is only checked
				ok = d.scanMessage(s, d.kind != Completions && (i == 2) == streaming)
			}
			return ok
		})
		if ok && len(finish) > 0 && c.FinishReason == "" {
			c.FinishReason = finishReason(finish)
		}
		return ok
	})
}

// scanMessage reads a "delta" or "message" object: when use, its content
// into the decoder's text and its reasoning_content then reasoning into
// its reasoning text.
func (d *Decoder) scanMessage(s *scanner, use bool) bool {
	sawReasoning := false
	return s.fields(textKeys, func(i int) bool {
		if !use {
			if i == 3 {
				return s.null()
			}
			return s.checkStr()
		}
		var ok bool
		switch i {
		case 0:
			d.text, _, ok = s.str(d.text)
		case 1:
			// reasoning_content goes before reasoning: the other order is
			// left to encoding/json.
			ok = !sawReasoning
			if ok {
				d.reasoning, _, ok = s.str(d.reasoning)
			}
		case 2:
			sawReasoning = true
			d.reasoning, _, ok = s.str(d.reasoning)
		default: // tool calls are left to encoding/json
			ok = s.null()
		}
		return ok
	})
}

// finishReason returns the common reasons without allocating.
func finishReason(b []byte) string {
	switch string(b) {
	case "stop":
		return "stop"
	case "length":
		return "length"
	}
	return string(b)
}

func (s *scanner) scanUsage(c *Chunk) bool {
	if s.peek() == 'n' {
		return s.null()
	}
	u := &record.Usage{}
	c.Usage = u
	return s.fields(usageKeys, func(i int) bool {
		var ok bool
		switch i {
		case 0:
			u.PromptTokens, ok = s.intOrNull()
		case 1:
			u.CompletionTokens, ok = s.intOrNull()
		case 2:
			u.TotalTokens, ok = s.intOrNull()
		default:
			ok = s.fields(detailKeys, func(int) bool {
				if s.peek() == 'n' {
					return s.null() // reasoning_tokens: null is none
				}
				u.ReasoningTokens, u.HasReasoning = s.intOrNull()
				return u.HasReasoning
			})
		}
		return ok
	})
}

// fields walks an object (null: nothing to walk), calling read with the
// index of each of keys it holds, positioned at the value, which read must
// consume; other keys' values are checked and skipped. False, for
// encoding/json to read the data, when a key comes twice (encoding/json
// keeps the last), is escaped or differs from a known one in case only
// (encoding/json would take it for that one), or when read is.
func (s *scanner) fields(keys []string, read func(i int) bool) bool {
	if s.peek() == 'n' {
		return s.null()
	}
	seen := 0
	return s.object(func(key []byte) bool {
		i := keyIndex(key, keys)
		if i < 0 {
			return i == -1 && s.skip()
		}
		if seen&(1<<i) != 0 {
			return false
		}
		seen |= 1 << i
		return read(i)
	})
}

// keyIndex is key's index in keys, -1 if none; -2 (not readable here)
// when key could stand for one of them in encoding/json's eyes (a
// different case, an escape).
func keyIndex(key []byte, keys []string) int {
	for i, k := range keys {
		if string(key) == k {
			return i
		}
	}
	for _, c := range key {
		if c == '\\' {
			return -2
		}
	}
	if foldsTo(key, keys) {
		return -2
	}
	return -1
}

// scanner walks JSON text. Its methods return false on anything it does
// not read (invalid JSON included); the caller then gives up.
type scanner struct {
	data []byte
	i    int
}

// maxDepth bounds nesting in skipped values (encoding/json's limit is
// 10,000; deeper text is left to it).
const maxDepth = 512

func (s *scanner) ws() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek returns the next byte after white space, 0 at the end.
func (s *scanner) peek() byte {
	s.ws()
	if s.i < len(s.data) {
		return s.data[s.i]
	}
	return 0
}

// end reports whether only white space is left.
func (s *scanner) end() bool {
	s.ws()
	return s.i == len(s.data)
}

func (s *scanner) lit(word string) bool {
	s.ws()
	if len(s.data)-s.i >= len(word) && string(s.data[s.i:s.i+len(word)]) == word {
		s.i += len(word)
		return true
	}
	return false
}

func (s *scanner) null() bool { return s.lit("null") }

// object walks an object, calling field with each key (raw, escapes
// included) positioned at its value, which field must consume.
func (s *scanner) object(field func(key []byte) bool) bool {
	return s.list('{', '}', func() bool {
		if s.peek() != '"' {
			return false
		}
		key, ok := s.rawString()
		if !ok || s.peek() != ':' {
			return false
		}
		s.i++
		return field(key)
	})
}

// array walks an array, calling item positioned at each element.
func (s *scanner) array(item func() bool) bool { return s.list('[', ']', item) }

// list walks open, elements separated by commas, close; elem consumes one.
func (s *scanner) list(open, close byte, elem func() bool) bool {
	if s.peek() != open {
		return false
	}
	s.i++
	if s.peek() == close {
		s.i++
		return true
	}
	for {
		if !elem() {
			return false
		}
		switch s.peek() {
		case ',':
			s.i++
		case close:
			s.i++
			return true
		default:
			return false
		}
	}
}

// rawString consumes a string at s.i (its opening quote) and returns its
// bytes between the quotes, escapes as written; false if the string is not
// valid JSON.
func (s *scanner) rawString() ([]byte, bool) {
	start := s.i + 1
	for j := start; j < len(s.data); j++ {
		switch c := s.data[j]; {
		case c == '"':
			s.i = j + 1
			return s.data[start:j], true
		case c < 0x20:
			return nil, false
		case c == '\\':
			j++
			if j >= len(s.data) {
				return nil, false
			}
			switch s.data[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(s.data) {
					return nil, false
				}
				for _, h := range s.data[j+1 : j+5] {
					if !isHex(h) {
						return nil, false
					}
				}
				j += 4
			default:
				return nil, false
			}
		}
	}
	return nil, false
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// str reads a string or null, appending the unescaped string to dst;
// isNull for null. False for another type, text that is not valid UTF-8,
// or a \u escape of a lone surrogate (encoding/json writes U+FFFD for
// both, which the slower path then does).
func (s *scanner) str(dst []byte) (out []byte, isNull, ok bool) {
	switch s.peek() {
	case 'n':
		return dst, true, s.null()
	case '"':
	default:
		return dst, false, false
	}
	raw, ok := s.rawString()
	if !ok || !utf8.Valid(raw) {
		return dst, false, false
	}
	for len(raw) > 0 {
		k := indexBackslash(raw)
		if k < 0 {
			dst = append(dst, raw...)
			break
		}
		dst = append(dst, raw[:k]...)
		n := 2
		switch c := raw[k+1]; c {
		case '"', '\\', '/':
			dst = append(dst, c)
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		default: // u, with 4 hex digits (rawString checked them)
			r := hex4(raw[k+2:])
			n = 6
			if utf16.IsSurrogate(r) {
				rest := raw[k+6:]
				if len(rest) < 6 || rest[0] != '\\' || rest[1] != 'u' {
					return dst, false, false
				}
				if r = utf16.DecodeRune(r, hex4(rest[2:])); r == utf8.RuneError {
					return dst, false, false
				}
				n = 12
			}
			dst = utf8.AppendRune(dst, r)
		}
		raw = raw[k+n:]
	}
	return dst, false, true
}

// hex4 is the value of 4 hex digits.
func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		default:
			c -= 'A' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

// plainStr reads a string without escapes (nil for null), returning its
// bytes in the data; false for anything else.
func (s *scanner) plainStr() ([]byte, bool) {
	switch s.peek() {
	case 'n':
		return nil, s.null()
	case '"':
	default:
		return nil, false
	}
	raw, ok := s.rawString()
	return raw, ok && utf8.Valid(raw) && indexBackslash(raw) < 0
}

// checkStr reads a string or null, keeping nothing: a value encoding/json
// only type-checks (any valid JSON string will do).
func (s *scanner) checkStr() bool {
	switch s.peek() {
	case 'n':
		return s.null()
	case '"':
		_, ok := s.rawString()
		return ok
	}
	return false
}

func indexBackslash(b []byte) int {
	for i, c := range b {
		if c == '\\' {
			return i
		}
	}
	return -1
}

// intOrNull reads an integer encoding/json puts in an int: digits only
// (a leading minus allowed), no fraction or exponent, in range; 0 for
// null.
func (s *scanner) intOrNull() (int, bool) {
	switch c := s.peek(); {
	case c == 'n':
		return 0, s.null()
	case c == '-' || c >= '0' && c <= '9':
	default:
		return 0, false
	}
	start := s.i
	if !s.number() {
		return 0, false
	}
	text := s.data[start:s.i]
	neg := text[0] == '-'
	if neg {
		text = text[1:]
	}
	const cutoff = 1 << 62 // well inside int64; larger counts go the slow way
	n := 0
	for _, c := range text {
		if c < '0' || c > '9' || n >= cutoff/10 {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// number consumes a JSON number.
func (s *scanner) number() bool {
	d, i := s.data, s.i
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		i = skipDigits(d, i)
	default:
		return false
	}
	if i < len(d) && d[i] == '.' {
		j := skipDigits(d, i+1)
		if j == i+1 {
			return false
		}
		i = j
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		j := skipDigits(d, i)
		if j == i {
			return false
		}
		i = j
	}
	s.i = i
	return true
}

// skipDigits returns the index past the run of decimal digits at d[i:].
func skipDigits(d []byte, i int) int {
	for i < len(d) && d[i] >= '0' && d[i] <= '9' {
		i++
	}
	return i
}

// skip consumes any JSON value, checking it.
func (s *scanner) skip() bool { return s.skipDepth(0) }

func (s *scanner) skipDepth(depth int) bool {
	if depth > maxDepth {
		return false
	}
	switch c := s.peek(); {
	case c == '{':
		return s.object(func([]byte) bool { return s.skipDepth(depth + 1) })
	case c == '[':
		return s.array(func() bool { return s.skipDepth(depth + 1) })
	case c == '"':
		_, ok := s.rawString()
		return ok
	case c == 't':
		return s.lit("true")
	case c == 'f':
		return s.lit("false")
	case c == 'n':
		return s.null()
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	}
	return false
}
