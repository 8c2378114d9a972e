package servertiming

import (
	"bytes"
	"strconv"
)

// A small JSON walker: it finds top-level members and reads flat objects of
// numbers without decoding the rest (the choices' text is skipped with
// IndexByte), allocates nothing, and never recurses, so hostile nesting
// cannot exhaust the stack. Keys are compared as raw bytes: a key written
// with escapes ("metr\u0069cs") does not match.

func skipWS(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString returns the index after the string that starts at b[i] == '"',
// or -1 if it is not closed.
func skipString(b []byte, i int) int {
	i++
	for {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return -1
		}
		i += j
		n := 0
		for k := i - 1; b[k] == '\\'; k-- { // stops at the opening quote
			n++
		}
		i++
		if n%2 == 0 {
			return i
		}
	}
}

// skipValue returns the index after the value that starts at b[i], or -1.
// Containers are skipped by counting brackets outside strings; their
// contents are not validated.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				if i = skipString(b, i); i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	case '}', ']', ',', ':':
		return -1
	}
	j := i
	for j < len(b) {
		switch b[j] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return j
		}
		j++
	}
	return j
}

// eachMember calls fn with each key (raw, unquoted) and value of the object
// in b. It returns false if b does not hold an object; fn may have been
// called for members before the point where a malformed object breaks.
func eachMember(b []byte, fn func(key, val []byte)) bool {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return true
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return false
		}
		end := skipString(b, i)
		if end < 0 {
			return false
		}
		key := b[i+1 : end-1]
		i = skipWS(b, end)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = skipWS(b, i+1)
		end = skipValue(b, i)
		if end < 0 {
			return false
		}
		fn(key, b[i:end])
		i = skipWS(b, end)
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case '}':
			return true
		case ',':
			i = skipWS(b, i+1)
		default:
			return false
		}
	}
}

// topValue returns the value of key in the top-level object of b; the last
// one wins if the key repeats, as with encoding/json.
func topValue(b []byte, key string) (val []byte, ok bool) {
	eachMember(b, func(k, v []byte) {
		if string(k) == key {
			val, ok = v, true
		}
	})
	return val, ok
}

type numState uint8

const (
	numOK numState = iota
	numAbsent
	numBad
)

// parseNum reads a JSON number literal (from a body, or a header's text).
// null is absent; a string, object, bool, malformed or out-of-range number
// is bad.
func parseNum[T string | []byte](v T) (float64, numState) {
	if len(v) == 4 && string(v) == "null" {
		return 0, numAbsent
	}
	// Longer literals are valid JSON but no server sends them.
	if len(v) == 0 || len(v) > 40 || !isJSONNumber(v) {
		return 0, numBad
	}
	x, err := strconv.ParseFloat(string(v), 64)
	if err != nil { // range: ±Inf
		return 0, numBad
	}
	return x, numOK
}

// isJSONNumber checks the JSON grammar: strconv.ParseFloat alone would also
// take "Inf", "NaN", "0x1p3" and "1_0".
func isJSONNumber[T string | []byte](v T) bool {
	i := 0
	if v[0] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(v) && v[i] >= '0' && v[i] <= '9' {
			i++
			n++
		}
		return n
	}
	start := i
	n := digits()
	if n == 0 || (n > 1 && v[start] == '0') {
		return false
	}
	if i < len(v) && v[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(v) && (v[i] == 'e' || v[i] == 'E') {
		i++
		if i < len(v) && (v[i] == '+' || v[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(v)
}
